/**
 * Follow-ups on TestClock with scripted services: the Event each session event becomes
 * (its type, reason, action and note, on the configured namespace's Pod), which events
 * get probed and how the probe and the endpoints look overlap, a slow probe holding back
 * no route event, a recorder's failure as one session event, and without the services
 * the events passing through untouched; over the live recorder, no session waits on its
 * Events.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, LocalCluster } from "@session-routing/local-cluster"
import { Chunk, Context, Duration, Effect, Fiber, Layer, Option, Queue, Ref, Stream, TestClock } from "effect"
import type { Occurrence } from "../../src/domain/KubeEvents.js"
import { EventV1Resource } from "../../src/domain/Resources.js"
import * as EventRecorderLive from "../../src/layers/EventRecorderLive.js"
import * as RouteProbeLive from "../../src/layers/RouteProbeLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import {
  type FollowedEvent,
  type FollowUpEvent,
  latePublishOccurrence,
  makeFollowUps,
  occurrenceFor,
  PUBLISHED_EVENT_WAIT
} from "../../src/runner/RouteFollowUps.js"
import { EventRecorder, noEvents } from "../../src/services/EventRecorder.js"
import { RouteProbe } from "../../src/services/RouteProbe.js"
import { withFollowUps } from "../support/FollowUpsStream.js"

const session = { sessionId: "s1", podName: "telo-run-s1", podUid: "uid-1" }
const regarding = { apiVersion: "v1", kind: "Pod", namespace: "sessions", name: "telo-run-s1", uid: "uid-1" }
const route = (port: number, state: "pending" | "programmed" | "unprogrammed", reason?: string): FollowedEvent => ({
  type: "route",
  port,
  host: `${port}-s1.example.com`,
  state,
  ...(reason !== undefined ? { reason } : {})
})
const published = (ports: ReadonlyArray<number>): FollowedEvent => ({
  type: "published",
  layer: "gateway",
  routes: ports.map((port) => ({ port, host: `${port}-s1.example.com` })),
  endpoints: []
})
const programmed = (port: number): FollowedEvent => route(port, "programmed")

/**
 * A recorder that keeps what it was asked (queued, as the live one's are: `record`
 * returns at once) and tells of `problem` on the first occurrence only.
 */
const recorder = (problem?: string) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<Occurrence>>([])
    const service = EventRecorder.of({
      record: (occurrence, problems) =>
        Effect.flatMap(Ref.getAndUpdate(seen, (all) => [...all, occurrence]), (before) =>
          problem !== undefined && before.length === 0 && problems !== undefined
            ? Effect.asVoid(problems(problem))
            : Effect.void),
      flush: Effect.void
    })
    return { seen: Ref.get(seen), layer: Layer.succeed(EventRecorder, service) }
  })

/** A probe whose answer for port 8080 takes 3 s and for any other port comes at once. */
const slowProbe = Layer.succeed(
  RouteProbe,
  RouteProbe.of({
    probe: (_, route) =>
      Effect.as(Effect.sleep(Duration.seconds(route.port === 8080 ? 3 : 0)), { ok: true, status: 200 }),
    endpoints: () => Effect.succeed("ready" as const)
  })
)

const config = Layer.orDie(RouterConfigLive.layerFrom({ baseDomain: "example.com", routeProbe: "http" }))

/** A probe that counts its calls; each answer takes `probeDelay`, each endpoints look `endpointsDelay`. */
const countingProbe = (options: {
  readonly readiness?: "ready" | "not-ready" | undefined
  readonly probeDelay?: Duration.DurationInput
  readonly endpointsDelay?: Duration.DurationInput
} = {}) =>
  Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<string>>([])
    const service = RouteProbe.of({
      probe: (sessionId, r) =>
        Effect.zipRight(
          Ref.update(calls, (all) => [...all, `probe ${sessionId} ${r.host}:${r.port}`]),
          Effect.as(Effect.sleep(options.probeDelay ?? 0), { ok: false, status: 503, reason: "no endpoint" })
        ),
      endpoints: (sessionId, r) =>
        Effect.zipRight(
          Ref.update(calls, (all) => [...all, `endpoints ${sessionId} ${r.host}:${r.port}`]),
          Effect.as(Effect.sleep(options.endpointsDelay ?? 0), options.readiness)
        )
    })
    return { calls: Ref.get(calls), layer: Layer.succeed(RouteProbe, service) }
  })

