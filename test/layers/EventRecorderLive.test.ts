/**
 * The live Event recorder over an in-memory cluster on TestClock: what it writes in
 * each Events API, how repeats fold into one Event's count, and that nothing a caller
 * does waits on the API: a hung or refused events API, a full queue, a flapping object.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ClusterHandle, Fault, LocalCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Fiber, Layer, Logger, Metric, Option, Ref, Scope, TestClock } from "effect"
import { eventName, EventReason, type Occurrence, podReference, SPAM_BURST } from "../../src/domain/KubeEvents.js"
import type { CoreEvent, EventV1, Namespace } from "../../src/domain/Objects.js"
import { EventResource, EventV1Resource, NamespaceResource } from "../../src/domain/Resources.js"
import * as EventRecorderLive from "../../src/layers/EventRecorderLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { EventRecorder } from "../../src/services/EventRecorder.js"
import { eventsRecorded } from "../../src/services/Telemetry.js"

const NS = "telo-sessions"

const occurrence = (reason: Occurrence["reason"], note: string, pod = "s1"): Occurrence => ({
  regarding: podReference(NS, `telo-run-${pod}`, `uid-${pod}`),
  type: reason === EventReason.RouteUnprogrammed || reason === EventReason.RouteStatusUnreadable ? "Warning" : "Normal",
  reason,
  note,
  action: "WatchRoute"
})

/** A recorder named `instance` over `cluster`'s in-memory client. */
const recorderOn = (cluster: ClusterHandle, instance: string, config: RouterConfigLive.RouterConfigValues = {}) =>
  EventRecorderLive.make({ instance }).pipe(
    Effect.provide(
      Layer.merge(
        LocalCluster.layerKubeClient(cluster),
        Layer.orDie(RouterConfigLive.layerFrom({ sessionNamespace: NS, ...config }))
      )
    )
  )

/** An in-memory cluster with the session namespace, and a recorder over it. */
const setUp = (config: RouterConfigLive.RouterConfigValues = {}) =>
  Effect.gen(function*() {
    const cluster = yield* LocalCluster.makeInMemory()
    yield* Effect.orDie(cluster.store.create(NamespaceResource, undefined, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS }
    } as Namespace))
    const recorder = yield* recorderOn(cluster, "test", config)
    const coreEvents = Effect.map(Effect.orDie(cluster.store.list(EventResource, NS)), (list) =>
      list.items as ReadonlyArray<CoreEvent>)
    const v1Events = Effect.map(Effect.orDie(cluster.store.list(EventV1Resource, NS)), (list) =>
      list.items as ReadonlyArray<EventV1>)
    return { cluster, recorder, coreEvents, v1Events }
  })

/** A problem sink that keeps what it is told and says it was heard (or not, with `listening: false`). */
const sink = (listening = true) =>
  Effect.map(Ref.make<ReadonlyArray<string>>([]), (told) => ({
    told: Ref.get(told),
    problems: (problem: string) => Effect.as(Ref.update(told, (all) => [...all, problem]), listening)
  }))

const outcomes = ["written", "aggregated", "filtered", "dropped", "failed"] as const

/** The recorder's counters now, by outcome; tests compare two readings, as other tests count too. */
const counts = Effect.map(
  Effect.forEach(outcomes, (o) => Metric.value(Metric.tagged(eventsRecorded, "outcome", o))),
  (states) =>
    Object.fromEntries(outcomes.map((o, i) => [o, states[i]!.count])) as Record<typeof outcomes[number], number>
)
const since = (before: Record<string, number>) =>
  Effect.map(counts, (after) => Object.fromEntries(outcomes.map((o) => [o, after[o] - (before[o] ?? 0)])))

