/**
 * The live client's attempt deadlines on TestClock: each expires once its limit has
 * passed and not before, a disarmed one never does, one sweeper serves them all, and
 * no timer is left once nothing is armed (an idle client lets the process exit).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { makeDeadlines } from "../../src/layers/Deadlines.js"

/** Lets the sweeper run until it blocks again. */
const settle = Effect.repeatN(Effect.yieldNow(), 10)

const pendingSleeps = Effect.map(TestClock.sleeps(), (sleeps) => sleeps.length)

describe("makeDeadlines", () => {
  it.effect("expires each deadline once its limit has passed, oldest first, and not before", () =>
    Effect.gen(function*() {
      const deadlines = makeDeadlines(1_000)
      const expired: Array<string> = []
      yield* deadlines.arm(() => expired.push("a"))
      yield* TestClock.adjust("400 millis")
      yield* deadlines.arm(() => expired.push("b"))
      yield* TestClock.adjust("599 millis")
      yield* settle
      expect(expired).toEqual([])
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(expired).toEqual(["a"])
      expect(deadlines.armed()).toBe(1)
      yield* TestClock.adjust("400 millis")
      yield* settle
      expect(expired).toEqual(["a", "b"])
      expect(deadlines.armed()).toBe(0)
      expect(yield* pendingSleeps).toBe(0)
    }))

  it.effect("never expires a disarmed deadline", () =>
    Effect.gen(function*() {
      const deadlines = makeDeadlines(1_000)
      const expired: Array<string> = []
      const a = yield* deadlines.arm(() => expired.push("a"))
      const b = yield* deadlines.arm(() => expired.push("b"))
      yield* settle
      expect(yield* pendingSleeps).toBe(1)
      a.disarm()
      yield* TestClock.adjust("2 seconds")
      yield* settle
      expect(expired).toEqual(["b"])
      // Disarming after it expired changes nothing.
      b.disarm()
      expect(deadlines.armed()).toBe(0)

      const c = yield* deadlines.arm(() => expired.push("c"))
      c.disarm()
      yield* TestClock.adjust("2 seconds")
      yield* settle
      expect(expired).toEqual(["b"])
    }))

  it.effect("starts sweeping again for a deadline armed after the last one was disarmed", () =>
    Effect.gen(function*() {
      const deadlines = makeDeadlines(500)
      const expired: Array<number> = []
      for (let round = 0; round < 3; round++) {
        const early = yield* deadlines.arm(() => expired.push(-1))
        early.disarm()
        yield* deadlines.arm(() => expired.push(round))
        yield* TestClock.adjust("500 millis")
        yield* settle
      }
      expect(expired).toEqual([0, 1, 2])
      expect(yield* pendingSleeps).toBe(0)
    }))

  it.live("holds no timer once nothing is armed, so an idle client lets the process exit", () =>
    Effect.gen(function*() {
      const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length
      const before = timers()
      const deadlines = makeDeadlines(60_000)
      const first = yield* deadlines.arm(() => {})
      const second = yield* deadlines.arm(() => {})
      yield* settle
      expect(timers()).toBe(before + 1)
      first.disarm()
      yield* settle
      expect(timers()).toBe(before + 1)
      second.disarm()
      yield* settle
      expect(timers()).toBe(before)
    }))
})
