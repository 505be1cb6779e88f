/**
 * One run of the scale bench (bench/scale.ts) as a runner process of its own, so that its
 * peak RSS and heap are its own. It is built into a project that installed the packed
 * packages (bench/installed.ts) and run there by plain Node: `argv[2]` sessions of three
 * ports published at once through the README's composition, configured by the
 * environment alone, each session's events reported to their end through
 * `reportSession` (the form the README gives runners at scale; `stream` as argv[4]: read
 * from `publishSession`'s stream instead; `floor`: the same requests over bare node:http,
 * no library). Prints what it measured as one JSON line, `{"scale": RunnerResult}`.
 * Against a real API server the bench names the session Pods' uids (`BENCH_POD_UIDS`, a
 * JSON file) and the API server's and etcd's process ids (`BENCH_SERVER_PIDS`), whose CPU
 * the runner reads at the start and the end of its publishes.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as k8s from "@kubernetes/client-node"
import { Deferred, Effect, Fiber, Layer, Metric, MetricState, Option, Stream } from "effect"
// The package as a runner installs it: the packed build, from the project's node_modules.
import * as fs from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import {
  KubeClientLive,
  publishSession,
  reportSession,
  RouterConfig,
  RouterConfigLive,
  type SessionEvent,
  SessionRouter,
  SessionRouting
} from "session-routing"
import { LABEL_SESSION_ID } from "../src/domain/Manifests.js"
import { bareEvents } from "./bareEvents.js"
import { barePublish, type BarePublished } from "./barePublish.js"
import { bareWatch } from "./bareWatch.js"
import { countGcPauses, gc, type GcPauses, instantMs, mainThreadCpuMs } from "./processStats.js"
import { endpointOf } from "./transport.js"

/** The ports of every session. */
const PORTS = [8080, 8081, 8082] as const

/** What the runner reports; times are epoch ms, CPU ms, memory KiB. */
export interface RunnerResult {
  readonly sessions: number
  /** Hosts published: three per session. */
  readonly routes: number
  /** Publishes that failed, and the first one's reason. */
  readonly publishFailed: number
  readonly firstPublishError: string | undefined
  /** From the first publish's start to the last publish's return. */
  readonly publishWallMs: number
  /** The runner's CPU (user + system, every thread) during those. */
  readonly publishCpuMs: number
  /** Its CPU from the first publish to the last host settled and the Events gone quiet. */
  readonly runCpuMs: number
  /** Of `runCpuMs`, the main thread's; undefined off Linux. */
  readonly runMainThreadCpuMs: number | undefined
  /** Garbage collection's pauses of the main thread during the publish phase. */
  readonly publishGc: GcPauses
  /** Each host's terminal `route` event: session id, when (`instantMs`), programmed (1) or not (0). */
  readonly verdicts: ReadonlyArray<readonly [string, number, 0 | 1]>
  /** When each session's publish returned (`instantMs`), by session id. */
  readonly publishedAt: Readonly<Record<string, number>>
  /** Whether the wait for every host ran out first. */
  readonly timedOut: boolean
  /**
   * How late the main thread ran what was due, p99 and max, ms, over the whole run
   * (`monitorEventLoopDelay`): a verdict waits as long behind the work before it.
   */
  readonly loopDelay: { readonly p99: number; readonly max: number }
  /** `process.resourceUsage().maxRSS`, KiB. */
  readonly peakRssKiB: number
  /** Heap used after a full collection once every host settled, less the same before publishing, KiB. */
  readonly heapSettledKiB: number
  /** `session_routing_events_total` by its `outcome` tag. */
  readonly events: Readonly<Record<string, number>>
  /**
   * The server processes' CPU during the publishes, ms, in the order of `BENCH_SERVER_PIDS`
   * (LocalCluster's process, or kube-apiserver's and etcd's); undefined without them.
   */
  readonly serverPublishCpuMs: ReadonlyArray<number> | undefined
}

/** `BENCH_SERVER_PIDS`: the server processes' ids, comma-separated. */
const serverPids = (process.env.BENCH_SERVER_PIDS ?? "").split(",").filter((pid) => pid !== "").map(Number)

/** utime + stime of a process, ms, from /proc (clock ticks of 10 ms). */
const processCpuMs = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The server processes' CPU so far, ms; undefined without their ids. */
const serverCpu = () => serverPids.length === 0 ? undefined : serverPids.map(processCpuMs)

const serverCpuSince = (before: ReturnType<typeof serverCpu>, after: ReturnType<typeof serverCpu>) =>
  before === undefined || after === undefined ? undefined : after.map((ms, i) => ms - before[i]!)

