/**
 * Gateway API status, as a conformant implementation writes it: conditions stamped
 * as `meta.SetStatusCondition` does, an HTTPRoute's `status.parents` entries (merged
 * with other controllers'), and the Gateway's own status. Pure functions of the
 * objects, over the attachment rules of `GatewayAttachment`.
 */
import { DateTime } from "effect"
import {
  type Condition,
  type Gateway,
  type HttpRoute,
  type ListenerStatus,
  type Namespace,
  type ParentReference,
  type RouteParentStatus,
  type Service
} from "session-routing/kubernetes"
import {
  attachRoute,
  carriesHttpRoutes,
  firstBackendProblem,
  HTTP_ROUTE_KIND,
  isGatewayRef,
  resolveParentRef,
  sameParentRef,
  statusParentRef
} from "./GatewayAttachment.js"

// ---------------------------------------------------------------------------
// Conditions

/** A condition before its transition time is decided. */
export type ConditionInput = Omit<Condition, "lastTransitionTime">

/**
 * Stamps a condition the way `meta.SetStatusCondition` does: the transition time
 * moves only when `status` changes, so rewriting the same verdict keeps its age.
 */
export const stampCondition = (
  input: ConditionInput,
  previous: ReadonlyArray<Condition> | undefined,
  now: string
): Condition => {
  const old = previous?.find((c) => c.type === input.type)
  return {
    ...input,
    lastTransitionTime: old !== undefined && old.status === input.status ? old.lastTransitionTime : now
  }
}

/** Kubernetes `metav1.Time`: RFC 3339 with whole seconds. */
export const kubeTime = (epochMillis: number): string => {
  const seconds = Math.floor(epochMillis / 1000) * 1000
  return DateTime.formatIso(DateTime.unsafeMake(seconds)).replace(/\.\d{3}Z$/, "Z")
}

// ---------------------------------------------------------------------------
// Route status

/** What the controller knows of the cluster when it decides a status. */
export interface ClusterView {
  readonly gateways: ReadonlyArray<Gateway>
  readonly services: ReadonlyArray<Service>
  readonly namespaces: ReadonlyArray<Namespace>
  readonly routes: ReadonlyArray<HttpRoute>
}

/** Who the controller is. */
export interface GatewayControllerIdentity {
  readonly gatewayClassName: string
  readonly controllerName: string
}

const findGateway = (view: Pick<ClusterView, "gateways">, namespace: string, name: string): Gateway | undefined =>
  view.gateways.find((g) => g.metadata?.namespace === namespace && g.metadata?.name === name)

/** The Gateway a parentRef names, when it exists and belongs to this controller's class. */
export const ownedGatewayFor = (
  ref: ParentReference,
  routeNamespace: string,
  view: Pick<ClusterView, "gateways">,
  identity: Pick<GatewayControllerIdentity, "gatewayClassName">
): Gateway | undefined => {
  if (!isGatewayRef(ref)) return undefined
  const resolved = resolveParentRef(ref, routeNamespace)
  const gateway = findGateway(view, resolved.namespace, resolved.name)
  return gateway?.spec?.gatewayClassName === identity.gatewayClassName ? gateway : undefined
}

/**
 * This controller's `status.parents` entries for a route: one per distinct parentRef
 * that names an existing Gateway of its class. A parentRef to a missing Gateway, or
 * to one of another class, gets no entry: the API says parent references an
 * implementation cannot resolve are not added, and only the owner writes status.
 */
