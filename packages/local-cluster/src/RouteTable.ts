/**
 * How LocalCluster's data plane decides where a request goes: host and path matching
 * for programmed Ingresses and accepted HTTPRoutes, with each API's precedence rules.
 * Pure functions of the objects and the request; the proxy does the I/O.
 */
import type {
  Gateway,
  HttpRoute,
  HttpRouteMatch,
  Ingress,
  IngressBackend,
  Namespace,
  Service
} from "session-routing/kubernetes"
import { attachRoute, coversHost, resolveBackendRef, resolveParentRef } from "./GatewayAttachment.js"

// ---------------------------------------------------------------------------
// Ingress classes

/** The annotation that named an Ingress's class before `spec.ingressClassName`; controllers still honour it. */
export const INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"

/** The annotation that marks an IngressClass as the cluster default. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"

/** Which Ingresses a controller (and its data plane) serves. */
export interface IngressClassSelector {
  readonly className: string
  /** Also claim Ingresses that name no class at all, as the default class's controller does. */
  readonly defaultClass?: boolean
}

/** The class an Ingress asks for: the spec field, else the legacy annotation. */
export const ingressClassOf = (ingress: Ingress): string | undefined =>
  ingress.spec?.ingressClassName ?? ingress.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION]

/** Whether a controller for `selector` claims this Ingress. */
export const claimsIngress = (ingress: Ingress, selector: IngressClassSelector): boolean => {
  const cls = ingressClassOf(ingress)
  return cls === undefined ? selector.defaultClass === true : cls === selector.className
}

/** An Ingress is programmed once a controller published an address for it: the only signal there is. */
export const isIngressProgrammed = (ingress: Ingress): boolean =>
  (ingress.status?.loadBalancer?.ingress ?? []).length > 0

/**
 * Ingress host wildcards differ from Gateway API ones: `*.foo.com` matches exactly
 * one label, so `bar.foo.com` but neither `baz.bar.foo.com` nor `foo.com`.
 */
export const ingressHostMatches = (pattern: string, host: string): boolean => {
  const p = pattern.toLowerCase()
  const h = host.toLowerCase()
  if (!p.startsWith("*.")) return p === h
  const dot = h.indexOf(".")
  return dot > 0 && h.slice(dot) === p.slice(1)
}

// ---------------------------------------------------------------------------
// Paths

const segments = (path: string): ReadonlyArray<string> => path.split("/").filter((s) => s !== "")

/**
 * Prefix matching as both APIs define it: element-wise on `/`-separated segments, a
 * trailing slash ignored. `/foo` matches `/foo`, `/foo/` and `/foo/bar`, not `/foobar`.
 */
export const pathPrefixMatches = (prefix: string, path: string): boolean => {
  const p = segments(prefix)
  const q = segments(path)
  return p.length <= q.length && p.every((s, i) => s === q[i])
}

/** Exact matching is plain string equality: `/foo` does not match `/foo/`. */
export const pathExactMatches = (value: string, path: string): boolean => value === path

const regexMatches = (pattern: string, path: string): boolean => {
  try {
    return new RegExp(`^(?:${pattern})$`).test(path)
  } catch {
    // An expression this engine cannot compile matches nothing rather than everything.
    return false
  }
}

type PathKind = "Exact" | "Prefix" | "RegularExpression"

interface PathRule {
  readonly kind: PathKind
  readonly value: string
}

const pathMatches = (rule: PathRule, path: string): boolean => {
  switch (rule.kind) {
    case "Exact":
      return pathExactMatches(rule.value, path)
    case "Prefix":
      return pathPrefixMatches(rule.value, path)
    case "RegularExpression":
      return regexMatches(rule.value, path)
  }
}

// ---------------------------------------------------------------------------
// Decisions

/** The object a routing decision came from. */
export interface RouteSource {
  readonly kind: "Ingress" | "HTTPRoute"
  readonly namespace: string
  readonly name: string
}

