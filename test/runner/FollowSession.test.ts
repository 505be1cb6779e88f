/**
 * Following a settled session on TestClock through a polling source whose reads the
 * test controls: changes are reported as they are read, a hung or failing server is
 * a `read-error` once per streak within the read limit, hosts keep their last state
 * meanwhile, and the first good read after it reports what changed. The first read
 * comes at once and the next at the source's cadence, unset options come from
 * `RouterConfig`, a watching source in context is waited on without a read limit from
 * the last sequence it answered, and the hosts-by-state gauge follows the hosts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Metric, Ref, Schedule, Stream, TestClock } from "effect"
import type { PublishedRoute } from "../../src/domain/Routes.js"
import { RouteVerdict as Verdict } from "../../src/domain/Routes.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { pollingOver } from "../../src/layers/RouteStatusSourceLive.js"
import {
  type FollowedHost,
  type FollowOptions,
  followSession,
  type FollowState,
  followStep,
  GONE_REASON
} from "../../src/runner/FollowSession.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { Unavailable } from "../../src/services/KubeError.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"
import { Observation, RouteReadError, RouteStatusSource, type Sequenced } from "../../src/services/RouteStatusSource.js"
import { PublishError, SessionRouter } from "../../src/services/SessionRouter.js"
import { hosts } from "../../src/services/Telemetry.js"

const r8080: PublishedRoute = { host: "8080-abc.telo.run", port: 8080 }
const known: ReadonlyArray<FollowedHost> = [{ port: 8080, host: r8080.host, state: "programmed" }]
const unavailable = new Unavailable({ reason: "the API server could not answer (503: etcd leader changed)", code: 503 })

/** What every read answers at the moment it is made. */
type Answer = "programmed" | "pending" | "gone" | "hang" | "503"

/** A router and a polling source beside it whose reads answer what `answer` holds. */
const scriptedRouter = Effect.gen(function*() {
  const answer = yield* Ref.make<Answer>("programmed")
  const read = Effect.gen(function*() {
    const now = yield* Ref.get(answer)
    return now === "hang" ? yield* Effect.never : now
  })
  const service = SessionRouter.of({
    layer: "gateway",
    publish: () => Effect.succeed([r8080]),
    routesOf: (sessionId) =>
      Effect.flatMap(read, (now) =>
        now === "503"
          ? Effect.fail(new PublishError({ sessionId, error: unavailable, reason: unavailable.reason }))
          : Effect.succeed(now === "gone" ? [] : [r8080])),
    unpublish: () => Effect.void
  })
  const source = pollingOver(
    (_, route) =>
      Effect.flatMap(read, (now) =>
        now === "503"
          ? Effect.fail(new RouteReadError({ route, error: unavailable }))
          : Effect.succeed({ verdict: now === "pending" ? Verdict.pending : Verdict.programmed, present: true })),
    { unclaimedReason: () => "nobody claimed it" }
  )
  return {
    answer,
    layer: Layer.merge(Layer.succeed(SessionRouter, service), Layer.succeed(RouteStatusSource, source))
  }
})

/**
 * An ingress router and a polling source beside it whose every read answers what
 * `answer` holds ("hang": never), noting when each read was made.
 */
const timedRouter = Effect.gen(function*() {
  const answer = yield* Ref.make<"programmed" | "pending" | "hang">("pending")
  const reads = yield* Ref.make<ReadonlyArray<number>>([])
  const service = SessionRouter.of({
    layer: "ingress",
    publish: () => Effect.succeed([r8080]),
    routesOf: () => Effect.succeed([r8080]),
    unpublish: () => Effect.void
  })
  const source = pollingOver(
    () =>
      Effect.gen(function*() {
        yield* Ref.update(reads, (all) => [...all, 0]).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.flatMap((at) => Ref.update(reads, (all) => [...all.slice(0, -1), at]))
        )
        const now = yield* Ref.get(answer)
        const verdict = now === "hang" ? yield* Effect.never : now === "pending" ? Verdict.pending : Verdict.programmed
        return { verdict, present: true }
      }),
    { unclaimedReason: () => "nobody claimed it" }
  )
  const router = Layer.succeed(SessionRouter, service)
  return { answer, reads: Ref.get(reads), router, layer: Layer.merge(router, Layer.succeed(RouteStatusSource, source)) }
})

