/**
 * The user journeys end to end, through the `session-routing` binary and kubectl, against
 * the cluster test/e2e/E2eTarget.ts picks: with `npm run test:cluster`, the real control
 * plane (kube-apiserver, its controllers, Traefik) or the cluster a kubeconfig names; else
 * LocalCluster inside `npm test`. The assertions are the same on each; only the waits
 * differ. docs/e2e.md describes the setups.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { httpRouteName, LABEL_SESSION_ID, sessionObjectName } from "../../src/domain/Manifests.js"
import type { HttpRoute, KubeObject, Pod, Service } from "../../src/domain/Objects.js"
import { ENDPOINTS_ANNOTATION, ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { jsonLines } from "../cli/CliCluster.js"
import type { CliProcess } from "../cli/CliProcess.js"
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

/**
 * `session-routing controller` in gateway mode for the journey, stopped with SIGTERM at
 * its end: a replica that steps down releases its Lease, so the next journey's controller
 * need not wait for it to expire.
 */
const startController = (e2e: E2eRun) =>
  Effect.gen(function*() {
    const controller = yield* e2e.startCli(["controller", "-o", "json"], { mode: "gateway" })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => controller.child.kill("SIGTERM")).pipe(Effect.zipRight(Effect.ignore(controller.ended())))
    )
    return controller
  })

/** One line of `controller -o json`: a condition it wrote on a Pod. */
interface ConditionLine {
  readonly type: "condition"
  readonly pod: string
  readonly status: string
  readonly reason: string
  readonly message: string
}

const conditionLine = (line: string): ConditionLine | undefined => {
  try {
    const parsed = JSON.parse(line) as ConditionLine
    return parsed.type === "condition" ? parsed : undefined
  } catch {
    return undefined
  }
}

/** Waits until the controller says it wrote, on `pod`, a condition `accept` takes. */
const conditionWritten = (
  controller: CliProcess,
  pod: string,
  accept: (condition: ConditionLine) => boolean,
  within: Duration.Duration
) =>
  Effect.map(
    controller.stdoutLine((line) => {
      const condition = conditionLine(line)
      return condition !== undefined && condition.pod === pod && accept(condition)
    }, within),
    (line) => conditionLine(line)!
  )

/** The controller's first verdict on `pod`: the first condition it wrote there that is not Unknown (pending). */
const verdict = (controller: CliProcess, pod: string, within: Duration.Duration) =>
  conditionWritten(controller, pod, (c) => c.status !== "Unknown", within)

/** One object of the run's namespace as kubectl reads it, `kind/name`. */
const readObject = <A extends KubeObject>(e2e: E2eRun, ref: string) =>
  Effect.map(e2e.kubectl(["get", "-n", e2e.namespace, ref, "-o", "json"]), (out) => JSON.parse(out) as A)

const routesConditionOf = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)

/**
 * Reads until `accept` takes what was read, or `within` passed: for what the controller
 * writes after the line it prints (the mark comes off after the condition is written).
 */
