/**
 * API calls whose attempts a test scripts, for the call-limit tests on TestClock: each
 * attempt fails with an error, hangs, or answers, and the attempts are counted.
 */
import { Duration, Effect, Fiber, Ref, TestClock } from "effect"
import type { KubeError } from "../../src/services/KubeError.js"

/** Attempts that do what `plan` says in turn (the last entry repeats); counts them. */
export const scripted = (plan: ReadonlyArray<KubeError | "hang" | "ok">) =>
  Effect.gen(function*() {
    const attempts = yield* Ref.make(0)
    const call = Ref.getAndUpdate(attempts, (n) => n + 1).pipe(
      Effect.flatMap((n) => {
        const step = plan[Math.min(n, plan.length - 1)]!
        if (step === "hang") return Effect.never
        if (step === "ok") return Effect.succeed("answer")
        return Effect.fail(step)
      })
    )
    return { attempts, call }
  })

/** Runs `self` on a fork and moves the clock on by `millis` in 50 ms steps, then joins it. */
export const runFor = <A, E>(self: Effect.Effect<A, E>, millis: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Effect.either(self))
    for (let t = 0; t < millis; t += 50) yield* TestClock.adjust(Duration.millis(50))
    return yield* Fiber.join(fiber)
  })
