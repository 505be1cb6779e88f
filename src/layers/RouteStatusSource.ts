/**
 * `RouteStatusSource` with its layers attached: the shared watch, polling, and the
 * one `RouterConfig.statusSource` names. As with `SessionRouter`, the Tag is the one
 * `src/services` declares; this subclass only adds the layers.
 */
import { Effect, Layer } from "effect"
import { RouterConfig } from "../services/RouterConfig.js"
import { RouteStatusSource as RouteStatusSourceTag } from "../services/RouteStatusSource.js"
import * as PollStatusSource from "./internal/routeStatusSource/PollStatusSource.js"
import * as WatchStatusSource from "./internal/routeStatusSource/WatchStatusSource.js"

export { pollingThroughRouter } from "./internal/routeStatusSource/Polling.js"

/** Picks the source `SESSION_ROUTE_STATUS_SOURCE` names. */
const layerConfig = Layer.unwrapEffect(
  Effect.map(
    RouterConfig,
    (config) => (config.statusSource === "poll" ? PollStatusSource.layer : WatchStatusSource.layer)
  )
)

/**
 * Where route health reads status, with one Layer per implementation. Each needs `KubeClient` and `SessionRouter`.
 *
 * @since 0.1.0
 * @category services
 */
export class RouteStatusSource extends RouteStatusSourceTag {
  /** One list-then-watch per routed kind, shared by every session of the process. */
  static readonly layerWatch = WatchStatusSource.layer
  /** A read per host per interval (one per object for hosts that share one). */
  static readonly layerPoll = PollStatusSource.layer
  /** The source `RouterConfig.statusSource` names (also needs `RouterConfig`). */
  static readonly layerConfig = layerConfig
}
