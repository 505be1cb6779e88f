/**
 * When the live client tries a failed Kubernetes call again: only failures the next
 * attempt can fix (`isTransient`), on a jittered, capped, bounded backoff that never
 * comes back sooner than a 429's Retry-After asked, and never past the call's
 * overall time budget.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { durationInWords } from "../domain/Durations.js"
import { isTransient, type KubeError, Transport } from "../services/KubeError.js"

/** First retry after about this long; each next one doubles. */
export const RETRY_BASE = Duration.millis(200)

/** No computed delay exceeds this (a Retry-After may, see below). */
export const RETRY_CAP = Duration.seconds(5)

/** At most this many retries after the first attempt: about 11 seconds in all, enough to ride out an apiserver restart. */
export const MAX_RETRIES = 6

/**
 * A Retry-After longer than this is not waited for: the call fails with the 429 so
 * the caller (a person, a reconcile loop) decides, instead of a call hanging for minutes.
 */
export const MAX_RETRY_AFTER = Duration.seconds(30)

const retryAfterOf = (error: KubeError): Duration.Duration | undefined =>
  error._tag === "TooManyRequests" && error.retryAfterSeconds !== undefined
    ? Duration.seconds(error.retryAfterSeconds)
    : undefined

/** Whether `transientRetrySchedule` tries again after this failure. */
export const isRetryable = (error: KubeError): boolean => {
  if (!isTransient(error)) return false
  const retryAfter = retryAfterOf(error)
  return retryAfter === undefined || Duration.lessThanOrEqualTo(retryAfter, MAX_RETRY_AFTER)
}

/**
 * The schedule for transient failures: 200ms doubling, jittered (×0.8–1.2) and then
 * capped at 5s, at most 6 retries, stopping at the first failure that is not
 * retryable. A 429 waits at least its Retry-After: the server asked for that much
 * and an earlier retry only feeds the throttling.
 */
export const transientRetrySchedule: Schedule.Schedule<unknown, KubeError> = Schedule.exponential(RETRY_BASE).pipe(
  Schedule.jittered,
  // Cap after jitter so the cap is exact.
  Schedule.either(Schedule.spaced(RETRY_CAP)),
  Schedule.intersect(Schedule.recurs(MAX_RETRIES)),
  Schedule.intersect(Schedule.identity<KubeError>()),
  Schedule.modifyDelay(([, error], delay) => {
    const retryAfter = retryAfterOf(error)
    return retryAfter !== undefined ? Duration.max(delay, retryAfter) : delay
  }),
  Schedule.whileInput(isRetryable)
)

/**
 * A refused connection is retried for about this long, then reported: an API server
 * restarting refuses connections for a few seconds, a wrong address refuses them forever.
 */
export const REFUSED_BUDGET = Duration.seconds(3)

/** The default of `SESSION_API_TIMEOUT_MS`: the most one API call may take, retries included. */
export const DEFAULT_API_TIMEOUT = Duration.seconds(20)

/** What sets the client's time limit unless told otherwise: the environment variable. */
export const API_TIMEOUT_SETTING = "SESSION_API_TIMEOUT_MS"

/** The time limits of one call. */
export interface CallLimits {
  /** How long one attempt may wait for its answer. */
  readonly attempt: Duration.Duration
  /** How long the call may take in all, retries and the pauses between them included. */
  readonly budget: Duration.Duration
  /**
   * What sets `budget`, as a message names it (`SESSION_API_TIMEOUT_MS`): a person
   * told only "no answer within 20 s" cannot tell a slow server from a limit set too low.
   */
  readonly setBy: string
}

/**
 * The limits `SESSION_API_TIMEOUT_MS` stands for: the whole call within `budget`, and
 * each attempt within half of it, so that one hung attempt still leaves time for a
 * retry that may reach a restarted server. `setBy` names the setting in messages.
 */
export const callLimits = (budget: Duration.DurationInput, setBy: string = API_TIMEOUT_SETTING): CallLimits => {
  const total = Duration.decode(budget)
  return { budget: total, attempt: Duration.millis(Math.max(1, Math.floor(Duration.toMillis(total) / 2))), setBy }
}

/** How a call is named in its failure: `get ingresses.networking.k8s.io "x" in namespace "ns" at https://...`. */
export interface CallTarget {
  /** The request in words (`describeRequest`). */
  readonly what: string
  readonly server: string
}

/** What an attempt that had no answer within its limit (`limits.attempt`) fails with. */
export const attemptTimedOut = (target: CallTarget, limits: CallLimits): Transport =>
  new Transport({
    reason: `could not ${target.what} at ${target.server}: no answer within ${
      durationInWords(Duration.toMillis(limits.attempt))
    }, the time limit of one attempt (half of the ${
      durationInWords(Duration.toMillis(limits.budget))
    } ${limits.setBy} allows a call)`,
    kind: "no-answer"
  })

/**
 * What a call whose overall time limit ran out while the server said nothing fails
 * with: the limit as it was set (not the time measured, which a late timer stretches
 * to "20s 12ms"), and the setting that sets it. A server that answered an earlier
 * attempt and then fell silent is said to have been silent for that long.
 */
