/**
 * How a Kubernetes call is retried and bounded, all on TestClock: the transient-retry
 * schedule (backoff, Retry-After, what is never retried), and the call's limits (the
 * refused budget counted from the call's start, silence from the server's last answer).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Either, Exit, Fiber, Ref, Schedule, TestClock } from "effect"
import { callLimits, MAX_RETRIES, transientRetrySchedule, withinLimits } from "../../src/layers/KubeRetry.js"
import {
  Conflict,
  Forbidden,
  type KubeError,
  NotFound,
  TooManyRequests,
  Transport,
  Unavailable
} from "../../src/services/KubeError.js"
import { runFor, scripted } from "../support/ScriptedCalls.js"

const target = { what: `get ingresses.networking.k8s.io "web" in namespace "ns"`, server: "https://api:6443" }

/**
 * A call retried as the live client retries it, on `transientRetrySchedule`, with
 * limits far beyond these tests' few seconds so that only the schedule decides.
 */
const retryTransient = <A>(call: Effect.Effect<A, KubeError>) =>
  withinLimits(call, {
    target,
    limits: callLimits(Duration.hours(2)),
    retry: true
  })

const unavailable = new Unavailable({ reason: "the API server could not answer (503)", code: 503 })
const refused = new Transport({
  reason: "could not get ...: the connection was refused (ECONNREFUSED)",
  kind: "refused"
})

const throttled = (retryAfterSeconds: number | undefined) =>
  new TooManyRequests({ reason: "throttled", code: 429, retryAfterSeconds })

/** The delays the schedule would wait after each of `inputs`, in milliseconds. */
const delaysFor = (inputs: ReadonlyArray<KubeError>) =>
  Schedule.run(Schedule.delays(transientRetrySchedule), 0, inputs).pipe(
    Effect.map((delays) => Chunk.toReadonlyArray(delays).map(Duration.toMillis))
  )

/** Runs a call that fails with `errors` in turn (then succeeds), counting attempts. */
const flaky = (errors: ReadonlyArray<KubeError>) =>
  Effect.gen(function*() {
    const attempts = yield* Ref.make(0)
    const call = Ref.getAndUpdate(attempts, (n) => n + 1).pipe(
      Effect.flatMap((n) => (n < errors.length ? Effect.fail(errors[n]!) : Effect.succeed("ok")))
    )
    return { attempts, call }
  })

describe("retrying transient failures", () => {
  it.effect("doubles from 200ms with ±20% jitter, never beyond the 5s cap, for at most 6 retries", () =>
    Effect.gen(function*() {
      // Several runs, since jitter is random: every one must stay inside the envelope.
      for (let run = 0; run < 20; run++) {
        // `run` also reports the step that stopped, after the last retry: drop it.
        const delays = (yield* delaysFor(Array.from({ length: 10 }, () => unavailable))).slice(0, MAX_RETRIES)
        expect(delays.length).toBe(MAX_RETRIES)
        delays.forEach((delay, i) => {
          const nominal = 200 * 2 ** i
          expect(delay).toBeGreaterThanOrEqual(Math.min(nominal * 0.8, 5000))
          expect(delay).toBeLessThanOrEqual(Math.min(nominal * 1.2, 5000))
        })
      }
    }))

  it.effect("waits at least the Retry-After a 429 asked for", () =>
    Effect.gen(function*() {
      const delays = yield* delaysFor([throttled(3), throttled(1), unavailable])
      expect(delays[0]).toBeGreaterThanOrEqual(3000)
      expect(delays[1]).toBeGreaterThanOrEqual(1000)
      expect(delays[2]).toBeLessThanOrEqual(960)
    }))

  it.effect("retries a 429 no sooner than its Retry-After, then succeeds", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* flaky([throttled(2)])
      const fiber = yield* Effect.fork(retryTransient(call))
      yield* TestClock.adjust("1999 millis")
      expect(yield* Ref.get(attempts)).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(yield* Ref.get(attempts)).toBe(2)
    }))

  it.effect("gives up at once on a Retry-After longer than 30 seconds", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* flaky([throttled(120)])
      expect(yield* Effect.exit(retryTransient(call))).toEqual(Exit.fail(throttled(120)))
      expect(yield* Ref.get(attempts)).toBe(1)
    }))

  it.effect("retries 5xx and transport failures until one succeeds", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* flaky([unavailable, new Transport({ reason: "refused" })])
      const fiber = yield* Effect.fork(retryTransient(call))
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(yield* Ref.get(attempts)).toBe(3)
    }))

  it.effect("fails with the last error once the retries are spent", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* flaky(Array.from({ length: 20 }, () => unavailable))
      const fiber = yield* Effect.fork(Effect.exit(retryTransient(call)))
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(fiber)).toEqual(Exit.fail(unavailable))
      expect(yield* Ref.get(attempts)).toBe(1 + MAX_RETRIES)
    }))

  it.effect("does not retry what the next attempt would answer the same", () =>
    Effect.gen(function*() {
      const permanent: ReadonlyArray<KubeError> = [
        new NotFound({ reason: "not found", code: 404 }),
        new Conflict({ reason: "conflict", code: 409, causes: [] }),
        new Forbidden({ reason: "forbidden", code: 403 }),
        // 501/502 are not what an apiserver under load answers.
        new Unavailable({ reason: "not implemented", code: 501 })
      ]
      for (const error of permanent) {
        const { attempts, call } = yield* flaky([error])
        expect(yield* Effect.exit(retryTransient(call))).toEqual(Exit.fail(error))
        expect(yield* Ref.get(attempts)).toBe(1)
      }
    }))
})

describe("the limits of one call", () => {
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

  it.effect("counts a hung attempt at the deadline as silence since the server's last answer, not since its earlier error", () =>
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
            reason:
              `could not ${target.what} at ${target.server}: no answer for the last 700 ms when the time limit of one call (SESSION_API_TIMEOUT_MS), 1 s, ran out; 3 attempts`,
            kind: "no-answer"
          })
        )
      )
    }))

  it.effect("reports the whole silence, not the attempt's limit, when the deadline falls in the pause after a timed-out attempt", () =>
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
            reason:
              `could not ${target.what} at ${target.server}: no answer within 1 s, the time limit of one call (SESSION_API_TIMEOUT_MS)`,
            kind: "no-answer"
          })
        )
      )
      expect(yield* Ref.get(attempts)).toBe(1)
    }))
})