/** Probes on, Events on the Pod in namespace "sessions". */
const probesOn = Layer.orDie(
  RouterConfigLive.layerFrom({ baseDomain: "example.com", routeProbe: "http", sessionNamespace: "sessions" })
)
const probesOff = Layer.orDie(RouterConfigLive.layerFrom({ baseDomain: "example.com", sessionNamespace: "sessions" }))

/** What a test does not set: no Events, no probe, probes off in the configuration. */
const followUpDefaults = Layer.mergeAll(Layer.succeed(EventRecorder, noEvents), RouteProbeLive.layerNone, probesOff)

const collect = <R>(events: ReadonlyArray<FollowedEvent>, layer: Layer.Layer<R>) =>
  Stream.fromIterable(events).pipe(
    withFollowUps(session),
    Stream.runCollect,
    Effect.map((all) => Chunk.toReadonlyArray(all)),
    Effect.provide(layer),
    Effect.provide(followUpDefaults)
  )

describe("the Event each session event becomes", () => {
  it("records a publish as RoutesPublished naming every host, in the singular for one", () => {
    expect(occurrenceFor(session, "sessions", published([8080, 9090]))).toEqual({
      regarding,
      type: "Normal",
      reason: "RoutesPublished",
      action: "Publish",
      note: "published 2 hosts of session s1 via gateway: 8080-s1.example.com, 9090-s1.example.com"
    })
    expect(occurrenceFor(session, "sessions", published([8080]))?.note).toBe(
      "published 1 host of session s1 via gateway: 8080-s1.example.com"
    )
  })

  it("records nothing for a publish without hosts", () => {
    expect(occurrenceFor(session, "sessions", published([]))).toBeUndefined()
  })

  it("records a programmed host as a Normal RouteProgrammed", () => {
    expect(occurrenceFor(session, "sessions", route(8080, "programmed"))).toEqual({
      regarding,
      type: "Normal",
      reason: "RouteProgrammed",
      action: "WatchRoute",
      note: "8080-s1.example.com (port 8080) is programmed"
    })
  })

  it("records an unprogrammed host as a Warning with its reason, or says none was given", () => {
    expect(occurrenceFor(session, "sessions", route(8080, "unprogrammed", "NotAllowedByListeners"))).toEqual({
      regarding,
      type: "Warning",
      reason: "RouteUnprogrammed",
      action: "WatchRoute",
      note: "8080-s1.example.com (port 8080) is not programmed: NotAllowedByListeners"
    })
    expect(occurrenceFor(session, "sessions", route(8080, "unprogrammed"))?.note).toBe(
      "8080-s1.example.com (port 8080) is not programmed: no reason given"
    )
  })

  it("records a failed status read as a Warning RouteStatusUnreadable", () => {
    expect(occurrenceFor(session, "sessions", { type: "read-error", reason: "forbidden" })).toEqual({
      regarding,
      type: "Warning",
      reason: "RouteStatusUnreadable",
      action: "WatchRoute",
      note: "route status could not be read: forbidden"
    })
  })

  it("records nothing for a pending host or for the follow-ups' own events", () => {
    expect(occurrenceFor(session, "sessions", route(8080, "pending"))).toBeUndefined()
    const followUps: ReadonlyArray<FollowUpEvent> = [
      { type: "probe", port: 8080, host: "8080-s1.example.com", ok: true, status: 200 },
      { type: "endpoints", port: 8080, host: "8080-s1.example.com", ready: false, reason: "not ready" },
      { type: "event-error", reason: "forbidden" }
    ]
    for (const event of followUps) expect(occurrenceFor(session, "sessions", event)).toBeUndefined()
  })

  it("says, when it knows, how long after the publish a host's verdict came", () => {
    expect(occurrenceFor(session, "sessions", programmed(8080), 5_040)?.note).toBe(
      "8080-s1.example.com (port 8080) is programmed, 5.0 s after publish"
    )
    expect(occurrenceFor(session, "sessions", route(8080, "unprogrammed", "NoClass"), 75_400)?.note).toBe(
      "8080-s1.example.com (port 8080) is not programmed, 75 s after publish: NoClass"
    )
    // Whole seconds from a minute on.
    expect(occurrenceFor(session, "sessions", programmed(8080), 59_940)?.note).toMatch(/, 59\.9 s after publish$/)
    expect(occurrenceFor(session, "sessions", programmed(8080), 60_000)?.note).toMatch(/, 60 s after publish$/)
  })

  it("words a publish written late with how many of its hosts had settled", () => {
    const publish = occurrenceFor(session, "sessions", published([8080, 9090]))!
    expect(latePublishOccurrence(publish, 1, 2, 10_000)).toEqual({
      ...publish,
      note: "published 2 hosts of session s1 via gateway: 8080-s1.example.com, 9090-s1.example.com; " +
        "1 of 2 settled after 10.0 s"
    })
    expect(latePublishOccurrence(publish, 2, 2, 2_500).note).toMatch(/; none settled after 2\.5 s$/)
  })

  it.effect("records Events on the Pod in the configured session namespace", () =>
    Effect.gen(function*() {
      const kept = yield* recorder()
      yield* collect([published([8080]), route(8080, "unprogrammed", "r")], Layer.merge(kept.layer, probesOff))
      expect((yield* kept.seen).map((o) => o.regarding)).toEqual([regarding])
    }))
})

