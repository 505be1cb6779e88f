/**
 * The data plane's routing decisions as pure functions: Ingress and Gateway API host
 * wildcards, path matching (the table from the Ingress documentation), precedence,
 * which objects count as programmed, and weighted backend choice.
 */
import type { HttpRoute, Ingress } from "session-routing/kubernetes"
import { describe, expect, it } from "vitest"
import {
  claimsIngress,
  decideRoute,
  hostOfHeader,
  ingressHostMatches,
  pathPrefixMatches,
  pickBackend,
  type RoutingState
} from "../src/RouteTable.js"

const CONTROLLER = "example.test/gw"

const state = (overrides: Partial<RoutingState> = {}): RoutingState => ({
  ingresses: [],
  httpRoutes: [],
  gateways: [],
  services: [{ metadata: { name: "web", namespace: "ns" }, spec: { ports: [{ name: "http", port: 8080 }] } }],
  namespaces: [],
  controllerName: CONTROLLER,
  ...overrides
})

const programmed = { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } }

const ingress = (
  name: string,
  rules: NonNullable<Ingress["spec"]>["rules"],
  created = "2024-01-01T00:00:00Z"
): Ingress => ({
  metadata: { name, namespace: "ns", creationTimestamp: created },
  spec: { ingressClassName: "local", ...(rules !== undefined ? { rules } : {}) },
  status: programmed
})

const toWeb = (path: string, pathType: "Exact" | "Prefix" = "Prefix") => ({
  path,
  pathType,
  backend: { service: { name: "web", port: { number: 8080 } } }
})

const routedBy = (s: RoutingState, host: string, path = "/") => {
  const d = decideRoute(s, { host, path })
  return d.kind === "none" ? "none" : `${d.source.kind}/${d.source.name}`
}

describe("matching", () => {
  it("matches Ingress wildcards against exactly one label", () => {
    expect(ingressHostMatches("*.foo.com", "bar.foo.com")).toBe(true)
    expect(ingressHostMatches("*.foo.com", "baz.bar.foo.com")).toBe(false)
    expect(ingressHostMatches("*.foo.com", "foo.com")).toBe(false)
  })

  it("matches prefixes element-wise, as the Ingress documentation's table shows", () => {
    const table: ReadonlyArray<readonly [string, string, boolean]> = [
      ["/", "/anything", true],
      ["/foo", "/foo", true],
      ["/foo", "/foo/", true],
      ["/foo/", "/foo", true],
      ["/aaa/bb", "/aaa/bbb", false],
      ["/aaa/bbb", "/aaa/bbb/ccc", true],
      ["/aaa/bbb", "/aaa/bbbxyz", false]
    ]
    expect(table.map(([prefix, path]) => pathPrefixMatches(prefix, path))).toEqual(table.map(([, , m]) => m))
  })

  it("reads the host from a Host header with or without a port", () => {
    expect(hostOfHeader("A.Example.com:8080")).toBe("a.example.com")
    expect(hostOfHeader("[::1]:80")).toBe("::1")
    expect(hostOfHeader(undefined)).toBe("")
  })

  it("claims by class, the legacy annotation, or no class only for the default", () => {
    const noClass: Ingress = { metadata: { name: "x" }, spec: {} }
    expect(claimsIngress(noClass, { className: "local" })).toBe(false)
    expect(claimsIngress(noClass, { className: "local", defaultClass: true })).toBe(true)
    expect(
      claimsIngress({ metadata: { annotations: { "kubernetes.io/ingress.class": "local" } } }, { className: "local" })
    )
      .toBe(true)
  })
})

describe("decideRoute for Ingresses", () => {
  it("serves only Ingresses with a published address", () => {
    const unprogrammed: Ingress = { ...ingress("a", [{ host: "a.test", http: { paths: [toWeb("/")] } }]), status: {} }
    expect(routedBy(state({ ingresses: [unprogrammed] }), "a.test")).toBe("none")
  })

  it("prefers an exact host to a wildcard, a longer path to a shorter, Exact to Prefix, the older object", () => {
    const s = state({
      ingresses: [
        ingress("wild", [{ host: "*.test", http: { paths: [toWeb("/")] } }]),
        ingress("exact-host", [{ host: "a.test", http: { paths: [toWeb("/")] } }], "2024-02-01T00:00:00Z"),
        ingress("long", [{ host: "a.test", http: { paths: [toWeb("/api")] } }]),
        ingress("exact-path", [{ host: "a.test", http: { paths: [toWeb("/api", "Exact")] } }], "2024-03-01T00:00:00Z"),
        ingress("older", [{ host: "a.test", http: { paths: [toWeb("/")] } }], "2023-01-01T00:00:00Z")
      ]
    })
    expect(routedBy(s, "b.test")).toBe("Ingress/wild")
    expect(routedBy(s, "a.test", "/")).toBe("Ingress/older")
    expect(routedBy(s, "a.test", "/api/x")).toBe("Ingress/long")
    expect(routedBy(s, "a.test", "/api")).toBe("Ingress/exact-path")
  })

  it("compares Prefix paths by their elements, so a trailing slash does not outrank an Exact path", () => {
    const s = state({
      ingresses: [
        ingress("prefix", [{ host: "a.test", http: { paths: [toWeb("/api/")] } }]),
        ingress("exact", [{ host: "a.test", http: { paths: [toWeb("/api", "Exact")] } }], "2030-01-01T00:00:00Z")
      ]
    })
    expect(routedBy(s, "a.test", "/api")).toBe("Ingress/exact")
  })

  it("resolves a named Service port and answers 503 for a Service that does not exist", () => {
    const s = state({
      ingresses: [
        ingress("named", [{
          host: "a.test",
          http: {
            paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { name: "http" } } } }]
          }
        }]),
        ingress("missing", [{
          host: "b.test",
          http: {
            paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "nope", port: { number: 1 } } } }]
          }
        }])
      ]
    })
    const named = decideRoute(s, { host: "a.test", path: "/" })
    expect(named.kind === "route" && named.backends).toEqual([
      { weight: 1, target: { kind: "service", namespace: "ns", service: "web", port: 8080 } }
    ])
    const missing = decideRoute(s, { host: "b.test", path: "/" })
    expect(missing.kind === "route" && missing.backends[0]?.target).toMatchObject({ kind: "error", status: 503 })
  })
})