/** Forks the follow stream over `layer`, recording each event with the virtual time it came. */
const follow = (
  options: FollowOptions | undefined,
  layer: Layer.Layer<SessionRouter | RouteStatusSource | RouterConfig>
) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<{ readonly at: number; readonly event: SessionEvent }>>([])
    const fiber = yield* followSession("abc", known, options).pipe(
      Stream.runForEach((event) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(seen, (all) => [...all, { at, event }]))
      ),
      Effect.provide(layer),
      Effect.fork
    )
    return { fiber, seen: Ref.get(seen) }
  })

const step = (millis: number) =>
  Effect.gen(function*() {
    for (let t = 0; t < millis; t += 25) yield* TestClock.adjust(25)
  })

const config = (values: RouterConfigLive.RouterConfigValues) => Layer.orDie(RouterConfigLive.layerFrom(values))
/** The defaults: with both options given, none of them is read. */
const defaults = config({})

const pendingEvent: SessionEvent = { type: "route", port: 8080, host: r8080.host, state: "pending" }

describe("a hung or failing server", () => {
  it.effect("reports a hung server once, within the read limit, keeps the host, and reports the change after it", () =>
    Effect.gen(function*() {
      const router = yield* scriptedRouter
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 500 }, Layer.merge(router.layer, defaults))
      yield* step(250)
      expect(yield* run.seen).toEqual([])

      yield* Ref.set(router.answer, "hang")
      yield* step(2_000)
      const hung = yield* run.seen
      // Once per streak, however many reads hang; the host is not reported changed.
      expect(hung.map(({ event }) => event)).toEqual([
        { type: "read-error", reason: "the status read got no answer within 500 ms" }
      ])
      // Within one interval plus the read limit of the hang's start.
      expect(hung[0]!.at).toBeLessThanOrEqual(250 + 100 + 500)

      yield* Ref.set(router.answer, "pending")
      yield* step(1_000)
      expect((yield* run.seen).slice(1).map(({ event }) => event)).toEqual([
        { type: "route", port: 8080, host: r8080.host, state: "pending" }
      ])
      yield* Fiber.interrupt(run.fiber)
    }))

  it.effect("reports a failing server with its own reason, once per streak, and again after a good read", () =>
    Effect.gen(function*() {
      const router = yield* scriptedRouter
      yield* Ref.set(router.answer, "503")
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 500 }, Layer.merge(router.layer, defaults))
      yield* step(1_000)
      expect((yield* run.seen).map(({ event }) => event)).toEqual([{ type: "read-error", reason: unavailable.reason }])
      yield* Ref.set(router.answer, "pending")
      yield* step(200)
      yield* Ref.set(router.answer, "503")
      yield* step(500)
      expect((yield* run.seen).map(({ event }) => event)).toEqual([
        { type: "read-error", reason: unavailable.reason },
        // The programmed host lost its status: that is news.
        { type: "route", port: 8080, host: r8080.host, state: "pending" },
        // A new streak after a good read is reported again.
        { type: "read-error", reason: unavailable.reason }
      ])
      yield* Fiber.interrupt(run.fiber)
    }))
})

