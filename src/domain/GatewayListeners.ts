/**
 * Which listeners of a Gateway can carry an HTTPRoute: hostname matching and
 * `allowedRoutes.namespaces`, as the Gateway API defines them. Pure rules the diagnosis
 * of an unclaimed route applies (LocalCluster's gateway controller has its own).
 */
import type { GatewayListener } from "./Objects.js"

/** The label the API server sets on every namespace, so `Selector` can pick one by name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

const lower = (s: string): string => s.toLowerCase()

/**
 * Whether a Gateway API hostname (a listener's or a route's) matches a concrete host.
 * A leading `*.` stands for one or more labels: `*.example.com` matches
 * `a.example.com` and `a.b.example.com`, never `example.com` itself.
 */
export const hostnameMatches = (pattern: string, host: string): boolean => {
  const p = lower(pattern)
  const h = lower(host)
  if (!p.startsWith("*.")) return p === h
  const suffix = p.slice(1)
  return h.endsWith(suffix) && h.length > suffix.length
}

/**
 * Whether two hostnames can both match some host: a listener hostname and a route
 * hostname intersect when either covers the other.
 */
export const hostnamesIntersect = (a: string, b: string): boolean => {
  const x = lower(a)
  const y = lower(b)
  const xWild = x.startsWith("*.")
  const yWild = y.startsWith("*.")
  if (xWild && yWild) return x.slice(1).endsWith(y.slice(1)) || y.slice(1).endsWith(x.slice(1))
  if (xWild) return hostnameMatches(x, y)
  if (yWild) return hostnameMatches(y, x)
  return x === y
}

/**
 * Only HTTP and HTTPS listeners carry HTTPRoutes, and of those only the ones whose
 * `allowedRoutes.kinds`, when given, name HTTPRoute (of the Gateway API's group).
 */
export const listenerSupportsHttpRoute = (listener: GatewayListener): boolean => {
  if (listener.protocol !== "HTTP" && listener.protocol !== "HTTPS") return false
  const kinds = listener.allowedRoutes?.kinds ?? []
  return kinds.length === 0 ||
    kinds.some((k) =>
      k.kind === "HTTPRoute" && (k.group ?? "gateway.networking.k8s.io") === "gateway.networking.k8s.io"
    )
}

/** `allowedRoutes.namespaces.from` with its default, `Same`. */
export const allowedRoutesFrom = (listener: GatewayListener): "Same" | "All" | "Selector" =>
  listener.allowedRoutes?.namespaces?.from ?? "Same"

/** A namespace's labels as a selector sees them: with the one the API server always sets. */
export const namespaceLabelsOf = (
  name: string,
  labels: Readonly<Record<string, string>> | undefined
): Readonly<Record<string, string>> => ({ [NAMESPACE_NAME_LABEL]: name, ...(labels ?? {}) })

/**
 * Whether a listener's `allowedRoutes.namespaces` admits routes from `routeNamespace`,
 * whose labels (for `Selector`) are `routeNamespaceLabels` (see `namespaceLabelsOf`).
 */
export const listenerAdmitsNamespace = (
  listener: GatewayListener,
  gatewayNamespace: string,
  routeNamespace: string,
  routeNamespaceLabels: Readonly<Record<string, string>>
): boolean => {
  switch (allowedRoutesFrom(listener)) {
    case "All":
      return true
    case "Same":
      return routeNamespace === gatewayNamespace
    case "Selector": {
      const selector = listener.allowedRoutes?.namespaces?.selector
      const has = (key: string) => Object.prototype.hasOwnProperty.call(routeNamespaceLabels, key)
      return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => routeNamespaceLabels[key] === value) &&
        (selector?.matchExpressions ?? []).every((e) => {
          const value = routeNamespaceLabels[e.key]
          switch (e.operator) {
            case "In":
              return has(e.key) && (e.values ?? []).includes(value!)
            case "NotIn":
              return !has(e.key) || !(e.values ?? []).includes(value!)
            case "Exists":
              return has(e.key)
            case "DoesNotExist":
              return !has(e.key)
          }
        })
    }
  }
}
