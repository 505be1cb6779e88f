/**
 * What sessions cost the runner's memory once they are gone: after thousands are
 * published, followed to their verdicts, closed and unpublished, the heap is back where
 * it was, so a runner that lives for weeks does not grow with the sessions it has seen.
 */
import { describe, expect, it } from "@effect/vitest"
import { IngressController, LocalCluster, type MemoryStore } from "@session-routing/local-cluster"
import { Chunk, Effect, Layer, Metric, type MetricPair, MetricState, Stream, Supervisor } from "effect"
import type { Status } from "../../src/domain/Objects.js"
import { EventResource, EventV1Resource, IngressClassResource, IngressResource } from "../../src/domain/Resources.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { occurrenceFor } from "../../src/runner/RouteFollowUps.js"
import { publishSession, unpublishSession } from "../../src/runner/SessionRunner.js"
import { EventRecorder } from "../../src/services/EventRecorder.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import { nextTurn, retainedHeap } from "../support/Heap.js"

const NAMESPACE = "telo-sessions"
const BASE_DOMAIN = "sessions.localtest.me"
const CLASS_NAME = "local"
const PORTS = [8080, 8081, 8082].map((port) => ({ port, protocol: "tcp" as const }))
/** Sessions run at once: as many as a busy runner starts in a burst. */
const BATCH = 200
const MEASURED_SESSIONS = 2_000
/** Sessions run before the baseline: enough for the runtime's own tables to reach the size a batch needs. */
const WARM_UP = 3 * BATCH

/**
 * Bytes the heap may keep over the 2,000 measured sessions: 1 MiB, 512 B a session.
 * Clean runs end between -0.3 and +0.2 MiB of the baseline: one container's table
 * doubling (the scheduler's WeakMap of fibers, V8's number-to-string cache) is 0.25
 * to 0.5 MiB by itself. Anything a session leaves of its own is over it: its
 * `published` event alone is about 0.8 KiB, a fiber more, an Event series that keeps
 * the closed session's stream about 11 KiB. The runner's small per-session structures
 * (status-cache entries, waiters, hosts in the gauge, metric series, fibers) are also
 * counted exactly, since one of them alone would hide in the noise.
 */
const HEAP_BOUND = 1024 * 1024

/** Fibers that come and go with time (the shared watch's alarm, a liveness check): a leak is thousands. */
const FIBER_SLACK = 8

/**
 * The recorder keeps one spam budget per Pod and one series per (Pod, reason), up to
 * client-go's 4,096 each, by design. Filled to that bound before the baseline, they
 * only trade old entries for new ones while the sessions are measured.
 */
const RECORDER_ENTRIES = 4_096

const specOf = (i: number, prefix = "m") => ({
  sessionId: `${prefix}${i}`,
  podName: `telo-run-${prefix}${i}`,
  podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  ports: PORTS
})

const forbidden: Status = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  reason: "Forbidden",
  message: "the memory test's ingress controller records no Events",
  code: 403
}

/**
 * The controller's own Events, and the report it remembers per Ingress for them, grow
 * the cluster with every session, not the runner: this controller writes status only.
 */
const withoutControllerEvents = (store: MemoryStore): MemoryStore => ({
  ...store,
  create: (resource, namespace, body, options) =>
    resource === (EventResource as unknown) ? Effect.fail(forbidden) : store.create(resource, namespace, body, options)
})

/**
 * An in-memory LocalCluster (no socket) with the session namespace, the IngressClass,
 * and LocalCluster's ingress controller writing status as soon as it sees an Ingress.
 */
const startCluster = Effect.gen(function*() {
  const cluster = yield* LocalCluster.makeInMemory({
    namespaces: [NAMESPACE],
    controllers: [
      ({ store }) => IngressController.run(withoutControllerEvents(store), { className: CLASS_NAME, delay: 0 })
    ]
  })
  yield* Effect.orDie(
    cluster.store.create(IngressClassResource, undefined, IngressController.ingressClassFor({ className: CLASS_NAME }))
  )
  return cluster
})

/** The layers a runner gets by default: the router `RouterConfig` names, the shared watch, Events on. */
const runnerLayers = (cluster: Parameters<typeof LocalCluster.layerKubeClient>[0]) =>
  SessionRouting.layerConfig.pipe(
    Layer.provideMerge(LocalCluster.layerKubeClient(cluster)),
    Layer.provideMerge(
      RouterConfigLive.layerFrom({ sessionNamespace: NAMESPACE, baseDomain: BASE_DOMAIN, ingressClassName: CLASS_NAME })
    ),
    Layer.orDie
  )

/** One session as a runner runs it: published, its events read to the end, its scope closed, then unpublished. */
const runSession = (i: number) =>
  Effect.scoped(
    Effect.gen(function*() {
      const session = yield* publishSession(specOf(i))
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(session.events))
      const programmed = events.filter((e) => e.type === "route" && e.state === "programmed").length
      if (programmed !== PORTS.length) return yield* Effect.dieMessage(`session ${i}: ${JSON.stringify(events)}`)
    })
  ).pipe(Effect.zipRight(unpublishSession(specOf(i).sessionId)), Effect.orDie)

/** Sessions `from` up to `to` (excluded), `BATCH` at a time. */
const runSessions = (from: number, to: number) =>
  Effect.gen(function*() {
    for (let start = from; start < to; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, to - start) }, (_, k) => start + k)
      yield* Effect.forEach(batch, runSession, { concurrency: "unbounded", discard: true })
    }
  })