describe("the pace of the reads", () => {
  it.effect("reads at once, then once per interval", () =>
    Effect.gen(function*() {
      const r = yield* timedRouter
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 50 }, Layer.merge(r.layer, defaults))
      yield* TestClock.adjust(0)
      // The first read is the host's state now: reported without a pause.
      expect(yield* run.seen).toEqual([{ at: 0, event: pendingEvent }])
      yield* TestClock.adjust(350)
      expect(yield* r.reads).toEqual([0, 100, 200, 300])
      yield* Fiber.interrupt(run.fiber)
    }))

  it.effect("takes the interval and the read limit from the configuration when not given", () =>
    Effect.gen(function*() {
      const r = yield* timedRouter
      yield* Ref.set(r.answer, "hang")
      const run = yield* follow(
        undefined,
        Layer.merge(r.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      yield* TestClock.adjust(700)
      expect(yield* run.seen).toEqual([{
        at: 700,
        event: { type: "read-error", reason: "the status read got no answer within 700 ms" }
      }])
      yield* TestClock.adjust(300)
      expect(yield* r.reads).toEqual([0, 1000])
      yield* Fiber.interrupt(run.fiber)
    }))

  it.effect("takes only the option not given from the configuration", () =>
    Effect.gen(function*() {
      const onlyInterval = yield* timedRouter
      yield* Ref.set(onlyInterval.answer, "hang")
      const a = yield* follow(
        { intervalMs: 100 },
        Layer.merge(onlyInterval.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      const onlyLimit = yield* timedRouter
      yield* Ref.set(onlyLimit.answer, "hang")
      const b = yield* follow(
        { readTimeoutMs: 200 },
        Layer.merge(onlyLimit.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      yield* TestClock.adjust(1000)
      expect((yield* a.seen).map(({ at }) => at)).toEqual([700])
      expect(yield* onlyInterval.reads).toEqual([0, 800])
      expect((yield* b.seen).map(({ at }) => at)).toEqual([200])
      expect(yield* onlyLimit.reads).toEqual([0, 500, 1000])
      yield* Fiber.interrupt(a.fiber)
      yield* Fiber.interrupt(b.fiber)
    }))
})

/** A watching source: answers each `next` with the scripted observation for the `after` it is given; none: it waits. */
const watchingSource = (answers: ReadonlyMap<number, Sequenced>) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<number>>([])
    const service = RouteStatusSource.of({
      kind: "watch",
      read: () => Effect.dieMessage("following never reads once"),
      next: (_, __, after) =>
        Effect.zipRight(
          Ref.update(asked, (all) => [...all, after]),
          answers.has(after) ? Effect.succeed(answers.get(after)!) : Effect.never
        ),
      cadence: () => Schedule.forever,
      unclaimedReason: () => "nobody claimed it"
    })
    return { asked: Ref.get(asked), layer: Layer.succeed(RouteStatusSource, service) }
  })

describe("following through a watching source", () => {
  it.effect("follows through the source in context, asking from the last sequence it answered, with no read limit", () =>
    Effect.gen(function*() {
      const r = yield* timedRouter
      const source = yield* watchingSource(
        new Map([
          [0, { seq: 4, observation: Observation.seen(Verdict.programmed, true) }],
          [4, { seq: 9, observation: Observation.seen(Verdict.pending, true) }]
        ])
      )
      const run = yield* follow(
        { intervalMs: 100, readTimeoutMs: 50 },
        Layer.mergeAll(r.router, source.layer, defaults)
      )
      yield* TestClock.adjust(1000)
      // A quiet watch is not a silent server: no read-error, however long it waits.
      expect(yield* run.seen).toEqual([{ at: 0, event: pendingEvent }])
      expect(yield* source.asked).toEqual([0, 4, 9])
      expect(yield* r.reads).toEqual([])
      yield* Fiber.interrupt(run.fiber)
    }))
})

describe("the hosts-by-state gauge", () => {
  const gauge = Effect.all(
    (["pending", "programmed", "unprogrammed"] as const).map((state) =>
      Metric.value(hosts.pipe(Metric.tagged("mode", "ingress"), Metric.tagged("state", state)))
    )
  ).pipe(Effect.map((states) => states.map((s) => s.value)))

  it.effect("holds the followed hosts in the gauge under the router's mode, moves them, and lets go at the end", () =>
    Effect.gen(function*() {
      const r = yield* timedRouter
      yield* Ref.set(r.answer, "programmed")
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 50 }, Layer.merge(r.layer, defaults))
      yield* TestClock.adjust(50)
      expect(yield* gauge).toEqual([0, 1, 0])
      yield* Ref.set(r.answer, "pending")
      yield* TestClock.adjust(100)
      expect(yield* gauge).toEqual([1, 0, 0])
      yield* Fiber.interrupt(run.fiber)
      expect(yield* gauge).toEqual([0, 0, 0])
    }))
})

