/**
 * The route-health benchmark: the shared watch against polling, side by side, through
 * the public composition (`SessionRouting.layerConfig` over `KubeClientLive` and
 * `RouterConfigLive`), against LocalCluster in its own process over HTTP. Every
 * session is published first; then every host is watched, the controllers start and
 * write status 1 s later, and the run measures what it took to hear of it: requests
 * by verb (from the cluster's `apiserver_request_total`), the lag of each verdict
 * behind its status write, the runner's CPU and heap per route. A scenario may follow
 * only some sessions, or none with a bare `node:http` watch in place of the runner's:
 * what the shared watch, and any watch on this runtime, costs by itself.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect, Fiber, Layer, Ref } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { managedBySelector } from "../src/domain/Manifests.js"
import type { PublishedRoute } from "../src/domain/Routes.js"
import { reportRouteHealth } from "../src/health/RouteHealth.js"
import { KubeClientLive } from "../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../src/layers/RouterConfigLive.js"
import * as SessionRouting from "../src/layers/SessionRouting.js"
import { RouterConfig } from "../src/services/RouterConfig.js"
import { SessionRouter } from "../src/services/SessionRouter.js"
import { bareWatch } from "./bareWatch.js"
import { gc, instantMs, mainThreadCpuMs, percentile } from "./processStats.js"

export interface Scenario {
  readonly mode: "ingress" | "gateway"
  /** `bare`: no route health at all, only `bareWatch` over the same objects (see there). */
  readonly source: "watch" | "poll" | "bare"
  readonly sessions: number
  readonly ports: number
  /**
   * How many sessions' route health runs (the last ones published); every session's
   * when absent. With fewer, the rest of the run is the shared watch by itself: every
   * object is still listed, cached and has its status write delivered, and CPU is
   * still counted per route of all of them.
   */
  readonly followed?: number
}

export interface Measured {
  readonly scenario: Scenario
  readonly routes: number
  /** Requests the cluster served from the start of the watches to the last verdict, by verb. */
  readonly requests: Readonly<Record<string, number>>
  readonly requestsTotal: number
  /** Verdict after the controller's status write, ms. */
  readonly lag: { readonly p50: number; readonly p99: number; readonly max: number }
  /** From the last status write to the last verdict, ms. */
  readonly lastWriteToLastVerdictMs: number
  /** Runner CPU (user + system) from the start of the watches to the last verdict, per route, ms. */
  readonly cpuPerRouteMs: number
  /** Of which forking the runner's own fiber per session costs by itself, measured alongside, per route, ms. */
  readonly fiberCpuPerRouteMs: number
  /**
   * Of which the main (JavaScript) thread's, per route, ms; the rest is V8's helper
   * threads (concurrent garbage collection, compilation). Undefined off Linux.
   */
  readonly mainThreadCpuPerRouteMs: number | undefined
  /**
   * Runner heap held by the watches while every host is pending, per route, KiB: in
   * all (`gross`), and beyond the fiber the runner runs each session's watch on
   * (`net`), which is the runner's, measured alongside as `fiberPerSessionKiB`.
   */
  readonly heapPerRouteKiB: { readonly gross: number; readonly net: number; readonly fiberPerSessionKiB: number }
  /** Hosts that did not end programmed (should be none). */
  readonly notProgrammed: number
}

const CONTROLLER_DELAY_MS = 1_000
const here = path.dirname(fileURLToPath(import.meta.url))

/** What the cluster process prints first: where it listens and what it set up. */
export interface ClusterInfo {
  readonly kubeconfig: string
  readonly server: string
  readonly namespace: string
  readonly baseDomain: string
  readonly ingressClassName: string
  readonly gateway: { readonly namespace: string; readonly name: string }
}

export interface ClusterProcessOptions {
  /** Flags for its node (e.g. `--cpu-prof` to see where the cluster spends its time). */
  readonly nodeFlags?: ReadonlyArray<string>
  /** How long after seeing an object a controller writes its status, ms; default 1 s. */
  readonly controllerDelayMs?: number
  /**
   * `on-go` (the default): the controllers start when `go()` is called; `at-once`: the
   * cluster is built as `session-routing cluster` builds it, its controllers running
   * from the start.
   */
  readonly controllers?: "on-go" | "at-once"
  /**
   * bench/clusterProcess.ts as built into a project that installed the packed packages
   * (bench/installed.ts), run by plain Node; the sources through tsx when absent.
   */
  readonly script?: string
}

