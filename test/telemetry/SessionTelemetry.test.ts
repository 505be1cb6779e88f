/**
 * The runner's account of a session's hosts, on TestClock: the hosts-by-state gauge
 * follows each event and empties when the scope closes (a `release` lets go once),
 * the time from publish to programmed is measured on Clock from the publish's own
 * start, read errors are counted, each host's span carries the session, mode, host and
 * port (and the reason on its events and verdict) and ends once, at its first verdict
 * (an error for `unprogrammed`) or with the scope, and how long a publish took is
 * recorded by result. Metrics live in the process's registry: each test leaves the
 * gauge at zero, and reads counters and timings as its own change where another
 * test of the same mode adds to them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Metric, Scope, TestClock } from "effect"
import { timedPublish, trackHosts } from "../../src/runner/SessionTelemetry.js"
import { hosts, publishDuration, publishToProgrammed, readErrors } from "../../src/services/Telemetry.js"
import { recordingTracer } from "../support/RecordingTracer.js"

const host = (port: number) => `${port}-s1.example.com`
const routes = [
  { host: host(8080), port: 8080 },
  { host: host(9090), port: 9090 }
]
const route = (port: number, state: "pending" | "programmed" | "unprogrammed", reason?: string) => ({
  type: "route" as const,
  port,
  host: host(port),
  state,
  ...(reason !== undefined ? { reason } : {})
})

/** The gauge's value for each state of `mode`, as [pending, programmed, unprogrammed]. */
const gaugeOf = (mode: "gateway" | "ingress") =>
  Effect.all(
    (["pending", "programmed", "unprogrammed"] as const).map((state) =>
      Metric.value(hosts.pipe(Metric.tagged("mode", mode), Metric.tagged("state", state)))
    )
  ).pipe(Effect.map((states) => states.map((s) => s.value)))
const gauge = gaugeOf("gateway")
const ingressGauge = gaugeOf("ingress")

/** The ingress publish-to-programmed histogram as [count, sum]. */
const timed = Effect.map(
  Metric.value(Metric.tagged(publishToProgrammed, "mode", "ingress")),
  (h) => [h.count, h.sum] as const
)

describe("following a session's hosts", () => {
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

      const programmedAfter = yield* Metric.value(Metric.tagged(publishToProgrammed, "mode", "gateway"))
      expect([programmedAfter.count, programmedAfter.sum]).toEqual([1, 1.5])
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

/** The tracker of session s1 in ingress mode, that published one host (port 8080) at `publishedAt`. */
const oneIngressHost = (publishedAt = 0) =>
  trackHosts({ mode: "ingress", sessionId: "s1", publish: { routes: [{ host: host(8080), port: 8080 }], publishedAt } })

describe("what a host span carries, and when it ends", () => {
  it.effect("names the session, mode, host and port on each host span, and the reason on its events and verdict", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      yield* Effect.scoped(Effect.gen(function*() {
        const tracker = yield* oneIngressHost()
        yield* tracker.observe(route(8080, "pending"))
        yield* tracker.observe({ type: "read-error", reason: "forbidden" })
        yield* tracker.observe(route(8080, "unprogrammed", "NotAllowedByListeners"))
      })).pipe(recorder.traced)
      const [span] = recorder.named("session-routing.host")
      expect(Object.fromEntries(span!.attributes)).toEqual({
        "session.id": "s1",
        "session_routing.mode": "ingress",
        "session.host": host(8080),
        "session.port": 8080,
        "session_routing.route.state": "unprogrammed",
        "session_routing.route.reason": "NotAllowedByListeners"
      })
      expect(span!.events).toEqual([
        { name: "pending", attributes: {} },
        { name: "read-error", attributes: { "session_routing.route.reason": "forbidden" } },
        { name: "unprogrammed", attributes: { "session_routing.route.reason": "NotAllowedByListeners" } }
      ])
      expect(span!.ended).toBe("error")
    }))

  it.effect("keeps a programmed host's span free of a reason", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      yield* Effect.scoped(Effect.gen(function*() {
        const tracker = yield* oneIngressHost()
        yield* tracker.observe(route(8080, "programmed"))
      })).pipe(recorder.traced)
      const [span] = recorder.named("session-routing.host")
      expect(span!.attributes.has("session_routing.route.reason")).toBe(false)
      // No reason key at all, not one holding undefined: exporters would print it.
      expect(span!.events).toStrictEqual([{ name: "programmed", attributes: {} }])
      expect(span!.ended).toBe("ok")
    }))

  it.effect("ends a host's span at its first verdict: later changes add nothing to it nor to the timing", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      const before = yield* timed
      yield* Effect.scoped(Effect.gen(function*() {
        const tracker = yield* oneIngressHost()
        yield* tracker.observe(route(8080, "programmed"))
        yield* tracker.observe(route(8080, "unprogrammed", "lost"))
        yield* tracker.observe(route(8080, "programmed"))
        yield* tracker.observe({ type: "read-error", reason: "forbidden" })
        // The gauge still follows the host after its verdict.
        expect(yield* ingressGauge).toEqual([0, 1, 0])
      })).pipe(recorder.traced)
      const [span] = recorder.named("session-routing.host")
      expect(span!.events.map((e) => e.name)).toEqual(["programmed"])
      expect(span!.attributes.get("session_routing.route.state")).toBe("programmed")
      expect(span!.ended).toBe("ok")
      expect((yield* timed)[0] - before[0]).toBe(1)
    }))

  it.effect("keeps a span open through pending, and ends it at the verdict that follows", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      const scope = yield* Scope.make()
      const tracker = yield* oneIngressHost().pipe(Scope.extend(scope), recorder.traced)
      // Pending from the publish on, before any event says so.
      expect(yield* ingressGauge).toEqual([1, 0, 0])
      yield* tracker.observe(route(8080, "pending"))
      const [span] = recorder.named("session-routing.host")
      expect(span!.ended).toBe("open")
      expect(yield* ingressGauge).toEqual([1, 0, 0])
      yield* tracker.observe(route(8080, "programmed"))
      expect(span!.ended).toBe("ok")
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("the publish-to-programmed time and read errors", () => {
  it.effect("times publish to programmed from the publish's own start", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust(Duration.seconds(10))
      const before = yield* timed
      yield* Effect.scoped(Effect.gen(function*() {
        // Published 2 s ago (at 8 s), programmed now (at 10 s).
        const tracker = yield* oneIngressHost(8000)
        yield* tracker.observe(route(8080, "programmed"))
      }))
      const after = yield* timed
      expect([after[0] - before[0], after[1] - before[1]]).toEqual([1, 2])
    }))

  it.effect("counts a read error under its mode", () =>
    Effect.gen(function*() {
      const count = Effect.map(Metric.value(Metric.tagged(readErrors, "mode", "ingress")), (c) => c.count)
      const before = yield* count
      yield* Effect.scoped(Effect.gen(function*() {
        const tracker = yield* trackHosts({ mode: "ingress", sessionId: "s1" })
        yield* tracker.observe({ type: "read-error", reason: "forbidden" })
      }))
      expect((yield* count) - before).toBe(1)
    }))
})

