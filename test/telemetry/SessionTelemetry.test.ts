/**
 * The runner's account of a session's hosts, on TestClock: the hosts-by-state gauge
 * follows each event and empties when the scope closes, the time from publish to
 * programmed is measured on Clock, read errors are counted, and each host's span
 * ends at its first verdict (an error for `unprogrammed`) or with the scope.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Metric, Scope, TestClock } from "effect"
import { trackHosts } from "../../src/runner/SessionTelemetry.js"
import { hosts, publishToProgrammed, readErrors } from "../../src/services/Telemetry.js"
import { recordingTracer } from "../support/RecordingTracer.js"

const routes = [
  { host: "8080-s1.example.com", port: 8080 },
  { host: "9090-s1.example.com", port: 9090 }
]
const route = (port: number, state: "pending" | "programmed" | "unprogrammed", reason?: string) => ({
  type: "route" as const,
  port,
  host: `${port}-s1.example.com`,
  state,
  ...(reason !== undefined ? { reason } : {})
})

/** The gauge's value for each state, in gateway mode (the mode these tests alone use). */
const gauge = Effect.all({
  pending: Metric.value(hosts.pipe(Metric.tagged("mode", "gateway"), Metric.tagged("state", "pending"))),
  programmed: Metric.value(hosts.pipe(Metric.tagged("mode", "gateway"), Metric.tagged("state", "programmed"))),
  unprogrammed: Metric.value(hosts.pipe(Metric.tagged("mode", "gateway"), Metric.tagged("state", "unprogrammed")))
}).pipe(Effect.map(({ pending, programmed, unprogrammed }) => [pending.value, programmed.value, unprogrammed.value]))

describe("trackHosts", () => {
  it.effect("moves hosts through the gauge, times publish to programmed, and ends each host's span at its verdict", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      const scope = yield* Scope.make()
      const tracker = yield* trackHosts({ mode: "gateway", sessionId: "s1", publish: { routes, publishedAt: 0 } }).pipe(
        Scope.extend(scope),
        recorder.traced
      )
      yield* tracker.observe(route(8080, "pending"))
      yield* tracker.observe(route(9090, "pending"))
      expect(yield* gauge).toEqual([2, 0, 0])

      yield* TestClock.adjust(Duration.millis(1500))
      yield* tracker.observe(route(8080, "programmed"))
      yield* tracker.observe({ type: "read-error", reason: "forbidden" })
      yield* tracker.observe(route(9090, "unprogrammed", "NotAllowedByListeners"))
      expect(yield* gauge).toEqual([0, 1, 1])

      const timed = yield* Metric.value(Metric.tagged(publishToProgrammed, "mode", "gateway"))
      expect([timed.count, timed.sum]).toEqual([1, 1.5])
      expect((yield* Metric.value(Metric.tagged(readErrors, "mode", "gateway"))).count).toBe(1)

      expect(
        recorder.named("session-routing.host").map((span) => ({
          host: span.attributes.get("session.host"),
          state: span.attributes.get("session_routing.route.state"),
          events: span.events.map((event) => event.name),
          ended: span.ended
        }))
      ).toEqual([
        { host: routes[0]!.host, state: "programmed", events: ["pending", "programmed"], ended: "ok" },
        {
          host: routes[1]!.host,
          state: "unprogrammed",
          events: ["pending", "read-error", "unprogrammed"],
          ended: "error"
        }
      ])

      yield* Scope.close(scope, Exit.void)
      expect(yield* gauge).toEqual([0, 0, 0])
    }))

  it.effect("starts followed hosts at their known state, and ends an open span with the scope", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      yield* Effect.scoped(
        Effect.gen(function*() {
          const tracker = yield* trackHosts({
            mode: "gateway",
            sessionId: "s1",
            known: [{ host: routes[0]!.host, state: "programmed" }],
            publish: { routes: [routes[1]!], publishedAt: 0 }
          })
          yield* tracker.observe(route(9090, "pending"))
          expect(yield* gauge).toEqual([1, 1, 0])
        })
      ).pipe(recorder.traced)
      expect(yield* gauge).toEqual([0, 0, 0])
      expect(
        recorder.named("session-routing.host").map((
          span
        ) => [span.attributes.get("session_routing.route.state"), span.ended])
      )
        .toEqual([["pending", "ok"]])
    }))

  it.effect("counts a host once while both its publish and its follow hold it, until the last lets go", () =>
    Effect.gen(function*() {
      const publishScope = yield* Scope.make()
      const published = yield* trackHosts({ mode: "gateway", sessionId: "s2", publish: { routes, publishedAt: 0 } })
        .pipe(
          Scope.extend(publishScope)
        )
      yield* published.observe(route(8080, "programmed"))
      yield* published.observe(route(9090, "programmed"))
      expect(yield* gauge).toEqual([0, 2, 0])

      const followScope = yield* Scope.make()
      const followed = yield* trackHosts({
        mode: "gateway",
        sessionId: "s2",
        known: routes.map((r) => ({ host: r.host, state: "programmed" as const }))
      }).pipe(Scope.extend(followScope))
      expect(yield* gauge).toEqual([0, 2, 0])
      yield* followed.observe(route(9090, "unprogrammed", "gone"))
      expect(yield* gauge).toEqual([0, 1, 1])

      yield* Scope.close(followScope, Exit.void)
      expect(yield* gauge).toEqual([0, 1, 1])
      yield* Scope.close(publishScope, Exit.void)
      expect(yield* gauge).toEqual([0, 0, 0])
    }))
})
