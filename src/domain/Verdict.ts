/**
 * Verdict rules: what an Ingress's or an HTTPRoute's status says about whether
 * its host is programmed. Pure functions of the object, so every case of the rules
 * table in docs/route-status.md is tested directly.
 */
import { GATEWAY_API_GROUP } from "./Manifests.js"
import type { Condition, HttpRoute, Ingress, ObjectMeta, ParentReference, RouteParentStatus } from "./Objects.js"
import { RouteVerdict, UnprogrammedCode } from "./Routes.js"
import { printable } from "./Text.js"

/**
 * An object being deleted is never programmed, whatever its status still says:
 * finalizers may keep it for a while, and the controller is tearing it down.
 */
const beingDeleted = (kind: string, metadata: ObjectMeta | undefined): RouteVerdict | undefined =>
  metadata?.deletionTimestamp === undefined
    ? undefined
    : RouteVerdict.held(
      UnprogrammedCode.beingDeleted,
      `the ${kind} "${metadata.name ?? ""}" is being deleted (deletionTimestamp ${metadata.deletionTimestamp}); ` +
        "its status describes what is being torn down"
    )

/**
 * An Ingress has no rejection signal: a controller that refuses a rule never writes
 * status. So it is programmed (an address was published) or pending, and an
 * unclaimed Ingress is only caught by the deadline. A missing object is pending too.
 *
 * @since 0.1.0
 * @category rules
 */
export const ingressVerdict = (ingress: Ingress | undefined): RouteVerdict =>
  beingDeleted("Ingress", ingress?.metadata) ??
    ((ingress?.status?.loadBalancer?.ingress ?? []).length > 0 ? RouteVerdict.programmed : RouteVerdict.pending)

/** The parent a session HTTPRoute attaches to, as configured. */
export interface ParentTarget {
  readonly namespace: string
  readonly name: string
  readonly sectionName?: string
}

/**
 * Whether a status entry's parentRef is our Gateway, applying the API defaults
 * (group `gateway.networking.k8s.io`, kind `Gateway`, namespace of the route).
 */
export const isOurParent = (ref: ParentReference, target: ParentTarget, routeNamespace: string): boolean =>
  (ref.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP &&
  (ref.kind ?? "Gateway") === "Gateway" &&
  (ref.namespace ?? routeNamespace) === target.namespace &&
  ref.name === target.name &&
  ref.sectionName === target.sectionName

const condition = (entry: RouteParentStatus, type: string): Condition | undefined =>
  entry.conditions?.find((c) => c.type === type)

/** A verdict quoting a controller's condition: its words bounded and printable, whoever wrote them. */
const refusedBy = (c: Condition): RouteVerdict => RouteVerdict.rejected(printable(c.reason), printable(c.message))

/**
 * A condition written for an older spec says nothing about the current one: every
 * reload edits the route, and the previous verdict must not stand in for the next.
 */
const isCurrent = (c: Condition, generation: number | undefined): boolean =>
  generation === undefined || (c.observedGeneration ?? 0) >= generation

const entryVerdict = (entry: RouteParentStatus, generation: number | undefined): RouteVerdict => {
  const accepted = condition(entry, "Accepted")
  if (accepted === undefined || !isCurrent(accepted, generation)) return RouteVerdict.pending
  if (accepted.status === "False") return refusedBy(accepted)
  if (accepted.status !== "True") return RouteVerdict.pending
  const resolved = condition(entry, "ResolvedRefs")
  // Accepted with unresolved backends is not programmed: the data plane answers 500.
  if (resolved !== undefined && isCurrent(resolved, generation) && resolved.status === "False") {
    return refusedBy(resolved)
  }
  // Not in the standard for routes, but some controllers write it there: when they
  // do, it is their word on the data plane, and only a current True programs the host.
  const programmed = condition(entry, "Programmed")
  if (programmed === undefined) return RouteVerdict.programmed
  if (!isCurrent(programmed, generation)) return RouteVerdict.pending
  return programmed.status === "True"
    ? RouteVerdict.programmed
    : RouteVerdict.held(
      programmed.reason === "" ? "NotProgrammed" : printable(programmed.reason),
      printable(programmed.message)
    )
}

export interface HttpRouteVerdictOptions {
  readonly target: ParentTarget
  /**
   * The controller that owns the target Gateway (its GatewayClass's controllerName).
   * When known, other controllers' entries for the same parent are ignored.
   */
  readonly controllerName?: string
}

/**
 * The verdict for one HTTPRoute: only the entry for our parent (and, when known,
 * our Gateway's controller) counts; no entry, stale conditions, or a missing route
 * are pending, as is one whose current `Programmed` is not True (held, with its
 * reason) and one being deleted. Several matching entries (the controller unknown):
 * a programmed one decides, otherwise the first rejection, then the first hold.
 *
 * @since 0.1.0
 * @category rules
 */
export const httpRouteVerdict = (route: HttpRoute | undefined, options: HttpRouteVerdictOptions): RouteVerdict => {
  if (route === undefined) return RouteVerdict.pending
  const deleting = beingDeleted("HTTPRoute", route.metadata)
  if (deleting !== undefined) return deleting
  const namespace = route.metadata?.namespace ?? options.target.namespace
  const generation = route.metadata?.generation
  const entries = (route.status?.parents ?? []).filter(
    (entry) =>
      isOurParent(entry.parentRef, options.target, namespace) &&
      (options.controllerName === undefined || entry.controllerName === options.controllerName)
  )
  const verdicts = entries.map((entry) => entryVerdict(entry, generation))
  return (
    verdicts.find((v) => v.kind === "programmed") ??
      verdicts.find((v) => v.kind === "rejected") ??
      verdicts.find((v) => v.kind === "pending" && v.held !== undefined) ??
      RouteVerdict.pending
  )
}
