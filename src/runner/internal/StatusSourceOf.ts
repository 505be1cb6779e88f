/**
 * The status source a runner program follows a session through: the `RouteStatusSource`
 * in context (every `SessionRouter` layer provides one), or, beside a router of one's
 * own and no source, a polling source over that router's own reads. The runner is the
 * one place that may ask the router for status: it sits above both.
 */
import { Effect, Option } from "effect"
import { pollingOver } from "../../layers/RouteStatusSource.js"
import { withoutTransientRetry } from "../../services/KubeClient.js"
import { RouteStatusSource } from "../../services/RouteStatusSource.js"
import { SessionRouter } from "../../services/SessionRouter.js"

/**
 * A polling source over `router.verdictFor` (without the client's retries: the poll
 * schedule is the retry), with the router's own diagnosis and advice for the deadline.
 */
export const pollingThroughRouter = (router: SessionRouter.Service): RouteStatusSource.Service =>
  pollingOver(
    (sessionId, route) =>
      Effect.map(withoutTransientRetry(router.verdictFor(sessionId, route)), (verdict) => ({ verdict, present: true })),
    router
  )

/** The source in context, or one polling through the router in context. */
export const statusSource: Effect.Effect<RouteStatusSource.Service, never, SessionRouter> = Effect.flatMap(
  Effect.serviceOption(RouteStatusSource),
  Option.match({
    onSome: Effect.succeed,
    onNone: () => Effect.map(SessionRouter, pollingThroughRouter)
  })
)

/**
 * `effect` with the source it reads from: the one in context, or one polling through the
 * router. A source already in context is left where it is: providing it again would copy
 * the whole context into every session's fiber for as long as the session is followed.
 */
export const withStatusSource = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, Exclude<R, RouteStatusSource> | SessionRouter> =>
  Effect.flatMap(
    Effect.serviceOption(RouteStatusSource),
    Option.match({
      // The context holds the source: what `effect` requires of it is there.
      onSome: () => effect as Effect.Effect<A, E, Exclude<R, RouteStatusSource>>,
      onNone: () =>
        Effect.flatMap(
          SessionRouter,
          (router) => Effect.provideService(effect, RouteStatusSource, pollingThroughRouter(router))
        )
    })
  )