/** A running cluster process. */
export interface ClusterProcess {
  readonly info: ClusterInfo
  /** Its process id. */
  readonly pid: number
  /** Starts the controllers (`on-go` only). */
  readonly go: () => void
  /** The cluster process's own CPU so far (user + system, every thread), ms. */
  readonly cpuMs: Effect.Effect<number>
  /** Ends it as `endByStdin` does. */
  readonly end: Effect.Effect<void>
}

/**
 * Ends a bench child process by closing its stdin (each ends itself then, writing a
 * profile its node flags asked for), and kills it with `signal` if it has not exited
 * within 10 s.
 */
export const endByStdin = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.async<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done(Effect.void)
    child.on("exit", () => done(Effect.void))
    child.stdin?.end()
  }).pipe(
    Effect.timeoutTo({
      duration: "10 seconds",
      onSuccess: () => Effect.void,
      onTimeout: () => Effect.sync(() => void child.kill(signal))
    }),
    Effect.flatten
  )

/** Starts the cluster process; its status writes land in `writes` as they are printed. */
export const clusterProcess = (writes: Map<string, number>, options: ClusterProcessOptions = {}) =>
  Effect.acquireRelease(
    Effect.async<ClusterProcess>((resume) => {
      const child = spawn(process.execPath, [
        ...(options.nodeFlags ?? []),
        ...(options.script !== undefined
          ? [options.script]
          : ["--import", "tsx", path.join(here, "clusterProcess.ts")]),
        String(options.controllerDelayMs ?? CONTROLLER_DELAY_MS),
        options.controllers ?? "on-go"
      ], {
        stdio: ["pipe", "pipe", "inherit"]
      })
      // Answers to `cpu` come in the order asked.
      const cpuAsked: Array<(ms: number) => void> = []
      let started = false
      readline.createInterface({ input: child.stdout }).on("line", (line) => {
        const message = JSON.parse(line) as
          | ClusterInfo
          | { readonly wrote: string; readonly at: number }
          | { readonly cpu: number }
        if ("wrote" in message) {
          writes.set(message.wrote, message.at)
        } else if ("cpu" in message) {
          cpuAsked.shift()?.(message.cpu)
        } else if (!started) {
          started = true
          resume(Effect.succeed({
            info: message,
            pid: child.pid!,
            go: () => child.stdin.write("go\n"),
            cpuMs: Effect.async<number>((answer) => {
              cpuAsked.push((ms) => answer(Effect.succeed(ms)))
              child.stdin.write("cpu\n")
            }).pipe(
              Effect.timeoutFail({
                duration: "10 seconds",
                onTimeout: () => new Error("the cluster process did not report its CPU in 10 s")
              }),
              Effect.orDie
            ),
            end: endByStdin(child, "SIGTERM")
          }))
        }
      })
    }),
    (cluster) => cluster.end
  )

/**
 * `apiserver_request_total` from the cluster's /metrics, summed by verb. The scrapes
 * of /metrics are counted there too (as a real API server counts them), and they are
 * the bench's, not the runner's: left out.
 */
export const requestsByVerb = (server: string) =>
  Effect.promise(async () => {
    const text = await (await fetch(`${server}/metrics`)).text()
    const byVerb: Record<string, number> = {}
    for (const line of text.split("\n")) {
      const match = /^apiserver_request_total\{([^}]*)\}\s+([0-9.e+]+)$/.exec(line)
      if (match === null || /(?:^|,)subresource="\/metrics"/.test(match[1]!)) continue
      const verb = /(?:^|,)verb="([^"]*)"/.exec(match[1]!)?.[1] ?? "?"
      byVerb[verb] = (byVerb[verb] ?? 0) + Number(match[2])
    }
    return byVerb
  })

/** Requests by verb made between two `requestsByVerb` reads; verbs with none left out. */
export const difference = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([verb, n]) => [verb, n - (before[verb] ?? 0)] as const)
      .filter(([, n]) => n > 0)
  )

const specOf = (i: number, ports: number) => ({
  sessionId: `b${i}`,
  podName: `telo-run-b${i}`,
  podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  ports: Array.from({ length: ports }, (_, p) => ({ port: 8080 + p, protocol: "tcp" as const }))
})

