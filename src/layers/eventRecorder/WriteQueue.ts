/**
 * The recorder's queue and its writers, as client-go's broadcaster: a series waiting
 * for a write takes one place in a bounded queue, a few writer fibers take from it, and
 * a latch tells when nothing is queued or in flight, for `flush` and for closing.
 */
import { type Duration, Effect, Exit, Queue, type Scope } from "effect"
import { counted, type Series, settleSeries } from "./EventSeries.js"
import type { Tell } from "./WriteProblems.js"

/** client-go's broadcaster queues 1000 Events; past that they are dropped, never waited for. */
const MAX_QUEUED = 1000
/** Writes in flight at once: enough to keep up with a loaded API, few enough not to crowd out routing's own calls. */
const WRITERS = 4

/** Queues series for the writers, and waits for them to be done. */
export interface WriteQueue {
  /** Queues `entry`, or drops it (and says so once) when the queue is full; never waits. */
  readonly enqueue: (entry: Series) => Effect.Effect<void>
  /** Waits until every series queued so far has been written or given up on. */
  readonly idle: Effect.Effect<void>
}

/**
 * The queue, with `WRITERS` fibers running `write` on each series taken from it. They
 * live in the scope; closing it waits, within `timeout`, for what is still queued,
 * unless the scope closes on an interruption.
 */
export const makeWriteQueue = (
  write: (entry: Series) => Effect.Effect<void>,
  timeout: Duration.Duration,
  tell: Tell
): Effect.Effect<WriteQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.dropping<Series>(MAX_QUEUED)
    const idle = yield* Effect.makeLatch(true)
    let outstanding = 0

    const settle = () => {
      outstanding -= 1
      if (outstanding === 0) idle.unsafeOpen()
    }

    const enqueue = (entry: Series): Effect.Effect<void> => {
      outstanding += 1
      idle.unsafeClose()
      return Effect.flatMap(Queue.offer(queue, entry), (queued) => {
        if (queued) return Effect.void
        const { occurrence, problems } = entry
        settleSeries(entry)
        settle()
        return Effect.zipRight(
          counted("dropped"),
          tell(
            "QueueFull",
            occurrence,
            `${MAX_QUEUED} Events are already waiting to be written, so this one and any more while the queue is full are dropped`,
            problems
          )
        )
      })
    }

    const writeOne = (entry: Series) => write(entry).pipe(Effect.ensuring(Effect.sync(settle)))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), writeOne))).pipe(
      Effect.replicateEffect(WRITERS)
    )
    // Added after the writers, so it runs before they are interrupted: what is queued still
    // gets written when the routing ends of itself. Not when it is interrupted (Ctrl-C, a
    // stop): then nobody waits for Events, and a server that is gone would only make the
    // stop wait out each write's time limit.
    yield* Effect.addFinalizer((exit) =>
      Exit.isInterrupted(exit) ? Effect.void : Effect.ignore(Effect.timeout(idle.await, timeout))
    )

    return { enqueue, idle: idle.await }
  })
