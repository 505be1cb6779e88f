/**
 * Gateway API attachment rules, as a conformant implementation applies them: which
 * listeners of a Gateway admit an HTTPRoute and whether its backends resolve (the
 * status that follows is `GatewayStatus`). Pure functions of the objects, shared by
 * LocalCluster's gateway controller and its data plane.
 */
import type {
  Gateway,
  GatewayListener,
  HttpBackendRef,
  HttpRoute,
  Namespace,
  ParentReference,
  Service
} from "session-routing/kubernetes"
import { admitsRouteNamespace, carriesHttpRoutes, coversHost, hostnamesOverlap } from "./internal/listenerRules.js"
import { GatewayResource, HttpRouteResource } from "./ServedResources.js"

/** `gateway.networking.k8s.io`: the default group of a parentRef. */
export const GATEWAY_GROUP = GatewayResource.group

/** The route kind every HTTP or HTTPS listener supports. */
export const HTTP_ROUTE_KIND = { group: GATEWAY_GROUP, kind: HttpRouteResource.kind } as const

// ---------------------------------------------------------------------------
// Hostnames

/** The hostname and listener rules, this cluster's own (internal/listenerRules.ts). */
export { carriesHttpRoutes, coversHost, hostnamesOverlap }

/** A listener without a hostname admits every route hostname; a route without hostnames inherits the listener's. */
const listenerAdmitsHostnames = (listener: GatewayListener, hostnames: ReadonlyArray<string>): boolean =>
  listener.hostname === undefined || hostnames.length === 0 ||
  hostnames.some((h) => hostnamesOverlap(listener.hostname!, h))

// ---------------------------------------------------------------------------
// Parent references

/** A parentRef with the API defaults applied: group, kind and the route's namespace. */
export interface ResolvedParentRef {
  readonly group: string
  readonly kind: string
  readonly namespace: string
  readonly name: string
  readonly sectionName?: string
  readonly port?: number
}

/** Applies the parentRef defaults; `namespace` defaults to the route's own. */
export const resolveParentRef = (ref: ParentReference, routeNamespace: string): ResolvedParentRef => ({
  group: ref.group ?? GATEWAY_GROUP,
  kind: ref.kind ?? "Gateway",
  namespace: ref.namespace ?? routeNamespace,
  name: ref.name,
  ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
  ...(ref.port !== undefined ? { port: ref.port } : {})
})

/** Whether two parentRefs name the same parent once defaults are applied. */
export const sameParentRef = (a: ParentReference, b: ParentReference, routeNamespace: string): boolean => {
  const x = resolveParentRef(a, routeNamespace)
  const y = resolveParentRef(b, routeNamespace)
  return (
    x.group === y.group &&
    x.kind === y.kind &&
    x.namespace === y.namespace &&
    x.name === y.name &&
    x.sectionName === y.sectionName &&
    x.port === y.port
  )
}

/** Whether a parentRef points at a Gateway (rather than some other parent kind). */
export const isGatewayRef = (ref: ParentReference): boolean =>
  (ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && (ref.kind ?? "Gateway") === "Gateway"

/**
 * The parentRef as a status entry records it: as written in the spec, with the
 * group and kind the API server defaults on create, so it compares equal to the spec.
 */
export const statusParentRef = (ref: ParentReference): ParentReference => ({
  group: ref.group ?? GATEWAY_GROUP,
  kind: ref.kind ?? "Gateway",
  ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}),
  name: ref.name,
  ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
  ...(ref.port !== undefined ? { port: ref.port } : {})
})

// ---------------------------------------------------------------------------
// Listener admission

/** The labels a namespace carries as stored (the API server's `kubernetes.io/metadata.name` among them). */
const namespaceLabels = (
  namespaces: ReadonlyArray<Namespace>,
  name: string
): Readonly<Record<string, string>> | undefined => namespaces.find((n) => n.metadata?.name === name)?.metadata?.labels

/** Whether `allowedRoutes.namespaces` (default `from: Same`) admits routes from `routeNamespace`. */
export const listenerAdmitsNamespace = (
  listener: GatewayListener,
  gatewayNamespace: string,
  routeNamespace: string,
  namespaces: ReadonlyArray<Namespace>
): boolean =>
  admitsRouteNamespace(listener, gatewayNamespace, routeNamespace, namespaceLabels(namespaces, routeNamespace))

/** Why a route was not accepted by a parent, with the standard reasons. */
export type AttachmentRejection = "NoMatchingParent" | "NotAllowedByListeners" | "NoMatchingListenerHostname"

/** Whether one parentRef attaches a route to a Gateway, and on which listeners. */
export type Attachment =
  | { readonly accepted: true; readonly listeners: ReadonlyArray<GatewayListener> }
  | { readonly accepted: false; readonly reason: AttachmentRejection; readonly message: string }

const gatewayKey = (gateway: Gateway): string => `${gateway.metadata?.namespace ?? ""}/${gateway.metadata?.name ?? ""}`

/**
 * Attaches `route` to `gateway` through `ref`. The checks run from the most to the
 * least structural, so the reason names the first thing a person has to fix: no
 * listener by that section/port, then namespaces and kinds, then hostnames.
 */
