/**
 * Hosts, endpoints and route states: what a session's ports are reachable at, and
 * the vocabulary of route health. The host scheme is `<port>-<sessionId>.<baseDomain>`
 * whichever routing layer carries it.
 */
import type { PortMapping, Protocol } from "./Session.js"

/**
 * The routing layers; `none` publishes nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type RoutingMode = "ingress" | "gateway" | "none"

/** DNS limit on a whole name. */
export const MAX_HOST_LENGTH = 253

/**
 * Where one session port is reachable. `host` is blank when nothing routes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Endpoint {
  readonly host: string
  readonly port: number
  readonly protocol: Protocol
  readonly url?: string
}

/**
 * A host a routing layer published, for one tcp port.
 *
 * @since 0.1.0
 * @category models
 */
export interface PublishedRoute {
  readonly host: string
  readonly port: number
}

/**
 * Where a host stands: pending until a controller programs it, or refuses it, or the deadline passes.
 *
 * @since 0.1.0
 * @category models
 */
export type RouteState = "pending" | "programmed" | "unprogrammed"

/**
 * What keeps a route pending when its object says so: a controller's current
 * `Programmed` condition that is not True (`ProgrammingInProgress`), or the object
 * being deleted. `reason` is a code, `message` the detail.
 *
 * @since 0.1.0
 * @category models
 */
export interface RouteHold {
  readonly reason: string
  readonly message: string
}

/**
 * What the routing layer's status says about one route right now.
 *
 * @since 0.1.0
 * @category models
 */
export type RouteVerdict =
  | { readonly kind: "programmed" }
  | { readonly kind: "pending"; readonly held?: RouteHold }
  | { readonly kind: "rejected"; readonly reason: string; readonly message: string }

/**
 * Constructors for `RouteVerdict`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const RouteVerdict = {
  programmed: { kind: "programmed" } as RouteVerdict,
  pending: { kind: "pending" } as RouteVerdict,
  /** Pending, and the object says why: kept for the deadline's answer. */
  held: (reason: string, message: string): RouteVerdict => ({ kind: "pending", held: { reason, message } }),
  rejected: (reason: string, message: string): RouteVerdict => ({ kind: "rejected", reason, message })
} as const

/**
 * Why a host is unprogrammed: `reason` for a person, `code` for a program to switch
 * on without reading prose. The code is the controller's condition reason when it
 * refused the route (`NotAllowedByListeners`), a diagnosis code when nobody programmed
 * it by the deadline (`IngressClassNotFound`, `NoIngressStatus`, ...), or one of
 * `UnprogrammedCode`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Unprogrammed {
  readonly reason: string
  readonly code: string
}

/**
 * The codes of the unprogrammed hosts that neither a controller nor a diagnosis names.
 *
 * @since 0.1.0
 * @category constructors
 */
export const UnprogrammedCode = {
  /** The last read of the route's status failed: nothing is known of what the controller did. */
  statusUnreadable: "RouteStatusUnreadable",
  /** Nobody programmed the route, and what its routing depends on could not be read. */
  unclaimed: "Unclaimed",
  /** The routing object was deleted while followed. */
  deleted: "RouteDeleted",
  /** The routing object carries a deletionTimestamp: what its status says is being torn down. */
  beingDeleted: "RouteBeingDeleted"
} as const

/**
 * The reason a host gets when its routing object disappeared while followed: the
 * session was unpublished, or its owner Pod was deleted and the cluster collected it.
 *
 * @since 0.1.0
 * @category constants
 */
export const GONE_REASON =
  "the routing object for this host is gone: the session was unpublished, or its owner Pod was deleted " +
  "(or never existed: objects owned by a Pod uid that names no Pod are collected at once)"

/**
 * The reason a rejected host is reported with: the condition's reason code first,
 * unchanged, so it stays recognisable and greppable (`NotAllowedByListeners`), then
 * the controller's message when it gave one (`NotAllowedByListeners: <message>`),
 * because the message is usually what says which listener or namespace refused it.
 */
export const rejectionReason = (reason: string, message: string): string => {
  const said = message.trim()
  return said === "" ? reason : `${reason}: ${said}`
}

/** What a condition said, as a reason for a person and its reason code for a program. */
const conditionSaid = (conditionReason: string, message: string): Unprogrammed => ({
  reason: rejectionReason(conditionReason, message),
  code: conditionReason
})

