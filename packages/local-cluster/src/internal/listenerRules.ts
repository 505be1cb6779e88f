/**
 * The Gateway API's rules for which listener carries which HTTPRoute, as this
 * cluster's gateway controller applies them: hostnames, the route kinds a listener
 * allows, and `allowedRoutes.namespaces`. Written from the specification on their own,
 * not taken from the library, so that the library's diagnosis is checked against
 * something it did not write.
 */
import { type LabelSelector, matchesLabels, type Requirement } from "../LabelSelector.js"

/** A `metav1.LabelSelector` as the API stores it. */
interface SelectorFields {
  readonly matchLabels?: Readonly<Record<string, string>>
  readonly matchExpressions?: ReadonlyArray<
    { readonly key: string; readonly operator: string; readonly values?: ReadonlyArray<string> }
  >
}

/** The fields of a Gateway listener these rules read, as stored (the CRD's, not the library's subset). */
export interface ListenerFields {
  readonly hostname?: string
  readonly protocol: string
  readonly allowedRoutes?: {
    readonly namespaces?: { readonly from?: string; readonly selector?: SelectorFields }
    readonly kinds?: ReadonlyArray<{ readonly group?: string; readonly kind: string }>
  }
}

/** The group every route kind of the Gateway API belongs to. */
const GATEWAY_API_GROUP = "gateway.networking.k8s.io"

/** A hostname's labels, lower-cased (DNS names compare without case). */
const labelsOf = (hostname: string): ReadonlyArray<string> => hostname.toLowerCase().split(".")

/**
 * Whether `hostname` (a listener's or a route's, a leading `*` standing for one or more
 * labels) covers the concrete `host`: `*.example.com` covers `a.example.com` and
 * `a.b.example.com`, never `example.com`.
 */
export const coversHost = (hostname: string, host: string): boolean => {
  const pattern = labelsOf(hostname)
  const concrete = labelsOf(host)
  if (pattern[0] !== "*") return pattern.length === concrete.length && pattern.every((l, i) => l === concrete[i])
  const suffix = pattern.slice(1)
  if (concrete.length <= suffix.length) return false
  const tail = concrete.slice(concrete.length - suffix.length)
  return suffix.every((l, i) => l === tail[i])
}

/**
 * Whether some host is covered by both a listener's hostname and a route's: the
 * spec's intersection, where either may be a wildcard.
 */
export const hostnamesOverlap = (listener: string, route: string): boolean => {
  const a = labelsOf(listener)
  const b = labelsOf(route)
  const aWild = a[0] === "*"
  const bWild = b[0] === "*"
  if (!aWild && !bWild) return coversHost(listener, route)
  if (aWild && !bWild) return coversHost(listener, route)
  if (!aWild && bWild) return coversHost(route, listener)
  // Both wildcards: the longer suffix must end with the shorter.
  const [short, long] = a.length <= b.length ? [a.slice(1), b.slice(1)] : [b.slice(1), a.slice(1)]
  return short.every((l, i) => l === long[long.length - short.length + i])
}

/**
 * Whether the listener carries HTTPRoutes: an HTTP or HTTPS listener does unless its
 * `allowedRoutes.kinds` lists kinds without HTTPRoute.
 */
export const carriesHttpRoutes = (listener: ListenerFields): boolean => {
  if (listener.protocol !== "HTTP" && listener.protocol !== "HTTPS") return false
  const kinds = listener.allowedRoutes?.kinds
  if (kinds === undefined || kinds.length === 0) return true
  return kinds.some((k) => k.kind === "HTTPRoute" && (k.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP)
}

/** A `metav1.LabelSelector` as requirements: every matchLabels pair and matchExpression. */
const requirementsOf = (selector: SelectorFields | undefined): LabelSelector => ({
  requirements: [
    ...Object.entries(selector?.matchLabels ?? {}).map(([key, value]): Requirement => ({
      key,
      operator: "=",
      values: [value]
    })),
    ...(selector?.matchExpressions ?? []).map((e): Requirement => ({
      key: e.key,
      operator: e.operator === "In"
        ? "in"
        : e.operator === "NotIn"
        ? "notin"
        : e.operator === "Exists"
        ? "exists"
        : "!",
      values: e.values ?? []
    }))
  ]
})

/**
 * Whether the listener's `allowedRoutes.namespaces` (default `from: Same`) admits a route
 * from `routeNamespace`, whose stored labels (the API server's
 * `kubernetes.io/metadata.name` among them) are `routeNamespaceLabels`.
 */
export const admitsRouteNamespace = (
  listener: ListenerFields,
  gatewayNamespace: string,
  routeNamespace: string,
  routeNamespaceLabels: Readonly<Record<string, string>> | undefined
): boolean => {
  const from = listener.allowedRoutes?.namespaces?.from ?? "Same"
  if (from === "All") return true
  if (from === "Same") return routeNamespace === gatewayNamespace
  return matchesLabels(requirementsOf(listener.allowedRoutes?.namespaces?.selector), routeNamespaceLabels)
}