export const routeParentEntries = (
  route: HttpRoute,
  view: ClusterView,
  identity: GatewayControllerIdentity,
  now: string
): ReadonlyArray<RouteParentStatus> => {
  const routeNamespace = route.metadata?.namespace ?? ""
  const generation = route.metadata?.generation
  const existing = route.status?.parents ?? []
  const refs = (route.spec?.parentRefs ?? []).filter(
    (ref, i, all) => all.findIndex((other) => sameParentRef(other, ref, routeNamespace)) === i
  )
  const problem = firstBackendProblem(route, view.services)
  const resolvedRefs: ConditionInput = problem === undefined
    ? { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "All references resolved" }
    : { type: "ResolvedRefs", status: "False", reason: problem.reason, message: problem.message }
  const withGeneration = (c: ConditionInput): ConditionInput =>
    generation === undefined ? c : { ...c, observedGeneration: generation }

  return refs.flatMap((ref) => {
    const gateway = ownedGatewayFor(ref, routeNamespace, view, identity)
    if (gateway === undefined) return []
    const attachment = attachRoute(route, ref, gateway, view.namespaces)
    const accepted: ConditionInput = attachment.accepted
      ? { type: "Accepted", status: "True", reason: "Accepted", message: "Route is accepted" }
      : { type: "Accepted", status: "False", reason: attachment.reason, message: attachment.message }
    const previous = existing.find(
      (e) => e.controllerName === identity.controllerName && sameParentRef(e.parentRef, ref, routeNamespace)
    )?.conditions
    return [{
      parentRef: statusParentRef(ref),
      controllerName: identity.controllerName,
      conditions: [accepted, resolvedRefs].map((c) => stampCondition(withGeneration(c), previous, now))
    }]
  })
}

/**
 * The route's full `status.parents` after this controller's turn: other controllers'
 * entries stay where they were, ours are replaced in place, dropped when their
 * parentRef is gone, and new ones appended. Stable order keeps rewrites no-ops.
 */
export const mergeRouteParents = (
  existing: ReadonlyArray<RouteParentStatus>,
  ours: ReadonlyArray<RouteParentStatus>,
  controllerName: string,
  routeNamespace: string
): ReadonlyArray<RouteParentStatus> => {
  const used = new Set<number>()
  const kept = existing.flatMap((entry) => {
    if (entry.controllerName !== controllerName) return [entry]
    const index = ours.findIndex((o, i) => !used.has(i) && sameParentRef(o.parentRef, entry.parentRef, routeNamespace))
    if (index < 0) return []
    used.add(index)
    return [ours[index]!]
  })
  return [...kept, ...ours.filter((_, i) => !used.has(i))]
}

/** The route's `status.parents` as this controller would leave it. */
export const routeParents = (
  route: HttpRoute,
  view: ClusterView,
  identity: GatewayControllerIdentity,
  now: string
): ReadonlyArray<RouteParentStatus> =>
  mergeRouteParents(
    route.status?.parents ?? [],
    routeParentEntries(route, view, identity, now),
    identity.controllerName,
    route.metadata?.namespace ?? ""
  )

// ---------------------------------------------------------------------------
// Gateway status

/** A Gateway status address (`IPAddress` or `Hostname`). */
export interface GatewayAddress {
  readonly type: "IPAddress" | "Hostname"
  readonly value: string
}

/** How many routes each listener of the Gateway has attached (accepted), by listener name. */
export const attachedRoutesByListener = (gateway: Gateway, view: ClusterView): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>((gateway.spec?.listeners ?? []).map((l) => [l.name, 0]))
  const gwNamespace = gateway.metadata?.namespace
  const gwName = gateway.metadata?.name
  for (const route of view.routes) {
    const routeNamespace = route.metadata?.namespace ?? ""
    const listeners = new Set<string>()
    for (const ref of route.spec?.parentRefs ?? []) {
      if (!isGatewayRef(ref)) continue
      const resolved = resolveParentRef(ref, routeNamespace)
      if (resolved.namespace !== gwNamespace || resolved.name !== gwName) continue
      const attachment = attachRoute(route, ref, gateway, view.namespaces)
      if (attachment.accepted) attachment.listeners.forEach((l) => listeners.add(l.name))
    }
    // A route counts once per listener, however many of its parentRefs land there.
    listeners.forEach((name) => counts.set(name, (counts.get(name) ?? 0) + 1))
  }
  return counts
}