export const attachRoute = (
  route: HttpRoute,
  ref: ParentReference,
  gateway: Gateway,
  namespaces: ReadonlyArray<Namespace>
): Attachment => {
  const routeNamespace = route.metadata?.namespace ?? ""
  const gatewayNamespace = gateway.metadata?.namespace ?? ""
  const listeners = gateway.spec?.listeners ?? []
  const named = listeners.filter(
    (l) =>
      (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port)
  )
  if (named.length === 0) {
    const wanted = [
      ref.sectionName !== undefined ? `sectionName "${ref.sectionName}"` : undefined,
      ref.port !== undefined ? `port ${ref.port}` : undefined
    ].filter((s) => s !== undefined)
    return {
      accepted: false,
      reason: "NoMatchingParent",
      message: `Gateway ${gatewayKey(gateway)} has no listener matching ${wanted.join(" and ") || "this parentRef"}`
    }
  }
  const admitting = named.filter(
    (l) => carriesHttpRoutes(l) && listenerAdmitsNamespace(l, gatewayNamespace, routeNamespace, namespaces)
  )
  if (admitting.length === 0) {
    const froms = [...new Set(named.map((l) => l.allowedRoutes?.namespaces?.from ?? "Same"))].join(", ")
    return {
      accepted: false,
      reason: "NotAllowedByListeners",
      message: `no listener of Gateway ${
        gatewayKey(gateway)
      } admits HTTPRoutes from namespace "${routeNamespace}" (allowedRoutes.namespaces.from: ${froms})`
    }
  }
  const hostnames = route.spec?.hostnames ?? []
  const matching = admitting.filter((l) => listenerAdmitsHostnames(l, hostnames))
  if (matching.length === 0) {
    const listenerHosts = admitting.map((l) => l.hostname ?? "*").join(", ")
    return {
      accepted: false,
      reason: "NoMatchingListenerHostname",
      message: `no hostname of the route (${hostnames.join(", ")}) matches a listener hostname of Gateway ${
        gatewayKey(gateway)
      } (${listenerHosts})`
    }
  }
  return { accepted: true, listeners: matching }
}

// ---------------------------------------------------------------------------
// Backend references

/** Why a route's backends do not resolve, with the standard reasons. */
export type BackendProblem = "InvalidKind" | "RefNotPermitted" | "BackendNotFound"

/** The outcome of resolving one backendRef against the Services that exist. */
export type BackendResolution =
  | { readonly resolved: true; readonly namespace: string; readonly name: string; readonly port: number }
  | { readonly resolved: false; readonly reason: BackendProblem; readonly message: string }

/**
 * Resolves one backendRef of a route in `routeNamespace`. Cross-namespace refs are
 * refused: LocalCluster serves no ReferenceGrant, so none could permit them.
 */
export const resolveBackendRef = (
  ref: HttpBackendRef,
  routeNamespace: string,
  services: ReadonlyArray<Service>
): BackendResolution => {
  const group = ref.group ?? ""
  const kind = ref.kind ?? "Service"
  if (group !== "" || kind !== "Service") {
    return {
      resolved: false,
      reason: "InvalidKind",
      message: `backendRef ${ref.name} has unsupported kind ${
        group === "" ? kind : `${kind}.${group}`
      }; only core Services are supported`
    }
  }
  const namespace = ref.namespace ?? routeNamespace
  if (namespace !== routeNamespace) {
    return {
      resolved: false,
      reason: "RefNotPermitted",
      message: `backendRef to Service ${namespace}/${ref.name} crosses namespaces and no ReferenceGrant permits it`
    }
  }
  const service = services.find((s) => s.metadata?.namespace === namespace && s.metadata?.name === ref.name)
  if (service === undefined) {
    return { resolved: false, reason: "BackendNotFound", message: `Service ${namespace}/${ref.name} not found` }
  }
  if (ref.port === undefined) {
    return {
      resolved: false,
      reason: "BackendNotFound",
      message: `backendRef to Service ${namespace}/${ref.name} has no port`
    }
  }
  const ports = service.spec?.ports
  // A Service that lists ports and not this one has nowhere to send the traffic.
  if (ports !== undefined && !ports.some((p) => p.port === ref.port)) {
    return {
      resolved: false,
      reason: "BackendNotFound",
      message: `Service ${namespace}/${ref.name} has no port ${ref.port}`
    }
  }
  return { resolved: true, namespace, name: ref.name, port: ref.port }
}

/** Every backendRef of the route, rule by rule, in order. */
export const backendRefsOf = (route: HttpRoute): ReadonlyArray<HttpBackendRef> =>
  (route.spec?.rules ?? []).flatMap((rule) => rule.backendRefs ?? [])

/** The first unresolved backendRef of the route, or undefined when all resolve. */
export const firstBackendProblem = (
  route: HttpRoute,
  services: ReadonlyArray<Service>
): Extract<BackendResolution, { resolved: false }> | undefined => {
  const routeNamespace = route.metadata?.namespace ?? ""
  for (const ref of backendRefsOf(route)) {
    const resolution = resolveBackendRef(ref, routeNamespace, services)
    if (!resolution.resolved) return resolution
  }
  return undefined
}
