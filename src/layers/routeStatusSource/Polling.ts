/**
 * Polling: one status read per call, its answer (or why it failed) as the next
 * observation, on a fixed cadence.
 */
import { Duration, Effect, Schedule } from "effect"
import type { PublishedRoute } from "../../domain/Routes.js"
import {
  Observation,
  type RouteReadError,
  RouteStatusSource,
  type Sequenced
} from "../../services/RouteStatusSource.js"
import type { StatusRead } from "./StatusObjects.js"

/**
 * `next` for a polling source: one read per call, its answer (or why it failed) as
 * the observation, sequenced after `after`.
 */
export const pollingNext =
  (read: (sessionId: string, route: PublishedRoute) => Effect.Effect<StatusRead, RouteReadError>) =>
  (sessionId: string, route: PublishedRoute, after: number): Effect.Effect<Sequenced> =>
    read(sessionId, route).pipe(
      Effect.map(({ present, verdict }) => Observation.seen(verdict, present)),
      Effect.catchAll((error) => Effect.succeed(Observation.unreadable(error))),
      Effect.map((observation) => ({ seq: after + 1, observation }))
    )

/** One read every `intervalMs`, floored at 1 ms: a zero interval would spin at one instant and hammer the API server. */
export const pollCadence = (intervalMs: number): Schedule.Schedule<number> =>
  Schedule.spaced(Duration.millis(Math.max(1, intervalMs)))

/** What a source says of a host still pending at its deadline. */
export type DeadlineAdvice = Pick<RouteStatusSource.Service, "diagnose" | "unclaimedReason">

/** `advice`'s members alone, a diagnosis only where there is one. */
export const deadlineAdvice = (advice: DeadlineAdvice): DeadlineAdvice => ({
  unclaimedReason: advice.unclaimedReason,
  ...(advice.diagnose !== undefined ? { diagnose: advice.diagnose } : {})
})

/**
 * A polling source over `read`, whatever it reads through, with `advice` for the
 * deadline; `once` answers a one-off `read` (by default `read` itself).
 */
export const pollingOver = (
  read: (sessionId: string, route: PublishedRoute) => Effect.Effect<StatusRead, RouteReadError>,
  advice: DeadlineAdvice,
  once: (sessionId: string, route: PublishedRoute) => Effect.Effect<StatusRead, RouteReadError> = read
): RouteStatusSource.Service =>
  RouteStatusSource.of({
    kind: "poll",
    read: (sessionId, route) => Effect.map(once(sessionId, route), ({ verdict }) => verdict),
    next: pollingNext(read),
    cadence: pollCadence,
    ...deadlineAdvice(advice)
  })