describe("what is news", () => {
  const r9090: PublishedRoute = { host: "9090-abc.telo.run", port: 9090 }
  const known: FollowState = {
    rows: new Map([
      [r8080.host, { port: 8080, host: r8080.host, state: "programmed" as const }],
      [r9090.host, { port: 9090, host: r9090.host, state: "unprogrammed" as const, reason: "unclaimed" }]
    ]),
    failing: false
  }
  const seen = (kind: "pending" | "programmed", present = true) =>
    Observation.seen(kind === "pending" ? Verdict.pending : Verdict.programmed, present)
  const failed = Observation.unreadable(new RouteReadError({ route: r8080, error: unavailable }))

  it("reports nothing while nothing changes, and nothing for a read going out", () => {
    expect(followStep(known, r8080, seen("programmed"))[1]).toEqual([])
    // 9090 was unprogrammed at the deadline and is still not claimed: not news.
    expect(followStep(known, r9090, seen("pending"))[1]).toEqual([])
    expect(followStep(known, r8080, Observation.reading(5))[1]).toEqual([])
  })

  it("reports a host programmed late, one that lost its status, one rejected, and one whose object is gone", () => {
    expect(followStep(known, r9090, seen("programmed"))[1]).toEqual([
      { type: "route", port: 9090, host: r9090.host, state: "programmed" }
    ])
    expect(followStep(known, r8080, seen("pending"))[1]).toEqual([
      { type: "route", port: 8080, host: r8080.host, state: "pending" }
    ])
    expect(followStep(known, r8080, Observation.seen(Verdict.rejected("NoMatchingParent", "no listener"), true))[1])
      .toEqual([
        {
          type: "route",
          port: 8080,
          host: r8080.host,
          state: "unprogrammed",
          reason: "NoMatchingParent: no listener",
          code: "NoMatchingParent"
        }
      ])
    const [gone, events] = followStep(known, r8080, seen("pending", false))
    expect(events).toEqual([{
      type: "route",
      port: 8080,
      host: r8080.host,
      state: "unprogrammed",
      reason: GONE_REASON,
      code: "RouteDeleted"
    }])
    // Said once; a session published again is news again.
    expect(followStep(gone, r8080, seen("pending", false))[1]).toEqual([])
    expect(followStep(gone, r8080, seen("pending"))[1]).toEqual([
      { type: "route", port: 8080, host: r8080.host, state: "pending" }
    ])
  })

  it("keeps the last answer on a failed read and reports a streak of failures once, on any host", () => {
    const [failing, first] = followStep(known, r8080, failed)
    expect(first).toEqual([{ type: "read-error", reason: unavailable.reason }])
    expect(failing.rows).toEqual(known.rows)
    expect(followStep(failing, r9090, failed)[1]).toEqual([])
    const [recovered] = followStep(failing, r9090, seen("pending"))
    expect(recovered.failing).toBe(false)
    expect(followStep(recovered, r8080, failed)[1]).toEqual([{ type: "read-error", reason: unavailable.reason }])
  })

  it("reports an unprogrammed host again when its reason changes", () => {
    const state = {
      rows: new Map([[r8080.host, {
        port: 8080,
        host: r8080.host,
        state: "unprogrammed" as const,
        reason: "unclaimed"
      }]]),
      failing: false
    }
    const [next, events] = followStep(
      state,
      r8080,
      Observation.seen(Verdict.rejected("NoMatchingParent", "no listener"), true)
    )
    expect(events).toEqual([
      {
        type: "route",
        port: 8080,
        host: r8080.host,
        state: "unprogrammed",
        reason: "NoMatchingParent: no listener",
        code: "NoMatchingParent"
      }
    ])
    expect(followStep(next, r8080, Observation.seen(Verdict.rejected("NoMatchingParent", "no listener"), true))[1])
      .toEqual([])
  })

  it("reports a host it did not know yet, with no reason key when it has no reason", () => {
    // Strict: a `reason` key holding undefined would print in JSON output as a key without a value.
    expect(followStep({ rows: new Map(), failing: false }, r8080, Observation.seen(Verdict.programmed, true))[1])
      .toStrictEqual([{ type: "route", port: 8080, host: r8080.host, state: "programmed" }])
  })
})