const objectOf = (mode: Scenario["mode"], sessionId: string, route: PublishedRoute) =>
  mode === "ingress" ? `Ingress/telo-run-${sessionId}` : `HTTPRoute/telo-run-${sessionId}-${route.port}`

/** One scenario, in its own cluster process. */
export const runScenario = (scenario: Scenario): Effect.Effect<Measured> =>
  Effect.scoped(
    Effect.gen(function*() {
      const writes = new Map<string, number>()
      const cluster = yield* clusterProcess(writes)
      const { info } = cluster
      const kc = new k8s.KubeConfig()
      kc.loadFromString(info.kubeconfig)
      const layers = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(KubeClientLive.layerFromKubeConfig(kc)),
        Layer.provideMerge(
          RouterConfigLive.layerFrom({
            mode: scenario.mode,
            baseDomain: info.baseDomain,
            sessionNamespace: info.namespace,
            ingressClassName: info.ingressClassName,
            gatewayName: info.gateway.name,
            gatewayNamespace: info.gateway.namespace,
            statusSource: scenario.source === "bare" ? "watch" : scenario.source,
            routeReadyTimeoutMs: 120_000
          })
        ),
        Layer.orDie
      )
      return yield* Effect.gen(function*() {
        const router = yield* SessionRouter
        const config = yield* RouterConfig
        // Publish every session first, as one runtime would for a burst of sessions.
        const published = yield* Effect.forEach(
          Array.from({ length: scenario.sessions }, (_, i) => specOf(i, scenario.ports)),
          (spec) => Effect.map(Effect.orDie(router.publish(spec)), (routes) => ({ sessionId: spec.sessionId, routes })),
          { concurrency: 32 }
        )
        const routes = published.reduce((n, s) => n + s.routes.length, 0)
        const verdicts = yield* Ref.make<
          Array<{ readonly object: string; readonly at: number; readonly programmed: boolean }>
        >([])

        // What one fiber per session costs the runner by itself, forked the same way the
        // watches are: a runner runs each session on a fiber of its own anyway.
        gc()
        const heapIdle = process.memoryUsage().heapUsed
        const cpuIdle = process.cpuUsage()
        const idle = yield* Effect.forEach(published, () => Effect.never, { concurrency: "unbounded", discard: true })
          .pipe(
            Effect.fork
          )
        yield* Effect.sleep("100 millis")
        const cpuForked = process.cpuUsage(cpuIdle)
        gc()
        const fiberPerSessionKiB = (process.memoryUsage().heapUsed - heapIdle) / 1024 / published.length
        yield* Fiber.interrupt(idle)

        gc()
        const heapBefore = process.memoryUsage().heapUsed
        const requestsBefore = yield* requestsByVerb(info.server)
        const cpuBefore = process.cpuUsage()
        const mainBefore = mainThreadCpuMs()
        const followed = scenario.source === "bare"
          ? []
          : scenario.followed === undefined
          ? published
          : published.slice(published.length - scenario.followed)
        const watching = yield* (scenario.source === "bare"
          ? bareWatch({
            server: info.server,
            token: kc.getCurrentUser()?.token,
            namespace: info.namespace,
            mode: scenario.mode,
            labelSelector: managedBySelector(config.managedBy),
            objects: scenario.mode === "ingress" ? published.length : routes
          })
          : Effect.forEach(
            followed,
            ({ routes, sessionId }) =>
              reportRouteHealth({ sessionId, routes }, (event) =>
                event._tag === "Route" && event.state !== "pending"
                  ? Ref.update(verdicts, (all) => {
                    all.push({
                      object: objectOf(scenario.mode, sessionId, event.route),
                      at: instantMs(),
                      programmed: event.state === "programmed"
                    })
                    return all
                  })
                  : Effect.void),
            { concurrency: "unbounded", discard: true }
          )).pipe(Effect.fork)
        // Every host is being watched and is pending: what the watches hold now. The
        // forced collection is the bench's, not the runner's: its CPU is left out.
        yield* Effect.sleep("500 millis")
        const cpuStarting = process.cpuUsage(cpuBefore)
        const mainStarting = mainThreadCpuMs()
        gc()
        const heapWatching = process.memoryUsage().heapUsed
        const cpuAfterGc = process.cpuUsage()
        const mainAfterGc = mainThreadCpuMs()
        cluster.go()
        // A watch that died would end the run early and measure nothing: its defect ends the bench.
        yield* Fiber.join(watching)
        if (followed.length < published.length) {
          // The followed sessions may settle before the others' status writes: the
          // watch's work ends with the last of them, plus the moment its event takes.
          const objects = new Set(
            published.flatMap(({ routes, sessionId }) =>
              routes.map((route) => objectOf(scenario.mode, sessionId, route))
            )
          )
          const unwritten = () => [...objects].filter((object) => !writes.has(object))
          yield* Effect.sleep("10 millis").pipe(
            Effect.repeat({ until: () => unwritten().length === 0 }),
            // As long as a route's own deadline: a controller that never writes ends the run.
            Effect.timeoutFail({
              duration: "120 seconds",
              onTimeout: () => new Error(`no status was written for ${unwritten().length} routed objects in 120 s`)
            }),
            Effect.orDie
          )
          yield* Effect.sleep("100 millis")
        }
        const cpuSettling = process.cpuUsage(cpuAfterGc)
        const mainSettled = mainThreadCpuMs()
        const cpu = { user: cpuStarting.user + cpuSettling.user, system: cpuStarting.system + cpuSettling.system }
        const requests = difference(yield* requestsByVerb(info.server), requestsBefore)

        const seen = yield* Ref.get(verdicts)
        const lags = seen.flatMap(({ at, object }) => {
          const wrote = writes.get(object)
          return wrote === undefined ? [] : [at - wrote]
        }).sort((a, b) => a - b)
        const lastWrite = Math.max(...writes.values())
        const lastVerdict = Math.max(...seen.map((v) => v.at))
        return {
          scenario,
          routes,
          requests,
          requestsTotal: Object.values(requests).reduce((a, b) => a + b, 0),
          lag: { p50: percentile(lags, 0.5), p99: percentile(lags, 0.99), max: lags.at(-1) ?? 0 },
          lastWriteToLastVerdictMs: lastVerdict - lastWrite,
          cpuPerRouteMs: (cpu.user + cpu.system) / 1_000 / routes,
          fiberCpuPerRouteMs: (cpuForked.user + cpuForked.system) / 1_000 / routes,
          mainThreadCpuPerRouteMs: mainBefore === undefined || mainStarting === undefined ||
              mainAfterGc === undefined || mainSettled === undefined
            ? undefined
            : (mainStarting - mainBefore + mainSettled - mainAfterGc) / routes,
          heapPerRouteKiB: {
            gross: (heapWatching - heapBefore) / 1024 / routes,
            net: (heapWatching - heapBefore - fiberPerSessionKiB * 1024 * published.length) / 1024 / routes,
            fiberPerSessionKiB
          },
          notProgrammed: seen.filter((v) => !v.programmed).length
        } satisfies Measured
      }).pipe(Effect.provide(layers))
    })
  )

