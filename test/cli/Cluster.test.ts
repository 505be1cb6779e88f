/**
 * `session-routing cluster`: its flags, checked in-process through `Cli.run`, and the
 * command itself as a real process: the URL lines first, a working API server and
 * data plane behind them, and a clean exit 0 on SIGINT and SIGTERM.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Option, Schedule } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as YAML from "yaml"
import { parseClusterInput, sessionClusterOptions } from "../../src/cli/commands/Cluster.js"
import { startCli } from "./CliProcess.js"
import { startClusterProcess } from "./ClusterProcess.js"
import { runCli } from "./TestCli.js"

const flags = {
  port: "0",
  writeKubeconfig: Option.none<string>(),
  noIngressController: false,
  noGatewayController: false,
  controllerDelay: "1000",
  controllerManager: false,
  rbac: false
}

/** GET `url` and its JSON body. */
const getJson = (url: string) =>
  Effect.tryPromise((signal) =>
    fetch(url, { signal }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }))
  )

/** GET `/` on the data plane with `host` in the Host header (fetch may not set Host). */
const getVia = (base: string, host: string) =>
  Effect.tryPromise(
    (signal) =>
      new Promise<{ status: number; routedBy: string | undefined; body: string }>((resolve, reject) => {
        const url = new URL(base)
        const req = Http.request(
          { host: url.hostname, port: url.port, path: "/", headers: { host }, agent: false, signal },
          (res) => {
            let body = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => (body += chunk))
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                routedBy: res.headers["x-local-cluster-routed-by"] as string,
                body
              }))
          }
        )
        req.on("error", reject)
        req.end()
      })
  )

describe("session-routing cluster flags", () => {
  it("defaults to a free port, a temporary kubeconfig and both controllers after one second", () => {
    expect(parseClusterInput(flags)).toEqual(
      Either.right({
        port: 0,
        kubeconfigPath: Option.none(),
        ingressController: true,
        gatewayController: true,
        delay: Duration.millis(1000),
        controllerManager: false,
        rbac: false
      })
    )
  })

  it("turns each controller off on its own and passes never through as the silent controller", () => {
    const input = parseClusterInput({ ...flags, noIngressController: true, controllerDelay: "never" })
    expect(input._tag).toBe("Right")
    if (input._tag !== "Right") return
    expect(sessionClusterOptions(input.right)).toEqual({
      port: 0,
      ingress: false,
      gateway: { delay: "never" },
      endpointSlices: true
    })
  })

  it("always runs the EndpointSlice controller, and the garbage collector only when --controller-manager asks", () => {
    // Without slices the session Pod's workload would never take its Service's traffic.
    const input = parseClusterInput({ ...flags, controllerManager: true })
    expect(input._tag).toBe("Right")
    if (input._tag !== "Right") return
    expect(sessionClusterOptions(input.right)).toMatchObject({ controllerManager: true })
    expect(sessionClusterOptions(input.right)).not.toHaveProperty("endpointSlices")
  })

  it.effect("refuses a port outside 0..65535 with one line naming the flag", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["cluster", "--port", "70000"])
      expect(result).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: --port=\"70000\" must be a port number, 0..65535 (0 picks a free one)\n"
      })
    }))

  it.effect("refuses a controller delay that is neither milliseconds nor never", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["cluster", "--controller-delay", "1s"])
      expect(result).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: --controller-delay=\"1s\" must be whole milliseconds (e.g. 1000) or never\n"
      })
    }))
})

