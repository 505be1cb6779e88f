/**
 * Call limits that mutation testing found unchecked: the refused budget is counted
 * from the call's start, and silence is measured from the server's last answer.
 * All on TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Ref, Schedule, TestClock } from "effect"
import { callLimits, withinLimits } from "../../src/layers/KubeRetry.js"
import { Transport, Unavailable } from "../../src/services/KubeError.js"
import { runFor, scripted } from "../support/ScriptedCalls.js"

const target = { what: `get ingresses.networking.k8s.io "web" in namespace "ns"`, server: "https://api:6443" }
const unavailable = new Unavailable({
  reason: "the API server could not answer get ... (503: etcd is down)",
  code: 503
})
const refused = new Transport({
  reason: "could not get ...: the connection was refused (ECONNREFUSED)",
  kind: "refused"
})

describe("withinLimits, what the mutants found unchecked", () => {
  it.effect("counts the refused budget from the call's start, not from the clock's epoch", () =>
    Effect.gen(function*() {
      // A process that has run for an hour: the budget must not already look spent.
      yield* TestClock.adjust(Duration.hours(1))
      const { attempts, call } = yield* scripted([refused, refused, "ok"])
      const result = yield* runFor(
        withinLimits(call, {
          target,
          limits: callLimits(60_000),
          retry: true,
          schedule: Schedule.spaced(Duration.millis(100))
        }),
        1_000
      )
      expect(result).toEqual(Either.right("answer"))
      expect(yield* Ref.get(attempts)).toBe(3)
    }))

  it.effect("a hung attempt at the deadline is silence counted from the server's last answer, not its earlier error", () =>
    Effect.gen(function*() {
      // 0 ms: 503; 300 ms: 503; 600 ms: hangs; 1000 ms: the budget ends with it in flight.
      const { call } = yield* scripted([unavailable, unavailable, "hang"])
      const result = yield* runFor(
        withinLimits(call, {
          target,
          limits: callLimits(1_000),
          retry: true,
          schedule: Schedule.spaced(Duration.millis(300))
        }),
        1_500
      )
      expect(result).toEqual(
        Either.left(
          new Transport({
            reason: `could not ${target.what} at ${target.server}: no answer within 700ms (3 attempts)`,
            kind: "no-answer"
          })
        )
      )
    }))

  it.effect("a deadline that falls in the pause after a timed-out attempt reports the whole silence, not the attempt's limit", () =>
    Effect.gen(function*() {
      // 0 ms: hangs; 500 ms: the attempt's limit; the retry would go at 1100 ms, after the 1 s budget.
      const { attempts, call } = yield* scripted(["hang"])
      const result = yield* runFor(
        withinLimits(call, {
          target,
          limits: callLimits(1_000),
          retry: true,
          schedule: Schedule.spaced(Duration.millis(600))
        }),
        1_500
      )
      expect(result).toEqual(
        Either.left(
          new Transport({
            reason: `could not ${target.what} at ${target.server}: no answer within 1s`,
            kind: "no-answer"
          })
        )
      )
      expect(yield* Ref.get(attempts)).toBe(1)
    }))
})
