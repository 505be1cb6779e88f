/**
 * The route-health watch on TestClock: the behaviour runners rely on (pending up
 * front, verdicts per host, rejections, the silent-404 deadline, read failures kept
 * apart, interruption, nothing to watch), plus the deadline, hang, interruption and timing guarantees,
 * against a fake RouteStatusSource (the source is the watch's input, so faking it is fair).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Fiber, Layer, Ref, Schedule, Stream, TestClock } from "effect"
import { RoutingPath } from "../../src/domain/Diagnosis.js"
import type { PublishedRoute, RouteState, RouteVerdict } from "../../src/domain/Routes.js"
import { RouteVerdict as Verdict, Unprogrammed } from "../../src/domain/Routes.js"
import { cutReadIsSilence } from "../../src/health/internal/HostEvidence.js"
import {
  readFailure,
  reportRouteHealth,
  RouteHealthEvent,
  watchRouteHealth,
  type WatchRouteHealthInput
} from "../../src/health/RouteHealth.js"
import { pollingOver } from "../../src/layers/RouteStatusSourceLive.js"
import { Forbidden, Transport, Unavailable } from "../../src/services/KubeError.js"
import { RouterConfig } from "../../src/services/RouterConfig.js"
import {
  type ChangeFeed,
  Observation,
  RouteReadError,
  RouteStatusSource
} from "../../src/services/RouteStatusSource.js"

const r8080: PublishedRoute = { host: "8080-abc.telo.run", port: 8080 }
const r9090: PublishedRoute = { host: "9090-abc.telo.run", port: 9090 }
const r7070: PublishedRoute = { host: "7070-abc.telo.run", port: 7070 }
const r6060: PublishedRoute = { host: "6060-abc.telo.run", port: 6060 }
const routes = [r8080, r9090]

const unclaimed = (route: PublishedRoute) => `nobody claimed ${route.host}`

const forbiddenReason =
  `httproutes.gateway.networking.k8s.io "telo-run-abc" is forbidden (grant the verb "get" on httproutes.gateway.networking.k8s.io to this identity in a Role)`
const forbidden = (route: PublishedRoute) =>
  new RouteReadError({ route, error: new Forbidden({ reason: forbiddenReason, code: 403 }) })
const hiccup = (route: PublishedRoute) =>
  new RouteReadError({ route, error: new Unavailable({ reason: "the API server could not answer (503)", code: 503 }) })

/** What a test asserts about one event: when it fired and what it said. */
type Seen =
  | { readonly at: number; readonly host: string; readonly state: RouteState; readonly reason?: string }
  | { readonly at: number; readonly readError: string; readonly reason: string }

const view = (at: number, event: RouteHealthEvent): Seen =>
  event._tag === "Route"
    ? {
      at,
      host: event.route.host,
      state: event.state,
      ...(event.state === "unprogrammed" ? { reason: event.reason } : {})
    }
    : { at, readError: event.route.host, reason: event.reason }

/** The terminal event of r8080 when its status could not be read: at `at`, for `why`. */
const unreadableAt = (at: number, why: string): Seen => ({
  at,
  host: r8080.host,
  state: "unprogrammed",
  reason: `route status could not be read: ${why}`
})

/**
 * A polling RouteStatusSource whose reads answer with `answer(route, n)` for the host's
 * n-th read (from 1), logging the virtual time of every read and counting interrupted reads.
 */
const fakeSource = (answer: (route: PublishedRoute, call: number) => Effect.Effect<RouteVerdict, RouteReadError>) =>
  Effect.gen(function*() {
    const reads = yield* Ref.make<ReadonlyArray<{ readonly at: number; readonly host: string }>>([])
    const interrupted = yield* Ref.make(0)
    const service = pollingOver(
      (_sessionId, route) =>
        Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const log = yield* Ref.updateAndGet(reads, (all) => [...all, { at, host: route.host }])
          const verdict = yield* answer(route, log.filter((read) => read.host === route.host).length)
          return { verdict, present: true }
        }).pipe(Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1))),
      { unclaimedReason: unclaimed }
    )
    return {
      layer: Layer.succeed(RouteStatusSource, service),
      /** Virtual times at which `host` was read. */
      readsOf: (host: string) =>
        Ref.get(reads).pipe(Effect.map((all) => all.filter((r) => r.host === host).map((r) => r.at))),
      interruptedReads: Ref.get(interrupted)
    }
  })

/** Forks the watch, recording each event with the virtual time it reached the consumer. */
const start = (input: WatchRouteHealthInput & { readonly timeoutMs: number; readonly intervalMs: number }) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<Seen>>([])
    const fiber = yield* watchRouteHealth(input).pipe(
      Stream.runForEach((event) =>
        Clock.currentTimeMillis.pipe(Effect.flatMap((at) => Ref.update(seen, (all) => [...all, view(at, event)])))
      ),
      Effect.fork
    )
    return { fiber, seen: Ref.get(seen) }
  })

/** Runs the watch to completion, moving the clock `advanceMs`; joining proves the stream ended. */
const runFor = (
  advanceMs: number,
  input: WatchRouteHealthInput & { readonly timeoutMs: number; readonly intervalMs: number }
) =>
  Effect.gen(function*() {
    const { fiber, seen } = yield* start(input)
    yield* TestClock.adjust(advanceMs)
    yield* Fiber.join(fiber)
    return yield* seen
  })

