/**
 * Hosts and endpoints: `<port>-<id>.<domain>` per tcp port, udp host-less, no url
 * when nothing routes, the same scheme for every layer, and the whole-name limit.
 */
import { describe, expect, it } from "@effect/vitest"
import { buildSessionHttpRoutes, buildSessionIngress } from "../../src/domain/Manifests.js"
import {
  endpointsFor,
  GONE_REASON,
  hostForPort,
  hostProblem,
  MAX_HOST_LENGTH,
  rejectionReason,
  routesFor,
  RouteVerdict,
  Unprogrammed
} from "../../src/domain/Routes.js"
import type { PortMapping } from "../../src/domain/Session.js"

const sessionId = "hzyayvabgyvz"
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
]

describe("hostForPort", () => {
  it("names a port's host <port>-<id>.<baseDomain>", () => {
    expect(hostForPort("telo.run", sessionId, 8080)).toBe(`8080-${sessionId}.telo.run`)
  })
})

describe("endpointsFor", () => {
  it("gives every tcp port a <port>-<id>.<domain> host and an https url, and leaves udp host-less", () => {
    expect(endpointsFor({ baseDomain: "telo.run", sessionId, ports, publishesRoutes: true })).toEqual([
      { host: `8080-${sessionId}.telo.run`, port: 8080, protocol: "tcp", url: `https://8080-${sessionId}.telo.run` },
      { host: `9090-${sessionId}.telo.run`, port: 9090, protocol: "tcp", url: `https://9090-${sessionId}.telo.run` },
      { host: "", port: 5000, protocol: "udp" }
    ])
  })

  it("leaves hosts blank when no routing base domain is configured", () => {
    expect(endpointsFor({ baseDomain: undefined, sessionId, ports, publishesRoutes: true })).toEqual([
      { host: "", port: 8080, protocol: "tcp" },
      { host: "", port: 9090, protocol: "tcp" },
      { host: "", port: 5000, protocol: "udp" }
    ])
  })

  it("advertises no url when nothing publishes routes, even with a base domain set", () => {
    // Mode `none` with a domain is valid configuration. A url keyed on the domain alone
    // would point at something nothing serves, and no route watch runs to say so.
    expect(endpointsFor({ baseDomain: "telo.run", sessionId, ports, publishesRoutes: false })).toEqual([
      { host: "", port: 8080, protocol: "tcp" },
      { host: "", port: 9090, protocol: "tcp" },
      { host: "", port: 5000, protocol: "udp" }
    ])
  })

  it("keeps the host scheme identical whatever layer routes it", () => {
    const settings = {
      sessionNamespace: "telo-sessions",
      managedBy: "telo-k8s-runner",
      baseDomain: "telo.run",
      gateway: { name: "gw", namespace: "gw-ns" }
    }
    const spec = { sessionId, podName: "pod", podUid: "uid", ports }
    const endpointHosts = endpointsFor({ baseDomain: "telo.run", sessionId, ports, publishesRoutes: true })
      .filter((e) => e.protocol === "tcp")
      .map((e) => e.host)
    const ingressHosts = buildSessionIngress(settings, spec).hosts
    const routeHosts = buildSessionHttpRoutes(settings, spec).flatMap((r) => r.spec?.hostnames ?? [])
    const reported = routesFor("telo.run", sessionId, ports).map((r) => r.host)
    expect(ingressHosts).toEqual(endpointHosts)
    expect(routeHosts).toEqual(endpointHosts)
    expect(reported).toEqual(endpointHosts)
  })

  it("keeps the order of the ports it was given", () => {
    const reversed = [...ports].reverse()
    expect(
      endpointsFor({ baseDomain: "telo.run", sessionId, ports: reversed, publishesRoutes: true }).map((e) => e.port)
    ).toEqual([
      5000,
      9090,
      8080
    ])
  })

  it("gives no endpoints to a session without ports", () => {
    expect(endpointsFor({ baseDomain: "telo.run", sessionId, ports: [], publishesRoutes: true })).toEqual([])
  })
})