const eventually = <A>(read: Effect.Effect<A, string>, accept: (value: A) => boolean, within: Duration.Duration) =>
  read.pipe(
    Effect.filterOrFail(accept, (value) => `not so within ${Duration.format(within)}: ${JSON.stringify(value)}`),
    Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.upTo(within)))
  )

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
          const controller = yield* startController(e2e)
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

    // A warm pool hands a routed Pod to its next user by relabelling it: whoever held the
    // old session's URL no longer reaches the Pod, and the old id is free for another Pod.
    it.scoped(
      "controller mode: a routed Pod relabelled to another session forgets the old one and routes the new one",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const controller = yield* startController(e2e)
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          const pod = yield* e2e.sessionPod("pool-first", [8080], { gated: true, name: "pooled" })
          yield* conditionWritten(controller, pod.name, (c) => c.status === "True", within)
          expect(yield* sessionObjects(e2e, "services,httproutes", "pool-first")).toEqual([
            `httproute.gateway.networking.k8s.io/${httpRouteName("pool-first", 8080)}`,
            `service/${sessionObjectName("pool-first")}`
          ])

          yield* e2e.kubectl([
            "label",
            "-n",
            e2e.namespace,
            `pod/${pod.name}`,
            `${SESSION_LABEL}=pool-next`,
            "--overwrite"
          ])
          const nextHost = `8080-pool-next.${e2e.target.names.baseDomain}`
          const routed = yield* conditionWritten(
            controller,
            pod.name,
            (c) => c.status === "True" && c.message.includes(nextHost),
            within
          )
          expect(routed.reason).toBe("RoutesProgrammed")
          const relabelled = yield* readObject<Pod>(e2e, `pod/${pod.name}`)
          expect(relabelled.metadata?.labels?.[LABEL_SESSION_ID]).toBe("pool-next")
          expect(relabelled.metadata?.annotations?.[ENDPOINTS_ANNOTATION]).toContain(nextHost)
          // The old session was unpublished before the new one was routed.
          expect(yield* sessionObjects(e2e, "services,httproutes", "pool-first")).toEqual([])
          expect(yield* sessionObjects(e2e, "services,httproutes", "pool-next")).toEqual([
            `httproute.gateway.networking.k8s.io/${httpRouteName("pool-next", 8080)}`,
            `service/${sessionObjectName("pool-next")}`
          ])
          const route = yield* readObject<HttpRoute>(e2e, `httproute/${httpRouteName("pool-next", 8080)}`)
          expect(route.metadata?.ownerReferences?.map((owner) => owner.uid)).toEqual([pod.uid])

          // The old id is free: a new Pod of it is routed, not told the session is taken.
          const next = yield* e2e.sessionPod("pool-first", [8080], { gated: true })
          expect(yield* verdict(controller, next.name, within)).toMatchObject({
            status: "True",
            reason: "RoutesProgrammed"
          })
        }),
      timeout
    )

    // Taking the session label off a routed Pod takes its routes down but not the Pod,
    // which says why on its condition and, gated on it, turns unready.
    it.scoped(
      "controller mode: the session label taken off a routed Pod unpublishes its session and unmarks the Pod",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const controller = yield* startController(e2e)
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          // Served, so that its containers are ready and the gate alone decides Ready.
          const port = yield* e2e.target.servedPort(8080)
          const pod = yield* e2e.sessionPod("unlabelled", [port], { gated: true, serve: true })
          yield* conditionWritten(controller, pod.name, (c) => c.status === "True", within)
          const waitReady = (ready: "True" | "False") =>
            e2e.kubectl([
              "wait",
              "-n",
              e2e.namespace,
              `--for=condition=Ready=${ready}`,
              `pod/${pod.name}`,
              `--timeout=${Duration.toSeconds(within)}s`
            ])
          yield* waitReady("True")

          yield* e2e.kubectl(["label", "-n", e2e.namespace, `pod/${pod.name}`, `${SESSION_LABEL}-`])
          const removed = yield* conditionWritten(controller, pod.name, (c) => c.status === "False", within)
          expect(removed.reason).toBe("SessionLabelRemoved")
          expect(removed.message).toContain(`the label ${SESSION_LABEL} was removed: session unlabelled`)
          // The Service selects its Pod by the mark, which goes with the endpoints annotation.
          const unmarked = yield* eventually(
            readObject<Pod>(e2e, `pod/${pod.name}`),
            (p) => p.metadata?.labels?.[LABEL_SESSION_ID] === undefined,
            within
          )
          expect(unmarked.metadata?.annotations?.[ENDPOINTS_ANNOTATION]).toBeUndefined()
          expect(routesConditionOf(unmarked)).toMatchObject({ status: "False", reason: "SessionLabelRemoved" })
          expect(yield* sessionObjects(e2e, "services,httproutes", "unlabelled")).toEqual([])
          yield* waitReady("False")

          // The id is free: another Pod of the session is routed.
          const later = yield* e2e.sessionPod("unlabelled", [8080], { gated: true, name: "unlabelled-later" })
          expect(yield* verdict(controller, later.name, within)).toMatchObject({
            status: "True",
            reason: "RoutesProgrammed"
          })
        }),
      timeout
    )

    // Two Pods claim one session id (one was routed before a restart or a handover, so it
    // carries the mark): the marked one keeps the id, whichever the controller lists first,
    // and a Pod whose labels were copied from it loses the mark, or the Service would select it too.
    it.scoped(
      "controller mode: of two Pods with one session id, the one marked with it keeps it and the other is told SessionTaken",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          // Both are there when the controller starts; the unmarked one comes first by name and by age.
          const first = yield* e2e.sessionPod("twin", [8080], { gated: true, name: "twin-a" })
          const marked = yield* e2e.sessionPod("twin", [8080], {
            gated: true,
            name: "twin-b",
            labels: { [LABEL_SESSION_ID]: "twin" }
          })
          const controller = yield* startController(e2e)
          expect(yield* verdict(controller, marked.name, within)).toMatchObject({
            status: "True",
            reason: "RoutesProgrammed"
          })
          const taken = yield* verdict(controller, first.name, within)
          expect(taken).toMatchObject({ status: "False", reason: "SessionTaken" })
          expect(taken.message).toContain(marked.name)
          for (const ref of [`service/${sessionObjectName("twin")}`, `httproute/${httpRouteName("twin", 8080)}`]) {
            const object = yield* readObject<KubeObject>(e2e, ref)
            expect([ref, object.metadata?.ownerReferences?.map((owner) => owner.name)]).toEqual([ref, [marked.name]])
          }

          const copy = yield* e2e.sessionPod("twin", [8080], {
            gated: true,
            name: "twin-c",
            labels: { [LABEL_SESSION_ID]: "twin" }
          })
          expect(yield* verdict(controller, copy.name, within)).toMatchObject({
            status: "False",
            reason: "SessionTaken"
          })
          yield* eventually(
            readObject<Pod>(e2e, `pod/${copy.name}`),
            (p) => p.metadata?.labels?.[LABEL_SESSION_ID] === undefined,
            within
          )
          const holder = yield* readObject<Pod>(e2e, `pod/${marked.name}`)
          expect(holder.metadata?.labels?.[LABEL_SESSION_ID]).toBe("twin")
          expect(routesConditionOf(holder)?.status).toBe("True")
        }),
      timeout
    )

    // A user's own Service at a session's name is never taken over: the publish refuses
    // and says so on the Pod, and the Service outlives the Pod, having never been owned by it.
    it.scoped(
      "controller mode: a publish refuses a user's Service at the session's name and leaves it as it was, after the Pod too",
      () =>
        Effect.gen(function*() {
          const e2e = yield* E2e
          const within = Duration.sum(e2e.target.waits.route, Duration.seconds(30))
          const name = sessionObjectName("squatted")
          const labels = { [RUN_LABEL]: e2e.runId, app: "users-own" }
          const users = JSON.parse(
            yield* e2e.kubectl(
              ["create", "-f", "-", "-o", "json"],
              JSON.stringify({
                apiVersion: "v1",
                kind: "Service",
                metadata: { name, namespace: e2e.namespace, labels },
                spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }] }
              })
            )
          ) as Service
          const asCreated = (service: Service) => ({
            uid: service.metadata?.uid,
            labels: service.metadata?.labels,
            ownerReferences: service.metadata?.ownerReferences
          })
          const controller = yield* startController(e2e)
          const pod = yield* e2e.sessionPod("squatted", [8080], { gated: true })
          // Owned by the Pod, so that its going shows the garbage collector has run.
          yield* e2e.kubectl(
            ["create", "-f", "-"],
            JSON.stringify({
              apiVersion: "v1",
              kind: "Service",
              metadata: {
                name: "squatted-witness",
                namespace: e2e.namespace,
                ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: pod.name, uid: pod.uid }]
              },
              spec: { ports: [{ port: 80 }] }
            })
          )
          const refused = yield* verdict(controller, pod.name, within)
          expect(refused).toMatchObject({ status: "False", reason: "PublishFailed" })
          expect(refused.message).toContain(`Service ${e2e.namespace}/${name}`)
          expect(refused.message).toContain("it was left as it is")
          expect(asCreated(yield* readObject<Service>(e2e, `service/${name}`))).toEqual({
            uid: users.metadata?.uid,
            labels,
            ownerReferences: undefined
          })
          // All or nothing: no route was written, and the Pod is not marked for a Service that is not the session's.
          expect(yield* sessionObjects(e2e, "services,httproutes", "squatted")).toEqual([])
          expect((yield* readObject<Pod>(e2e, `pod/${pod.name}`)).metadata?.labels?.[LABEL_SESSION_ID]).toBeUndefined()

          yield* e2e.kubectl(["delete", "-n", e2e.namespace, `pod/${pod.name}`])
          yield* e2e.kubectl([
            "wait",
            "-n",
            e2e.namespace,
            "--for=delete",
            "service/squatted-witness",
            `--timeout=${Duration.toSeconds(within)}s`
          ])
          expect(asCreated(yield* readObject<Service>(e2e, `service/${name}`))).toEqual({
            uid: users.metadata?.uid,
            labels,
            ownerReferences: undefined
          })
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