/** A Service port to forward to, or the error status the data plane answers instead. */
export type BackendTarget =
  | { readonly kind: "service"; readonly namespace: string; readonly service: string; readonly port: number }
  | { readonly kind: "error"; readonly status: 500 | 503; readonly message: string }

/** One weighted choice of a matched rule. */
export interface WeightedBackend {
  readonly weight: number
  readonly target: BackendTarget
}

/** Where a request goes: a matched rule and its backends, or nowhere (404). */
export type RouteDecision =
  | { readonly kind: "none" }
  | { readonly kind: "route"; readonly source: RouteSource; readonly backends: ReadonlyArray<WeightedBackend> }

/** Everything the decision reads: the objects in the store and whose status counts. */
export interface RoutingState {
  readonly ingresses: ReadonlyArray<Ingress>
  readonly httpRoutes: ReadonlyArray<HttpRoute>
  readonly gateways: ReadonlyArray<Gateway>
  readonly services: ReadonlyArray<Service>
  readonly namespaces: ReadonlyArray<Namespace>
  /** Only Ingresses of this class are served; unset serves every programmed Ingress. */
  readonly ingressClass?: IngressClassSelector
  /** Only HTTPRoute parent entries written by this controller count. */
  readonly controllerName: string
}

/** A request as the proxy sees it: the Host header without its port, and the path without the query. */
export interface RouteRequest {
  readonly host: string
  readonly path: string
}

interface Candidate {
  /** Exact hostname matches beat wildcards, longer hostnames beat shorter ones, catch-alls come last. */
  readonly hostExact: boolean
  readonly hostLength: number
  readonly pathRegex: boolean
  readonly pathLength: number
  readonly pathExact: boolean
  readonly created: string
  readonly key: string
  /** Ingresses before HTTPRoutes when everything else ties: the two share one local proxy. */
  readonly sourceOrder: number
  /** Rule order inside one object: the first matching rule wins. */
  readonly order: number
  readonly decision: Extract<RouteDecision, { kind: "route" }>
}

/**
 * How specific a path rule is, for precedence: a Prefix matches element-wise, so its
 * trailing slash adds nothing (`/api/` matches `/api`) and must not let it outrank
 * the Exact `/api` that matches the same request.
 */
const pathSpecificity = (rule: PathRule): number =>
  rule.kind === "Prefix" && rule.value.length > 1 ? rule.value.replace(/\/+$/, "").length : rule.value.length