describe("the publish's Event, held for the session's verdicts", () => {
  /** The follow-ups of events offered one at a time, while the test moves the clock. */
  const driven = Effect.gen(function*() {
    const kept = yield* recorder()
    const events = yield* Queue.unbounded<FollowedEvent>()
    const collected = yield* Stream.fromQueue(events).pipe(
      Stream.takeUntil((event) => event.type === "read-error"),
      withFollowUps(session),
      Stream.runCollect,
      Effect.provide(Layer.merge(kept.layer, probesOff)),
      Effect.provide(followUpDefaults),
      Effect.fork
    )
    const at = (seconds: number, ...offered: ReadonlyArray<FollowedEvent>) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(seconds * 1000)
        yield* Queue.offerAll(events, offered)
        // The follow-ups take what was offered before the clock moves again.
        yield* Effect.yieldNow().pipe(Effect.repeatN(20))
      })
    const notes = Effect.map(kept.seen, (all) => all.map((o) => `${o.reason}: ${o.note}`))
    const end = Effect.zipRight(Queue.offer(events, { type: "read-error", reason: "end" }), Fiber.join(collected))
    return { at, notes, end }
  })

  it.effect("writes nothing for a publish whose hosts all settle within the wait: their verdicts tell it", () =>
    Effect.gen(function*() {
      const { at, end, notes } = yield* driven
      yield* at(1, published([8080, 9090]), route(8080, "pending"), route(9090, "pending"))
      yield* at(6, programmed(8080), route(9090, "unprogrammed", "NoClass"))
      yield* at(60)
      expect(yield* notes).toEqual([
        "RouteProgrammed: 8080-s1.example.com (port 8080) is programmed, 5.0 s after publish",
        "RouteUnprogrammed: 9090-s1.example.com (port 9090) is not programmed, 5.0 s after publish: NoClass"
      ])
      yield* end
      expect(yield* notes).toHaveLength(3)
    }))

  it.effect("writes the publish once the wait is over, saying how many hosts had settled", () =>
    Effect.gen(function*() {
      const { at, end, notes } = yield* driven
      // As route health emits them: every host pending first, which settles none of them.
      yield* at(1, published([8080, 9090]), route(8080, "pending"), route(9090, "pending"))
      yield* at(4, programmed(8080))
      yield* at(1 + Duration.toSeconds(PUBLISHED_EVENT_WAIT))
      yield* at(16, programmed(9090))
      yield* end
      expect((yield* notes).slice(0, 3)).toEqual([
        "RouteProgrammed: 8080-s1.example.com (port 8080) is programmed, 3.0 s after publish",
        "RoutesPublished: published 2 hosts of session s1 via gateway: 8080-s1.example.com, 9090-s1.example.com; " +
        "1 of 2 settled after 10.0 s",
        "RouteProgrammed: 9090-s1.example.com (port 9090) is programmed, 15.0 s after publish"
      ])
    }))

  it.effect("writes the publish when the session's follow-ups end before its hosts settle", () =>
    Effect.gen(function*() {
      const { at, end, notes } = yield* driven
      yield* at(0, published([8080]))
      yield* at(2)
      yield* end
      // The last event (how the test ends the stream), then the publish as the follow-ups close.
      expect(yield* notes).toEqual([
        "RouteStatusUnreadable: route status could not be read: end",
        "RoutesPublished: published 1 host of session s1 via gateway: 8080-s1.example.com; none settled after 2.0 s"
      ])
    }))
})

