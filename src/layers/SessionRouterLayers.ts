/**
 * `SessionRouter` with its layers attached: one per routing layer and one that picks
 * by configuration. The Tag is the same one `src/services` declares; this subclass
 * only adds the layers, so the service layer never imports its implementations.
 */
import { Effect, Layer } from "effect"
import { RouterConfig } from "../services/RouterConfig.js"
import { SessionRouter as SessionRouterTag } from "../services/SessionRouter.js"
import * as GatewayRouter from "./GatewayRouter.js"
import * as IngressRouter from "./IngressRouter.js"
import * as NoneRouter from "./NoneRouter.js"

/** Picks the layer `RouterConfig` names; without a base domain nothing is published, whatever the mode. */
const layerConfig = Layer.unwrapEffect(
  Effect.map(RouterConfig, (config) => {
    if (config.baseDomain === undefined) return NoneRouter.layer
    switch (config.mode) {
      case "ingress":
        return IngressRouter.layer
      case "gateway":
        return GatewayRouter.layer
      case "none":
        return NoneRouter.layer
    }
  })
)

/** The routing layer of a session, with one Layer per implementation. */
export class SessionRouter extends SessionRouterTag {
  /** Service + one Ingress per session. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerIngress = IngressRouter.layer
  /** Service + one HTTPRoute per tcp port on the configured Gateway. Needs `KubeClient` and `RouterConfig`. */
  static readonly layerGateway = GatewayRouter.layer
  /** Publishes nothing. */
  static readonly layerNone = NoneRouter.layer
  /** The layer `RouterConfig.mode` names (none without a base domain). */
  static readonly layerConfig = layerConfig
}
