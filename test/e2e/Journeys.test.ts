/**
 * The user journeys end to end, through the `session-routing` binary and kubectl, against
 * the cluster test/e2e/E2eTarget.ts picks: with `npm run test:cluster`, the real control
 * plane (kube-apiserver, its controllers, Traefik) or the cluster a kubeconfig names; else
 * LocalCluster inside `npm test`. The assertions are the same on each; only the waits
 * differ. docs/e2e.md describes the setups.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { httpRouteName, LABEL_SESSION_ID, sessionObjectName } from "../../src/domain/Manifests.js"
import type { HttpRoute, KubeObject } from "../../src/domain/Objects.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { jsonLines } from "../cli/CliCluster.js"
import { E2e, E2eLive, type E2eRun, probeReachable, RUN_LABEL } from "./E2eRun.js"
import { onRealCluster, realTargetFromEnv } from "./E2eTarget.js"

/** Per journey: a Pod to start, a controller to answer, a deadline to pass, a command to end. */
const JOURNEY_TIMEOUT = onRealCluster() ? Duration.minutes(8) : Duration.seconds(60)
const timeout = Duration.toMillis(JOURNEY_TIMEOUT)
const probeSkipped = !(await probeReachable())
// Only a cluster the run started (the real control plane, LocalCluster) can have its API server restarted.
const restartSkipped = onRealCluster() && realTargetFromEnv()?.restartApiServer === undefined

/** Each host's last `route` event, by port: where a session settled. */
const settled = (stdout: string) => {
  const last = new Map<number, SessionEvent & { readonly type: "route" }>()
  for (const event of jsonLines(stdout)) if (event.type === "route") last.set(event.port, event)
  return [...last.values()]
    .sort((a, b) => a.port - b.port)
    .map((event) => ({
      port: event.port,
      state: event.state,
      ...(event.state === "unprogrammed" ? { code: event.code } : {})
    }))
}

const publishArgs = (
  sessionId: string,
  pod: { readonly name: string; readonly uid: string },
  ports: ReadonlyArray<number>
) => [
  "publish",
  "--session",
  sessionId,
  "--pod",
  pod.name,
  "--pod-uid",
  pod.uid,
  ...ports.flatMap((port) => ["--port", String(port)]),
  "--watch",
  "-o",
  "json"
]

/** The names of the session's objects of `kinds` in the run's namespace. */
const sessionObjects = (e2e: E2eRun, kinds: string, sessionId: string) =>
  Effect.map(
    e2e.kubectl(["get", kinds, "-n", e2e.namespace, "-l", `${LABEL_SESSION_ID}=${sessionId}`, "-o", "name"]),
    (out) => out.split("\n").filter((line) => line !== "").sort()
  )

interface CheckReport {
  readonly ok: boolean
  readonly checks: ReadonlyArray<{ readonly id: string; readonly status: string; readonly line: string }>
}