describe("decideRoute for HTTPRoutes", () => {
  const gateway = {
    metadata: { name: "gw", namespace: "ns" },
    spec: {
      gatewayClassName: "local",
      listeners: [{ name: "http", port: 80, protocol: "HTTP", hostname: "*.example.com" }]
    }
  }
  const accepted = (observedGeneration: number, controllerName = CONTROLLER) => ({
    parents: [{
      parentRef: { name: "gw" },
      controllerName,
      conditions: [{
        type: "Accepted",
        status: "True" as const,
        reason: "Accepted",
        message: "",
        observedGeneration,
        lastTransitionTime: "t"
      }]
    }]
  })
  const route = (overrides: Partial<HttpRoute> = {}): HttpRoute => ({
    metadata: { name: "r", namespace: "ns", generation: 1 },
    spec: { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "web", port: 8080 }] }] },
    status: accepted(1),
    ...overrides
  })

  it("serves a route accepted by our controller for its current generation, within the listener's hostnames", () => {
    expect(routedBy(state({ gateways: [gateway], httpRoutes: [route()] }), "a.b.example.com")).toBe("HTTPRoute/r")
    expect(routedBy(state({ gateways: [gateway], httpRoutes: [route()] }), "example.com")).toBe("none")
  })

  it("does not serve acceptance that is stale or someone else's", () => {
    const stale = route({ metadata: { name: "r", namespace: "ns", generation: 2 } })
    expect(routedBy(state({ gateways: [gateway], httpRoutes: [stale] }), "a.example.com")).toBe("none")
    const theirs = route({ status: accepted(1, "example.test/other") })
    expect(routedBy(state({ gateways: [gateway], httpRoutes: [theirs] }), "a.example.com")).toBe("none")
  })

  it("prefers an Exact path to a Prefix that matches the same request through a trailing slash", () => {
    // A Prefix matches element-wise, so `/api/` matches `/api` too; its trailing slash
    // must not make it look longer than the Exact `/api` (Gateway API: Exact first).
    const rule = (type: "Exact" | "PathPrefix", value: string) => ({
      matches: [{ path: { type, value } }],
      backendRefs: [{ name: "web", port: 8080 }]
    })
    const prefix = route({
      metadata: { name: "prefix", namespace: "ns", generation: 1 },
      spec: { parentRefs: [{ name: "gw" }], rules: [rule("PathPrefix", "/api/")] }
    })
    const exact = route({
      metadata: { name: "exact", namespace: "ns", generation: 1, creationTimestamp: "2030-01-01T00:00:00Z" },
      spec: { parentRefs: [{ name: "gw" }], rules: [rule("Exact", "/api")] }
    })
    const s = state({ gateways: [gateway], httpRoutes: [prefix, exact] })
    expect(routedBy(s, "a.example.com", "/api")).toBe("HTTPRoute/exact")
    expect(routedBy(s, "a.example.com", "/api/x")).toBe("HTTPRoute/prefix")
  })

  it("answers 500 for a backendRef that does not resolve", () => {
    const broken = route({
      spec: { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "missing", port: 8080 }] }] }
    })
    const d = decideRoute(state({ gateways: [gateway], httpRoutes: [broken] }), { host: "a.example.com", path: "/" })
    expect(d.kind === "route" && d.backends[0]?.target).toMatchObject({ kind: "error", status: 500 })
  })
})

describe("pickBackend", () => {
  const a = { kind: "service" as const, namespace: "ns", service: "a", port: 1 }
  const b = { kind: "service" as const, namespace: "ns", service: "b", port: 1 }

  it("splits by weight and never picks a zero weight", () => {
    const backends = [{ weight: 1, target: a }, { weight: 0, target: b }, { weight: 3, target: b }]
    expect([0, 0.24, 0.25, 0.99].map((d) => (pickBackend(backends, d) as typeof a).service)).toEqual([
      "a",
      "a",
      "b",
      "b"
    ])
  })

  it("answers 500 when nothing has weight", () => {
    expect(pickBackend([{ weight: 0, target: a }], 0.5)).toMatchObject({ kind: "error", status: 500 })
    expect(pickBackend([], 0.5)).toMatchObject({ kind: "error", status: 500 })
  })
})