describe("session-routing cluster as a process", () => {
  // The kubeconfig is written under a temporary name first, which the error used to name.
  it.live(
    "exits 1 naming the kubeconfig path and its missing directory when the directory does not exist",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const dir = mkdtempSync(join(tmpdir(), "cluster-test-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
          const kubeconfig = join(dir, "no-such-dir", "kc")
          const proc = yield* startCli(["cluster", "--write-kubeconfig", kubeconfig], {})
          expect(yield* proc.ended()).toEqual({ code: 1, signal: null })
          expect([proc.stdout(), proc.stderr()]).toEqual([
            "",
            `error: cannot write the kubeconfig to ${kubeconfig}: the directory ${
              join(dir, "no-such-dir")
            } does not exist\n`
          ])
        })
      ),
    60_000
  )

  it.live(
    "prints its URLs first, serves the session namespace, IngressClass and Gateway, and exits 0 on SIGINT",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const dir = mkdtempSync(join(tmpdir(), "cluster-test-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
          const kubeconfig = join(dir, "kubeconfig")
          const proc = yield* startClusterProcess(["--write-kubeconfig", kubeconfig, "--controller-delay", "50"])

          // The first line is the server, so a script can wait for it alone.
          expect(proc.stdout().split("\n")[0]).toBe(`server: ${proc.info.server}`)
          expect(proc.info).toEqual({
            server: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
            "data-plane": expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
            kubeconfig,
            namespace: "telo-sessions",
            "base-domain": "sessions.localtest.me",
            "ingress-class": "local",
            gateway: "telo-sessions/sessions"
          })
          const config = YAML.parse(readFileSync(kubeconfig, "utf8"))
          expect(config.clusters[0].cluster.server).toBe(proc.info.server)

          const namespace = yield* getJson(`${proc.info.server}/api/v1/namespaces/telo-sessions`)
          expect(namespace.status).toBe(200)
          expect(namespace.body.metadata.name).toBe("telo-sessions")
          const ingressClass = yield* getJson(`${proc.info.server}/apis/networking.k8s.io/v1/ingressclasses/local`)
          expect(ingressClass.body.spec).toEqual({ controller: "session-routing.dev/local-ingress" })
          // The gateway controller runs: the sample Gateway becomes Programmed.
          const gateway = yield* getJson(
            `${proc.info.server}/apis/gateway.networking.k8s.io/v1/namespaces/telo-sessions/gateways/sessions`
          ).pipe(
            Effect.filterOrFail(
              (g) =>
                g.body.status?.conditions?.some((c: any) => c.type === "Programmed" && c.status === "True") === true,
              () => "not programmed yet"
            ),
            Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), times: 100 })
          )
          expect(gateway.body.spec.gatewayClassName).toBe("local")

          // Nothing is routed yet: the data plane answers like an ingress default backend.
          const answer = yield* getVia(proc.info["data-plane"], "8080-nobody.sessions.localtest.me")
          expect(answer.status).toBe(404)
          expect(answer.routedBy).toBe("default-backend")

          proc.child.kill("SIGINT")
          expect(yield* proc.ended()).toEqual({ code: 0, signal: null })
          expect(proc.stderr()).toContain("SIGINT: stopping the cluster\ncluster stopped\n")
          // A kubeconfig the person asked for stays where they asked for it.
          expect(existsSync(kubeconfig)).toBe(true)
        })
      ),
    60_000
  )

  it.live(
    "with --rbac serves HTTPS to the admin, and writes a runner kubeconfig that may publish in ingress mode and nothing more",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const dir = mkdtempSync(join(tmpdir(), "cluster-test-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
          const kubeconfig = join(dir, "local.kubeconfig")
          const proc = yield* startClusterProcess([
            "--rbac",
            "--write-kubeconfig",
            kubeconfig,
            "--controller-delay",
            "50"
          ])
          expect(proc.info.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
          const runner = join(dir, "runner-local.kubeconfig")
          yield* Effect.sync(() => proc.stdout()).pipe(
            Effect.filterOrFail((out) => out.includes("runner: "), () => "runner lines not printed yet"),
            Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), times: 100 })
          )
          expect(proc.stdout()).toContain(
            `runner-kubeconfig: ${runner}\nrunner: system:serviceaccount:telo-sessions:session-routing\n`
          )
          const env = { SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me", SESSION_INGRESS_CLASS: "local" }
          const session = ["--session", "s1", "--pod", "telo-run-s1", "--pod-uid", "1", "--port", "8080"]
          const published = yield* runCli(["publish", "--kubeconfig", runner, ...session, "--watch"], env)
          expect([published.exitCode, published.stderr]).toEqual([0, ""])
          expect(published.stdout).toContain("8080-s1.sessions.localtest.me programmed")
          // Gateway mode is not in deploy/rbac.yaml: its first step is refused, nothing written.
          const gateway = yield* runCli(["publish", "--kubeconfig", runner, "--mode", "gateway", ...session], {
            SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me",
            SESSION_GATEWAY_NAME: "sessions"
          })
          expect(gateway.exitCode).toBe(1)
          expect(gateway.stderr).toContain(
            "User \"system:serviceaccount:telo-sessions:session-routing\" cannot patch resource \"httproutes\""
          )
          expect(gateway.stderr).toContain("nothing was changed")
          expect((yield* runCli(["unpublish", "--kubeconfig", runner, "--session", "s1"], env)).exitCode).toBe(0)
          proc.child.kill("SIGTERM")
          expect(yield* proc.ended()).toEqual({ code: 0, signal: null })
        })
      ),
    60_000
  )

  // Without the flag the EndpointSlice controller alone runs; with it, the garbage collector too.
  for (const extra of [[], ["--controller-manager"]]) {
    it.live(
      `starts the session Pod telo-run-demo, whose workload answers 200 once published with the uid the hint prints${
        extra.length > 0 ? `, with ${extra.join(" ")}` : ""
      }`,
      () =>
        Effect.scoped(
          Effect.gen(function*() {
            const proc = yield* startClusterProcess(["--controller-delay", "50", ...extra])
            const pod = yield* getJson(`${proc.info.server}/api/v1/namespaces/telo-sessions/pods/telo-run-demo`)
            expect([pod.status, pod.body.metadata.labels]).toEqual([200, { "telo.run/session-id": "demo" }])
            const ready = pod.body.status.conditions.find((c: any) => c.type === "Ready")
            expect(ready.status).toBe("True")

            // The hint names the Pod's own uid: with the garbage collector on, objects owned
            // by a uid that does not exist (the `--pod-uid 1` it printed before) went at once.
            const uid: string = pod.body.metadata.uid
            const hint = yield* Effect.sync(() => proc.stderr()).pipe(
              Effect.filterOrFail((err) => err.includes("curl "), () => "hints not printed yet"),
              Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), times: 100 })
            )
            const publish = hint.split("\n").find((line) =>
              line.includes(" SESSION_INGRESS_CLASS=local session-routing")
            )
            expect(publish).toContain(`--session demo --pod telo-run-demo --pod-uid ${uid} --port 8080 --watch`)
            expect(hint).toContain(`curl -H 'Host: 8080-demo.sessions.localtest.me' ${proc.info["data-plane"]}/`)
            expect(hint).not.toContain("--pod-uid 1 ")

            const env = { SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me", SESSION_INGRESS_CLASS: "local" }
            const session = ["--session", "demo", "--pod", "telo-run-demo", "--pod-uid", uid, "--port", "8080"]
            const published = yield* runCli(
              ["publish", "--kubeconfig", proc.info.kubeconfig, ...session, "--watch"],
              env
            )
            expect([published.exitCode, published.stderr]).toEqual([0, ""])
            // Through the data plane, to the workload the command registered for the Pod
            // (the EndpointSlice controller lists it, as it does on every cluster).
            const answer = yield* getVia(proc.info["data-plane"], "8080-demo.sessions.localtest.me").pipe(
              Effect.filterOrFail((a) => a.status === 200, (a) => `${a.status} ${a.body}`),
              Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), times: 100 })
            )
            expect(answer.body).toBe("hello from session demo port 8080\n")
            // The objects stay, the garbage collector's run or not: their owner exists.
            const service = yield* getJson(`${proc.info.server}/api/v1/namespaces/telo-sessions/services/telo-run-demo`)
            expect(service.status).toBe(200)

            proc.child.kill("SIGTERM")
            expect(yield* proc.ended()).toEqual({ code: 0, signal: null })
          })
        ),
      60_000
    )
  }

  it.live(
    "exits 0 on SIGTERM and removes the temporary kubeconfig it wrote",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const proc = yield* startClusterProcess([])
          expect(proc.info.kubeconfig).toMatch(/session-routing-cluster-.*\/kubeconfig$/)
          expect(existsSync(proc.info.kubeconfig)).toBe(true)
          proc.child.kill("SIGTERM")
          expect(yield* proc.ended()).toEqual({ code: 0, signal: null })
          expect(existsSync(proc.info.kubeconfig)).toBe(false)
        })
      ),
    60_000
  )
})