describe("letting go of hosts", () => {
  it.effect("lets go once: a second release leaves the hosts another tracker holds", () =>
    Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const followed = yield* trackHosts({
          mode: "ingress",
          sessionId: "s2",
          known: [{ host: host(8080), state: "programmed" }]
        })
        const other = yield* trackHosts({
          mode: "ingress",
          sessionId: "s2",
          known: [{ host: host(8080), state: "programmed" }]
        })
        expect(yield* ingressGauge).toEqual([0, 1, 0])
        yield* followed.release
        yield* followed.release
        expect(yield* ingressGauge).toEqual([0, 1, 0])
        yield* other.release
        expect(yield* ingressGauge).toEqual([0, 0, 0])
      }))
      expect(yield* ingressGauge).toEqual([0, 0, 0])
    }))

  it.effect("counts the same host of two sessions, or of two modes, apart", () =>
    Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const a = yield* trackHosts({
          mode: "ingress",
          sessionId: "s3",
          known: [{ host: host(8080), state: "pending" }]
        })
        yield* trackHosts({ mode: "ingress", sessionId: "s4", known: [{ host: host(8080), state: "pending" }] })
        yield* trackHosts({ mode: "gateway", sessionId: "s3", known: [{ host: host(8080), state: "pending" }] })
        expect(yield* ingressGauge).toEqual([2, 0, 0])
        yield* a.observe(route(8080, "programmed"))
        expect(yield* ingressGauge).toEqual([1, 1, 0])
      }))
      expect(yield* ingressGauge).toEqual([0, 0, 0])
    }))

  it.effect("ends the spans still open at release with the state they had", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      yield* Effect.scoped(Effect.gen(function*() {
        const tracker = yield* trackHosts({
          mode: "ingress",
          sessionId: "s1",
          publish: { routes: [{ host: host(8080), port: 8080 }, { host: host(9090), port: 9090 }], publishedAt: 0 }
        })
        yield* tracker.observe(route(9090, "pending"))
        yield* tracker.release
        expect(recorder.named("session-routing.host").map((s) => s.ended)).toEqual(["ok", "ok"])
        expect(yield* ingressGauge).toEqual([0, 0, 0])
      })).pipe(recorder.traced)
    }))
})

describe("how long a publish took", () => {
  const duration = (result: "ok" | "error") =>
    Effect.map(
      Metric.value(publishDuration.pipe(Metric.tagged("mode", "ingress"), Metric.tagged("result", result))),
      (h) => [h.count, h.sum] as const
    )

  it.effect("records how long a publish took, under ok or error", () =>
    Effect.gen(function*() {
      const ok0 = yield* duration("ok")
      const error0 = yield* duration("error")
      const publish = (outcome: Effect.Effect<string, string>) =>
        Effect.fork(timedPublish("ingress", Effect.zipRight(Effect.sleep(Duration.millis(1500)), outcome)))
      const good = yield* publish(Effect.succeed("routes"))
      yield* TestClock.adjust(Duration.millis(1500))
      expect(yield* good.await).toEqual(Exit.succeed("routes"))
      const bad = yield* publish(Effect.fail("refused"))
      yield* TestClock.adjust(Duration.millis(1500))
      expect(yield* bad.await).toEqual(Exit.fail("refused"))
      const ok1 = yield* duration("ok")
      const error1 = yield* duration("error")
      expect([ok1[0] - ok0[0], ok1[1] - ok0[1]]).toEqual([1, 1.5])
      expect([error1[0] - error0[0], error1[1] - error0[1]]).toEqual([1, 1.5])
    }))
})