/** Prints what a run measured as its one line, `{"scale": ...}`, and waits until it is written. */
const report = (result: unknown) =>
  Effect.async<void>((resume) => {
    process.stdout.write(`${JSON.stringify({ scale: result })}\n`, () => resume(Effect.void))
  })

const EVENTS_METRIC = "session_routing_events_total"
const EVENT_OUTCOMES = ["written", "aggregated", "filtered", "dropped", "failed"] as const

/** The Event recorder's counter, summed by outcome: 0 for each while it has not counted any. */
const eventsByOutcome = Effect.map(Metric.snapshot, (pairs) => {
  const byOutcome: Record<string, number> = Object.fromEntries(EVENT_OUTCOMES.map((outcome) => [outcome, 0]))
  for (const { metricKey, metricState } of pairs) {
    if (metricKey.name !== EVENTS_METRIC || !MetricState.isCounterState(metricState)) continue
    const outcome = metricKey.tags.find((tag) => tag.key === "outcome")?.value ?? "?"
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + Number(metricState.count)
  }
  return byOutcome
})

const total = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((a, b) => a + b, 0)

/**
 * Waits until the recorder's counts hold still for half a second, at most 30 s: Events
 * are written beside the route events, so some may still be queued when the last host
 * settles, and their cost belongs to the run.
 */
const eventsQuiet = Effect.gen(function*() {
  let last = -1
  for (let quiet = 0; quiet < 2;) {
    const now = total(yield* eventsByOutcome)
    quiet = now === last ? quiet + 1 : 0
    last = now
    yield* Effect.sleep("250 millis")
  }
}).pipe(Effect.timeout("30 seconds"), Effect.ignore)

/** `BENCH_POD_UIDS`: the session Pods' uids in order, where they exist (a real API server's garbage collector would delete objects owned by none). */
const podUids: ReadonlyArray<string> | undefined = process.env.BENCH_POD_UIDS === undefined
  ? undefined
  : JSON.parse(fs.readFileSync(process.env.BENCH_POD_UIDS, "utf8"))

