/**
 * The polling route-status source: each host's object is read once per interval,
 * for clusters that grant no list or watch, and as the baseline the shared watch is
 * measured against. Hosts that share an object (the ports of one session Ingress)
 * share each read: one GET per object per round, however many hosts it carries.
 */
import { Deferred, Effect, Layer, type Scope, SynchronizedRef } from "effect"
import { RouteVerdict, type RoutingMode } from "../../domain/Routes.js"
import { KubeClient, withoutTransientRetry } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { RouteStatusSource } from "../../services/RouteStatusSource.js"
import { pollingOver } from "./Polling.js"
import {
  getStatusObject,
  type ModeStatus,
  modeStatus,
  noneStatus,
  readStatus,
  type StatusObject,
  type StatusRead
} from "./StatusObjects.js"

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

/** Nothing is published (mode none): never asked in practice, and pending if it is. */
const nothingPublished = () => Effect.succeed<StatusRead>({ verdict: RouteVerdict.pending, present: true })

/** The source of mode `none`: it reads and diagnoses nothing, and says at a deadline that routing is off. */
export const noneSource: RouteStatusSource.Service = pollingOver(nothingPublished, noneStatus)

/** `RouteStatusSource` of mode `none`. */
export const layerNone: Layer.Layer<RouteStatusSource> = Layer.succeed(RouteStatusSource, noneSource)

/**
 * The polling source over `status`; its shared reads live in the current scope. Each
 * host's object is read through `kube` and judged by the mode's own rule.
 */
export const fromStatus = (
  kube: KubeClient.Service,
  status: ModeStatus
): Effect.Effect<RouteStatusSource.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const objects = status.objects
    const shared = yield* coalescing<StatusObject | undefined, KubeError>(scope)
    if (objects === undefined) return pollingOver(nothingPublished, status)
    // Reads without the client's own retries: the poll schedule is the retry, and
    // every failed attempt must reach route health as evidence.
    const read = readStatus(
      objects,
      (name) => shared(name, withoutTransientRetry(getStatusObject(kube, objects, name)))
    )
    // A one-off read has no schedule to retry it: the client's own retries stay.
    return pollingOver(read, status, readStatus(objects, (name) => getStatusObject(kube, objects, name)))
  })

/**
 * The polling source for `mode` (by default the one `RouterConfig` routes in), its
 * objects derived from `RouterConfig`; its shared reads live in the current scope.
 */
export const makeFor = (
  mode?: RoutingMode
): Effect.Effect<RouteStatusSource.Service, never, KubeClient | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* KubeClient
    const status = yield* modeStatus(kube, yield* RouterConfig, mode)
    return yield* fromStatus(kube, status)
  })

/** The polling source for the mode `RouterConfig` routes in. */
export const make: Effect.Effect<RouteStatusSource.Service, never, KubeClient | RouterConfig | Scope.Scope> = makeFor()

/** `RouteStatusSource` by polling, for `mode`. Needs `KubeClient` and `RouterConfig`. */
export const layerFor = (mode?: RoutingMode): Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> =>
  Layer.scoped(RouteStatusSource, makeFor(mode))

/** `RouteStatusSource` by polling, for the mode `RouterConfig` routes in. Needs `KubeClient` and `RouterConfig`. */
export const layer: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> = layerFor()