/**
 * Constructors for `Unprogrammed`, one per way a host ends unprogrammed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Unprogrammed = {
  /** A controller refused the route with this condition reason and message. */
  rejected: conditionSaid,
  /** The route's status could not be read; `reason` says what failed. */
  unreadable: (reason: string): Unprogrammed => ({ reason, code: UnprogrammedCode.statusUnreadable }),
  /** Nobody programmed it by the deadline, and nothing more could be learnt than the mode's advice. */
  unclaimed: (advice: string): Unprogrammed => ({ reason: advice, code: UnprogrammedCode.unclaimed }),
  /** The routing object is gone. */
  deleted: { reason: GONE_REASON, code: UnprogrammedCode.deleted } as Unprogrammed,
  /** Still held at the deadline: the object's own word beats any diagnosis. */
  held: (hold: RouteHold): Unprogrammed => {
    const said = conditionSaid(hold.reason, hold.message)
    return { ...said, reason: `${said.reason} (still so at the route deadline)` }
  }
} as const

/**
 * One host as the runner reports it: its state, and for an unprogrammed host (or a
 * pending one its object holds back) why, for a person and for a program.
 *
 * @since 0.1.0
 * @category models
 */
export interface HostReport {
  readonly state: RouteState
  readonly reason?: string
  readonly code?: string
}

/**
 * What one verdict says of its host. The one mapping from a verdict to a report, so
 * route health, `status` and following never tell the same status apart.
 *
 * @since 0.1.0
 * @category rules
 */
export const reportOf = (verdict: RouteVerdict): HostReport => {
  switch (verdict.kind) {
    case "programmed":
      return { state: "programmed" }
    case "rejected":
      return { state: "unprogrammed", ...Unprogrammed.rejected(verdict.reason, verdict.message) }
    case "pending":
      return verdict.held === undefined
        ? { state: "pending" }
        : { state: "pending", ...conditionSaid(verdict.held.reason, verdict.held.message) }
  }
}

/**
 * The public host of one session port: `<port>-<sessionId>.<baseDomain>`.
 *
 * @since 0.1.0
 * @category rules
 */
export const hostForPort = (baseDomain: string, sessionId: string, port: number): string =>
  `${port}-${sessionId}.${baseDomain}`

/**
 * Why the hosts of this session would be invalid, or undefined. Only the whole-name
 * limit can fail here: the session id already bounds the first label.
 */
export const hostProblem = (baseDomain: string, sessionId: string): string | undefined => {
  const longest = hostForPort(baseDomain, sessionId, 65535)
  return longest.length > MAX_HOST_LENGTH
    ? `host "${longest}" would be ${longest.length} characters; a DNS name is at most ${MAX_HOST_LENGTH}`
    : undefined
}

export interface EndpointsInput {
  /** Unset: nothing is routed, every host is blank. */
  readonly baseDomain: string | undefined
  readonly sessionId: string
  readonly ports: ReadonlyArray<PortMapping>
  /** False for mode `none`: hosts then are blank and carry no url, even with a domain. */
  readonly publishesRoutes: boolean
}

/**
 * One endpoint per port, in order. Tcp ports get a host and an `https://` url when a
 * routing layer publishes them; udp ports are never routed by HTTP and stay host-less.
 *
 * @since 0.1.0
 * @category rules
 */
export const endpointsFor = (input: EndpointsInput): ReadonlyArray<Endpoint> =>
  input.ports.map((p) => {
    // A url nothing serves is worse than none: with mode `none` no watch would ever say so.
    if (p.protocol !== "tcp" || input.baseDomain === undefined || !input.publishesRoutes) {
      return { host: "", port: p.port, protocol: p.protocol }
    }
    const host = hostForPort(input.baseDomain, input.sessionId, p.port)
    return { host, port: p.port, protocol: p.protocol, url: `https://${host}` }
  })

/** The routes a publishing layer reports: one per tcp port. */
export const routesFor = (
  baseDomain: string,
  sessionId: string,
  ports: ReadonlyArray<PortMapping>
): ReadonlyArray<PublishedRoute> =>
  ports.filter((p) => p.protocol === "tcp").map((p) => ({
    host: hostForPort(baseDomain, sessionId, p.port),
    port: p.port
  }))
