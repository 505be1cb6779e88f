/**
 * What a session has in the cluster, whichever mode published it: its Service, Ingress
 * and HTTPRoutes, found by the labels every session object carries. `status` and
 * `unpublish` start from it, so neither needs to be told the mode, the Gateway or the
 * base domain the session was published with: the objects say.
 */
import { Clock, Effect } from "effect"
import { GATEWAY_API_GROUP, managedSessionSelector } from "../domain/Manifests.js"
import type { HttpRoute, Ingress, KubeObject, Service } from "../domain/Objects.js"
import { HttpRouteResource, IngressResource, ServiceResource } from "../domain/Resources.js"
import type { PublishedRoute, RoutingMode } from "../domain/Routes.js"
import { KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"

/**
 * A session's objects in its namespace.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionFootprint {
  readonly services: ReadonlyArray<Service>
  readonly ingresses: ReadonlyArray<Ingress>
  readonly httpRoutes: ReadonlyArray<HttpRoute>
}

/**
 * The session's objects, listed by its labels; a cluster that does not serve the Gateway
 * API simply has no HTTPRoutes.
 *
 * @since 0.1.0
 * @category programs
 */
export const sessionFootprint = (
  sessionId: string
): Effect.Effect<SessionFootprint, KubeError, KubeClient | RouterConfig> =>
  Effect.gen(function*() {
    const kube = yield* KubeClient
    const config = yield* RouterConfig
    const labelSelector = managedSessionSelector(config.managedBy, sessionId)
    const list = <A extends KubeObject>(resource: Parameters<typeof kube.list<A>>[0]) =>
      Effect.map(kube.list(resource, config.sessionNamespace, { labelSelector }), (found) => found.items)
    const [services, ingresses, httpRoutes] = yield* Effect.all([
      list(ServiceResource),
      list(IngressResource),
      list(HttpRouteResource).pipe(Effect.catchTag("NotServed", () => Effect.succeed([])))
    ], { concurrency: "unbounded" })
    return { services, ingresses, httpRoutes }
  })

/** Whether the session has no object at all. */
export const isEmptyFootprint = (footprint: SessionFootprint): boolean =>
  footprint.services.length + footprint.ingresses.length + footprint.httpRoutes.length === 0

/**
 * The mode the objects were published in: gateway when the session has HTTPRoutes,
 * else ingress (an Ingress, or a Service alone: a session with no tcp port).
 */
export const modeOf = (footprint: SessionFootprint): Exclude<RoutingMode, "none"> =>
  footprint.httpRoutes.length > 0 ? "gateway" : "ingress"

/** The Gateway the session's HTTPRoutes attach to, from the first one's parentRef. */
export const gatewayOf = (
  footprint: SessionFootprint
): { readonly name: string; readonly namespace: string; readonly sectionName?: string } | undefined => {
  const route = footprint.httpRoutes[0]
  const parent = route?.spec?.parentRefs?.find((ref) =>
    (ref.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP && (ref.kind ?? "Gateway") === "Gateway"
  )
  if (route === undefined || parent === undefined) return undefined
  return {
    name: parent.name,
    namespace: parent.namespace ?? route.metadata?.namespace ?? "",
    ...(parent.sectionName !== undefined ? { sectionName: parent.sectionName } : {})
  }
}

/** The hosts the objects route, each with when its object was created (epoch ms), for an age. */
export const hostsOf = (footprint: SessionFootprint): ReadonlyArray<PublishedRoute & { readonly since?: number }> => {
  const created = (object: KubeObject) => {
    const at = Date.parse(object.metadata?.creationTimestamp ?? "")
    return Number.isNaN(at) ? {} : { since: at }
  }
  const fromIngresses = footprint.ingresses.flatMap((ingress) =>
    (ingress.spec?.rules ?? []).flatMap((rule) => {
      const port = rule.http?.paths[0]?.backend.service?.port?.number
      return rule.host !== undefined && port !== undefined ? [{ host: rule.host, port, ...created(ingress) }] : []
    })
  )
  const fromRoutes = footprint.httpRoutes.flatMap((route) => {
    const host = route.spec?.hostnames?.[0]
    const port = route.spec?.rules?.[0]?.backendRefs?.[0]?.port
    return host !== undefined && port !== undefined ? [{ host, port, ...created(route) }] : []
  })
  return [...fromIngresses, ...fromRoutes]
}

/** The base domain the hosts were published under: a host `<port>-<session>.<base domain>` without its first label. */
export const baseDomainOf = (footprint: SessionFootprint): string | undefined => {
  const host = hostsOf(footprint)[0]?.host
  const dot = host?.indexOf(".") ?? -1
  return host === undefined || dot < 0 ? undefined : host.slice(dot + 1)
}

/** Milliseconds since `since`, on Effect's clock. */
export const ageOf = (since: number | undefined): Effect.Effect<number | undefined> =>
  since === undefined ? Effect.succeed(undefined) : Effect.map(Clock.currentTimeMillis, (now) => now - since)
