/**
 * The polling route-status source: each host's object is read once per interval,
 * for clusters that grant no list or watch, and as the baseline the shared watch is
 * measured against. Hosts that share an object (the ports of one session Ingress)
 * share each read: one GET per object per round, however many hosts it carries.
 */
import { Deferred, Effect, Layer, type Scope, SynchronizedRef } from "effect"
import type { ResourceType } from "../../../domain/Resources.js"
import type { PublishedRoute } from "../../../domain/Routes.js"
import { KubeClient, withoutTransientRetry } from "../../../services/KubeClient.js"
import type { KubeError } from "../../../services/KubeError.js"
import { RouteStatusSource } from "../../../services/RouteStatusSource.js"
import {
  RouteReadError,
  SessionRouter,
  type StatusObject,
  type StatusObjects
} from "../../../services/SessionRouter.js"
import { pollCadence, pollingNext, type StatusRead } from "./Polling.js"

/**
 * Runs `effect` once for every caller that asks under the same key while it is out:
 * the first caller's request is the one everybody waits on. The shared run lives in
 * `scope`, so one waiter giving up does not cancel it for the others.
 */
const coalescing = <A, E>(scope: Scope.Scope) =>
  Effect.map(
    SynchronizedRef.make(new Map<string, Deferred.Deferred<A, E>>()),
    (inFlight) => (key: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      SynchronizedRef.modifyEffect(inFlight, (running) => {
        const out = running.get(key)
        if (out !== undefined) return Effect.succeed([out, running] as const)
        return Effect.gen(function*() {
          const done = yield* Deferred.make<A, E>()
          yield* effect.pipe(
            Effect.onExit((exit) =>
              SynchronizedRef.update(inFlight, (now) => {
                const next = new Map(now)
                next.delete(key)
                return next
              }).pipe(Effect.zipRight(Deferred.done(done, exit)))
            ),
            Effect.forkIn(scope)
          )
          return [done, new Map(running).set(key, done)] as const
        })
      }).pipe(Effect.flatMap(Deferred.await))
  )

/** One status object, whichever of the two routed kinds it is. */
export const getStatusObject = (
  kube: KubeClient.Service,
  resource: StatusObjects["resource"],
  namespace: string,
  name: string
): Effect.Effect<StatusObject, KubeError> =>
  // The union of two resource types is not itself a ResourceType the client's
  // generic signature accepts; each member is.
  kube.get(resource as ResourceType<StatusObject>, namespace, name)

/** The polling source over the router in context; its shared reads live in the current scope. */
export const make: Effect.Effect<RouteStatusSource.Service, never, KubeClient | SessionRouter | Scope.Scope> = Effect
  .gen(function*() {
    const kube = yield* KubeClient
    const router = yield* SessionRouter
    const scope = yield* Effect.scope
    const objects = router.statusObjects
    const shared = yield* coalescing<StatusObject | undefined, KubeError>(scope)

    const read = (sessionId: string, route: PublishedRoute): Effect.Effect<StatusRead, RouteReadError> => {
      // Reads without the client's own retries: the poll schedule is the retry, and
      // every failed attempt must reach route health as evidence.
      if (objects === undefined) {
        return withoutTransientRetry(router.verdictFor(sessionId, route)).pipe(
          Effect.map((verdict): StatusRead => ({ verdict, present: true }))
        )
      }
      const name = objects.objectName(sessionId, route)
      return shared(
        name,
        withoutTransientRetry(getStatusObject(kube, objects.resource, objects.namespace, name)).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(undefined))
        )
      ).pipe(
        Effect.mapError((error) => new RouteReadError({ route, error })),
        // An absent object is judged without its context: nothing to read ahead for it.
        Effect.flatMap((object) =>
          object === undefined
            ? Effect.succeed<StatusRead>({ verdict: objects.verdict(undefined, route, {}), present: false })
            : Effect.map(objects.context, (known): StatusRead => ({
              verdict: objects.verdict(object, route, known),
              present: true
            }))
        )
      )
    }

    return RouteStatusSource.of({ kind: "poll", next: pollingNext(read), cadence: pollCadence })
  })

/** `RouteStatusSource` by polling. Needs `KubeClient` and `SessionRouter`. */
export const layer: Layer.Layer<RouteStatusSource, never, KubeClient | SessionRouter> = Layer.scoped(
  RouteStatusSource,
  make
)
