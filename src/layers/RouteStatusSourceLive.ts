/**
 * The layers of `RouteStatusSource`: the shared watch, polling, and the one
 * `RouterConfig.statusSource` names. Each source derives where status lives from
 * `RouterConfig` and reads it through `KubeClient`: it never asks the router.
 */
import { Effect, Layer } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import type { KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import type { RouteStatusSource } from "../services/RouteStatusSource.js"
import * as PollStatusSource from "./routeStatusSource/PollStatusSource.js"
import * as WatchStatusSource from "./routeStatusSource/WatchStatusSource.js"

export { pollingOver } from "./routeStatusSource/Polling.js"

/**
 * The source `SESSION_ROUTE_STATUS_SOURCE` names, for `mode` (by default the one
 * `RouterConfig` routes in): `SessionRouting` names the mode of the router it composes,
 * whatever the configuration's, so that the source reads the kind that router publishes.
 */
export const layerConfigFor = (mode?: RoutingMode): Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> =>
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

/** One list-then-watch per routed kind, shared by every session of the process. Needs `KubeClient` and `RouterConfig`. */
export const layerWatch: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> = WatchStatusSource.layer

/** A read per host per interval (one per object for hosts that share one). Needs `KubeClient` and `RouterConfig`. */
export const layerPoll: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> = PollStatusSource.layer

/** The source of mode `none`: it reads nothing, and says at a deadline that routing is off. */
export const layerNone: Layer.Layer<RouteStatusSource> = PollStatusSource.layerNone

/** The source `RouterConfig.statusSource` names, for the mode `RouterConfig` routes in. */
export const layerConfig: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> = layerConfigFor()

/**
 * `RouteStatusSourceLive.layerWatch`, `.layerPoll`, `.layerNone`, `.layerConfig` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const RouteStatusSourceLive = { layerWatch, layerPoll, layerNone, layerConfig } as const
