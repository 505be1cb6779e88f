/**
 * `SessionRouter` with its layers attached: one per routing layer and one that picks
 * by configuration. The Tag is the same one `src/services` declares; this subclass
 * only adds the layers, so the service layer never imports its implementations.
 */
import { Effect, Layer } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import { KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { RouteStatusSource } from "../services/RouteStatusSource.js"
import { type PublishError, SessionRouter as SessionRouterTag } from "../services/SessionRouter.js"
import * as EventRecorderLive from "./EventRecorderLive.js"
import { makeAdmission } from "./internal/Admission.js"
import { MAX_CALL_SOCKETS } from "./internal/kubeClient/ConnectionPool.js"
import { ENV } from "./internal/routerConfig/Settings.js"
import * as PollStatusSource from "./internal/routeStatusSource/PollStatusSource.js"
import * as GatewayRouter from "./internal/sessionRouter/GatewayRouter.js"
import * as IngressRouter from "./internal/sessionRouter/IngressRouter.js"
import * as NoneRouter from "./internal/sessionRouter/NoneRouter.js"
import type { ObjectRef } from "./internal/sessionRouter/SessionObjects.js"
import { unpublishSession } from "./internal/sessionRouter/Unpublish.js"
import * as RouteProbeLive from "./RouteProbeLive.js"
import { layerConfigFor } from "./RouteStatusSource.js"

/**
 * Publishes a router runs at once; the rest wait their turn, in order, before building
 * anything, as a controller's workers take keys from its queue. Twice the live client's
 * calls in flight, so that its connections always have a next request ready. A burst of
 * thousands of publishes then holds thousands of small waiting fibers rather than
 * thousands of half-built publishes, which were most of the runner's peak memory, and
 * the sessions already published get their verdicts while the rest wait, instead of
 * after the whole burst.
 */
export const PUBLISHES_AT_ONCE = 2 * MAX_CALL_SOCKETS

/** `router` with its publishes admitted `PUBLISHES_AT_ONCE` at a time. */
const bounded = <E, R>(router: Layer.Layer<SessionRouterTag, E, R>): Layer.Layer<SessionRouterTag, E, R> =>
  Layer.effect(
    SessionRouterTag,
    Effect.map(SessionRouterTag, (service) => {
      const admission = makeAdmission(PUBLISHES_AT_ONCE)
      return { ...service, publish: (spec) => admission.admit(service.publish(spec)) }
    })
  ).pipe(Layer.provide(router))

/**
 * A router layer of `mode` together with the status source `RouterConfig` names for
 * that mode, and what the runner does beside route health: Events on the session Pod
 * and, when configured, probes of the public path. They are built once the router is
 * (a router that cannot start starts nothing), but none of them reads it: the source
 * derives where status lives from `RouterConfig` and reads it through `KubeClient`.
 */
const withStatusSource = <E, R>(mode: RoutingMode, router: Layer.Layer<SessionRouterTag, E, R>) =>
  Layer.mergeAll(layerConfigFor(mode), EventRecorderLive.layer, RouteProbeLive.layer).pipe(
    Layer.provideMerge(bounded(router))
  )

/**
 * Picks the layer `RouterConfig` names; without a base domain nothing is published,
 * whatever the mode. In a mode that publishes, a warning says so: a runner started
 * without the variable would otherwise see every publish succeed, with no public host.
 */
const layerConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* RouterConfig
    if (config.baseDomain === undefined) {
      yield* config.mode === "none"
        ? Effect.logDebug("routing: the none router, as the configured mode says")
        : Effect.logWarning(
          `${ENV.baseDomain} is not set: sessions are published with no routing objects and no public host ` +
            `(as in mode none), though ${ENV.mode} is ${config.mode}; set it to route them`
        )
      return withStatusSource("none", NoneRouter.layer)
    }
    // Which router a run uses is the first thing a person debugging its routing asks.
    yield* Effect.logDebug(`routing: the ${config.mode} router, as the configured mode says`)
    switch (config.mode) {
      case "ingress":
        return withStatusSource("ingress", IngressRouter.layer)
      case "gateway":
        return withStatusSource("gateway", GatewayRouter.layer)
      case "none":
        return withStatusSource("none", NoneRouter.layer)
    }
  })
)

/**
 * Removes a session's objects whatever mode published them, as each router's
 * `unpublish` does, for a caller that does not know how the session was published:
 * its Ingresses and HTTPRoutes, then its Service. Needs only the namespace and
 * `managedBy` of `RouterConfig`, no base domain or Gateway. Given a `mode`, that
 * mode's kind must be listable and the other is looked through as a router looks
 * through the other mode's (an identity whose RBAC names one kind); without one, a
 * kind it cannot list fails it, naming the kind, since nothing it could not see may be
 * called removed. Succeeds with what it deleted.
 *
 * @since 0.1.0
 * @category programs
 */
export const unpublishEveryMode = (
  sessionId: string,
  mode?: "ingress" | "gateway"
): Effect.Effect<ReadonlyArray<ObjectRef>, PublishError, KubeClient | RouterConfig> =>
  Effect.gen(function*() {
    const kube = yield* KubeClient
    const config = yield* RouterConfig
    return yield* unpublishSession(kube, config.sessionNamespace, config.managedBy, {
      ingress: mode === "gateway" ? "other" : "own",
      gateway: mode === "ingress" ? "other" : "own"
    })(sessionId)
  })

/**
 * The routing layer of a session, with one Layer per implementation. Each also
 * provides the `RouteStatusSource` that `RouterConfig.statusSource` names (the shared
 * watch by default; none reads nothing), so route health needs nothing more.
 *
 * @since 0.1.0
 * @category services
 */
export class SessionRouter extends SessionRouterTag {
  /** Service + one Ingress per session. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerIngress = withStatusSource("ingress", IngressRouter.layer)
  /** Service + one HTTPRoute per tcp port on the configured Gateway. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerGateway = withStatusSource("gateway", GatewayRouter.layer)
  /** Publishes nothing; its status source reads nothing. */
  static readonly layerNone = Layer.merge(
    NoneRouter.layer,
    Layer.succeed(RouteStatusSource, PollStatusSource.noneSource)
  )
  /** The layer `RouterConfig.mode` names (none without a base domain). */
  static readonly layerConfig = layerConfig
}
