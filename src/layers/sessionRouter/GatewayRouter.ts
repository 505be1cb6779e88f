/**
 * The gateway routing layer: one Service and one HTTPRoute per tcp port, attached
 * to the configured Gateway. Unlike an Ingress, an HTTPRoute can be refused, and
 * says why in `status.parents`; only the entry for our Gateway decides.
 */
import { Effect, Layer } from "effect"
import { buildSessionHttpRoutes, managedSessionSelector } from "../../domain/Manifests.js"
import type { ManifestSettings, SessionSpec } from "../../domain/Manifests.js"
import type { HttpRoute, Ingress } from "../../domain/Objects.js"
import { HttpRouteResource, IngressResource } from "../../domain/Resources.js"
import { routesFor } from "../../domain/Routes.js"
import { KubeClient } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { PublishError, RouterSetupError, SessionRouter } from "../../services/SessionRouter.js"
import { runPublish } from "./PublishPlan.js"
import { manifestSettings, publishStep, sessionServicePlan } from "./RouterSupport.js"
import { makeSessionLookup, type SessionLookup } from "./SessionLookup.js"
import { plannedWrite, removeOtherModeObjects, removeSessionObjects } from "./SessionObjects.js"
import { unpublishSession } from "./Unpublish.js"

/**
 * Only an unserved HTTPRoute type means "no Gateway API here"; any other failure
 * (a 403, a 422) keeps its own words, or a person would install CRDs they have.
 */
const notServedReason = (error: KubeError): string | undefined =>
  error._tag === "NotServed"
    ? `the cluster does not serve HTTPRoutes (gateway.networking.k8s.io/v1): install the Gateway API CRDs, or set SESSION_ROUTING_MODE=ingress`
    : undefined

/** The routes an HTTPRoute list holds, by port: each route's first hostname and backend port. */
const routesIn = (items: ReadonlyArray<HttpRoute>) =>
  items
    .flatMap((route) => {
      const host = route.spec?.hostnames?.[0]
      const port = route.spec?.rules?.[0]?.backendRefs?.[0]?.port
      return host !== undefined && port !== undefined ? [{ host, port }] : []
    })
    .sort((a, b) => a.port - b.port)

/** What a gateway publish looks up of the session: its HTTPRoutes, and what ingress mode left. */
interface GatewayLookups {
  readonly routes: SessionLookup<HttpRoute>
  readonly ingressModeObjects: SessionLookup<Ingress>
}

/**
 * The session's Service and one HTTPRoute per tcp port, in one publish: routes of ports
 * it no longer has go, and what ingress mode left for it.
 */
const publishGateway = (
  kube: KubeClient.Service,
  settings: ManifestSettings,
  lookups: GatewayLookups,
  args: SessionSpec
) =>
  Effect.gen(function*() {
    const service = sessionServicePlan(kube, settings, args)
    const routes = buildSessionHttpRoutes(settings, args)
    yield* runPublish({
      sessionId: args.sessionId,
      writes: [...service.writes, ...routes.map((route) => plannedWrite(kube, HttpRouteResource, route))],
      removals: [
        // Routes of ports the session no longer has go, found by the session label so
        // that routes left behind by an earlier run that crashed mid-reload go too.
        removeSessionObjects(kube, HttpRouteResource, settings.sessionNamespace, lookups.routes(args.sessionId), {
          keep: new Set(routes.map((r) => r.metadata?.name ?? ""))
        }),
        removeOtherModeObjects(
          kube,
          IngressResource,
          settings.sessionNamespace,
          lookups.ingressModeObjects(args.sessionId)
        ),
        ...service.removals
      ],
      explain: notServedReason
    })
    return routesFor(settings.baseDomain, args.sessionId, args.ports)
  })

/** Every routing object of the session, in either mode; where HTTPRoutes are not served, none of them. */
/** Builds the gateway router from the client and the configuration. */
export const make = Effect.gen(function*() {
  const kube = yield* KubeClient
  const config = yield* RouterConfig
  const settings = yield* manifestSettings(config, "gateway")
  const gateway = settings.gateway
  if (gateway === undefined) {
    return yield* new RouterSetupError({
      reason: "the gateway routing layer needs a Gateway to attach routes to: set SESSION_GATEWAY_NAME"
    })
  }
  const namespace = settings.sessionNamespace
  // The session's routes and what ingress mode left, looked up for the publishes under way in one list each.
  const lookups: GatewayLookups = {
    routes: yield* makeSessionLookup(kube, HttpRouteResource, namespace, settings.managedBy),
    ingressModeObjects: yield* makeSessionLookup(kube, IngressResource, namespace, settings.managedBy)
  }

  const notServed = (sessionId: string) => (error: PublishError) => {
    const reason = notServedReason(error.error)
    return reason !== undefined ? new PublishError({ sessionId, error: error.error, reason }) : error
  }

  const service: SessionRouter.Service = {
    layer: "gateway",

    publish: (args) => publishGateway(kube, settings, lookups, args),

    routesOf: (sessionId) =>
      kube.list(HttpRouteResource, namespace, { labelSelector: managedSessionSelector(settings.managedBy, sessionId) })
        .pipe(
          Effect.map((list) => routesIn(list.items)),
          publishStep(sessionId, `list the HTTPRoutes of session ${sessionId}`),
          Effect.mapError(notServed(sessionId))
        ),

    unpublish: (sessionId) =>
      Effect.asVoid(
        unpublishSession(kube, settings.sessionNamespace, settings.managedBy, { ingress: "other", gateway: "own" })(
          sessionId
        )
      )
  }
  return service
})

/** The gateway layer of `SessionRouter`. */
export const layer = Layer.scoped(SessionRouter, make)
