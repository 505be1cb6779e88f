/**
 * The ingress routing layer: one Service and one Ingress per session, applied with
 * server-side apply. An Ingress says "programmed" only by publishing an address,
 * and has no way to say "refused": a refusal looks like silence until the deadline.
 */
import { Effect, Layer } from "effect"
import { buildSessionIngress, sessionObjectName } from "../../domain/Manifests.js"
import type { ManifestSettings, SessionSpec } from "../../domain/Manifests.js"
import type { HttpRoute } from "../../domain/Objects.js"
import { HttpRouteResource, IngressResource } from "../../domain/Resources.js"
import { routesFor } from "../../domain/Routes.js"
import { KubeClient } from "../../services/KubeClient.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { SessionRouter } from "../../services/SessionRouter.js"
import { runPublish } from "./PublishPlan.js"
import { manifestSettings, publishStep, sessionServicePlan } from "./RouterSupport.js"
import { makeSessionLookup, type SessionLookup } from "./SessionLookup.js"
import { plannedWrite, removeObject, removeOtherModeObjects } from "./SessionObjects.js"
import { unpublishSession } from "./Unpublish.js"

/**
 * The session's Service and, while it has a tcp port, its Ingress, in one publish;
 * with no tcp port left the Ingress goes, and what gateway mode left for it.
 */
const publishIngress = (
  kube: KubeClient.Service,
  settings: ManifestSettings,
  gatewayModeRoutes: SessionLookup<HttpRoute>,
  args: SessionSpec
) =>
  Effect.gen(function*() {
    const service = sessionServicePlan(kube, settings, args)
    const { ingress, hosts } = buildSessionIngress(settings, args)
    const name = sessionObjectName(args.sessionId)
    yield* runPublish({
      sessionId: args.sessionId,
      writes: [...service.writes, ...(hosts.length > 0 ? [plannedWrite(kube, IngressResource, ingress)] : [])],
      removals: [
        // Nothing HTTP-routable is left: a reload that drops the last tcp port must
        // not leave the previous Ingress serving a port nothing listens on. The
        // Service stays for the udp ports.
        ...(hosts.length === 0 ? [removeObject(kube, IngressResource, settings.sessionNamespace, name)] : []),
        removeOtherModeObjects(kube, HttpRouteResource, settings.sessionNamespace, gatewayModeRoutes(args.sessionId)),
        ...service.removals
      ]
    })
    return hosts.length === 0 ? [] : routesFor(settings.baseDomain, args.sessionId, args.ports)
  })

/** Builds the ingress router from the client and the configuration. */
export const make = Effect.gen(function*() {
  const kube = yield* KubeClient
  const config = yield* RouterConfig
  const settings = yield* manifestSettings(config, "ingress")
  const namespace = settings.sessionNamespace
  // What gateway mode left, looked up for the publishes under way in one list.
  const gatewayModeRoutes = yield* makeSessionLookup(kube, HttpRouteResource, namespace, settings.managedBy)

  const service: SessionRouter.Service = {
    layer: "ingress",

    publish: (args) => publishIngress(kube, settings, gatewayModeRoutes, args),

    routesOf: (sessionId) =>
      kube.get(IngressResource, namespace, sessionObjectName(sessionId)).pipe(
        Effect.map((ingress) =>
          (ingress.spec?.rules ?? []).flatMap((rule) => {
            const port = rule.http?.paths[0]?.backend.service?.port?.number
            return rule.host !== undefined && port !== undefined ? [{ host: rule.host, port }] : []
          })
        ),
        Effect.catchTag("NotFound", () => Effect.succeed([])),
        publishStep(sessionId, `read Ingress ${namespace}/${sessionObjectName(sessionId)}`)
      ),

    unpublish: (sessionId) =>
      Effect.asVoid(
        unpublishSession(kube, namespace, settings.managedBy, { ingress: "own", gateway: "other" })(sessionId)
      )
  }
  return service
})

/** The ingress layer of `SessionRouter`. */
export const layer = Layer.scoped(SessionRouter, make)
