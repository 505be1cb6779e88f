/**
 * Polling: one status read per call, its answer (or why it failed) as the next
 * observation, on a fixed cadence. The poll layer reads through the client; with no
 * source in context, route health and following poll through the router itself.
 */
import { Duration, Effect, Schedule } from "effect"
import type { PublishedRoute } from "../../../domain/Routes.js"
import { withoutTransientRetry } from "../../../services/KubeClient.js"
import { Observation, type RouteStatusSource, type Sequenced } from "../../../services/RouteStatusSource.js"
import type { RouteReadError, SessionRouter } from "../../../services/SessionRouter.js"
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

/**
 * A polling source over the router's own reads (`SessionRouter.verdictFor`), without
 * the client's retries: what route health and following use when no
 * `RouteStatusSource` is in context.
 */
export const pollingThroughRouter = (router: SessionRouter.Service): RouteStatusSource.Service => ({
  kind: "poll",
  next: pollingNext((sessionId, route) =>
    withoutTransientRetry(router.verdictFor(sessionId, route)).pipe(
      Effect.map((verdict): StatusRead => ({ verdict, present: true }))
    )
  ),
  cadence: pollCadence
})
