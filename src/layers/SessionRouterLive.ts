/**
 * The layers of `SessionRouter`: one per routing layer and one that picks by
 * configuration. Each provides the router alone; `SessionRouting` composes it with
 * what a runner reads beside it (status, Events, probes).
 */
import { Effect, Layer } from "effect"
import { KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { type PublishError, type RouterSetupError, SessionRouter } from "../services/SessionRouter.js"
import { makeAdmission } from "./Admission.js"
import { MAX_CALL_SOCKETS } from "./kubeClient/ConnectionPool.js"
import { ENV } from "./routerConfig/Settings.js"
import * as GatewayRouter from "./sessionRouter/GatewayRouter.js"
import * as IngressRouter from "./sessionRouter/IngressRouter.js"
import * as NoneRouter from "./sessionRouter/NoneRouter.js"
import type { ObjectRef } from "./sessionRouter/SessionObjects.js"
import { unpublishSession } from "./sessionRouter/Unpublish.js"

/**
 * Publishes a router runs at once; the rest wait their turn, in order, before building
 * anything, as a controller's workers take keys from its queue. Twice the live client's
 * calls in flight, so that its connections always have a next request ready. A burst of
 * thousands of publishes then holds thousands of small waiting fibers rather than
 * thousands of half-built publishes (each holding its objects and plan), and the
 * sessions already published get their verdicts while the rest wait, instead of after
 * the whole burst.
 */
export const PUBLISHES_AT_ONCE = 2 * MAX_CALL_SOCKETS

/** `router` with its publishes admitted `PUBLISHES_AT_ONCE` at a time. */
const bounded = <E, R>(router: Layer.Layer<SessionRouter, E, R>): Layer.Layer<SessionRouter, E, R> =>
  Layer.effect(
    SessionRouter,
    Effect.map(SessionRouter, (service) => {
      const admission = makeAdmission(PUBLISHES_AT_ONCE)
      return { ...service, publish: (spec) => admission.admit(service.publish(spec)) }
    })
  ).pipe(Layer.provide(router))

/** Service + one Ingress per session. Needs `KubeClient` and `RouterConfig`. */
export const layerIngress: Layer.Layer<SessionRouter, RouterSetupError, KubeClient | RouterConfig> = bounded(
  IngressRouter.layer
)

/** Service + one HTTPRoute per tcp port on the configured Gateway. Needs `KubeClient` and `RouterConfig`. */
export const layerGateway: Layer.Layer<SessionRouter, RouterSetupError, KubeClient | RouterConfig> = bounded(
  GatewayRouter.layer
)

/** Publishes nothing. */
export const layerNone: Layer.Layer<SessionRouter> = NoneRouter.layer

/**
 * Picks the layer `RouterConfig` names; without a base domain nothing is published,
 * whatever the mode. In a mode that publishes, a warning says so: a runner started
 * without the variable would otherwise see every publish succeed, with no public host.
 */
export const layerConfig: Layer.Layer<SessionRouter, RouterSetupError, KubeClient | RouterConfig> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* RouterConfig
    if (config.baseDomain === undefined) {
      yield* config.mode === "none"
        ? Effect.logDebug("routing: the none router, as the configured mode says")
        : Effect.logWarning(
          `${ENV.baseDomain} is not set: sessions are published with no routing objects and no public host ` +
            `(as in mode none), though ${ENV.mode} is ${config.mode}; set it to route them`
        )
      return layerNone
    }
    // Which router a run uses is the first thing a person debugging its routing asks.
    yield* Effect.logDebug(`routing: the ${config.mode} router, as the configured mode says`)
    switch (config.mode) {
      case "ingress":
        return layerIngress
      case "gateway":
        return layerGateway
      case "none":
        return layerNone
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
 * `SessionRouterLive.layerIngress`, `.layerGateway`, `.layerNone`, `.layerConfig` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const SessionRouterLive = { layerIngress, layerGateway, layerNone, layerConfig } as const
