/**
 * A first-come, first-served bound on work in flight, for the live client's calls.
 * Effect's Semaphore wakes every waiter on each release (they race for the permit and
 * all but one queue again), which costs O(waiters) per call: with thousands of
 * sessions published at once that was most of the runner's CPU. Here a release hands
 * its permit to the oldest waiter, and nobody else is woken.
 */
import { Effect } from "effect"

/** One waiter: woken with a permit of its own, or gone before its turn. */
interface Waiter {
  readonly wake: () => void
  handed: boolean
  gone: boolean
}

export interface Admission {
  /** Runs `self` once one of the permits is free, in the order callers asked; the permit returns when it ends. */
  readonly admit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The same queue for a caller that is not a fiber: `admitted` runs once a permit is
   * its own, at once when one is free. Until then the returned function leaves the
   * queue (afterwards it does nothing). A permit taken this way goes back with
   * `unsafeRelease`, exactly once.
   */
  readonly unsafeEnter: (admitted: () => void) => () => void
  readonly unsafeRelease: () => void
  /** Callers waiting for a permit now. */
  readonly waiting: () => number
}

export const makeAdmission = (permits: number): Admission => {
  let free = permits
  // A queue as an array and a head index: shift() on a long array is O(n).
  let queue: Array<Waiter> = []
  let head = 0
  let queued = 0

  const release = (): void => {
    while (head < queue.length) {
      const next = queue[head]!
      queue[head++] = undefined as never
      if (next.gone) continue
      queued--
      next.handed = true
      next.wake()
      return
    }
    queue = []
    head = 0
    free++
  }

  const wait = Effect.async<void>((resume) => {
    // Freed since `acquire` looked (the fiber may yield in between): taken at once.
    if (free > 0) {
      free--
      resume(Effect.void)
      return
    }
    const waiter: Waiter = { wake: () => resume(Effect.void), handed: false, gone: false }
    queue.push(waiter)
    queued++
    return Effect.sync(() => {
      // Interrupted while waiting: leave the queue, or pass on a permit handed over meanwhile.
      if (waiter.handed) return release()
      waiter.gone = true
      queued--
    })
  })

  const acquire = Effect.suspend(() => {
    if (free === 0) return wait
    free--
    return Effect.void
  })

  const unsafeEnter = (admitted: () => void): () => void => {
    if (free > 0) {
      free--
      admitted()
      return () => {}
    }
    const waiter: Waiter = { wake: admitted, handed: false, gone: false }
    queue.push(waiter)
    queued++
    return () => {
      if (waiter.handed || waiter.gone) return
      waiter.gone = true
      queued--
    }
  }

  const admit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(restore(acquire), Effect.ensuring(restore(self), Effect.sync(release)))
    )

  return { admit, unsafeEnter, unsafeRelease: release, waiting: () => queued }
}
