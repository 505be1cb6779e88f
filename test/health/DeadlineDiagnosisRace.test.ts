/**
 * A host whose next read falls on the deadline itself is judged on its own fiber, and
 * may start the session's diagnosis just as the deadline timer interrupts it: the
 * diagnosis is then read again for the other hosts, never handed to them as an interruption.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Duration, Effect, Fiber, Layer, Stream, TestClock } from "effect"
import { RoutingPath } from "../../src/domain/Diagnosis.js"
import { type PublishedRoute, RouteVerdict } from "../../src/domain/Routes.js"
import { watchRouteHealth } from "../../src/health/RouteHealth.js"
import { pollingOver } from "../../src/layers/RouteStatusSourceLive.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"

const routes: ReadonlyArray<PublishedRoute> = [
  { host: "8080-abc.telo.run", port: 8080 },
  { host: "9090-abc.telo.run", port: 9090 }
]

describe("the diagnosis at the deadline", () => {
  it.effect("is read again when the read a host started at the deadline is interrupted", () =>
    Effect.gen(function*() {
      let diagnoses = 0
      const source = pollingOver(() => Effect.succeed({ verdict: RouteVerdict.pending, present: true }), {
        unclaimedReason: () => "nobody claimed it",
        // Takes a moment of its own, as a read over the wire does.
        diagnose: () =>
          Effect.sync(() => diagnoses++).pipe(
            Effect.zipRight(Clock.sleep(Duration.millis(50))),
            Effect.as(() => RoutingPath.broken("IngressClassNotFound", "no class"))
          )
      })
      const fiber = yield* watchRouteHealth({ sessionId: "abc", routes, timeoutMs: 1_000, intervalMs: 100 }).pipe(
        Stream.runCollect,
        Effect.provide(Layer.succeed(RouteStatusSource, source)),
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(2))
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(
        events.filter((e) => e._tag === "Route" && e.state === "unprogrammed").map((e) =>
          e._tag === "Route" && e.state === "unprogrammed" ? e.reason : ""
        )
      ).toEqual(["IngressClassNotFound: no class", "IngressClassNotFound: no class"])
      // Once cut short by the timer, once more for the judgement: never once per host.
      expect(diagnoses).toBe(2)
    }))
})
