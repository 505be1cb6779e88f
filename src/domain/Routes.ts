/**
 * Hosts, endpoints and route states: what a session's ports are reachable at, and
 * the vocabulary of route health. The host scheme is `<port>-<sessionId>.<baseDomain>`
 * whichever routing layer carries it.
 */
import type { PortMapping, Protocol } from "./Session.js"

/** The routing layers; `none` publishes nothing. */
export type RoutingMode = "ingress" | "gateway" | "none"

/** DNS limit on a whole name. */
export const MAX_HOST_LENGTH = 253

/** Where one session port is reachable. `host` is blank when nothing routes it. */
export interface Endpoint {
  readonly host: string
  readonly port: number
  readonly protocol: Protocol
  readonly url?: string
}

/** A host a routing layer published, for one tcp port. */
export interface PublishedRoute {
  readonly host: string
  readonly port: number
}

export type RouteState = "pending" | "programmed" | "unprogrammed"

/** What the routing layer's status says about one route right now. */
export type RouteVerdict =
  | { readonly kind: "programmed" }
  | { readonly kind: "pending" }
  | { readonly kind: "rejected"; readonly reason: string; readonly message: string }

export const RouteVerdict = {
  programmed: { kind: "programmed" } as RouteVerdict,
  pending: { kind: "pending" } as RouteVerdict,
  rejected: (reason: string, message: string): RouteVerdict => ({ kind: "rejected", reason, message })
} as const

/** The public host of one session port: `<port>-<sessionId>.<baseDomain>`. */
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
