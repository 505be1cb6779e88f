/**
 * Follow-ups on TestClock with scripted services: a slow probe holds back no route
 * event, a recorder's failure is one session event, and without the services the
 * events pass through untouched; over the live recorder, no session waits on its Events.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, LocalCluster } from "@session-routing/local-cluster"
import { Chunk, Context, Duration, Effect, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import type { Occurrence } from "../../src/domain/KubeEvents.js"
import { EventV1Resource } from "../../src/domain/Resources.js"
import * as EventRecorderLive from "../../src/layers/EventRecorderLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import type { FollowedEvent } from "../../src/runner/RouteFollowUps.js"
import { EventRecorder, noEvents } from "../../src/services/EventRecorder.js"
import { RouteProbe } from "../../src/services/RouteProbe.js"
import { withFollowUps } from "../support/FollowUpsStream.js"

const session = { sessionId: "s1", podName: "telo-run-s1", podUid: "uid-1" }
const programmed = (port: number): FollowedEvent => ({
  type: "route",
  port,
  host: `${port}-s1.example.com`,
  state: "programmed"
})

/** A recorder that keeps what it was asked and tells of `problem` on the first occurrence only. */
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

describe("withFollowUps", () => {
  it.effect("lets route events through while a probe is slow, and ends after the probe", () =>
    Effect.gen(function*() {
      const { layer, seen } = yield* recorder()
      const collected = yield* Stream.make(programmed(8080), programmed(9090)).pipe(
        withFollowUps(session),
        Stream.runCollect,
        Effect.provide(Layer.mergeAll(layer, slowProbe, config)),
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
      ).pipe(withFollowUps(session), Stream.runCollect, Effect.provide(layer))
      expect(Chunk.toReadonlyArray(events).filter((e) => e.type === "event-error")).toEqual([
        { type: "event-error", reason: "could not record Event: forbidden" }
      ])
    }))

  it.effect("passes events through untouched with neither a recorder nor a probe", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(programmed(8080)).pipe(withFollowUps(session), Stream.runCollect)
      expect(Chunk.toReadonlyArray(events)).toEqual([programmed(8080)])
    }))
})

describe("withFollowUps with Events off", () => {
  it.effect("adds nothing when the recorder records nothing and probes are off", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(programmed(8080)).pipe(
        withFollowUps(session),
        Stream.runCollect,
        Effect.provide(Layer.succeed(EventRecorder, noEvents))
      )
      expect(Chunk.toReadonlyArray(events)).toEqual([programmed(8080)])
    }))
})

describe("withFollowUps over the live recorder", () => {
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
            Effect.provideService(EventRecorder, recorder)
          ),
        { concurrency: "unbounded" }
      )
      expect(streams.map((events) => Chunk.size(events))).toEqual(Array.from({ length: 10 }, () => 2))
      // The writes are still hanging: four at a time, each ends at the API time limit (20 s).
      yield* TestClock.adjust(Duration.seconds(60))
      yield* recorder.flush
    }))
})