/** How long the cluster process's controllers wait before writing status, in the scale and controller runs. */
export const SCALE_CONTROLLER_DELAY_MS = 5_000

/** A kubeconfig file for a process the bench starts, in a fresh temporary folder removed with the scope. */
export const kubeconfigFile = (text: string, prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `session-routing-${prefix}-`))
      fs.writeFileSync(path.join(dir, "kubeconfig"), text, { mode: 0o600 })
      return dir
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((dir) => path.join(dir, "kubeconfig")))

/**
 * The environment of a process the bench measures: this one without any session-routing,
 * KUBECONFIG or OTEL_* variable (a developer's shell must not change the defaults
 * measured), plus what locates the cluster: its kubeconfig, namespace, base domain and
 * IngressClass.
 */
export const measuredEnv = (info: ClusterInfo, kubeconfig: string): NodeJS.ProcessEnv => {
  const ENV = RouterConfigLive.ENV
  const ours = new Set<string>([...Object.values(ENV), "KUBECONFIG"])
  return {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !ours.has(name) && !name.startsWith("OTEL_"))
    ),
    KUBECONFIG: kubeconfig,
    [ENV.baseDomain]: info.baseDomain,
    [ENV.sessionNamespace]: info.namespace,
    [ENV.ingressClassName]: info.ingressClassName
  }
}
