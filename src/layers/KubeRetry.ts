/**
 * When the live client tries a failed Kubernetes call again: only failures the next
 * attempt can fix (`isTransient`), on a jittered, capped, bounded backoff that never
 * comes back sooner than a 429's Retry-After asked.
 */
import { Duration, Effect, Schedule } from "effect"
import { isTransient, type KubeError } from "../services/KubeError.js"

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

/** Retries `self` on `schedule` (by default `transientRetrySchedule`); other failures pass through at once. */
export const retryTransient = <A, R>(
  self: Effect.Effect<A, KubeError, R>,
  schedule: Schedule.Schedule<unknown, KubeError> = transientRetrySchedule
): Effect.Effect<A, KubeError, R> => Effect.retry(self, schedule)
