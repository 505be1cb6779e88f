/**
 * The live client's admission: at most N at once, first come first served, and a
 * waiter that is interrupted neither keeps its place nor loses a permit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeAdmission } from "../../src/layers/Admission.js"

/** Lets the forked fibers run until they block again. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("makeAdmission", () => {
  it.effect("runs at most its permits at once and admits the rest in the order they asked", () =>
    Effect.gen(function*() {
      const admission = makeAdmission(2)
      const order: Array<number> = []
      const gates = yield* Effect.forEach([0, 1, 2, 3, 4], () => Deferred.make<void>())
      const fibers = yield* Effect.forEach(
        gates,
        (gate, i) =>
          Effect.fork(admission.admit(Effect.zipRight(Effect.sync(() => order.push(i)), Deferred.await(gate))))
      )
      yield* settle
      expect(order).toEqual([0, 1])
      expect(admission.waiting()).toBe(3)
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* settle
      expect(order).toEqual([0, 1, 2])
      for (const gate of gates) yield* Deferred.succeed(gate, undefined)
      yield* Fiber.joinAll(fibers)
      expect(order).toEqual([0, 1, 2, 3, 4])
      expect(admission.waiting()).toBe(0)
    }))

  it.effect("gives an interrupted waiter's turn to the next, and a permit back when work fails", () =>
    Effect.gen(function*() {
      const admission = makeAdmission(1)
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(admission.admit(Deferred.await(gate)))
      const second = yield* Effect.fork(admission.admit(Effect.succeed("second")))
      const third = yield* Effect.fork(admission.admit(Effect.succeed("third")))
      yield* settle
      yield* Fiber.interrupt(second)
      expect(admission.waiting()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(third)).toBe("third")
      yield* Fiber.join(first)
      // A failure returns its permit like a success does.
      expect(yield* Effect.flip(admission.admit(Effect.fail("no")))).toBe("no")
      expect(yield* admission.admit(Effect.succeed("after"))).toBe("after")
    }))
})