/** Orders events of hosts that settled at the same instant, whose order is not promised. */
const byHost = (a: Seen | RouteHealthEvent, b: Seen | RouteHealthEvent): number => {
  const host = (x: Seen | RouteHealthEvent) => "route" in x ? x.route.host : "host" in x ? x.host : x.readError
  return host(a).localeCompare(host(b))
}

/** Every host answers this verdict immediately. */
const always = (verdict: RouteVerdict) => () => Effect.succeed(verdict)

/** Answers pending until the virtual clock reaches `atMs`, then `verdict`. */
const from = (atMs: number, verdict: RouteVerdict) =>
  Clock.currentTimeMillis.pipe(Effect.map((now) => (now >= atMs ? verdict : Verdict.pending)))

describe("readFailure", () => {
  it("says the status could not be read, with the Kubernetes error's own reason, under the unreadable code", () => {
    expect(readFailure(forbidden(r8080))).toEqual({
      reason: `route status could not be read: ${forbiddenReason}`,
      code: "RouteStatusUnreadable"
    })
  })
})

describe("watchRouteHealth", () => {
  const sessionId = "abc"

  // --- the behaviour runners rely on -----------------------------------------------

  it.effect("reports pending for every host up front, then programmed per host", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.programmed))
      const events = yield* watchRouteHealth({ sessionId, routes, timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Stream.runCollect,
        Effect.provide(fake.layer)
      )
      // The whole values: these are what the runner maps onto its wire events. Pending
      // comes in route order; hosts settling at the same instant come in no promised order.
      const [first, second, ...settled] = [...events]
      expect([first, second]).toEqual([
        { _tag: "Route", route: r8080, state: "pending" },
        { _tag: "Route", route: r9090, state: "pending" }
      ])
      expect(settled.sort(byHost)).toEqual([
        { _tag: "Route", route: r8080, state: "programmed" },
        { _tag: "Route", route: r9090, state: "programmed" }
      ])
    }))

  it.effect("carries a rejection's reason straight through and ends the host at once", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.rejected("NotAllowedByListeners", "")))
      const seen = yield* runFor(0, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, host: r8080.host, state: "unprogrammed", reason: "NotAllowedByListeners" }
      ])
      expect(yield* fake.readsOf(r8080.host)).toEqual([0])
    }))

  it.effect("keeps the controller's message after a rejection's reason code", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(
        always(Verdict.rejected("NotAllowedByListeners", "no listener of gw allows routes from telo-sessions"))
      )
      const seen = yield* runFor(0, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual({
        at: 0,
        host: r8080.host,
        state: "unprogrammed",
        reason: "NotAllowedByListeners: no listener of gw allows routes from telo-sessions"
      })
    }))

  // A Pod deleted (or never there: a wrong uid) has its objects collected at once; the
  // deadline's diagnosis would then blame a controller for a route that no longer exists.
  it.effect("reports a host whose object was seen and then gone as deleted at once, not at the deadline", () =>
    Effect.gen(function*() {
      const gone = pollingOver(
        (_sessionId, _route) =>
          Effect.map(Clock.currentTimeMillis, (now) => ({ verdict: Verdict.pending, present: now < 3 })),
        { unclaimedReason: unclaimed }
      )
      const seen = yield* runFor(10, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(Layer.succeed(RouteStatusSource, gone))
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 3, host: r8080.host, state: "unprogrammed", reason: Unprogrammed.deleted.reason }
      ])
    }))

  it.effect("reports a host whose object is never found as deleted at the deadline, never as unclaimed", () =>
    Effect.gen(function*() {
      const never = pollingOver(() => Effect.succeed({ verdict: Verdict.pending, present: false }), {
        unclaimedReason: unclaimed
      })
      const events = yield* watchRouteHealth({ sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Stream.runCollect,
        Effect.fork,
        Effect.tap(() => TestClock.adjust(5)),
        Effect.flatMap(Fiber.join),
        Effect.provide(Layer.succeed(RouteStatusSource, never))
      )
      expect([...events].at(-1)).toEqual(RouteHealthEvent.unprogrammed(r8080, Unprogrammed.deleted))
    }))

  it.effect("calls a route that stays pending unprogrammed at the deadline, the silent-404 case", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const seen = yield* runFor(5, { sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 5, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) }
      ])
      // Read every interval up to the deadline; none at the deadline itself, no time is left for it.
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 1, 2, 3, 4])
    }))

  it.effect("at the deadline, a host its controller still holds back says the controller's reason, not the unclaimed advice", () =>
    Effect.gen(function*() {
      // Held from 2 ms on: the last answer decides, not the first.
      const fake = yield* fakeSource(() =>
        from(2, Verdict.held("ProgrammingInProgress", "Route is still being programmed"))
      )
      const events = yield* watchRouteHealth({ sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Stream.runCollect,
        Effect.fork,
        Effect.tap(() => TestClock.adjust(5)),
        Effect.flatMap(Fiber.join),
        Effect.provide(fake.layer)
      )
      expect([...events].at(-1)).toEqual(
        RouteHealthEvent.unprogrammed(r8080, {
          reason: "ProgrammingInProgress: Route is still being programmed (still so at the route deadline)",
          code: "ProgrammingInProgress"
        })
      )
    }))

  it.effect("a hold that lifts before the deadline leaves the ordinary unclaimed answer", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((_route, call) =>
        Effect.succeed(call < 3 ? Verdict.held("RouteBeingDeleted", "being deleted") : Verdict.pending)
      )
      const seen = yield* runFor(5, { sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual({ at: 5, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) })
    }))

  it.effect("with a deadline too short for any read, reports the status unread, never the unclaimed advice", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const seen = yield* runFor(0, { sessionId, routes: [r8080], timeoutMs: 0, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      const unread = "no read of the status was answered within the 0 ms route deadline"
      // One terminal event: the deadline and the host's own fiber both judge it at once.
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, readError: r8080.host, reason: unread },
        { at: 0, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${unread}` }
      ])
      expect(yield* fake.readsOf(r8080.host)).toEqual([])
    }))

  it.effect("backs off from a permanent read failure instead of polling it every interval, and returns to the interval once it heals", () =>
    Effect.gen(function*() {
      // 403 for the first five reads (RBAC fixed meanwhile), then pending answers.
      const fake = yield* fakeSource((route, call) =>
        call <= 5 ? Effect.fail(forbidden(route)) : Effect.succeed(Verdict.pending)
      )
      yield* runFor(10_000, { sessionId, routes: [r8080], timeoutMs: 10_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      const reads = yield* fake.readsOf(r8080.host)
      // 200, 400, 800, 1600, 3200 ms pauses after the failures, then 100 ms again.
      expect(reads.slice(0, 8)).toEqual([0, 200, 600, 1_400, 3_000, 6_200, 6_300, 6_400])
    }))

  it.effect("keeps the poll interval through transient read failures", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route) => Effect.fail(hiccup(route)))
      yield* runFor(500, { sessionId, routes: [r8080], timeoutMs: 500, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 100, 200, 300, 400])
    }))

  it.effect("settles each host independently", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route) =>
        Effect.succeed(route.port === 8080 ? Verdict.programmed : Verdict.rejected("no listener", ""))
      )
      const seen = yield* runFor(0, { sessionId, routes, timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.filter((s) => !("state" in s) || s.state !== "pending").sort(byHost)).toEqual([
        { at: 0, host: r8080.host, state: "programmed" },
        { at: 0, host: r9090.host, state: "unprogrammed", reason: "no listener" }
      ])
    }))

  it.effect("keeps polling through a transient read failure instead of declaring the route dead", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route, call) =>
        call < 3 ? Effect.fail(hiccup(route)) : Effect.succeed(Verdict.programmed)
      )
      const seen = yield* runFor(2, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, readError: r8080.host, reason: "the API server could not answer (503)" },
        { at: 2, host: r8080.host, state: "programmed" }
      ])
    }))

  it.effect("reports the read failure at the deadline, not the unclaimed advice", () =>
    Effect.gen(function*() {
      // A permanent read failure (no RBAC, an unserved API version) polls out the whole
      // deadline. The unclaimed advice there would send an operator to inspect the
      // controller when the runner could not read its own object.
      const fake = yield* fakeSource((route) => Effect.fail(forbidden(route)))
      const seen = yield* runFor(5, { sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        // Reported once, at the first failure, not once per poll.
        { at: 0, readError: r8080.host, reason: forbiddenReason },
        { at: 5, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${forbiddenReason}` }
      ])
      // A 403 will not heal by waiting: each pause doubles (2, then 4 ms, cut by the deadline).
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 2])
    }))

  it.effect("does not blame a transient read failure once a verdict was obtained", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route, call) =>
        call === 1 ? Effect.fail(hiccup(route)) : Effect.succeed(Verdict.pending)
      )
      const seen = yield* runFor(8, { sessionId, routes: [r8080], timeoutMs: 8, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual({ at: 8, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) })
    }))

  it.effect("stops on interruption without reporting a verdict it never reached", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const { fiber, seen } = yield* start({ sessionId, routes, timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust(5_000)
      const events = yield* seen
      expect(events.every((s) => "state" in s && s.state === "pending")).toBe(true)
      // Nothing polls after the interruption, though the clock ran far past the deadline.
      expect((yield* fake.readsOf(r8080.host)).every((at) => at === 0)).toBe(true)
    }))

  it.effect("emits nothing, immediately, when nothing was published", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.programmed))
      // Run without forking or moving the clock: the stream must end on its own at once.
      const events = yield* watchRouteHealth({ sessionId, routes: [], timeoutMs: 1_000, intervalMs: 1 }).pipe(
        Stream.runCollect,
        Effect.provide(fake.layer)
      )
      expect([...events]).toEqual([])
      expect(yield* fake.readsOf(r8080.host)).toEqual([])
    }))

  // --- deadlines ---------------------------------------------------------------------

  it.effect("counts the deadline from the start of the watch when every read is slow", () =>
    Effect.gen(function*() {
      // Reads of 300 ms, one due every 100 ms but never before the last answered:
      // 0–300, 300–600, 600–900, 900–(cut at 1000). A deadline counted in polls, or
      // checked only between reads, would report at 1100 or later.
      const fake = yield* fakeSource(() => Effect.sleep("300 millis").pipe(Effect.as(Verdict.pending)))
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        // The cut-off read decides nothing: the last answer (pending) stands.
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) }
      ])
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 300, 600, 900])
      expect(yield* fake.interruptedReads).toBe(1)
    }))

  it.effect("reports the read failure at an absolute deadline when every slow read fails", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route) =>
        Effect.sleep("300 millis").pipe(Effect.zipRight(Effect.fail(forbidden(route))))
      )
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 300, readError: r8080.host, reason: forbiddenReason },
        {
          at: 1_000,
          host: r8080.host,
          state: "unprogrammed",
          reason: `route status could not be read: ${forbiddenReason}`
        }
      ])
    }))

  it.effect("ends a hung read at the deadline and says the status could not be read", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(() => Effect.never)
      const { fiber, seen } = yield* start({ sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      yield* TestClock.adjust(999)
      expect(yield* seen).toEqual([{ at: 0, host: r8080.host, state: "pending" }])
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      const hung = "the status read got no answer within 1000 ms (cut off by the 1000 ms route deadline)"
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 1_000, readError: r8080.host, reason: hung },
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${hung}` }
      ])
      // The timeout interrupted the read itself, which is what cancels the HTTP request.
      expect(yield* fake.interruptedReads).toBe(1)
    }))

  it.effect("reports a server that stops answering after a pending answer as a read failure, not as unclaimed", () =>
    Effect.gen(function*() {
      // The API server answered pending at once, then went silent: the last thing the
      // cluster said is no answer, and the unclaimed advice would blame a controller
      // nobody could ask about.
      const fake = yield* fakeSource((_, call) => call === 1 ? Effect.succeed(Verdict.pending) : Effect.never)
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      const hung = "the status read got no answer within 900 ms (cut off by the 1000 ms route deadline)"
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 1_000, readError: r8080.host, reason: hung },
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${hung}` }
      ])
    }))

  it.effect("gives every host of one outage the read failure, never the unclaimed advice to some", () =>
    Effect.gen(function*() {
      // Both hosts answered pending, then the server went silent at 150 ms: one host's
      // read was out when it stopped, the other's started after.
      const fake = yield* fakeSource((route, call) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => now >= 150 || (route === r9090 && call > 1) ? Effect.never : Effect.succeed(Verdict.pending)
        )
      )
      const seen = yield* runFor(5_000, { sessionId, routes, timeoutMs: 5_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      const terminal = seen.filter((event) => "state" in event && event.state === "unprogrammed")
      expect(terminal).toHaveLength(2)
      for (const event of terminal) {
        expect(event.reason).toMatch(/^route status could not be read: the status read got no answer within \d+ ms/)
      }
      expect(seen.filter((event) => "readError" in event)).toHaveLength(1)
    }))

  it.effect("reports the server's own failure, not a timeout, when the status reads keep failing fast", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route, call) =>
        call === 1 ? Effect.succeed(Verdict.pending) : Effect.fail(hiccup(route))
      )
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual(unreadableAt(1_000, "the API server could not answer (503)"))
    }))

  it("counts a cut read as silence only when it outlasted the interval and twice the slowest answer", () => {
    expect(cutReadIsSilence(900, 0, 100)).toBe(true)
    // Slow, not silent: every read took 300 ms.
    expect(cutReadIsSilence(200, 300, 100)).toBe(false)
    expect(cutReadIsSilence(601, 300, 100)).toBe(true)
    // Exactly twice the slowest answer is still slow; exactly the interval is long enough.
    expect(cutReadIsSilence(600, 300, 100)).toBe(false)
    expect(cutReadIsSilence(100, 0, 100)).toBe(true)
    // A read the deadline caught a moment after it started says nothing.
    expect(cutReadIsSilence(5, 0, 2_000)).toBe(false)
    // With a long interval, a second of silence is enough.
    expect(cutReadIsSilence(1_000, 10, 60_000)).toBe(true)
  })

  it.effect("reports the read failure when reads start failing after pending answers", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route, call) =>
        call <= 2 ? Effect.succeed(Verdict.pending) : Effect.fail(forbidden(route))
      )
      const seen = yield* runFor(5, { sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 2, readError: r8080.host, reason: forbiddenReason },
        { at: 5, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${forbiddenReason}` }
      ])
    }))

  it.effect("reports the first read failure once per watch, not once per host", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route) => Effect.fail(forbidden(route)))
      const seen = yield* runFor(5, { sessionId, routes, timeoutMs: 5, intervalMs: 1 }).pipe(Effect.provide(fake.layer))
      expect(seen.filter((s) => "readError" in s)).toEqual([{ at: 0, readError: r8080.host, reason: forbiddenReason }])
      expect(seen.filter((s) => "state" in s && s.state !== "pending").sort(byHost)).toEqual([
        {
          at: 5,
          host: r8080.host,
          state: "unprogrammed",
          reason: `route status could not be read: ${forbiddenReason}`
        },
        { at: 5, host: r9090.host, state: "unprogrammed", reason: `route status could not be read: ${forbiddenReason}` }
      ])
    }))

  it.effect("carries the route read error itself on the read-error event", () =>
    Effect.gen(function*() {
      const error = forbidden(r8080)
      const fake = yield* fakeSource(() => Effect.fail(error))
      const events = yield* Effect.gen(function*() {
        const fiber = yield* watchRouteHealth({ sessionId, routes: [r8080], timeoutMs: 5, intervalMs: 1 }).pipe(
          Stream.runCollect,
          Effect.fork
        )
        yield* TestClock.adjust(5)
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(fake.layer))
      expect([...events][1]).toEqual({ _tag: "ReadError", route: r8080, reason: forbiddenReason, error })
      expect(RouteHealthEvent.readError(error)).toEqual({
        _tag: "ReadError",
        route: r8080,
        reason: forbiddenReason,
        error
      })
    }))

  // --- interruption -----------------------------------------------------------------

  it.effect("emits nothing further once interrupted mid-poll, and cancels the read in flight", () =>
    Effect.gen(function*() {
      // 8080 is programmed from 300 ms; 9090 never is, and its reads take 150 ms each,
      // longer than the interval: 0–150, 150–300, 300–450, 450–600, so at 550 one is out.
      const fake = yield* fakeSource((route) =>
        route.port === 8080
          ? from(300, Verdict.programmed)
          : Effect.sleep("150 millis").pipe(Effect.as(Verdict.pending))
      )
      const { fiber, seen } = yield* start({ sessionId, routes, timeoutMs: 5_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      yield* TestClock.adjust(550)
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust(10_000)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, host: r9090.host, state: "pending" },
        { at: 300, host: r8080.host, state: "programmed" }
      ])
      expect(yield* fake.readsOf(r9090.host)).toEqual([0, 150, 300, 450])
      expect(yield* fake.interruptedReads).toBe(1)
    }))

  // --- independence and timing ----------------------------------------------------------

  it.effect("settles every host on its own time: a slow host never delays another", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource((route) => {
        switch (route.port) {
          case 8080: // programmed at the first read
            return Effect.succeed(Verdict.programmed)
          case 9090: // every read takes 700 ms, then says programmed
            return Effect.sleep("700 millis").pipe(Effect.as(Verdict.programmed))
          case 7070: // rejected once the controller gets to it at 250 ms; seen at the 300 ms poll
            return from(250, Verdict.rejected("NoMatchingParent", ""))
          default: // never claimed
            return Effect.succeed(Verdict.pending)
        }
      })
      const seen = yield* runFor(1_000, {
        sessionId,
        routes: [r8080, r9090, r7070, r6060],
        timeoutMs: 1_000,
        intervalMs: 100
      }).pipe(Effect.provide(fake.layer))
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, host: r9090.host, state: "pending" },
        { at: 0, host: r7070.host, state: "pending" },
        { at: 0, host: r6060.host, state: "pending" },
        { at: 0, host: r8080.host, state: "programmed" },
        { at: 300, host: r7070.host, state: "unprogrammed", reason: "NoMatchingParent" },
        { at: 700, host: r9090.host, state: "programmed" },
        { at: 1_000, host: r6060.host, state: "unprogrammed", reason: unclaimed(r6060) }
      ])
    }))

  it.effect("sees a host programmed at the first poll after the controller writes status", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(() => from(600, Verdict.programmed))
      const { fiber, seen } = yield* start({ sessionId, routes: [r8080], timeoutMs: 2_000, intervalMs: 250 }).pipe(
        Effect.provide(fake.layer)
      )
      yield* TestClock.adjust(749)
      expect(yield* seen).toEqual([{ at: 0, host: r8080.host, state: "pending" }])
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 750, host: r8080.host, state: "programmed" }
      ])
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 250, 500, 750])
    }))

  it.effect("cuts the last pause short so the deadline lands exactly, between polls", () =>
    Effect.gen(function*() {
      // Polls at 0, 400, 800; the next would be at 1200, after the 1000 ms deadline.
      const fake = yield* fakeSource(always(Verdict.pending))
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 400 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual({ at: 1_000, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) })
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 400, 800])
    }))

  it.effect("measures the poll period from the start of each read, so a slow answer does not stretch it", () =>
    Effect.gen(function*() {
      // Answers take 60 ms: the next read is due 100 ms after the last one started, not after it answered.
      const fake = yield* fakeSource(() => Effect.sleep("60 millis").pipe(Effect.as(Verdict.pending)))
      yield* runFor(450, { sessionId, routes: [r8080], timeoutMs: 450, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 100, 200, 300, 400])
    }))

  it.effect("does not spin at one instant when the interval is zero", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const seen = yield* runFor(3, { sessionId, routes: [r8080], timeoutMs: 3, intervalMs: 0 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual({ at: 3, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) })
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 1, 2])
    }))

  it.effect("reads neither the router nor the configuration when nothing was published", () =>
    Effect.gen(function*() {
      // Every property read of these services throws: the watch must not touch them.
      const untouchable = <A extends object>(what: string): A =>
        new Proxy({} as A, {
          get: (_, key) => {
            throw new Error(`read ${what}.${String(key)}`)
          }
        })
      const reported: Array<RouteHealthEvent> = []
      const report = (event: RouteHealthEvent) => Effect.sync(() => void reported.push(event))
      const services = <A, E>(self: Effect.Effect<A, E, RouteStatusSource | RouterConfig>) =>
        self.pipe(
          Effect.provideService(RouteStatusSource, untouchable("RouteStatusSource")),
          Effect.provideService(RouterConfig, untouchable("RouterConfig"))
        )
      yield* services(reportRouteHealth({ sessionId, routes: [] }, report))
      yield* services(reportRouteHealth({ sessionId, routes: [], timeoutMs: 1_000, intervalMs: 100 }, report))
      expect(reported).toEqual([])
    }))

  it.effect("hands events to the callback one at a time when hosts settle at the same instant", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.programmed))
      const log: Array<string> = []
      // A callback that takes a moment: a second event must wait until the first returned.
      const report = (event: RouteHealthEvent) =>
        Effect.gen(function*() {
          const what = event._tag === "Route" ? `${event.state} ${event.route.port}` : event._tag
          log.push(`start ${what}`)
          yield* Effect.sleep(Duration.millis(10))
          log.push(`end ${what}`)
        })
      const fiber = yield* reportRouteHealth({ sessionId, routes, timeoutMs: 1_000, intervalMs: 100 }, report).pipe(
        Effect.provide(fake.layer),
        Effect.fork
      )
      yield* TestClock.adjust(100)
      yield* Fiber.join(fiber)
      // Each event's call ends before the next one's starts.
      const starts = log.filter((_, i) => i % 2 === 0)
      expect(log).toEqual(starts.flatMap((line) => [line, line.replace("start", "end")]))
      expect(log.filter((line) => line.startsWith("start programmed")).sort()).toEqual([
        "start programmed 8080",
        "start programmed 9090"
      ])
    }))

  it.effect("reads the diagnosis once for all the session's hosts pending at the deadline", () =>
    Effect.gen(function*() {
      let diagnoses = 0
      const source = pollingOver(() => Effect.succeed({ verdict: Verdict.pending, present: true }), {
        unclaimedReason: unclaimed,
        diagnose: () =>
          Effect.sync(() => {
            diagnoses++
            return () => RoutingPath.broken("IngressClassNotFound", "no class")
          })
      })
      // Reads at 0, 300, 600 and 900: the next would come after the deadline, so both
      // hosts are judged by the deadline timer.
      const seen = yield* runFor(1_000, { sessionId, routes, timeoutMs: 1_000, intervalMs: 300 }).pipe(
        Effect.provide(Layer.succeed(RouteStatusSource, source))
      )
      expect(seen.filter((s) => "state" in s && s.state === "unprogrammed").map((s) => s.reason)).toEqual([
        "IngressClassNotFound: no class",
        "IngressClassNotFound: no class"
      ])
      expect(diagnoses).toBe(1)
    }))

  it.effect("reports a first read the deadline cut short as unreadable, however short the deadline", () =>
    Effect.gen(function*() {
      // Cut after 50 ms, less than the interval: too short to call the server silent
      // had it ever answered, but it never did, so nothing was learned about the route.
      const fake = yield* fakeSource(() => Effect.never)
      const seen = yield* runFor(50, { sessionId, routes: [r8080], timeoutMs: 50, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      const hung = "the status read got no answer within 50 ms (cut off by the 50 ms route deadline)"
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 50, readError: r8080.host, reason: hung },
        { at: 50, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${hung}` }
      ])
    }))

  it.effect("measures how fast the server answers from the start of each read", () =>
    Effect.gen(function*() {
      // Every read answers in 10 ms until the server hangs at 700 ms: the read cut at
      // the deadline had been out 300 ms, far longer than any answer took.
      const fake = yield* fakeSource(() =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (now) => now >= 700 ? Effect.never : Effect.sleep("10 millis").pipe(Effect.as(Verdict.pending))
        )
      )
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual(
        unreadableAt(1_000, "the status read got no answer within 300 ms (cut off by the 1000 ms route deadline)")
      )
    }))

  it.effect("does not count a read the client gave up on as the server's answer time", () =>
    Effect.gen(function*() {
      // The first read got no answer for 900 ms and the client gave up; the next hangs
      // until the deadline. Taking 900 ms as an answer time would make the server look
      // slow rather than silent, and report the stale give-up instead of the hang.
      const gaveUp = (route: PublishedRoute) =>
        new RouteReadError({ route, error: new Transport({ reason: "no answer within 900 ms", kind: "no-answer" }) })
      const fake = yield* fakeSource((route, call) =>
        call === 1 ? Effect.sleep("900 millis").pipe(Effect.zipRight(Effect.fail(gaveUp(route)))) : Effect.never
      )
      const seen = yield* runFor(2_000, { sessionId, routes: [r8080], timeoutMs: 2_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual(
        unreadableAt(2_000, "the status read got no answer within 1100 ms (cut off by the 2000 ms route deadline)")
      )
    }))

  it.effect("counts a read the server failed after a while as an answer time", () =>
    Effect.gen(function*() {
      // The first read ends after 900 ms with the connection reset: the server took
      // that long to say something. The read cut at the deadline had been out 1100 ms,
      // under twice that: slow, not silent, so the reset stands as the last word.
      const reset = (route: PublishedRoute) =>
        new RouteReadError({ route, error: new Transport({ reason: "the connection was reset" }) })
      const fake = yield* fakeSource((route, call) =>
        call === 1 ? Effect.sleep("900 millis").pipe(Effect.zipRight(Effect.fail(reset(route)))) : Effect.never
      )
      const seen = yield* runFor(2_000, { sessionId, routes: [r8080], timeoutMs: 2_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      expect(seen.at(-1)).toEqual(unreadableAt(2_000, "the connection was reset"))
    }))

  it.effect("counts the deadline from the watch's own start, whatever the clock read then", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(5_000)
      const fake = yield* fakeSource(() => Effect.never)
      const { fiber, seen } = yield* start({ sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(fake.layer)
      )
      yield* TestClock.adjust(999)
      expect(yield* seen).toEqual([{ at: 5_000, host: r8080.host, state: "pending" }])
      yield* TestClock.adjust(1)
      expect((yield* seen).at(-1)).toEqual(
        unreadableAt(6_000, "the status read got no answer within 1000 ms (cut off by the 1000 ms route deadline)")
      )
      yield* Fiber.join(fiber)
    }))

  // --- configuration ---------------------------------------------------------------------

  const routerConfig = (routeReadyTimeoutMs: number, routePollIntervalMs: number) =>
    Layer.succeed(
      RouterConfig,
      RouterConfig.of({
        mode: "gateway",
        baseDomain: "telo.run",
        routeReadyTimeoutMs,
        routePollIntervalMs,
        apiTimeoutMs: 20_000,
        statusSource: "poll",
        sessionNamespace: "telo-sessions",
        managedBy: "session-routing",
        warnings: []
      })
    )

  it.effect("takes the deadline and the interval from RouterConfig when not given", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const fiber = yield* watchRouteHealth({ sessionId, routes: [r8080] }).pipe(
        Stream.runCollect,
        Effect.provide(Layer.merge(fake.layer, routerConfig(400, 100))),
        Effect.fork
      )
      yield* TestClock.adjust(400)
      const events = yield* Fiber.join(fiber)
      expect([...events].at(-1)).toEqual(RouteHealthEvent.unprogrammed(r8080, Unprogrammed.unclaimed(unclaimed(r8080))))
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 100, 200, 300])
    }))

  it.effect("lets a given timing override the one in RouterConfig", () =>
    Effect.gen(function*() {
      const fake = yield* fakeSource(always(Verdict.pending))
      const fiber = yield* watchRouteHealth({ sessionId, routes: [r8080], timeoutMs: 250 }).pipe(
        Stream.runCollect,
        Effect.provide(Layer.merge(fake.layer, routerConfig(60_000, 100))),
        Effect.fork
      )
      yield* TestClock.adjust(250)
      yield* Fiber.join(fiber)
      expect(yield* fake.readsOf(r8080.host)).toEqual([0, 100, 200])
    }))
})

