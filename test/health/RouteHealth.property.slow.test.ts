/**
 * The promise of route health as a property, on TestClock: whatever the status reads
 * do (answer pending or programmed, fail with a permanent or a transient error, hang,
 * each after any latency), a host is reported unclaimed only when the last read that
 * finished before the deadline was a real "pending" answer, and a read failure is
 * never reported as unclaimed. Checked against a log the fake source keeps itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, FastCheck as fc, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import type { PublishedRoute, RouteVerdict } from "../../src/domain/Routes.js"
import { RouteVerdict as Verdict } from "../../src/domain/Routes.js"
import { type RouteHealthEvent, watchRouteHealth } from "../../src/health/RouteHealth.js"
import { pollingOver } from "../../src/layers/RouteStatusSourceLive.js"
import { Forbidden, Unavailable } from "../../src/services/KubeError.js"
import { RouteReadError, RouteStatusSource } from "../../src/services/RouteStatusSource.js"

type Outcome = "pending" | "programmed" | "forbidden" | "unavailable" | "hang"

interface Read {
  readonly latencyMs: number
  readonly outcome: Outcome
}

interface Logged {
  readonly host: string
  readonly start: number
  /** Undefined while out (or forever, for a hang). */
  readonly end: number | undefined
  readonly outcome: Outcome
}

const TIMEOUT_MS = 2_000
const INTERVAL_MS = 250
const UNCLAIMED = "nobody claimed it"

const read: fc.Arbitrary<Read> = fc.record({
  latencyMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 100, max: 1_500 })),
  // Weighted towards pending, so that most runs reach the deadline with a mix behind them.
  outcome: fc.constantFrom<Outcome>("pending", "pending", "pending", "forbidden", "unavailable", "hang", "programmed")
})

/** Up to three hosts, each with the answers its successive reads get (the last repeats). */
const plans = fc.array(fc.array(read, { minLength: 1, maxLength: 25 }), { minLength: 1, maxLength: 3 })

const routeOf = (i: number): PublishedRoute => ({ host: `${8080 + i}-abc.telo.run`, port: 8080 + i })

const scriptedSource = (plan: ReadonlyArray<ReadonlyArray<Read>>, log: Ref.Ref<ReadonlyArray<Logged>>) =>
  pollingOver(
    (_sessionId, route) =>
      Effect.gen(function*() {
        const steps = plan[route.port - 8080]!
        const start = yield* Clock.currentTimeMillis
        const n = (yield* Ref.get(log)).filter((entry) => entry.host === route.host).length
        const step = steps[Math.min(n, steps.length - 1)]!
        const index = n
        yield* Ref.update(log, (all) => [...all, { host: route.host, start, end: undefined, outcome: step.outcome }])
        if (step.outcome === "hang") return yield* Effect.never
        yield* Effect.sleep(step.latencyMs)
        const end = yield* Clock.currentTimeMillis
        yield* Ref.update(log, (all) => {
          let seen = -1
          return all.map((entry) => entry.host === route.host && ++seen === index ? { ...entry, end } : entry)
        })
        switch (step.outcome) {
          case "pending":
            return Verdict.pending as RouteVerdict
          case "programmed":
            return Verdict.programmed as RouteVerdict
          case "forbidden":
            return yield* new RouteReadError({
              route,
              error: new Forbidden({ reason: "httproutes is forbidden", code: 403 })
            })
          case "unavailable":
            return yield* new RouteReadError({
              route,
              error: new Unavailable({ reason: "etcd is down (503)", code: 503 })
            })
        }
      }).pipe(Effect.map((verdict) => ({ verdict, present: true }))),
    { unclaimedReason: () => UNCLAIMED }
  )

describe("route health under any sequence of read outcomes", () => {
  it.effect.prop(
    "never reports a read failure as unclaimed, and gives the advice only after a real pending answer",
    [plans],
    ([plan]) =>
      Effect.gen(function*() {
        const log = yield* Ref.make<ReadonlyArray<Logged>>([])
        const routes = plan.map((_, i) => routeOf(i))
        const events = yield* Ref.make<ReadonlyArray<RouteHealthEvent>>([])
        const fiber = yield* watchRouteHealth({
          sessionId: "abc",
          routes,
          timeoutMs: TIMEOUT_MS,
          intervalMs: INTERVAL_MS
        }).pipe(
          Stream.runForEach((event) => Ref.update(events, (all) => [...all, event])),
          Effect.provide(Layer.succeed(RouteStatusSource, scriptedSource(plan, log))),
          Effect.fork
        )
        yield* TestClock.adjust(TIMEOUT_MS)
        yield* Fiber.join(fiber)
        const seen = yield* Ref.get(events)
        const reads = yield* Ref.get(log)

        for (const route of routes) {
          const terminal = seen.filter((event) =>
            event._tag === "Route" && event.route.host === route.host && event.state !== "pending"
          )
          expect(terminal).toHaveLength(1)
          const event = terminal[0]!
          if (event._tag !== "Route") continue
          const mine = reads.filter((entry) => entry.host === route.host)
          const finished = mine.filter((entry) => entry.end !== undefined && entry.end <= TIMEOUT_MS)
          const lastFinished = finished.at(-1)
          if (event.state === "programmed") {
            expect(finished.some((entry) => entry.outcome === "programmed")).toBe(true)
          } else if (event.state === "unprogrammed" && event.reason === UNCLAIMED) {
            // The advice only when the cluster's last word was a real "not yet".
            expect(lastFinished?.outcome).toBe("pending")
          } else if (event.state === "unprogrammed") {
            expect(event.reason).toMatch(/^route status could not be read: /)
            // A read failure: the last finished read failed, or a read was still out at the deadline.
            const outAtDeadline = mine.some((entry) => entry.end === undefined || entry.end > TIMEOUT_MS)
            expect(
              lastFinished?.outcome === "forbidden" || lastFinished?.outcome === "unavailable" || outAtDeadline
            ).toBe(true)
          }
          // A host whose reads all failed or hung never gets the advice.
          if (!finished.some((entry) => entry.outcome === "pending" || entry.outcome === "programmed")) {
            expect(event.state === "unprogrammed" && event.reason).not.toBe(UNCLAIMED)
          }
        }
        const readErrors = seen.filter((event) => event._tag === "ReadError")
        expect(readErrors.length).toBeLessThanOrEqual(1)
        const anyFailure = seen.some((event) =>
          event._tag === "Route" && event.state === "unprogrammed" && event.reason !== UNCLAIMED
        )
        if (anyFailure) expect(readErrors).toHaveLength(1)
      }),
    // Each run drives a whole watch to its deadline on TestClock (~50 ms): 200 runs keep the file near 10 s.
    { fastCheck: { numRuns: 200 } }
  )
})