const compareCandidates = (a: Candidate, b: Candidate): number =>
  Number(b.hostExact) - Number(a.hostExact) ||
  b.hostLength - a.hostLength ||
  Number(a.pathRegex) - Number(b.pathRegex) ||
  b.pathLength - a.pathLength ||
  Number(b.pathExact) - Number(a.pathExact) ||
  (a.created < b.created ? -1 : a.created > b.created ? 1 : 0) ||
  (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
  a.sourceOrder - b.sourceOrder ||
  a.order - b.order

const findService = (services: ReadonlyArray<Service>, namespace: string, name: string): Service | undefined =>
  services.find((s) => s.metadata?.namespace === namespace && s.metadata?.name === name)

/**
 * An Ingress backend as ingress-nginx treats it: a missing Service or port is not a
 * configuration error the user sees, just a backend with no endpoints (503).
 */
const ingressBackendTarget = (
  backend: IngressBackend,
  namespace: string,
  services: ReadonlyArray<Service>
): BackendTarget => {
  const ref = backend.service
  if (ref === undefined) {
    return { kind: "error", status: 503, message: "resource backends are not served by the local data plane" }
  }
  const service = findService(services, namespace, ref.name)
  if (service === undefined) {
    return { kind: "error", status: 503, message: `Service ${namespace}/${ref.name} not found` }
  }
  if (ref.port?.number !== undefined) {
    return { kind: "service", namespace, service: ref.name, port: ref.port.number }
  }
  const named = service.spec?.ports?.find((p) => p.name !== undefined && p.name === ref.port?.name)
  return named === undefined
    ? {
      kind: "error",
      status: 503,
      message: `Service ${namespace}/${ref.name} has no port named "${ref.port?.name ?? ""}"`
    }
    : { kind: "service", namespace, service: ref.name, port: named.port }
}

const ingressCandidates = (state: RoutingState, request: RouteRequest): ReadonlyArray<Candidate> =>
  state.ingresses
    .filter((ing) =>
      isIngressProgrammed(ing) && (state.ingressClass === undefined || claimsIngress(ing, state.ingressClass))
    )
    .flatMap((ing) => {
      const namespace = ing.metadata?.namespace ?? ""
      const name = ing.metadata?.name ?? ""
      const source: RouteSource = { kind: "Ingress", namespace, name }
      return (ing.spec?.rules ?? []).flatMap((rule, ruleIndex) => {
        if (rule.host !== undefined && !ingressHostMatches(rule.host, request.host)) return []
        return (rule.http?.paths ?? []).flatMap((p, pathIndex): ReadonlyArray<Candidate> => {
          // ImplementationSpecific is Prefix here, as ingress-nginx treats it without regex annotations.
          const rulePath: PathRule = { kind: p.pathType === "Exact" ? "Exact" : "Prefix", value: p.path ?? "/" }
          if (!pathMatches(rulePath, request.path)) return []
          return [{
            hostExact: rule.host !== undefined && !rule.host.startsWith("*."),
            hostLength: rule.host?.length ?? 0,
            pathRegex: false,
            pathLength: pathSpecificity(rulePath),
            pathExact: rulePath.kind === "Exact",
            created: ing.metadata?.creationTimestamp ?? "",
            key: `${namespace}/${name}`,
            sourceOrder: 0,
            order: ruleIndex * 1000 + pathIndex,
            decision: {
              kind: "route",
              source,
              backends: [{ weight: 1, target: ingressBackendTarget(p.backend, namespace, state.services) }]
            }
          }]
        })
      })
    })

/**
 * The hostname that lets `request.host` reach a route through one listener, or
 * undefined. Both must admit it; the more specific of the two ranks the match.
 */
const matchingHostname = (
  routeHostnames: ReadonlyArray<string>,
  listenerHostname: string | undefined,
  host: string
): { readonly exact: boolean; readonly length: number } | undefined => {
  if (listenerHostname !== undefined && !coversHost(listenerHostname, host)) return undefined
  if (routeHostnames.length === 0) {
    return listenerHostname === undefined
      ? { exact: false, length: 0 }
      : { exact: !listenerHostname.startsWith("*."), length: listenerHostname.length }
  }
  const matched = routeHostnames
    .filter((h) => coversHost(h, host))
    .map((h) => ({ exact: !h.startsWith("*."), length: h.length }))
    .sort((a, b) => Number(b.exact) - Number(a.exact) || b.length - a.length)
  return matched[0]
}

/**
 * A route is served through a parent only when our controller accepted it for the
 * route's current generation: the data plane then never disagrees with a verdict
 * that reads the same status.
 */
const acceptedParents = (route: HttpRoute, controllerName: string) =>
  (route.status?.parents ?? []).filter((entry) => {
    if (entry.controllerName !== controllerName) return false
    const accepted = entry.conditions?.find((c) => c.type === "Accepted")
    const generation = route.metadata?.generation
    return (
      accepted?.status === "True" &&
      (generation === undefined || (accepted.observedGeneration ?? 0) >= generation)
    )
  })

const matchPathRule = (match: HttpRouteMatch): PathRule => {
  const type = match.path?.type ?? "PathPrefix"
  return {
    kind: type === "Exact" ? "Exact" : type === "RegularExpression" ? "RegularExpression" : "Prefix",
    value: match.path?.value ?? "/"
  }
}

const httpRouteCandidates = (state: RoutingState, request: RouteRequest): ReadonlyArray<Candidate> =>
  state.httpRoutes.flatMap((route) => {
    const namespace = route.metadata?.namespace ?? ""
    const name = route.metadata?.name ?? ""
    const hostnames = route.spec?.hostnames ?? []
    // The best hostname match over every listener the route is attached to.
    const hostMatches = acceptedParents(route, state.controllerName).flatMap((entry) => {
      const ref = resolveParentRef(entry.parentRef, namespace)
      const gateway = state.gateways.find(
        (g) => g.metadata?.namespace === ref.namespace && g.metadata?.name === ref.name
      )
      if (gateway === undefined) return []
      const attachment = attachRoute(route, entry.parentRef, gateway, state.namespaces)
      if (!attachment.accepted) return []
      return attachment.listeners.flatMap((l) => {
        const m = matchingHostname(hostnames, l.hostname, request.host)
        return m === undefined ? [] : [m]
      })
    }).sort((a, b) => Number(b.exact) - Number(a.exact) || b.length - a.length)
    const host = hostMatches[0]
    if (host === undefined) return []
    const source: RouteSource = { kind: "HTTPRoute", namespace, name }
    return (route.spec?.rules ?? []).flatMap((rule, ruleIndex) => {
      const matches: ReadonlyArray<HttpRouteMatch> = rule.matches !== undefined && rule.matches.length > 0
        ? rule.matches
        : [{ path: { type: "PathPrefix", value: "/" } }]
      const backends: ReadonlyArray<WeightedBackend> = (rule.backendRefs ?? []).map((ref) => {
        const resolution = resolveBackendRef(ref, namespace, state.services)
        return {
          weight: ref.weight ?? 1,
          target: resolution.resolved
            ? { kind: "service", namespace: resolution.namespace, service: resolution.name, port: resolution.port }
            // An invalid backendRef answers 500 for its share of the traffic, as the API requires.
            : { kind: "error", status: 500, message: `${resolution.reason}: ${resolution.message}` }
        }
      })
      return matches.flatMap((match, matchIndex): ReadonlyArray<Candidate> => {
        const rulePath = matchPathRule(match)
        if (!pathMatches(rulePath, request.path)) return []
        return [{
          hostExact: host.exact,
          hostLength: host.length,
          pathRegex: rulePath.kind === "RegularExpression",
          pathLength: pathSpecificity(rulePath),
          pathExact: rulePath.kind === "Exact",
          created: route.metadata?.creationTimestamp ?? "",
          key: `${namespace}/${name}`,
          sourceOrder: 1,
          order: ruleIndex * 1000 + matchIndex,
          decision: { kind: "route", source, backends }
        }]
      })
    })
  })

/**
 * Where a request goes: the most specific hostname first, then the longest path
 * (Exact over Prefix on a tie), then the oldest object, then namespace/name, then
 * rule order, which is the precedence both Ingress and Gateway API specify.
 */
export const decideRoute = (state: RoutingState, request: RouteRequest): RouteDecision => {
  const candidates = [...ingressCandidates(state, request), ...httpRouteCandidates(state, request)].sort(
    compareCandidates
  )
  return candidates[0]?.decision ?? { kind: "none" }
}

/**
 * Picks one backend by weight, `draw` uniform in [0, 1). A rule with no backend of
 * positive weight forwards nothing, so the request fails with 500.
 */
export const pickBackend = (backends: ReadonlyArray<WeightedBackend>, draw: number): BackendTarget => {
  const total = backends.reduce((sum, b) => sum + Math.max(0, b.weight), 0)
  if (total <= 0) return { kind: "error", status: 500, message: "the matched rule has no backend to forward to" }
  let point = draw * total
  for (const b of backends) {
    const w = Math.max(0, b.weight)
    if (point < w) return b.target
    point -= w
  }
  return backends.filter((b) => b.weight > 0).at(-1)!.target
}

/** The Host header's host part, lower-cased: `a.example.com:8080` → `a.example.com`, `[::1]:80` → `::1`. */
export const hostOfHeader = (header: string | undefined): string => {
  const h = (header ?? "").trim().toLowerCase()
  if (h.startsWith("[")) {
    const end = h.indexOf("]")
    return end > 0 ? h.slice(1, end) : h
  }
  const colon = h.lastIndexOf(":")
  return colon >= 0 ? h.slice(0, colon) : h
}