// ---------------------------------------------------------------------------
// On a watching source: the same rules, with changes pushed instead of reads polled
// ---------------------------------------------------------------------------

/**
 * A watching source the test drives: each host's observations are pushed by the test
 * (as a watch's changes arrive), numbered in order, and `next` waits for the next one;
 * it reads nothing (`cadence`: the pause between calls after an answer). With `feed`, it also offers the change feed a real watch offers,
 * so the session follows every host on one fiber instead of a fiber per host.
 */
const pushedWatch = (feed: boolean, cadence: Schedule.Schedule<unknown, unknown> = Schedule.forever) =>
  Effect.gen(function*() {
    const logs = new Map<string, Array<Observation>>()
    const logOf = (route: PublishedRoute) => {
      const log = logs.get(route.host) ?? []
      logs.set(route.host, log)
      return log
    }
    let changed = yield* Deferred.make<void>()
    const next: RouteStatusSource.Service["next"] = (_sessionId, route, after) =>
      Effect.gen(function*() {
        // With a feed, a session waits on the feed and asks only for what is newer.
        if (feed && logOf(route).length <= after) return yield* Effect.die("next asked with nothing newer")
        while (logOf(route).length <= after) yield* Deferred.await(changed)
        return { seq: after + 1, observation: logOf(route)[after]! }
      })
    const changes: ChangeFeed = {
      seqOf: (_sessionId, route) => logOf(route).length,
      awaitAny: (_sessionId, hosts, until) =>
        Effect.gen(function*() {
          const ready = () => hosts.some((host) => logOf(host.route).length > host.seen)
          const now = yield* Clock.currentTimeMillis
          if (ready() || now >= until) return
          yield* Effect.raceFirst(Deferred.await(changed), Effect.sleep(Duration.millis(until - now)))
        })
    }
    const source = RouteStatusSource.of({
      kind: "watch",
      read: () => Effect.dieMessage("route health never reads once"),
      next,
      cadence: () => cadence,
      unclaimedReason: unclaimed,
      ...(feed ? { changes } : {})
    })
    return {
      layer: Layer.succeed(RouteStatusSource, source),
      push: (route: PublishedRoute, observation: Observation) =>
        Effect.gen(function*() {
          logOf(route).push(observation)
          const woken = changed
          changed = yield* Deferred.make<void>()
          yield* Deferred.succeed(woken, undefined)
        })
    }
  })