layer(E2eLive, { excludeTestServices: true, timeout: onRealCluster() ? Duration.minutes(5) : Duration.seconds(60) })(
  "end-to-end journeys",
  (it) => {
    it.scoped(
      "ingress: the controller programs every host, status reads them, unpublish leaves nothing",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const pod = yield* e2e.sessionPod("ingress-one", [8080, 8081])
          const published = yield* e2e.cli(publishArgs("ingress-one", pod, [8080, 8081]), { mode: "ingress" })
          expect(published.code, published.stderr).toBe(0)
          expect(settled(published.stdout)).toEqual([
            { port: 8080, state: "programmed" },
            { port: 8081, state: "programmed" }
          ])
          expect(yield* sessionObjects(e2e, "services,ingresses", "ingress-one")).toEqual([
            `ingress.networking.k8s.io/${sessionObjectName("ingress-one")}`,
            `service/${sessionObjectName("ingress-one")}`
          ])

          const status = yield* e2e.cli(["status", "--session", "ingress-one", "-o", "json"], { mode: "ingress" })
          expect(status.code, status.stderr).toBe(0)
          expect(settled(status.stdout)).toEqual([
            { port: 8080, state: "programmed" },
            { port: 8081, state: "programmed" }
          ])

          const unpublished = yield* e2e.cli(["unpublish", "--session", "ingress-one"], { mode: "ingress" })
          expect(unpublished.code, unpublished.stderr).toBe(0)
          expect(yield* sessionObjects(e2e, "services,ingresses", "ingress-one")).toEqual([])
        }),
      timeout
    )

    it.scoped(
      "gateway: the controller programs an HTTPRoute per port; a reload from 3 ports to 1 drops two",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const pod = yield* e2e.sessionPod("reload", [8080, 8081, 8082])
          const three = yield* e2e.cli(publishArgs("reload", pod, [8080, 8081, 8082]), { mode: "gateway" })
          expect(three.code, three.stderr).toBe(0)
          expect(settled(three.stdout)).toEqual([
            { port: 8080, state: "programmed" },
            { port: 8081, state: "programmed" },
            { port: 8082, state: "programmed" }
          ])
          expect(yield* sessionObjects(e2e, "httproutes", "reload")).toEqual(
            [8080, 8081, 8082].map((port) => `httproute.gateway.networking.k8s.io/${httpRouteName("reload", port)}`)
          )

          const one = yield* e2e.cli(publishArgs("reload", pod, [8080]), { mode: "gateway" })
          expect(one.code, one.stderr).toBe(0)
          expect(settled(one.stdout)).toEqual([{ port: 8080, state: "programmed" }])
          expect(yield* sessionObjects(e2e, "httproutes", "reload")).toEqual([
            `httproute.gateway.networking.k8s.io/${httpRouteName("reload", 8080)}`
          ])
          const servicePorts = yield* e2e.kubectl([
            "get",
            "-n",
            e2e.namespace,
            `service/${sessionObjectName("reload")}`,
            "-o",
            "jsonpath={.spec.ports[*].port}"
          ])
          expect(servicePorts).toBe("8080")
        }),
      timeout
    )

    it.scoped("each diagnosis code a configuration alone can cause is the one reported", () =>
      Effect.gen(function*() {
        const e2e = yield* E2e
        // The cluster's own configuration a session can be pointed at: a class no controller
        // serves, a Gateway of a class that does not exist, and one whose only listener is TCP.
        const unservedClass = `unserved-${e2e.runId}`
        const gateway = (name: string, className: string, listener: object) => ({
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "Gateway",
          metadata: { name, namespace: e2e.namespace },
          spec: { gatewayClassName: className, listeners: [listener] }
        })
        yield* e2e.kubectl(
          ["create", "-f", "-"],
          JSON.stringify({
            apiVersion: "v1",
            kind: "List",
            items: [
              {
                apiVersion: "networking.k8s.io/v1",
                kind: "IngressClass",
                metadata: { name: unservedClass, labels: { [RUN_LABEL]: e2e.runId } },
                spec: { controller: "example.com/no-such-controller" }
              },
              gateway("classless", `absent-${e2e.runId}`, {
                name: "http",
                protocol: "HTTP",
                port: 80,
                hostname: `*.${e2e.target.names.baseDomain}`
              }),
              gateway("tcp-only", e2e.target.names.gatewayClass, { name: "tcp", protocol: "TCP", port: 9 })
            ]
          })
        )
        const ownGateway = (name: string) => ({ SESSION_GATEWAY_NAME: name, SESSION_GATEWAY_NAMESPACE: e2e.namespace })
        const cases = [
          {
            session: "no-class",
            mode: "ingress",
            env: { SESSION_INGRESS_CLASS: "absent" },
            code: "IngressClassNotFound"
          },
          { session: "no-gateway", mode: "gateway", env: { SESSION_GATEWAY_NAME: "absent" }, code: "GatewayNotFound" },
          {
            session: "no-section",
            mode: "gateway",
            env: { SESSION_GATEWAY_SECTION: "absent" },
            code: "NoMatchingParent"
          },
          {
            session: "refused",
            mode: "gateway",
            env: { SESSION_GATEWAY_SECTION: "same-namespace" },
            code: "NotAllowedByListeners"
          },
          {
            // Pinned to the listener that admits the namespace: with both listeners, which
            // refusal a controller reports is its own choice (Traefik: the last listener's).
            session: "uncovered",
            mode: "gateway",
            env: { SESSION_ROUTING_BASE_DOMAIN: "sessions.example.org", SESSION_GATEWAY_SECTION: "http" },
            code: "NoMatchingListenerHostname"
          },
          {
            // A class that exists but that no controller serves: nobody ever writes a status.
            session: "unserved",
            mode: "ingress",
            env: { SESSION_INGRESS_CLASS: unservedClass },
            code: "NoIngressStatus"
          },
          { session: "classless", mode: "gateway", env: ownGateway("classless"), code: "GatewayClassNotFound" },
          // Refused for its kind: a TCP listener carries no HTTPRoutes.
          { session: "tcp-only", mode: "gateway", env: ownGateway("tcp-only"), code: "NotAllowedByListeners" }
        ] as const
        const outcomes = yield* Effect.forEach(cases, (journey) =>
          Effect.gen(function*() {
            const pod = yield* e2e.sessionPod(journey.session, [8080])
            const run = yield* e2e.cli(publishArgs(journey.session, pod, [8080]), {
              mode: journey.mode,
              env: journey.env
            })
            return { session: journey.session, code: run.code, settled: settled(run.stdout), stderr: run.stderr }
          }), { concurrency: "unbounded" })
        expect(outcomes.map(({ stderr: _, ...outcome }) => outcome)).toEqual(cases.map((journey) => ({
          session: journey.session,
          code: 3,
          settled: [{ port: 8080, state: "unprogrammed", code: journey.code }]
        })))
      }), timeout)

    it.scoped(
      "publish --follow says at once that a route was deleted, and stops on Ctrl-C",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const pod = yield* e2e.sessionPod("followed", [8080])
          const follow = yield* e2e.startCli(
            [...publishArgs("followed", pod, [8080]).filter((arg) => arg !== "--watch"), "--follow"],
            { mode: "gateway" }
          )
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          yield* follow.stdoutLine((line) => line.includes(`"state":"programmed"`), within)
          yield* e2e.kubectl(["delete", "-n", e2e.namespace, `httproute/${httpRouteName("followed", 8080)}`])
          const deleted = yield* follow.stdoutLine((line) => line.includes(`"code":"RouteDeleted"`), within)
          expect(JSON.parse(deleted)).toMatchObject({ type: "route", port: 8080, state: "unprogrammed" })
          follow.child.kill("SIGINT")
          expect((yield* follow.ended()).code).toBe(130)
        }),
      timeout
    )

    it.scoped(
      "check passes where sessions can be routed, round trip included, and names the broken link where not",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const pod = yield* e2e.sessionPod("checker", [8080])
          const passing = yield* e2e.cli(
            ["check", "--round-trip", "--pod", pod.name, "--pod-uid", pod.uid, "-o", "json"],
            { mode: "gateway" }
          )
          const report = JSON.parse(passing.stdout) as CheckReport
          expect(report.checks.filter((check) => check.status !== "ok"), passing.stdout).toEqual([])
          expect(report.checks.map((check) => check.id)).toContain("round-trip")
          const { gatewayClass, gatewayController } = e2e.target.names
          expect(report.checks.find((check) => check.id === "gateway")?.line).toContain(
            `(GatewayClass "${gatewayClass}", controller "${gatewayController}") is Accepted and Programmed`
          )
          expect([passing.code, report.ok]).toEqual([0, true])

          const failing = yield* e2e.cli(["check", "-o", "json"], {
            mode: "ingress",
            env: { SESSION_INGRESS_CLASS: "absent" }
          })
          const failed = JSON.parse(failing.stdout) as CheckReport
          expect([failing.code, failed.ok]).toEqual([1, false])
          expect(failed.checks.filter((check) => check.status === "fail").map((check) => check.id)).toEqual([
            "ingress-class"
          ])
          expect(failed.checks.find((check) => check.id === "ingress-class")?.line).toMatch(/^IngressClassNotFound: /)
        }),
      timeout
    )

    it.scoped(
      "least privilege: a ServiceAccount bound to render --rbac checks, publishes and can do nothing else",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const rendered = yield* e2e.cli(["render", "--rbac", "-n", e2e.namespace, "-o", "json"], {
            mode: "gateway",
            kubeconfig: false
          })
          expect(rendered.code, rendered.stderr).toBe(0)
          const list = JSON.parse(rendered.stdout) as { readonly items: ReadonlyArray<KubeObject> }
          const labelled = list.items.map((item) => ({
            ...item,
            metadata: { ...item.metadata, labels: { ...item.metadata?.labels, [RUN_LABEL]: e2e.runId } }
          }))
          yield* e2e.kubectl(["apply", "-f", "-"], JSON.stringify({ ...list, items: labelled }))
          const account = list.items.find((item) => item.kind === "ServiceAccount")?.metadata?.name ?? ""

          const token = (yield* e2e.kubectl(["create", "token", account, "-n", e2e.namespace, "--duration=20m"])).trim()
          const dir = yield* Effect.acquireRelease(
            Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-e2e-sa-"))),
            (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
          )
          const kubeconfig = join(dir, "kubeconfig")
          const adminConfig = yield* e2e.kubectl(["config", "view", "--raw", "--minify", "--flatten"])
          yield* Effect.promise(() => writeFile(kubeconfig, adminConfig))
          const asAccount = (args: ReadonlyArray<string>) => e2e.kubectlAs(kubeconfig, args)
          expect((yield* asAccount(["config", "set-credentials", "e2e-account", `--token=${token}`])).code).toBe(0)
          expect((yield* asAccount(["config", "set-context", "--current", "--user=e2e-account"])).code).toBe(0)

          const whoami = yield* asAccount(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"])
          expect(whoami.stdout).toBe(`system:serviceaccount:${e2e.namespace}:${account}`)

          const checked = yield* e2e.cli(["check", "-o", "json"], { mode: "gateway", kubeconfig })
          const report = JSON.parse(checked.stdout) as CheckReport
          expect(report.checks.filter((check) => check.status !== "ok"), checked.stdout).toEqual([])
          expect(checked.code).toBe(0)

          const pod = yield* e2e.sessionPod("least", [8080])
          const published = yield* e2e.cli(publishArgs("least", pod, [8080]), { mode: "gateway", kubeconfig })
          expect(published.code, published.stderr).toBe(0)
          expect(settled(published.stdout)).toEqual([{ port: 8080, state: "programmed" }])

          for (const denied of [["list", "secrets"], ["create", "pods"], ["delete", "namespaces"]]) {
            const canI = yield* asAccount(["auth", "can-i", ...denied, "-n", e2e.namespace])
            expect([denied.join(" "), canI.stdout.trim()]).toEqual([denied.join(" "), "no"])
          }
        }),
      timeout
    )

    // A cluster whose Gateway publishes no address (no LoadBalancer provider) has nothing to probe through.
    it.scoped.skipIf(probeSkipped)(
      "the probe reaches the session's workload through the Gateway's address",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const port = yield* e2e.target.servedPort(8080)
          const pod = yield* e2e.sessionPod("probed", [port], { ready: true, serve: true })
          const probed = yield* e2e.cli(publishArgs("probed", pod, [port]), {
            mode: "gateway",
            env: {
              SESSION_ROUTE_PROBE: "http",
              ...(e2e.target.probe.address !== undefined
                ? { SESSION_ROUTE_PROBE_ADDRESS: e2e.target.probe.address }
                : {}),
              ...(e2e.target.probe.port !== undefined
                ? { SESSION_ROUTE_PROBE_PORT: String(e2e.target.probe.port) }
                : {})
            }
          })
          expect(probed.code, probed.stderr).toBe(0)
          expect(settled(probed.stdout)).toEqual([{ port, state: "programmed" }])
          const probes = jsonLines(probed.stdout).filter((event) => event.type === "probe")
          expect(probes.at(-1), probed.stdout).toMatchObject({ port, ok: true, status: 200 })
        }),
      timeout
    )

    it.scoped(
      "controller mode: a Pod gated on its routes stays unready until the controller programmed them, then turns Ready",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const controller = yield* e2e.startCli(["controller", "-o", "json"], { mode: "gateway" })
          const port = yield* e2e.target.servedPort(8080)
          // Every version of the Pod from its creation on: resourceVersion, Ready, the routes condition.
          const versions = yield* e2e.startKubectl([
            "get",
            "pods",
            "-n",
            e2e.namespace,
            "-l",
            `${SESSION_LABEL}=gated`,
            "--watch",
            "-o",
            `jsonpath={.metadata.resourceVersion} {.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="${ROUTES_CONDITION}")].status}{"\\n"}`
          ])
          const pod = yield* e2e.sessionPod("gated", [port], { gated: true, serve: true })
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          const written = yield* controller.stdoutLine(
            (line) => line.includes(`"pod":"${pod.name}"`) && line.includes(`"status":"True"`),
            within
          )
          expect(JSON.parse(written)).toMatchObject({ type: "condition", pod: pod.name, reason: "RoutesProgrammed" })
          yield* e2e.kubectl([
            "wait",
            "-n",
            e2e.namespace,
            "--for=condition=Ready",
            `pod/${pod.name}`,
            `--timeout=${Duration.toSeconds(within)}s`
          ])
          // The controller's route: accepted by the Gateway's controller, which is what let the gate open.
          const route = JSON.parse(
            yield* e2e.kubectl(["get", "-n", e2e.namespace, `httproute/${httpRouteName("gated", port)}`, "-o", "json"])
          ) as HttpRoute
          const parent = route.status?.parents?.find((p) => p.controllerName === e2e.target.names.gatewayController)
          expect(parent?.conditions?.find((c) => c.type === "Accepted")?.status).toBe("True")
          // Ready never ran ahead of the routes: the Pod was seen unready first, and Ready
          // was True only in versions where the routes condition was True too.
          yield* versions.stdoutLine((line) => line.split(" ")[1] === "True", within)
          const seen = versions.stdout().split("\n").filter((line) => line.trim() !== "").map((line) => {
            const [, ready, routes] = line.split(" ")
            return { ready, routes }
          })
          expect(seen.find((v) => v.ready === "False"), versions.stdout()).toBeDefined()
          expect(seen.filter((v) => v.ready === "True" && v.routes !== "True"), versions.stdout()).toEqual([])
        }),
      timeout
    )

    it.scoped(
      "the garbage collector removes a deleted Pod's Service, Ingress and HTTPRoutes",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const ingressPod = yield* e2e.sessionPod("collected-ingress", [8080])
          const gatewayPod = yield* e2e.sessionPod("collected-gateway", [8080, 8081])
          const published = yield* Effect.all([
            e2e.cli(publishArgs("collected-ingress", ingressPod, [8080]), { mode: "ingress" }),
            e2e.cli(publishArgs("collected-gateway", gatewayPod, [8080, 8081]), { mode: "gateway" })
          ], { concurrency: "unbounded" })
          expect(published.map((run) => run.code), published.map((run) => run.stderr).join("\n")).toEqual([0, 0])
          const objects = [
            `ingress/${sessionObjectName("collected-ingress")}`,
            `service/${sessionObjectName("collected-ingress")}`,
            `httproute/${httpRouteName("collected-gateway", 8080)}`,
            `httproute/${httpRouteName("collected-gateway", 8081)}`,
            `service/${sessionObjectName("collected-gateway")}`
          ]
          // Each one is there, owned by its Pod.
          const owners = yield* e2e.kubectl([
            "get",
            "-n",
            e2e.namespace,
            ...objects,
            "-o",
            `jsonpath={range .items[*]}{.metadata.ownerReferences[0].uid}{"\\n"}{end}`
          ])
          expect(owners.split("\n").filter((uid) => uid !== "").sort()).toEqual(
            [ingressPod.uid, ingressPod.uid, gatewayPod.uid, gatewayPod.uid, gatewayPod.uid].sort()
          )
          yield* e2e.kubectl(["delete", "-n", e2e.namespace, `pod/${ingressPod.name}`, `pod/${gatewayPod.name}`])
          yield* e2e.kubectl([
            "wait",
            "-n",
            e2e.namespace,
            "--for=delete",
            ...objects,
            `--timeout=${Duration.toSeconds(e2e.target.waits.route)}s`
          ])
          expect(yield* sessionObjects(e2e, "services,ingresses,httproutes", "collected-ingress")).toEqual([])
          expect(yield* sessionObjects(e2e, "services,ingresses,httproutes", "collected-gateway")).toEqual([])
        }),
      timeout
    )

    it.scoped.skipIf(restartSkipped)(
      "a restart of the API server under publish --follow: nothing is reported wrong meanwhile, and verdicts resume",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const pod = yield* e2e.sessionPod("restarted", [8080])
          const follow = yield* e2e.startCli(
            [...publishArgs("restarted", pod, [8080]).filter((arg) => arg !== "--watch"), "--follow"],
            { mode: "gateway" }
          )
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          yield* follow.stdoutLine((line) => line.includes(`"state":"programmed"`), within)
          const restart = e2e.target.restartApiServer
          if (restart === undefined) return yield* Effect.fail("this target cannot restart its API server")
          yield* restart
          // Verdicts resume: a route deleted after the restart is reported at once.
          yield* e2e.kubectl(["delete", "-n", e2e.namespace, `httproute/${httpRouteName("restarted", 8080)}`])
          yield* follow.stdoutLine((line) => line.includes(`"code":"RouteDeleted"`), within)
          follow.child.kill("SIGINT")
          expect((yield* follow.ended()).code).toBe(130)
          // While the API server was away, no host was reported anything but programmed
          // until the deletion: a read that failed is not a verdict.
          const routes = jsonLines(follow.stdout()).filter((event) => event.type === "route")
          const deleted = routes.findIndex((event) => event.state === "unprogrammed")
          expect(routes.slice(0, deleted).filter((event) => event.state !== "pending" && event.state !== "programmed"))
            .toEqual([])
          expect(routes.slice(deleted), follow.stdout()).toMatchObject([{
            state: "unprogrammed",
            code: "RouteDeleted"
          }])
        }),
      timeout
    )
  }
)
