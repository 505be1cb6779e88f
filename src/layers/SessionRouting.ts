/**
 * What a runner provides once: the router of a mode, the status source that reads the
 * kind it publishes, the Event recorder and the route probe, all from `KubeClient` and
 * `RouterConfig`. The runner programs (`publishSession`, `reportSession`,
 * `sessionStatus`, `runController`) name these services in their types; this is the
 * one place they are wired together.
 *
 * @example
 * ```ts
 * // KubeClientLive, publishSession, RouterConfigLive, SessionRouting from the main entry
 * const routing = SessionRouting.layerConfig.pipe(
 *   Layer.provideMerge(KubeClientLive.layerConfig()),
 *   Layer.provideMerge(RouterConfigLive.layer)
 * )
 * const program = Effect.scoped(publishSession(spec)).pipe(Effect.provide(routing))
 * ```
 */
import { Effect, Layer } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import type { KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import type { RouterSetupError, SessionRouter } from "../services/SessionRouter.js"
import type { SessionRouting } from "../services/SessionRouting.js"
import * as EventRecorderLive from "./EventRecorderLive.js"
import * as RouteProbeLive from "./RouteProbeLive.js"
import { configuredMode } from "./routeStatusSource/StatusObjects.js"
import * as RouteStatusSourceLive from "./RouteStatusSourceLive.js"
import * as SessionRouterLive from "./SessionRouterLive.js"

export type { SessionRouting }

/**
 * The router `router` of `mode` with the rest: the source reads the kind that mode
 * publishes, whatever `RouterConfig.mode` says. Built once the router is: a router
 * that cannot start starts nothing.
 */
const composed = <E>(
  mode: RoutingMode,
  router: Layer.Layer<SessionRouter, E, KubeClient | RouterConfig>
): Layer.Layer<SessionRouting, E, KubeClient | RouterConfig> =>
  Layer.mergeAll(
    mode === "none" ? RouteStatusSourceLive.layerNone : RouteStatusSourceLive.layerConfigFor(mode),
    EventRecorderLive.layer,
    RouteProbeLive.layer
  ).pipe(Layer.provideMerge(router))

/** Ingress mode: a Service and one Ingress per session. Needs `KubeClient` and `RouterConfig`. */
export const layerIngress: Layer.Layer<SessionRouting, RouterSetupError, KubeClient | RouterConfig> = composed(
  "ingress",
  SessionRouterLive.layerIngress
)

/** Gateway mode: a Service and one HTTPRoute per tcp port. Needs `KubeClient` and `RouterConfig`. */
export const layerGateway: Layer.Layer<SessionRouting, RouterSetupError, KubeClient | RouterConfig> = composed(
  "gateway",
  SessionRouterLive.layerGateway
)

/** Mode none: nothing published, nothing read; Events on the Pod still written when configured. */
export const layerNone: Layer.Layer<SessionRouting, never, KubeClient | RouterConfig> = composed(
  "none",
  SessionRouterLive.layerNone
)

/**
 * Mode none with no cluster at all: nothing published or read, no Events, no probes.
 * For a program that routes nothing and has no kubeconfig (`publish --mode none`).
 */
export const layerDetached: Layer.Layer<SessionRouting> = Layer.mergeAll(
  SessionRouterLive.layerNone,
  RouteStatusSourceLive.layerNone,
  EventRecorderLive.layerNone,
  RouteProbeLive.layerNone
)

/** The mode `RouterConfig` names (none without a base domain). Needs `KubeClient` and `RouterConfig`. */
export const layerConfig: Layer.Layer<SessionRouting, RouterSetupError, KubeClient | RouterConfig> = Layer
  .unwrapEffect(Effect.map(RouterConfig, (config) => composed(configuredMode(config), SessionRouterLive.layerConfig)))