const budgetRanOut = (target: CallTarget, limits: CallLimits, silentMs: number, attempts: number) => {
  const budgetMs = Duration.toMillis(limits.budget)
  const limit = `the time limit of one call (${limits.setBy})`
  const tries = attempts > 1 ? `; ${attempts} attempts` : ""
  return new Transport({
    reason: `could not ${target.what} at ${target.server}: ${
      silentMs >= budgetMs
        ? `no answer within ${durationInWords(budgetMs)}, ${limit}`
        : `no answer for the last ${durationInWords(silentMs)} when ${limit}, ${durationInWords(budgetMs)}, ran out`
    }${tries}`,
    kind: "no-answer"
  })
}

/** How one call is limited and retried. */
export interface LimitOptions {
  readonly target: CallTarget
  readonly limits: CallLimits
  readonly retry: boolean
  readonly schedule?: Schedule.Schedule<unknown, KubeError>
  /** Whether `attempt` ends itself with `attemptTimedOut` once `limits.attempt` has passed. */
  readonly attemptBounded?: boolean
}

/** What one call's attempts so far said; the call's own, so plain fields do. */
interface CallState {
  attempts: number
  last: KubeError | undefined
  /** Set while an attempt is out. */
  inFlight: boolean
  /** When the server last said anything (an error answer counts), else the call's start. */
  lastAnswerAt: number
}

/** Notes an attempt that failed with `error` at `now`. */
const failed = (state: CallState, error: KubeError, now: number) => {
  state.last = error
  state.inFlight = false
  if (!(error._tag === "Transport" && error.kind === "no-answer")) state.lastAnswerAt = now
}

/** One call of `attempt` begun at `start`: its first attempt, and the retries after a first failure. */
const limitedCall = <A, R>(attempt: Effect.Effect<A, KubeError, R>, options: LimitOptions, start: number) => {
  const { limits, target } = options
  const state: CallState = { attempts: 0, last: undefined, inFlight: false, lastAnswerAt: start }

  const sent = Effect.suspend(() => {
    state.attempts += 1
    state.inFlight = true
    return attempt
  })
  const bounded = options.attemptBounded === true
    ? sent
    : Effect.timeoutFail(sent, { duration: limits.attempt, onTimeout: () => attemptTimedOut(target, limits) })
  const one = Effect.tapError(
    bounded,
    (error) => Effect.map(Clock.currentTimeMillis, (now) => failed(state, error, now))
  )

  const budgetSpent = Effect.suspend(() => {
    // Between attempts, after an answer: that answer is the evidence.
    const { last } = state
    const answered = last !== undefined && !(last._tag === "Transport" && last.kind === "no-answer")
    if (!state.inFlight && answered && last !== undefined) return Effect.fail(last)
    // Otherwise the server has been silent: say for how long.
    return Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => Effect.fail(budgetRanOut(target, limits, now - state.lastAnswerAt, state.attempts))
    )
  })

  const retried = (first: KubeError) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      // The schedule and the predicate see the first failure as if the retry had made it.
      let replay = true
      const again = Effect.suspend(() => {
        if (!replay) return one
        replay = false
        return Effect.fail(first)
      })
      return Effect.retry(again, {
        schedule: options.schedule ?? transientRetrySchedule,
        // The predicate holds whatever schedule is given: only what another try can fix.
        while: (error) =>
          !isRetryable(error)
            ? false
            : error._tag === "Transport" && error.kind === "refused"
            ? Effect.map(Clock.currentTimeMillis, (at) => at - start < Duration.toMillis(REFUSED_BUDGET))
            : true
      }).pipe(
        Effect.timeout(Duration.millis(Math.max(0, Duration.toMillis(limits.budget) - (now - start)))),
        Effect.catchTag("TimeoutException", () => budgetSpent)
      )
    })

  return { state, one, retried }
}

/**
 * Runs one API call under its time limits: each attempt bounded by `limits.attempt`,
 * transient failures retried on `schedule` when `retry` is on (a refused connection
 * for `REFUSED_BUDGET` at most), and the whole within `limits.budget`. When the budget
 * runs out, the last evidence is reported: the failure of the last attempt if it
 * answered, or "no answer within ..." when the attempt then in flight had none.
 *
 * The budget's timer starts only once the first attempt has failed, with what is left
 * of the budget: the first attempt is already bounded by its own limit (half the
 * budget), and a call that succeeds at once, as nearly every call does, then races one
 * timer instead of two. With `attemptBounded`, each attempt keeps its own limit
 * (failing with `attemptTimedOut` when it passes) and races none here: a call that
 * succeeds at once forks no fiber at all.
 */
export const withinLimits = <A, R>(
  attempt: Effect.Effect<A, KubeError, R>,
  options: LimitOptions
): Effect.Effect<A, KubeError, R> =>
  Effect.clockWith((clock) => {
    const call = limitedCall(attempt, options, clock.unsafeCurrentTimeMillis())
    // Without retries the one attempt is the call, and its limit is within the budget.
    return options.retry ? Effect.catchAll(call.one, call.retried) : call.one
  })

/**
 * The rest of a call whose first attempt its caller made itself, begun at `start`
 * and failed with `first` at `failedAt`: the retries `withinLimits` would have made,
 * of `attempt`, within what is left of the same budget.
 */
export const retriedAfter = <A, R>(
  first: KubeError,
  times: { readonly start: number; readonly failedAt: number },
  attempt: Effect.Effect<A, KubeError, R>,
  options: LimitOptions
): Effect.Effect<A, KubeError, R> => {
  const call = limitedCall(attempt, options, times.start)
  call.state.attempts = 1
  failed(call.state, first, times.failedAt)
  return call.retried(first)
}
