/**
 * Many deadlines of one length without a fiber each: the time limit of every attempt
 * the live client sends, and how long each session's publish Event waits for its
 * verdicts. `Effect.timeoutFail` forks two fibers and races them, and a sleeping fiber
 * per session cost more CPU than its session's follow-ups, when thousands of sessions
 * publish at once. Deadlines of one length come in the order they were armed: one
 * sweeper fiber, alive only while some deadline is armed, sleeps on the Clock until the
 * oldest one and expires what is due. On TestClock the deadlines move with the test's
 * time like any other sleep.
 */
import { Clock, Context, Duration, Effect, FiberId, Runtime } from "effect"
import type { Fiber, FiberStatus } from "effect"

/** An armed deadline: `disarm` once the attempt has its answer, so that it never expires. */
export interface Deadline {
  readonly disarm: () => void
}

export interface Deadlines {
  /**
   * Arms a deadline `limitMs` from now on this fiber's Clock: `onExpire` runs once
   * then, on the sweeper's fiber, unless disarmed first. It must not block.
   */
  readonly arm: (onExpire: () => void) => Effect.Effect<Deadline>
  /**
   * `arm` from outside a fiber: `clock` is the arming fiber's, and `runtime` gives its
   * runtime, asked only when the sweeper has to start.
   */
  readonly unsafeArm: (clock: Clock.Clock, runtime: () => Runtime.Runtime<never>, onExpire: () => void) => Deadline
  /** Deadlines armed and neither expired nor disarmed. */
  readonly armed: () => number
}

interface Entry {
  readonly at: number
  /** Cleared once the entry has expired or been disarmed. */
  expire: (() => void) | undefined
}

/** The runtime of a running fiber (what `Effect.runtime` gives it), made when asked. */
export const runtimeOfFiber = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  status: FiberStatus.Running
) =>
(): Runtime.Runtime<never> =>
  Runtime.make({ context: fiber.currentContext, fiberRefs: fiber.getFiberRefs(), runtimeFlags: status.runtimeFlags })

/**
 * Deadlines of one length. The sweeper runs on the Clock of the fiber that armed the
 * first deadline while none was armed; it is stopped, its sleep cancelled, as soon as
 * nothing is armed, so an idle client holds no timer that keeps the process alive.
 */
export const makeDeadlines = (limitMs: number): Deadlines => {
  // Oldest first. A queue as an array and a head index: shift() on a long array is O(n).
  let queue: Array<Entry> = []
  let head = 0
  let live = 0
  let sweeper: Fiber.RuntimeFiber<void> | undefined
  /** Bumped whenever a sweeper is stopped or ends, so that one already woken ends instead of sweeping on. */
  let generation = 0

  const reset = () => {
    queue = []
    head = 0
  }

  const stop = () => {
    const fiber = sweeper
    sweeper = undefined
    generation++
    reset()
    fiber?.unsafeInterruptAsFork(FiberId.none)
  }

  const sweep = (mine: number): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (mine !== generation) return Effect.void
      while (head < queue.length) {
        const entry = queue[head]!
        if (entry.expire !== undefined && entry.at > now) {
          return Effect.zipRight(Clock.sleep(Duration.millis(entry.at - now)), Effect.suspend(() => sweep(mine)))
        }
        queue[head++] = undefined as never
        const expire = entry.expire
        if (expire === undefined) continue
        entry.expire = undefined
        live--
        expire()
        // What `expire` ran may have stopped this sweeper (nothing left armed).
        if (mine !== generation) return Effect.void
      }
      // Nothing left armed: this sweeper ends, and the next deadline starts another.
      sweeper = undefined
      generation++
      reset()
      return Effect.void
    })

  const unsafeArm = (clock: Clock.Clock, runtime: () => Runtime.Runtime<never>, onExpire: () => void): Deadline => {
    const entry: Entry = { at: clock.unsafeCurrentTimeMillis() + limitMs, expire: onExpire }
    queue.push(entry)
    live++
    if (sweeper === undefined) {
      const mine = generation
      const fiber = Runtime.runFork(runtime())(sweep(mine))
      // Unless it already ended (everything due at once), it is the sweeper.
      if (mine === generation) sweeper = fiber
    }
    return {
      disarm: () => {
        if (entry.expire === undefined) return
        entry.expire = undefined
        if (--live === 0) stop()
      }
    }
  }

  const arm = (onExpire: () => void): Effect.Effect<Deadline> =>
    Effect.withFiberRuntime((fiber, status) =>
      Effect.succeed(
        unsafeArm(Context.get(fiber.currentDefaultServices, Clock.Clock), runtimeOfFiber(fiber, status), onExpire)
      )
    )

  return { arm, unsafeArm, armed: () => live }
}
