/**
 * The controllers' work queue on TestClock: a burst of enqueues is one reconcile
 * after the delay, a change during a reconcile runs it again, and conflicts are
 * retried at once but never in a tight loop.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Ref, TestClock } from "effect"
import type { Status } from "session-routing/kubernetes"
import { makeWorkQueue, RECONCILE_RETRY_DELAY } from "../src/Reconciler.js"

const conflict: Status = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  reason: "Conflict",
  code: 409
}

/** Moves the clock and lets every woken fiber finish before the test looks. */
const elapse = (duration: Duration.DurationInput) => Effect.zipRight(TestClock.adjust(duration), TestClock.adjust(0))

describe("makeWorkQueue", () => {
  it.scoped("reconciles a burst of enqueues for one key once, after the delay", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make<ReadonlyArray<string>>([])
      const queue = yield* makeWorkQueue({
        name: "test",
        delay: Duration.seconds(1),
        reconcile: (key) => Ref.update(runs, (r) => [...r, key])
      })
      yield* queue.enqueue("a")
      yield* queue.enqueue("a")
      yield* queue.enqueue("b")
      yield* elapse(Duration.millis(999))
      expect(yield* Ref.get(runs)).toEqual([])
      yield* elapse(Duration.millis(1))
      // Keys are independent: their order is not part of the contract.
      expect([...(yield* Ref.get(runs))].sort()).toEqual(["a", "b"])
      yield* elapse(Duration.seconds(10))
      expect(yield* Ref.get(runs)).toHaveLength(2)
    }))

  it.scoped("runs a key again when it is enqueued while its reconcile runs", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const queue = yield* makeWorkQueue({
        name: "test",
        delay: Duration.seconds(1),
        reconcile: () =>
          Effect.gen(function*() {
            const n = yield* Ref.updateAndGet(runs, (x) => x + 1)
            if (n === 1) {
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(release)
            }
          })
      })
      yield* queue.enqueue("a")
      yield* elapse(Duration.seconds(1))
      yield* Deferred.await(started)
      // This change arrived after the reconcile read its object: it must not be lost.
      yield* queue.enqueue("a")
      yield* Deferred.succeed(release, undefined)
      yield* elapse(Duration.seconds(1))
      expect(yield* Ref.get(runs)).toBe(2)
    }))

  it.scoped("retries a conflict at once, and a conflict that repeats only after the retry delay", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const queue = yield* makeWorkQueue({
        name: "test",
        delay: Duration.seconds(1),
        reconcile: () => Effect.zipRight(Ref.update(runs, (x) => x + 1), Effect.fail(conflict))
      })
      yield* queue.enqueue("a")
      yield* elapse(Duration.seconds(1))
      expect(yield* Ref.get(runs)).toBe(2)
      yield* elapse(RECONCILE_RETRY_DELAY)
      expect(yield* Ref.get(runs)).toBe(3)
    }))
})
