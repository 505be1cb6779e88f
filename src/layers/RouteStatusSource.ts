/**
 * `RouteStatusSource` with its layers attached: the shared watch, polling, and the
 * one `RouterConfig.statusSource` names. As with `SessionRouter`, the Tag is the one
 * `src/services` declares; this subclass only adds the layers. Each source derives
 * where status lives from `RouterConfig` and reads it through `KubeClient`: it never
 * asks the router.
 */
import { Effect, Layer } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { RouteStatusSource as RouteStatusSourceTag } from "../services/RouteStatusSource.js"
import * as PollStatusSource from "./internal/routeStatusSource/PollStatusSource.js"
import * as WatchStatusSource from "./internal/routeStatusSource/WatchStatusSource.js"

export { pollingOver } from "./internal/routeStatusSource/Polling.js"

/**
 * The source `SESSION_ROUTE_STATUS_SOURCE` names, for `mode` (by default the one
 * `RouterConfig` routes in): a router layer names its own mode, whatever the
 * configuration's, so that its source reads the kind it publishes.
 */
export const layerConfigFor = (mode?: RoutingMode) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const config = yield* RouterConfig
      const polling = config.statusSource === "poll"
      yield* Effect.logDebug(
        `route status: ${polling ? "polling each host" : "the shared watch"} for ${
          mode ?? config.mode
        } mode (status source "${config.statusSource}")`
      )
      return polling ? PollStatusSource.layerFor(mode) : WatchStatusSource.layerFor(mode)
    })
  )

/**
 * Where route health reads status, with one Layer per implementation. Each needs
 * `KubeClient` and `RouterConfig`, and reads the kind of the mode `RouterConfig`
 * routes in (none without a base domain).
 *
 * @since 0.1.0
 * @category services
 */
export class RouteStatusSource extends RouteStatusSourceTag {
  /** One list-then-watch per routed kind, shared by every session of the process. */
  static readonly layerWatch = WatchStatusSource.layer
  /** A read per host per interval (one per object for hosts that share one). */
  static readonly layerPoll = PollStatusSource.layer
  /** The source `RouterConfig.statusSource` names. */
  static readonly layerConfig = layerConfigFor()
}