/**
 * The Gateway status a conformant controller writes: `Accepted` and `Programmed` at
 * the current generation, the published addresses, and per listener its attached
 * route count, supported kinds and conditions. A listener whose protocol the local
 * data plane does not speak is refused with `UnsupportedProtocol`.
 */
export const gatewayStatus = (
  gateway: Gateway,
  view: ClusterView,
  addresses: ReadonlyArray<GatewayAddress>,
  now: string
): NonNullable<Gateway["status"]> => {
  const generation = gateway.metadata?.generation
  const gen = (
    c: ConditionInput
  ): ConditionInput => (generation === undefined ? c : { ...c, observedGeneration: generation })
  const listeners = gateway.spec?.listeners ?? []
  const counts = attachedRoutesByListener(gateway, view)
  const previousListeners = gateway.status?.listeners ?? []

  const listenerStatuses: ReadonlyArray<ListenerStatus> = listeners.map((listener) => {
    const previous = previousListeners.find((l) => l.name === listener.name)?.conditions
    const supported = carriesHttpRoutes(listener)
    const conditions: ReadonlyArray<ConditionInput> = supported
      ? [
        { type: "Accepted", status: "True", reason: "Accepted", message: "Listener is accepted" },
        { type: "Programmed", status: "True", reason: "Programmed", message: "Listener is programmed" },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "All references resolved" },
        { type: "Conflicted", status: "False", reason: "NoConflicts", message: "No conflicts" }
      ]
      : [
        {
          type: "Accepted",
          status: "False",
          reason: "UnsupportedProtocol",
          message: `protocol ${listener.protocol} is not supported; use HTTP or HTTPS`
        },
        { type: "Programmed", status: "False", reason: "Invalid", message: "Listener is not accepted" },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "All references resolved" },
        { type: "Conflicted", status: "False", reason: "NoConflicts", message: "No conflicts" }
      ]
    return {
      name: listener.name,
      attachedRoutes: counts.get(listener.name) ?? 0,
      supportedKinds: supported ? [HTTP_ROUTE_KIND] : [],
      conditions: conditions.map((c) => stampCondition(gen(c), previous, now))
    }
  })

  const valid = listeners.filter(carriesHttpRoutes).length
  const allValid = valid === listeners.length
  const gatewayConditions: ReadonlyArray<ConditionInput> = [
    valid > 0
      ? allValid
        ? { type: "Accepted", status: "True", reason: "Accepted", message: "Gateway is accepted" }
        : { type: "Accepted", status: "True", reason: "ListenersNotValid", message: "Some listeners are not valid" }
      : { type: "Accepted", status: "False", reason: "ListenersNotValid", message: "No listener is valid" },
    valid > 0 && addresses.length > 0
      ? { type: "Programmed", status: "True", reason: "Programmed", message: "Gateway is programmed" }
      : valid > 0
      ? { type: "Programmed", status: "False", reason: "AddressNotAssigned", message: "No address is configured" }
      : { type: "Programmed", status: "False", reason: "Invalid", message: "No listener is valid" }
  ]

  return {
    addresses: addresses.map((a) => ({ type: a.type, value: a.value })),
    conditions: gatewayConditions.map((c) => stampCondition(gen(c), gateway.status?.conditions, now)),
    listeners: listenerStatuses
  }
}

// ---------------------------------------------------------------------------
// Comparison

const stripTimes = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripTimes)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => k !== "lastTransitionTime" && v !== undefined)
        .map(([k, v]) => [k, stripTimes(v)] as const)
    )
  }
  return value
}

/** Structural JSON equality: key order and `undefined` members do not count. */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
    return ka.length === kb.length &&
      ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  }
  return false
}

/**
 * Whether two statuses say the same thing, transition times aside. A controller that
 * writes only when this is false cannot feed its own watch in a loop.
 */
export const sameStatusIgnoringTimes = (a: unknown, b: unknown): boolean => jsonEqual(stripTimes(a), stripTimes(b))