const specOf = (i: number) => ({
  sessionId: `s${i}`,
  podName: `telo-run-s${i}`,
  podUid: podUids?.[i] ?? `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  ports: PORTS.map((port) => ({ port, protocol: "tcp" as const }))
})

/** Every default: the README's composition, configured from the environment. */
const RoutingLive = SessionRouting.layerConfig.pipe(
  Layer.provideMerge(KubeClientLive.layerConfig()),
  Layer.provideMerge(RouterConfigLive.layer)
)

/** The cluster the kubeconfig names, its user's bearer token and certificates: where the bare requests go. */
const bareServer = () => {
  const kc = new k8s.KubeConfig()
  kc.loadFromDefault()
  return endpointOf(kc)
}

/** A run; `reading` says how each session's events are read. */
const run = (sessions: number, settleTimeoutMs: number, reading: "report" | "stream") =>
  Effect.scoped(
    Effect.gen(function*() {
      const verdicts: Array<readonly [string, number, 0 | 1]> = []
      const publishedAt: Record<string, number> = {}
      const publishErrors: Array<string> = []
      let returned = 0
      let publishEnd: PhaseEnd | undefined
      const measuring = startMeasuring()
      const verdict = (spec: ReturnType<typeof specOf>) => (event: SessionEvent) =>
        event.type === "route" && event.state !== "pending"
          ? Effect.sync(() => {
            verdicts.push([spec.sessionId, instantMs(), event.state === "programmed" ? 1 : 0])
          })
          : Effect.void
      // The publish phase ends with the last publish to return, failed or not.
      const returnedOne = Effect.sync(() => {
        if (++returned === sessions) publishEnd = measuring.publishEnded()
      })
      const failed = (error: { readonly message: string }) => Effect.sync(() => publishErrors.push(error.message))
      const everySession = Effect.forEach(
        Array.from({ length: sessions }, (_, i) => specOf(i)),
        (spec) =>
          reading === "report"
            // The first event is `published`: the publish has returned.
            ? reportSession(spec, (event) =>
              event.type === "published"
                ? Effect.zipRight(Effect.sync(() => (publishedAt[spec.sessionId] = instantMs())), returnedOne)
                : verdict(spec)(event))
              .pipe(
                Effect.catchAll((error) => Effect.zipRight(returnedOne, failed(error)))
              )
            : publishSession(spec).pipe(
              Effect.either,
              Effect.tap(() =>
                Effect.zipRight(Effect.sync(() => (publishedAt[spec.sessionId] = instantMs())), returnedOne)
              ),
              Effect.flatMap((published) =>
                published._tag === "Left"
                  ? failed(published.left)
                  : Stream.runForEach(published.right.events, verdict(spec))
              )
            ),
        { concurrency: "unbounded", discard: true }
      )
      const settled = yield* everySession.pipe(Effect.timeout(settleTimeoutMs), Effect.option)
      yield* eventsQuiet
      // The scope is still open: what the settled sessions hold while their runner keeps them.
      const measured = measuring.finish(() => publishEnd ?? measuring.publishEnded())
      const result: RunnerResult = {
        sessions,
        routes: sessions * PORTS.length,
        publishFailed: publishErrors.length,
        firstPublishError: publishErrors[0],
        ...measured,
        verdicts,
        publishedAt,
        timedOut: Option.isNone(settled),
        events: yield* eventsByOutcome
      }
      yield* report(result)
    })
  ).pipe(Effect.provide(RoutingLive), Effect.orDie)

/** Starts measuring the main thread's delays; the function returned stops and answers p99 and max, ms. */
const loopDelays = () => {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  return () => {
    histogram.disable()
    return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 }
  }
}

/** Where a run's publish phase ended: when, the runner's CPU and collections so far, the servers' CPU. */
interface PhaseEnd {
  readonly at: number
  readonly cpu: NodeJS.CpuUsage
  readonly gc: GcPauses
  readonly server: ReturnType<typeof serverCpu>
}

const phaseEnd = (cpuStart: NodeJS.CpuUsage, gcPauses: () => GcPauses): PhaseEnd => ({
  at: Date.now(),
  cpu: process.cpuUsage(cpuStart),
  gc: gcPauses(),
  server: serverCpu()
})

/**
 * What the library's runs and the floor measure alike: the baselines, taken now (after a
 * full collection), and from them the end of the publish phase and the run's fields once
 * it is over (every host settled, the Events quiet). `finish` collects again before it
 * reads the heap; `end` is read after that, as the publish phase may not have ended.
 */
const startMeasuring = () => {
  gc()
  const gcDuringPublish = countGcPauses()
  const heapBefore = process.memoryUsage().heapUsed
  const serverBefore = serverCpu()
  const cpuStart = process.cpuUsage()
  const mainStart = mainThreadCpuMs()
  const publishStart = Date.now()
  const loopDelay = loopDelays()
  return {
    publishEnded: (): PhaseEnd => phaseEnd(cpuStart, gcDuringPublish),
    finish: (end: () => PhaseEnd) => {
      const runCpu = process.cpuUsage(cpuStart)
      const mainEnd = mainThreadCpuMs()
      const delays = loopDelay()
      gc()
      const heapSettled = process.memoryUsage().heapUsed
      const ended = end()
      return {
        publishWallMs: ended.at - publishStart,
        publishCpuMs: (ended.cpu.user + ended.cpu.system) / 1_000,
        runCpuMs: (runCpu.user + runCpu.system) / 1_000,
        runMainThreadCpuMs: mainStart === undefined || mainEnd === undefined ? undefined : mainEnd - mainStart,
        publishGc: ended.gc,
        loopDelay: delays,
        peakRssKiB: process.resourceUsage().maxRSS,
        heapSettledKiB: (heapSettled - heapBefore) / 1024,
        serverPublishCpuMs: serverCpuSince(serverBefore, ended.server)
      }
    }
  }
}

// The bench's stdin closing means it is gone: so is this run. Once the run is over,
// stdin no longer holds the process open.
process.stdin.on("end", () => process.exit(1)).resume()

/**
 * `floor` as argv[4]: the same requests over bare node:http, no library: the sessions'
 * publishes (bench/barePublish.ts), beside them one list and watch of their Ingresses
 * (bench/bareWatch.ts) that takes each one's first status as its hosts' verdicts, and
 * each session's Event once its hosts settle (bench/bareEvents.ts). What the same work
 * costs on this runtime at the least, measured as `run` measures the runner.
 */
const floor = (sessions: number, settleTimeoutMs: number) =>
  Effect.gen(function*() {
    const config = yield* Effect.orDie(Effect.provide(RouterConfig, RouterConfigLive.layer))
    const server = bareServer()
    const specs = Array.from({ length: sessions }, (_, i) => specOf(i))
    const events = bareEvents({ ...server, namespace: config.sessionNamespace })
    const verdicts: Array<readonly [string, number, 0 | 1]> = []
    const publishedAt: Record<string, number> = {}
    const programmed = new Set<string>()
    // A runner reports a host's verdict once its session is published: a status written
    // before the publish returned is heard at the return, as the library's runs hear it.
    const settle = (spec: ReturnType<typeof specOf>) => {
      const at = instantMs()
      for (let p = 0; p < PORTS.length; p++) verdicts.push([spec.sessionId, at, 1])
      events.settled(spec, PORTS.length)
    }
    const measuring = startMeasuring()
    const watching = yield* bareWatch({
      ...server,
      namespace: config.sessionNamespace,
      mode: "ingress",
      labelSelector: LABEL_SESSION_ID,
      objects: sessions,
      onProgrammed: (name) => {
        const spec = specs[Number(name.slice("telo-run-s".length))]
        if (spec === undefined) return
        programmed.add(spec.sessionId)
        if (publishedAt[spec.sessionId] !== undefined) settle(spec)
      }
    }).pipe(Effect.timeout(settleTimeoutMs), Effect.option, Effect.fork)
    const published = yield* Effect.either(Effect.tryPromise(() =>
      barePublish(
        {
          ...server,
          settings: {
            sessionNamespace: config.sessionNamespace,
            managedBy: config.managedBy,
            baseDomain: config.baseDomain!,
            ...(config.ingressClassName !== undefined ? { ingressClassName: config.ingressClassName } : {})
          }
        },
        specs,
        (spec) => {
          publishedAt[spec.sessionId] = instantMs()
          if (programmed.has(spec.sessionId)) settle(spec as ReturnType<typeof specOf>)
        }
      )
    ))
    const end = measuring.publishEnded()
    const settled = yield* Fiber.join(watching)
    yield* Effect.promise(events.idle)
    events.close()
    const result: RunnerResult = {
      sessions,
      routes: sessions * PORTS.length,
      publishFailed: published._tag === "Left" ? sessions : 0,
      firstPublishError: published._tag === "Left" ? String(published.left) : undefined,
      ...measuring.finish(() => end),
      verdicts,
      publishedAt,
      timedOut: Option.isNone(settled),
      events: { aggregated: 0, filtered: 0, ...events.counts() }
    }
    yield* report(result)
  })

/**
 * `publish-only` as argv[4]: the same sessions through `SessionRouter.publish` alone, in
 * the same composition: the client and the publish plan, without route health, Events or
 * a stream per session. What of the runner's cost is the publish itself.
 */
const publishOnly = (sessions: number) =>
  Effect.gen(function*() {
    const router = yield* SessionRouter
    gc()
    const gcPauses = countGcPauses()
    const cpuStart = process.cpuUsage()
    const start = Date.now()
    yield* Effect.forEach(
      Array.from({ length: sessions }, (_, i) => specOf(i)),
      (spec) => router.publish(spec),
      { concurrency: "unbounded", discard: true }
    )
    const cpu = process.cpuUsage(cpuStart)
    const result: BarePublished = { cpuMs: (cpu.user + cpu.system) / 1_000, wallMs: Date.now() - start, gc: gcPauses() }
    yield* report(result)
  }).pipe(Effect.provide(RoutingLive), Effect.orDie)

/** What `pending` reports: heap held per session while its hosts are pending, KiB. */
export interface PendingHeld {
  readonly heldKiB: number
  readonly publishFailed: number
}

/**
 * `pending` as argv[4]: the same sessions published and followed as in the run, each
 * one's events reported, against controllers that write no status while it lasts: the heap
 * a session holds while its hosts are pending, after a full collection. What a burst
 * keeps alive (and its collector copies) between publish and verdict.
 */
const pending = (sessions: number) =>
  Effect.scoped(
    Effect.gen(function*() {
      gc()
      const before = process.memoryUsage().heapUsed
      let returned = 0
      let publishFailed = 0
      const published = yield* Deferred.make<void>()
      const returnedOne = Effect.suspend(() =>
        ++returned === sessions ? Deferred.succeed(published, undefined) : Effect.void
      )
      yield* Effect.forEach(
        Array.from({ length: sessions }, (_, i) => specOf(i)),
        (spec) =>
          reportSession(spec, (event) => event.type === "published" ? returnedOne : Effect.void).pipe(
            Effect.catchAll(() => Effect.zipRight(returnedOne, Effect.sync(() => publishFailed++)))
          ),
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.forkScoped)
      yield* Deferred.await(published)
      // The last sessions' pending events reach their readers, and nothing is under way.
      yield* Effect.sleep("1 second")
      gc()
      const result: PendingHeld = {
        heldKiB: (process.memoryUsage().heapUsed - before) / 1024 / sessions,
        publishFailed
      }
      yield* report(result)
    })
  ).pipe(Effect.provide(RoutingLive), Effect.orDie)

const mode = process.argv[4]
NodeRuntime.runMain(
  (mode === "floor"
    ? floor(Number(process.argv[2]), Number(process.argv[3]))
    : mode === "publish-only"
    ? publishOnly(Number(process.argv[2]))
    : mode === "pending"
    ? pending(Number(process.argv[2]))
    : run(
      Number(process.argv[2]),
      Number(process.argv[3]),
      mode === "stream" ? "stream" : "report"
    ))
    .pipe(
      Effect.ensuring(Effect.sync(() => process.stdin.destroy()))
    )
)