describe("EventRecorderLive", () => {
  it.scoped("creates one events.k8s.io Event per reason and counts repeats in its series", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp()
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "8080-s1.example.com (port 8080) is programmed"))
      yield* recorder.flush
      yield* TestClock.adjust(Duration.seconds(1))
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "9090-s1.example.com (port 9090) is programmed"))
      yield* recorder.record(
        occurrence(EventReason.RouteUnprogrammed, "5000-s1.example.com (port 5000) is not programmed: x")
      )
      yield* recorder.flush
      const events = yield* v1Events
      expect(
        events.map((e) => ({
          reason: e.reason,
          type: e.type,
          note: e.note,
          series: e.series?.count,
          regarding: e.regarding?.name
        }))
      )
        .toEqual(expect.arrayContaining([
          {
            reason: "RouteProgrammed",
            type: "Normal",
            // A repeat moves the series only: the API server refuses a new note on an events.k8s.io Event.
            note: "8080-s1.example.com (port 8080) is programmed",
            series: 2,
            regarding: "telo-run-s1"
          },
          {
            reason: "RouteUnprogrammed",
            type: "Warning",
            note: "5000-s1.example.com (port 5000) is not programmed: x",
            series: undefined,
            regarding: "telo-run-s1"
          }
        ]))
      expect(events).toHaveLength(2)
      expect(events[0]?.eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    }))

  it.scoped("takes the next instant's name when another recorder holds one, six names at most", () =>
    Effect.gen(function*() {
      const { cluster, recorder, v1Events } = yield* setUp()
      // Another recorder (or this one before a restart) wrote at the instants this one picks first.
      const taken = (nanos: bigint) =>
        Effect.orDie(cluster.store.create(EventV1Resource, NS, {
          apiVersion: "events.k8s.io/v1",
          kind: "Event",
          metadata: { name: eventName("telo-run-s1", nanos), namespace: NS },
          eventTime: "2026-01-01T00:00:00.000000Z",
          reportingController: "other",
          reportingInstance: "other-1",
          action: "Publish",
          reason: "Other",
          type: "Normal",
          regarding: { kind: "Pod", namespace: NS, name: "telo-run-s1" }
        } as EventV1))
      for (const nanos of [1n, 2n]) yield* taken(nanos)
      const before = yield* counts
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "published"))
      yield* recorder.flush
      const ours = (yield* v1Events).filter((e) => e.reason === "RoutesPublished")
      expect(ours.map((e) => e.metadata?.name)).toEqual([eventName("telo-run-s1", 3n)])
      expect((yield* since(before)).written).toBe(1)

      // Five taken in a row: the sixth name is the one.
      for (const nanos of [4n, 5n, 6n, 7n, 8n]) yield* taken(nanos)
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "programmed"))
      yield* recorder.flush
      const programmed = (yield* v1Events).filter((e) => e.reason === "RouteProgrammed")
      expect(programmed.map((e) => e.metadata?.name)).toEqual([eventName("telo-run-s1", 9n)])

      // Six taken in a row: the write fails, and is counted so.
      for (const nanos of [10n, 11n, 12n, 13n, 14n, 15n]) yield* taken(nanos)
      const again = yield* counts
      yield* recorder.record(occurrence(EventReason.RouteUnprogrammed, "not programmed"))
      yield* recorder.flush
      expect((yield* v1Events).filter((e) => e.reason === "RouteUnprogrammed")).toEqual([])
      expect(yield* since(again)).toMatchObject({ written: 0, failed: 1 })
    }))

  it.scoped("folds repeats that arrive before their Event is written into its first write", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp()
      const before = yield* counts
      // Three hosts of one Ingress are programmed by one status write: three occurrences at once.
      for (const port of [8080, 8081, 8082]) {
        yield* recorder.record(occurrence(EventReason.RouteProgrammed, `${port}-s1.example.com is programmed`))
      }
      yield* recorder.flush
      const events = yield* v1Events
      expect(events.map((e) => [e.reason, e.series?.count, e.note])).toEqual([
        ["RouteProgrammed", 3, "8082-s1.example.com is programmed"]
      ])
      expect(yield* since(before)).toEqual({ written: 1, aggregated: 2, filtered: 0, dropped: 0, failed: 0 })
    }))

  it.scoped("falls back to core/v1 Events when events.k8s.io is not served, with a count", () =>
    Effect.gen(function*() {
      const { cluster, recorder, coreEvents } = yield* setUp()
      yield* cluster.store.setServed(EventV1Resource as never, false)
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "published 1 host"))
      yield* recorder.flush
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "published 2 hosts"))
      yield* recorder.flush
      const events = yield* coreEvents
      expect(events.map((e) => ({
        reason: e.reason,
        message: e.message,
        count: e.count,
        component: e.source?.component,
        involved: e.involvedObject.name
      }))).toEqual([
        {
          reason: "RoutesPublished",
          message: "published 2 hosts",
          count: 2,
          component: "session-routing",
          involved: "telo-run-s1"
        }
      ])
    }))

  it.scoped("starts a new Event when the one it counts on has expired", () =>
    Effect.gen(function*() {
      const { cluster, recorder, v1Events } = yield* setUp()
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "first"))
      yield* recorder.flush
      const [first] = yield* v1Events
      yield* Effect.orDie(cluster.store.delete(EventV1Resource, NS, first!.metadata!.name!))
      yield* TestClock.adjust(Duration.seconds(1))
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "after expiry"))
      yield* recorder.flush
      expect((yield* v1Events).map((e) => [e.note, e.series?.count])).toEqual([["after expiry", undefined]])
    }))

  it.scoped("tells of a missing create permission once, in words about Events, and never fails the caller", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp()
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.forbid() })
      const { problems, told } = yield* sink()
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"), problems)
      yield* recorder.flush
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "b"), problems)
      yield* recorder.flush
      const said = yield* told
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(
        /^could not record Event RouteProgrammed on pod telo-sessions\/telo-run-s1: the API server forbids it \(.*forbidden.*\): grant create and patch on events in both groups \(events\.k8s\.io and core\) in namespace telo-sessions; routing goes on without Events$/
      )
      // The advice is about Events: nothing of routing modes or CRDs.
      expect(said[0]).not.toMatch(/routing mode|CRD|grant the verb/)
    }))

  it.scoped("says that neither Events API is served, and then stops writing", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp()
      yield* cluster.store.setServed(EventV1Resource as never, false)
      yield* cluster.store.setServed(EventResource as never, false)
      const { problems, told } = yield* sink()
      const before = yield* counts
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "a"), problems)
      yield* recorder.flush
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "b"), problems)
      yield* recorder.flush
      expect(yield* told).toEqual([
        "could not record Event RoutesPublished on pod telo-sessions/telo-run-s1: the API server serves neither events.k8s.io/v1 nor core/v1 Events; routing goes on without Events"
      ])
      expect((yield* since(before)).failed).toEqual(1)
    }))

  it.scoped("returns at once while the events API hangs, and gives up on the write at the API time limit", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp({ apiTimeoutMs: 3000 })
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.hang })
      const { problems, told } = yield* sink()
      // Ten sessions record at once: none waits for another's write, nor for its own.
      for (let i = 0; i < 10; i++) {
        yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a", `s${i}`), problems)
      }
      const flushed = yield* Effect.fork(recorder.flush)
      yield* TestClock.adjust(Duration.millis(2999))
      expect(yield* told).toEqual([])
      yield* TestClock.adjust(Duration.millis(1))
      // Four writers: the first four give up at 3 s, the next four at 6 s, the last two at 9 s.
      const said = yield* told
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(
        /^could not record Event RouteProgrammed on pod telo-sessions\/telo-run-s\d: creating an Event got no answer within 3000 ms; routing goes on without Events$/
      )
      yield* TestClock.adjust(Duration.seconds(5))
      expect(Option.isNone(yield* flushed.poll)).toBe(true)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.join(flushed)
    }))

  it.scoped("drops what does not fit its queue, counts it, and tells of it once", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp({ apiTimeoutMs: 1000 })
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.hang })
      const { problems, told } = yield* sink()
      const before = yield* counts
      // Four in flight with the writers, a thousand queued, then five with no room.
      for (let i = 0; i < 1009; i++) {
        yield* recorder.record(occurrence(EventReason.RoutesPublished, "a", `s${i}`), problems)
      }
      expect((yield* since(before)).dropped).toEqual(5)
      expect((yield* told).filter((p) => p.includes("waiting to be written"))).toEqual([
        "could not record Event RoutesPublished on pod telo-sessions/telo-run-s1004: 1000 Events are already waiting to be written, so this one and any more while the queue is full are dropped; routing goes on without Events"
      ])
      yield* cluster.faults.clear
      yield* TestClock.adjust(Duration.seconds(1))
      yield* recorder.flush
    }))

  it.scoped("filters an object's Events past its spam budget, and lets one through per five minutes after", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp()
      const before = yield* counts
      for (let i = 0; i < SPAM_BURST + 5; i++) {
        yield* recorder.record(occurrence(EventReason.RouteProgrammed, `flap ${i}`))
        yield* recorder.flush
      }
      expect(yield* since(before)).toMatchObject({ written: SPAM_BURST, filtered: 5 })
      yield* TestClock.adjust(Duration.minutes(5))
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "after five minutes"))
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "one too many"))
      yield* recorder.flush
      // One more in the series (its note stays the first's); "one too many" was filtered.
      expect((yield* v1Events).map((e) => [e.note, e.series?.count])).toEqual([["flap 0", SPAM_BURST + 1]])
      // Another object has a budget of its own.
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "s2's own", "s2"))
      yield* recorder.flush
      expect((yield* v1Events).map((e) => e.note)).toContain("s2's own")
    }))

  it.scoped("logs a problem once when the caller no longer listens", () =>
    Effect.gen(function*() {
      const logged = yield* Ref.make<ReadonlyArray<string>>([])
      // The writers log where the recorder was made, as a layer's fibers do.
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) =>
          Effect.runSync(Ref.update(logged, (all) => [...all, ...[message].flat().map(String)]))
        )
      )
      const { cluster, recorder } = yield* Effect.provide(setUp(), capture)
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.forbid() })
      const { problems, told } = yield* sink(false)
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"), problems)
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "b"), problems)
      yield* recorder.flush
      expect(yield* told).toHaveLength(1)
      expect((yield* Ref.get(logged)).filter((line) => line.startsWith("could not record Event"))).toHaveLength(1)
    }))

  it.effect("writes what is still queued when its scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { recorder, v1Events } = yield* Scope.extend(setUp(), scope)
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "just before the end"))
      yield* Scope.close(scope, Effect.void as never)
      expect((yield* v1Events).map((e) => e.note)).toEqual(["just before the end"])
    }))

  it.scoped("records nothing with SESSION_ROUTING_EVENTS=false", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp({ events: false })
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"))
      yield* recorder.flush
      expect(yield* v1Events).toEqual([])
    }))

  it.effect("provides the Tag through its layers", () =>
    Effect.gen(function*() {
      const recorder = yield* EventRecorder
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"))
      expect(yield* Effect.option(recorder.flush)).toEqual(Option.some(undefined))
    }).pipe(Effect.provide(EventRecorderLive.layerNone)))
})

describe("EventRecorderLive beside another recorder", () => {
  it.scoped("takes the next name when another recorder took one at the same instant", () =>
    Effect.gen(function*() {
      const { cluster, recorder, v1Events } = yield* setUp()
      const other = yield* recorderOn(cluster, "other")
      yield* other.record(occurrence(EventReason.RoutesPublished, "from the other runner"))
      yield* other.flush
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "from this one"))
      yield* recorder.flush
      expect((yield* v1Events).map((e) => e.note).sort()).toEqual(["from the other runner", "from this one"])
    }))
})