describe.each([
  { how: "a fiber per host", feed: false },
  { how: "one fiber per session, woken by the change feed", feed: true }
])("watchRouteHealth on a watching source, $how", ({ feed }) => {
  const sessionId = "abc"
  const pending = Observation.seen(Verdict.pending, true)

  it.effect("gives the verdict at the instant the change arrives, with no read in between", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, pending)
      const { fiber, seen } = yield* start({ sessionId, routes: [r8080], timeoutMs: 5_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      yield* TestClock.adjust(1_234)
      yield* watch.push(r8080, Observation.seen(Verdict.programmed, true))
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 1_234, host: r8080.host, state: "programmed" }
      ])
    }))

  it.effect("gives the unclaimed advice at the absolute deadline when the last thing the watch said was pending", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, pending)
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      expect(seen.at(-1)).toEqual({ at: 1_000, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) })
    }))

  it.effect("reports a watch that never answered as a read failure at the deadline, never as unclaimed", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, Observation.reading(0))
      const seen = yield* runFor(1_000, { sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      const hung = "the status read got no answer within 1000 ms (cut off by the 1000 ms route deadline)"
      expect(seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 1_000, readError: r8080.host, reason: hung },
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${hung}` }
      ])
    }))

  it.effect("reports a watch that restarts after a pending answer and never answers again as a read failure", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, pending)
      const { fiber, seen } = yield* start({ sessionId, routes: [r8080], timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      yield* TestClock.adjust(200)
      // The watch starts over at 200 ms and gets no answer until the deadline.
      yield* watch.push(r8080, Observation.reading(200))
      yield* TestClock.adjust(800)
      yield* Fiber.join(fiber)
      const hung = "the status read got no answer within 800 ms (cut off by the 1000 ms route deadline)"
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 1_000, readError: r8080.host, reason: hung },
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: `route status could not be read: ${hung}` }
      ])
    }))

  it.effect("reports each host's verdict once, however its object changes after it settled", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, pending)
      yield* watch.push(r9090, pending)
      const { fiber, seen } = yield* start({ sessionId, routes, timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      yield* TestClock.adjust(100)
      yield* watch.push(r8080, Observation.seen(Verdict.programmed, true))
      yield* TestClock.adjust(100)
      yield* watch.push(r8080, Observation.seen(Verdict.rejected("NoMatchingParent", ""), true))
      yield* TestClock.adjust(100)
      yield* watch.push(r8080, pending)
      yield* TestClock.adjust(700)
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 0, host: r9090.host, state: "pending" },
        { at: 100, host: r8080.host, state: "programmed" },
        { at: 1_000, host: r9090.host, state: "unprogrammed", reason: unclaimed(r9090) }
      ])
    }))

  it.effect("lets the last evidence decide: a failing watch that recovers to pending gives the advice, one that stays failing the failure", () =>
    Effect.gen(function*() {
      const watch = yield* pushedWatch(feed)
      yield* watch.push(r8080, pending)
      yield* watch.push(r9090, pending)
      const { fiber, seen } = yield* start({ sessionId, routes, timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Effect.provide(watch.layer)
      )
      yield* TestClock.adjust(200)
      yield* watch.push(r8080, Observation.unreadable(hiccup(r8080)))
      yield* watch.push(r9090, Observation.unreadable(hiccup(r9090)))
      yield* TestClock.adjust(200)
      yield* watch.push(r8080, pending)
      yield* TestClock.adjust(600)
      yield* Fiber.join(fiber)
      const terminal = (yield* seen).filter((s) => "state" in s && s.state === "unprogrammed")
      const expected: ReadonlyArray<Seen> = [
        { at: 1_000, host: r8080.host, state: "unprogrammed", reason: unclaimed(r8080) },
        {
          at: 1_000,
          host: r9090.host,
          state: "unprogrammed",
          reason: "route status could not be read: the API server could not answer (503)"
        }
      ]
      expect(terminal.toSorted(byHost)).toEqual(expected.toSorted(byHost))
      expect((yield* seen).filter((s) => "readError" in s)).toHaveLength(1)
    }))
})

describe("watchRouteHealth on a watching source whose calls are spaced", () => {
  it.effect("waits the source's pause between calls after an answer", () =>
    Effect.gen(function*() {
      // A source that asks for 100 ms between calls gets its next call at 100 ms,
      // however early the change it would report.
      const watch = yield* pushedWatch(false, Schedule.spaced(Duration.millis(100)))
      yield* watch.push(r8080, Observation.seen(Verdict.pending, true))
      const { fiber, seen } = yield* start({ sessionId: "abc", routes: [r8080], timeoutMs: 1_000, intervalMs: 100 })
        .pipe(Effect.provide(watch.layer))
      yield* TestClock.adjust(10)
      yield* watch.push(r8080, Observation.seen(Verdict.programmed, true))
      yield* TestClock.adjust(990)
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 100, host: r8080.host, state: "programmed" }
      ])
    }))

  it.effect("asks again at once when the watch has not answered yet, without waiting the pause", () =>
    Effect.gen(function*() {
      // "Not answered yet" is no answer: the pause between calls does not apply to it.
      const watch = yield* pushedWatch(false, Schedule.spaced(Duration.millis(100)))
      yield* watch.push(r8080, Observation.reading(0))
      const { fiber, seen } = yield* start({ sessionId: "abc", routes: [r8080], timeoutMs: 1_000, intervalMs: 100 })
        .pipe(Effect.provide(watch.layer))
      yield* TestClock.adjust(10)
      yield* watch.push(r8080, Observation.seen(Verdict.programmed, true))
      yield* TestClock.adjust(990)
      yield* Fiber.join(fiber)
      expect(yield* seen).toEqual([
        { at: 0, host: r8080.host, state: "pending" },
        { at: 10, host: r8080.host, state: "programmed" }
      ])
    }))
})