describe("routesFor", () => {
  it("reports one route per tcp port and none for udp", () => {
    expect(routesFor("telo.run", sessionId, ports)).toEqual([
      { host: `8080-${sessionId}.telo.run`, port: 8080 },
      { host: `9090-${sessionId}.telo.run`, port: 9090 }
    ])
  })
})

describe("hostProblem", () => {
  // `65535-` plus the id plus `.`: what the longest host adds to the base domain.
  const overhead = "65535-".length + sessionId.length + 1

  it("accepts a base domain whose longest host is exactly 253 characters", () => {
    const domain = `${"a".repeat(MAX_HOST_LENGTH - overhead - 4)}.run`
    expect(hostForPort(domain, sessionId, 65535)).toHaveLength(253)
    expect(hostProblem(domain, sessionId)).toBeUndefined()
  })

  it("refuses one character more, naming the host and its length", () => {
    const domain = `${"a".repeat(MAX_HOST_LENGTH - overhead - 3)}.run`
    const host = hostForPort(domain, sessionId, 65535)
    expect(hostProblem(domain, sessionId)).toBe(
      `host "${host}" would be 254 characters; a DNS name is at most 253`
    )
  })

  it("measures the longest port, so a short port does not hide the problem", () => {
    // `80-<id>.<domain>` would fit; `65535-<id>.<domain>` would not.
    const domain = `${"a".repeat(MAX_HOST_LENGTH - overhead - 2)}.run`
    expect(hostForPort(domain, sessionId, 80).length).toBeLessThanOrEqual(253)
    expect(hostProblem(domain, sessionId)).toContain("would be 255 characters")
  })

  it("accepts an ordinary domain", () => {
    expect(hostProblem("telo.run", sessionId)).toBeUndefined()
  })
})

describe("RouteVerdict", () => {
  it("builds the three verdicts", () => {
    expect(RouteVerdict.programmed).toEqual({ kind: "programmed" })
    expect(RouteVerdict.pending).toEqual({ kind: "pending" })
    expect(RouteVerdict.rejected("NotAllowedByListeners", "no listener")).toEqual({
      kind: "rejected",
      reason: "NotAllowedByListeners",
      message: "no listener"
    })
  })
})

describe("rejectionReason", () => {
  it("passes the reason code through unchanged when the controller gave no message", () => {
    expect(rejectionReason("NotAllowedByListeners", "")).toBe("NotAllowedByListeners")
    expect(rejectionReason("NotAllowedByListeners", "  ")).toBe("NotAllowedByListeners")
  })

  it("trims the controller's message at both ends", () => {
    expect(rejectionReason("NotAllowedByListeners", "  no listener allows it\n")).toBe(
      "NotAllowedByListeners: no listener allows it"
    )
  })

  it("keeps the controller's message after the reason code", () => {
    expect(rejectionReason("NoMatchingListenerHostname", "no listener hostname matches 8080-abc.telo.run")).toBe(
      "NoMatchingListenerHostname: no listener hostname matches 8080-abc.telo.run"
    )
  })
})

describe("Unprogrammed", () => {
  it("keeps a rejection's condition reason as its code, and the reason as rejectionReason words it", () => {
    expect(Unprogrammed.rejected("NotAllowedByListeners", " no listener allows it ")).toEqual({
      reason: "NotAllowedByListeners: no listener allows it",
      code: "NotAllowedByListeners"
    })
  })

  it("gives what no controller or diagnosis names a code of its own", () => {
    expect(Unprogrammed.unreadable("route status could not be read: x")).toEqual({
      reason: "route status could not be read: x",
      code: "RouteStatusUnreadable"
    })
    expect(Unprogrammed.unclaimed("nobody claimed it")).toEqual({ reason: "nobody claimed it", code: "Unclaimed" })
    expect(Unprogrammed.deleted).toEqual({ reason: GONE_REASON, code: "RouteDeleted" })
  })
})
