/**
 * `SessionRouter` with its layers attached: one per routing layer and one that picks
 * by configuration. The Tag is the same one `src/services` declares; this subclass
 * only adds the layers, so the service layer never imports its implementations.
 */
import { Effect, Layer } from "effect"
import { RouterConfig } from "../services/RouterConfig.js"
import { SessionRouter as SessionRouterTag } from "../services/SessionRouter.js"
import * as EventRecorderLive from "./EventRecorderLive.js"
import * as GatewayRouter from "./GatewayRouter.js"
import * as IngressRouter from "./IngressRouter.js"
import * as NoneRouter from "./NoneRouter.js"
import * as RouteProbeLive from "./RouteProbeLive.js"
import { RouteStatusSource } from "./RouteStatusSourceLayers.js"

/**
 * A router layer together with the status source `RouterConfig` names, reading through
 * that router, and what the runner does beside route health: Events on the session
 * Pod and, when configured, probes of the public path.
 */
const withStatusSource = <E, R>(router: Layer.Layer<SessionRouterTag, E, R>) =>
  Layer.mergeAll(RouteStatusSource.layerConfig, EventRecorderLive.layer, RouteProbeLive.layer).pipe(
    Layer.provideMerge(router)
  )

/** Picks the layer `RouterConfig` names; without a base domain nothing is published, whatever the mode. */
const layerConfig = Layer.unwrapEffect(
  Effect.map(RouterConfig, (config) => {
    if (config.baseDomain === undefined) return withStatusSource(NoneRouter.layer)
    switch (config.mode) {
      case "ingress":
        return withStatusSource(IngressRouter.layer)
      case "gateway":
        return withStatusSource(GatewayRouter.layer)
      case "none":
        return withStatusSource(NoneRouter.layer)
    }
  })
)

/**
 * The routing layer of a session, with one Layer per implementation. Each also
 * provides the `RouteStatusSource` that `RouterConfig.statusSource` names (the shared
 * watch by default), so route health needs nothing more.
 */
export class SessionRouter extends SessionRouterTag {
  /** Service + one Ingress per session. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerIngress = withStatusSource(IngressRouter.layer)
  /** Service + one HTTPRoute per tcp port on the configured Gateway. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerGateway = withStatusSource(GatewayRouter.layer)
  /** Publishes nothing. */
  static readonly layerNone = NoneRouter.layer
  /** The layer `RouterConfig.mode` names (none without a base domain). */
  static readonly layerConfig = layerConfig
}