describe("route events alongside the follow-ups", () => {
  it.effect("lets route events through while a probe is slow, and ends after the probe", () =>
    Effect.gen(function*() {
      const { layer, seen } = yield* recorder()
      const collected = yield* Stream.make(programmed(8080), programmed(9090)).pipe(
        withFollowUps(session),
        Stream.runCollect,
        Effect.provide(Layer.mergeAll(layer, slowProbe, config)),
        Effect.provide(followUpDefaults),
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(3))
      const events = Chunk.toReadonlyArray(yield* Fiber.join(collected))
      expect(events.map((e) => `${e.type}:${"port" in e ? e.port : ""}`)).toEqual([
        "route:8080",
        "route:9090",
        "probe:9090",
        "probe:8080"
      ])
      expect((yield* seen).map((o) => [o.reason, o.note])).toEqual([
        ["RouteProgrammed", "8080-s1.example.com (port 8080) is programmed"],
        ["RouteProgrammed", "9090-s1.example.com (port 9090) is programmed"]
      ])
    }))

  it.effect("reports what the recorder could not write as one event-error", () =>
    Effect.gen(function*() {
      const { layer } = yield* recorder("could not record Event: forbidden")
      const events = yield* Stream.make(
        {
          type: "published",
          layer: "ingress",
          routes: [{ host: "8080-s1.example.com", port: 8080 }],
          endpoints: []
        } as FollowedEvent,
        { type: "read-error", reason: "503" } as FollowedEvent
      ).pipe(withFollowUps(session), Stream.runCollect, Effect.provide(layer), Effect.provide(followUpDefaults))
      expect(Chunk.toReadonlyArray(events).filter((e) => e.type === "event-error")).toEqual([
        { type: "event-error", reason: "could not record Event: forbidden" }
      ])
    }))
})

describe("which hosts are probed, and how", () => {
  it.effect("says a programmed host has no ready endpoint before its probe's outcome", () =>
    Effect.gen(function*() {
      const probe = yield* countingProbe({ readiness: "not-ready" })
      const events = yield* collect([route(8080, "programmed")], Layer.merge(probe.layer, probesOn))
      expect(events).toEqual([
        route(8080, "programmed"),
        {
          type: "endpoints",
          port: 8080,
          host: "8080-s1.example.com",
          ready: false,
          reason:
            "the session Pod is not Ready, or nothing listens on its port 8080: the Service has no ready endpoint for it, so the routing layer has nowhere to send traffic"
        },
        { type: "probe", port: 8080, host: "8080-s1.example.com", ok: false, status: 503, reason: "no endpoint" }
      ])
      expect(yield* probe.calls).toEqual([
        "probe s1 8080-s1.example.com:8080",
        "endpoints s1 8080-s1.example.com:8080"
      ])
    }))

  it.effect("adds only the probe's outcome when the endpoints are ready or could not be read", () =>
    Effect.gen(function*() {
      for (const readiness of ["ready", undefined] as const) {
        const probe = yield* countingProbe({ readiness })
        const events = yield* collect([route(8080, "programmed")], Layer.merge(probe.layer, probesOn))
        expect(events.map((e) => e.type)).toEqual(["route", "probe"])
      }
    }))

  it.effect("probes only programmed hosts", () =>
    Effect.gen(function*() {
      const probe = yield* countingProbe({ readiness: "ready" })
      const events = yield* collect(
        [published([8080]), route(8080, "pending"), route(8080, "unprogrammed", "refused"), {
          type: "read-error",
          reason: "forbidden"
        }],
        Layer.merge(probe.layer, probesOn)
      )
      expect(events.map((e) => e.type)).toEqual(["published", "route", "route", "read-error"])
      expect(yield* probe.calls).toEqual([])
    }))

  it.effect("reads the endpoints while the probe runs, not after it", () =>
    Effect.gen(function*() {
      const probe = yield* countingProbe({ readiness: "ready", probeDelay: "2 seconds", endpointsDelay: "2 seconds" })
      const fiber = yield* Effect.fork(collect([route(8080, "programmed")], Layer.merge(probe.layer, probesOn)))
      yield* TestClock.adjust(Duration.seconds(2))
      const done = yield* Fiber.poll(fiber)
      expect(Option.map(done, () => "done")).toEqual(Option.some("done"))
    }))
})

