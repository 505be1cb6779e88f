/**
 * The public path of a programmed host, as pure rules: which address the routing
 * layer published, what an answer through it means, and whether the session
 * Service's port has an endpoint that may take traffic (from its EndpointSlices).
 */
import type { EndpointSlice, Gateway, Ingress } from "./Objects.js"

/** The first address an Ingress controller published (`status.loadBalancer.ingress`), IP before hostname. */
export const ingressAddress = (ingress: Ingress | undefined): string | undefined => {
  for (const entry of ingress?.status?.loadBalancer?.ingress ?? []) {
    const address = entry.ip ?? entry.hostname
    if (address !== undefined && address !== "") return address
  }
  return undefined
}

/** The first address a Gateway's controller published (`status.addresses`). */
export const gatewayAddress = (gateway: Gateway | undefined): string | undefined =>
  (gateway?.status?.addresses ?? []).find((a) => a.value !== "")?.value

/** What one probe request got: an HTTP answer, or a failure before one. */
export type ProbeAnswer =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "TimedOut"; readonly afterMs: number }
  | { readonly _tag: "Tls"; readonly message: string; readonly certificateNames: ReadonlyArray<string> }
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "Disallowed"; readonly address: string; readonly why: string }

/** A probe's verdict, as the `probe` session event carries it. */
export interface ProbeOutcome {
  readonly ok: boolean
  readonly status?: number
  readonly reason?: string
}

/** Where a probe went, for messages: `https://8080-s1.example.com via 203.0.113.10:443`. */
export interface ProbeTarget {
  readonly scheme: "http" | "https"
  readonly host: string
  readonly address: string
  readonly port: number
  /**
   * Where the address came from. One taken from a status (which whoever can write that
   * status controls) is refused when it is loopback, link-local or a metadata address;
   * one named in `SESSION_ROUTE_PROBE_ADDRESS` is the operator's and is used as given.
   */
  readonly addressFrom?: "status" | "config"
}

const via = (target: ProbeTarget): string => `${target.scheme}://${target.host} via ${target.address}:${target.port}`

/**
 * Any answer below 400 is the workload's (or a redirect to it): served; so is a 401 or
 * 403, an auth proxy's answer on the workload's behalf. A 404 or a
 * 5xx is, at this point, most likely the routing layer's own: a controller that
 * wrote status before its proxy took the route, or a Service with no ready endpoint.
 */
export const judgeAnswer = (target: ProbeTarget, answer: ProbeAnswer): ProbeOutcome => {
  switch (answer._tag) {
    case "Answered": {
      const status = answer.status
      // Below 400 the workload (or a redirect to it) answered; a 401 or 403 is an auth
      // proxy in front of it: either way the route reaches the session.
      if (status < 400 || status === 401 || status === 403) return { ok: true, status }
      const why = status === 404
        ? "404 from the routing layer: it does not route this host, although its status says programmed (a proxy behind its controller, or another address than the one it serves on)"
        : status === 503
        ? "503: the routing layer has no ready endpoint for the session Service's port (the session Pod is not Ready, or nothing listens on the port)"
        : status === 502
        ? "502: the routing layer could not reach the session Pod (nothing listens on the port, or a network policy drops the traffic)"
        : status === 504
        ? "504: the session Pod did not answer the routing layer in time"
        : `${status} from the workload or the routing layer`
      return { ok: false, status, reason: `${via(target)}: ${why}` }
    }
    case "Refused":
      return {
        ok: false,
        reason: `${via(target)}: connection refused: nothing listens on ${target.address}:${target.port}`
      }
    case "TimedOut":
      return { ok: false, reason: `${via(target)}: no answer within ${answer.afterMs} ms` }
    case "Tls": {
      const names = answer.certificateNames.length > 0
        ? ` (the certificate names ${answer.certificateNames.join(", ")})`
        : ""
      return { ok: false, reason: `${via(target)}: TLS error: ${answer.message}${names}` }
    }
    case "Failed":
      return { ok: false, reason: `${via(target)}: ${answer.message}` }
    case "Disallowed":
      return {
        ok: false,
        reason: `${via(target)}: not probed: ${answer.address} is ${answer.why}, and an address taken from a status ` +
          "is never probed there; set SESSION_ROUTE_PROBE_ADDRESS to probe it anyway"
      }
  }
}

/** The names a certificate covers, from Node's `subjectaltname` (`DNS:a, DNS:b, IP Address:1.2.3.4`) and its CN. */
export const certificateNames = (
  subjectAltName: string | undefined,
  commonName: string | undefined
): ReadonlyArray<string> => {
  const names = (subjectAltName ?? "")
    .split(",")
    .map((entry) => entry.trim().replace(/^DNS:/, "").replace(/^IP Address:/, ""))
    .filter((entry) => entry !== "")
  return names.length > 0 ? names : commonName !== undefined && commonName !== "" ? [commonName] : []
}

/** Whether the Service port has an endpoint that may take traffic. */
export type EndpointReadiness = "ready" | "not-ready"

/**
 * Reads the Service's EndpointSlices for one Service port: ready when some endpoint
 * of a slice carrying that port is ready (an unset `ready` counts as ready, as the
 * API documents). Slices match the port by name when the Service names it, else by number.
 */
export const endpointReadiness = (
  slices: ReadonlyArray<EndpointSlice>,
  servicePort: { readonly name?: string; readonly targetPort: number }
): EndpointReadiness => {
  const carries = (slice: EndpointSlice) =>
    (slice.ports ?? []).some((p) =>
      servicePort.name !== undefined && p.name !== undefined && p.name !== ""
        ? p.name === servicePort.name
        : p.port === servicePort.targetPort
    )
  // A slice with no endpoints has `endpoints: null` on the wire (the field has no omitempty).
  const ready = slices.some((slice) =>
    carries(slice) && (slice.endpoints ?? []).some((e) => e.conditions?.ready !== false)
  )
  return ready ? "ready" : "not-ready"
}

/** What a programmed host whose Service port has no ready endpoint is reported with. */
export const notReadyReason = (port: number): string =>
  `the session Pod is not Ready, or nothing listens on its port ${port}: the Service has no ready endpoint for it, so the routing layer has nowhere to send traffic`
