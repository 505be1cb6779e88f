/**
 * Following behaviour that mutation testing found unchecked: the first read comes at
 * once and the next ones at the source's cadence, unset options come from
 * `RouterConfig`, a watching source in context is used (and waited on without a read
 * limit, from the last sequence it answered), the hosts-by-state gauge follows the
 * hosts, and a new reason for an unprogrammed host is news. On TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Metric, Ref, Schedule, Stream, TestClock } from "effect"
import type { PublishedRoute } from "../../src/domain/Routes.js"
import { RouteVerdict as Verdict } from "../../src/domain/Routes.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { type FollowedHost, type FollowOptions, followSession, followStep } from "../../src/runner/FollowSession.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"
import { Observation, RouteStatusSource, type Sequenced } from "../../src/services/RouteStatusSource.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import { hosts } from "../../src/services/Telemetry.js"

const r8080: PublishedRoute = { host: "8080-abc.telo.run", port: 8080 }
const programmed: ReadonlyArray<FollowedHost> = [{ port: 8080, host: r8080.host, state: "programmed" }]

/** An ingress router whose every read answers what `answer` holds ("hang": never), counting reads by time. */
const router = Effect.gen(function*() {
  const answer = yield* Ref.make<"programmed" | "pending" | "hang">("pending")
  const reads = yield* Ref.make<ReadonlyArray<number>>([])
  const service = SessionRouter.of({
    layer: "ingress",
    publish: () => Effect.succeed([r8080]),
    routesOf: () => Effect.succeed([r8080]),
    verdictFor: () =>
      Effect.gen(function*() {
        yield* Ref.update(reads, (all) => [...all, 0]).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.flatMap((at) => Ref.update(reads, (all) => [...all.slice(0, -1), at]))
        )
        const now = yield* Ref.get(answer)
        return now === "hang" ? yield* Effect.never : now === "pending" ? Verdict.pending : Verdict.programmed
      }),
    unclaimedReason: () => "nobody claimed it",
    unpublish: () => Effect.void
  })
  return { answer, reads: Ref.get(reads), layer: Layer.succeed(SessionRouter, service) }
})

/** Forks the follow, recording each event with the time it came. */
const follow = (
  options: FollowOptions | undefined,
  layer: Layer.Layer<SessionRouter | RouterConfig>,
  known = programmed
) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<readonly [number, SessionEvent]>>([])
    const fiber = yield* followSession("abc", known, options).pipe(
      Stream.runForEach((event) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(seen, (all) => [...all, [at, event] as const]))
      ),
      Effect.provide(layer),
      Effect.fork
    )
    return { fiber, seen: Ref.get(seen) }
  })

const config = (values: RouterConfigLive.RouterConfigValues) => Layer.orDie(RouterConfigLive.layerFrom(values))
/** The defaults: with both options given, none of them is read. */
const defaults = config({})

const pendingEvent: SessionEvent = { type: "route", port: 8080, host: r8080.host, state: "pending" }

describe("followSession pacing", () => {
  it.effect("reads at once, then once per interval", () =>
    Effect.gen(function*() {
      const r = yield* router
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 50 }, Layer.merge(r.layer, defaults))
      yield* TestClock.adjust(0)
      // The first read is the host's state now: reported without a pause.
      expect(yield* run.seen).toEqual([[0, pendingEvent]])
      yield* TestClock.adjust(350)
      expect(yield* r.reads).toEqual([0, 100, 200, 300])
      yield* Fiber.interrupt(run.fiber)
    }))

  it.effect("takes the interval and the read limit from the configuration when not given", () =>
    Effect.gen(function*() {
      const r = yield* router
      yield* Ref.set(r.answer, "hang")
      const run = yield* follow(
        undefined,
        Layer.merge(r.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      yield* TestClock.adjust(700)
      expect(yield* run.seen).toEqual([[700, {
        type: "read-error",
        reason: "the status read got no answer within 700 ms"
      }]])
      yield* TestClock.adjust(300)
      expect(yield* r.reads).toEqual([0, 1000])
      yield* Fiber.interrupt(run.fiber)
    }))

  it.effect("takes only the option not given from the configuration", () =>
    Effect.gen(function*() {
      const onlyInterval = yield* router
      yield* Ref.set(onlyInterval.answer, "hang")
      const a = yield* follow(
        { intervalMs: 100 },
        Layer.merge(onlyInterval.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      const onlyLimit = yield* router
      yield* Ref.set(onlyLimit.answer, "hang")
      const b = yield* follow(
        { readTimeoutMs: 200 },
        Layer.merge(onlyLimit.layer, config({ routePollIntervalMs: 300, apiTimeoutMs: 700 }))
      )
      yield* TestClock.adjust(1000)
      expect((yield* a.seen).map(([at]) => at)).toEqual([700])
      expect(yield* onlyInterval.reads).toEqual([0, 800])
      expect((yield* b.seen).map(([at]) => at)).toEqual([200])
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
      next: (_, __, after) =>
        Effect.zipRight(
          Ref.update(asked, (all) => [...all, after]),
          answers.has(after) ? Effect.succeed(answers.get(after)!) : Effect.never
        ),
      cadence: () => Schedule.forever
    })
    return { asked: Ref.get(asked), layer: Layer.succeed(RouteStatusSource, service) }
  })

describe("followSession over a watching source", () => {
  it.effect("follows through the source in context, asking from the last sequence it answered, with no read limit", () =>
    Effect.gen(function*() {
      const r = yield* router
      const source = yield* watchingSource(
        new Map([
          [0, { seq: 4, observation: Observation.seen(Verdict.programmed, true) }],
          [4, { seq: 9, observation: Observation.seen(Verdict.pending, true) }]
        ])
      )
      const run = yield* follow({ intervalMs: 100, readTimeoutMs: 50 }, Layer.mergeAll(r.layer, source.layer, defaults))
      yield* TestClock.adjust(1000)
      // A quiet watch is not a silent server: no read-error, however long it waits.
      expect(yield* run.seen).toEqual([[0, pendingEvent]])
      expect(yield* source.asked).toEqual([0, 4, 9])
      expect(yield* r.reads).toEqual([])
      yield* Fiber.interrupt(run.fiber)
    }))
})

describe("followSession gauge", () => {
  const gauge = Effect.all(
    (["pending", "programmed", "unprogrammed"] as const).map((state) =>
      Metric.value(hosts.pipe(Metric.tagged("mode", "ingress"), Metric.tagged("state", state)))
    )
  ).pipe(Effect.map((states) => states.map((s) => s.value)))

  it.effect("holds the followed hosts in the gauge under the router's mode, moves them, and lets go at the end", () =>
    Effect.gen(function*() {
      const r = yield* router
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

describe("followStep reasons", () => {
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