/**
 * Fills the recorder's bounded maps with occurrences shaped like a session's own (a
 * Pod of its own, its `RoutesPublished` note), as a runner that has run for a while has
 * them, so that their filling up is not counted against the sessions measured.
 */
const fillRecorder = Effect.gen(function*() {
  const recorder = yield* EventRecorder
  for (let start = 0; start < RECORDER_ENTRIES; start += BATCH) {
    for (let i = start; i < Math.min(RECORDER_ENTRIES, start + BATCH); i++) {
      const spec = specOf(i, "fill")
      const routes = PORTS.map(({ port }) => ({ port, host: `${port}-${spec.sessionId}.${BASE_DOMAIN}` }))
      const occurrence = occurrenceFor(spec, NAMESPACE, { type: "published", layer: "ingress", routes, endpoints: [] })
      if (occurrence !== undefined) yield* recorder.record(occurrence)
    }
    // The recorder queues a bounded number of Events: each part is written before the next.
    yield* recorder.flush
  }
})

/** Drops what the cluster keeps that is not the runner's: the Events written, and the watch history. */
const forgetClusterHistory = (store: MemoryStore) =>
  Effect.gen(function*() {
    // events.k8s.io/v1 and core/v1 are two views of the same Events.
    const listed = yield* Effect.orDie(store.list(EventV1Resource, NAMESPACE))
    for (const item of listed.items) {
      yield* Effect.ignore(store.delete(EventV1Resource, NAMESPACE, item.metadata?.name ?? ""))
    }
    yield* store.compact
  })

/** The sum of a gauge's series, by the metric's name. */
const gaugeTotal = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>, suffix: string): number =>
  pairs.reduce(
    (sum, pair) =>
      pair.metricKey.name.endsWith(suffix) && MetricState.isGaugeState(pair.metricState)
        ? sum + Number(pair.metricState.value)
        : sum,
    0
  )

/**
 * What the runner holds now: its structures counted exactly (metric series, the shared
 * watch's cache and waiters, hosts in the gauge, live fibers), and the heap after full
 * collections, the cluster's leftovers dropped first.
 */
const runnerState = (store: MemoryStore, fibers: Supervisor.Supervisor<ReadonlyArray<unknown>>) =>
  Effect.gen(function*() {
    // A watch holds the last chunk of changes it delivered until the next one comes: a
    // lone session published and removed makes that chunk one session's, not a batch's.
    const router = yield* SessionRouter
    yield* Effect.orDie(
      Effect.zipRight(router.publish(specOf(0, "lone")), router.unpublish(specOf(0, "lone").sessionId))
    )
    // Events are written in the background: every one queued is in the cluster before it is dropped.
    yield* Effect.flatMap(EventRecorder, (recorder) => recorder.flush)
    yield* forgetClusterHistory(store)
    // The shared watch hears of a deletion a moment after it is made: wait until it holds
    // what the cluster holds, by turns of the event loop, not by time.
    const objects = (yield* Effect.orDie(store.list(IngressResource, NAMESPACE))).items.length
    const cached = Effect.map(Metric.snapshot, (pairs) => gaugeTotal(pairs, "status_cache_entries"))
    for (let turns = 0; turns < 10_000 && (yield* cached) !== objects; turns++) yield* Effect.promise(nextTurn)
    const pairs = yield* Metric.snapshot
    return {
      counts: {
        metricSeries: pairs.length,
        statusCacheEntries: gaugeTotal(pairs, "status_cache_entries"),
        statusWaiters: gaugeTotal(pairs, "status_waiters"),
        hosts: gaugeTotal(pairs, "_hosts"),
        fibers: (yield* fibers.value).length
      },
      heap: yield* retainedHeap
    }
  })

// What a session holds before it is gone (500 sessions of 3 tcp ports at once, in memory,
// the recorder's problem sink left out; heap after full collections, per session):
// pending, its events being read, about 124 KiB (7 fibers, 1 waiter); settled with its
// scope still open about 45-49 KiB (1 fiber); settled and followed with followSession
// about 256-261 KiB (14 fibers, 3 waiters); scope closed with its objects still
// published 9-14 KiB, of which the cluster's objects and the watch's slim copies are 4-9.
describe("session memory", () => {
  // Each session is published, followed and closed for real: the live clock, with a
  // controller that never waits, so nothing sleeps. The test clock would keep every
  // timeout a write started (interrupted or not) until virtual time passes it, and that
  // list would be measured with the runner.
  it.live(
    "returns the heap to within 1 MiB after 2,000 sessions are published, followed and closed",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const fibers = yield* Supervisor.track
        const cluster = yield* startCluster
        yield* Effect.gen(function*() {
          yield* fillRecorder
          // A first batch warms what every session goes through once (code, maps sized for a batch).
          yield* runSessions(0, WARM_UP)
          const warm = yield* runnerState(cluster.store, fibers)
          yield* runSessions(WARM_UP, WARM_UP + MEASURED_SESSIONS)
          const after = yield* runnerState(cluster.store, fibers)
          expect({ ...after.counts, fibers: undefined }).toEqual({ ...warm.counts, fibers: undefined })
          expect(after.counts.fibers - warm.counts.fibers).toBeLessThanOrEqual(FIBER_SLACK)
          expect(after.heap - warm.heap).toBeLessThan(HEAP_BOUND)
        }).pipe(Effect.provide(runnerLayers(cluster)), Effect.supervised(fibers))
      })),
    120_000
  )
})