describe("with Events or probes off", () => {
  it.effect("adds nothing when the recorder records nothing and probes are off", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(programmed(8080)).pipe(
        withFollowUps(session),
        Stream.runCollect,
        Effect.provide(followUpDefaults)
      )
      expect(Chunk.toReadonlyArray(events)).toEqual([programmed(8080)])
    }))

  it.scoped("makes no follow-ups at all then: a session's events go straight through", () =>
    Effect.gen(function*() {
      const none = (layer: Layer.Layer<never>) =>
        makeFollowUps(session, () => Effect.succeed(true)).pipe(Effect.provide(layer), Effect.provide(followUpDefaults))
      expect(yield* none(Layer.succeed(EventRecorder, noEvents))).toBeUndefined()
      expect(yield* none(Layer.merge(Layer.succeed(EventRecorder, noEvents), probesOff))).toBeUndefined()
      const kept = yield* recorder()
      expect(yield* none(kept.layer)).toBeDefined()
    }))

  it.effect("does not probe when the configuration turns probes off, even with a probe in context", () =>
    Effect.gen(function*() {
      const probe = yield* countingProbe({ readiness: "not-ready" })
      const events = yield* collect([route(8080, "programmed")], Layer.merge(probe.layer, probesOff))
      expect(events).toEqual([route(8080, "programmed")])
      expect(yield* probe.calls).toEqual([])
    }))

  it.effect("probes but records nothing when Events are off", () =>
    Effect.gen(function*() {
      const probe = yield* countingProbe({ readiness: "ready" })
      const events = yield* collect(
        [route(8080, "programmed")],
        Layer.mergeAll(probe.layer, probesOn, Layer.succeed(EventRecorder, noEvents))
      )
      expect(events.map((e) => e.type)).toEqual(["route", "probe"])
    }))
})

describe("over the live recorder", () => {
  /** The live recorder over an in-memory cluster whose events API hangs on every create. */
  const hangingEvents = Effect.gen(function*() {
    const cluster = yield* LocalCluster.makeInMemory()
    yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.hang })
    return Layer.scoped(EventRecorder, EventRecorderLive.make({ instance: "test" })).pipe(
      Layer.provideMerge(Layer.merge(LocalCluster.layerKubeClient(cluster), config))
    )
  })

  it.scoped("ends a session's events without waiting for its Event writes", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(yield* hangingEvents)
      const recorder = Context.get(context, EventRecorder)
      // Ten sessions at once, each with every host programmed: no clock moves, yet all end.
      const streams = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => ({ ...session, sessionId: `s${i}`, podName: `telo-run-s${i}` })),
        (s) =>
          Stream.make(programmed(8080), programmed(9090)).pipe(
            withFollowUps(s),
            Stream.runCollect,
            Effect.provideService(EventRecorder, recorder),
            Effect.provide(followUpDefaults)
          ),
        { concurrency: "unbounded" }
      )
      expect(streams.map((events) => Chunk.size(events))).toEqual(Array.from({ length: 10 }, () => 2))
      // The writes are still hanging: four at a time, each ends at the API time limit (20 s).
      yield* TestClock.adjust(Duration.seconds(60))
      yield* recorder.flush
    }))
})
