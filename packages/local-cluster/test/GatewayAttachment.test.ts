/**
 * Gateway API attachment rules as pure functions: hostname matching and intersection,
 * parentRef defaults, listener admission, backend resolution, condition stamping and
 * the merge that keeps other controllers' status entries.
 */
import type { Gateway, GatewayListener, HttpRoute, RouteParentStatus } from "session-routing/kubernetes"
import { describe, expect, it } from "vitest"
import {
  attachRoute,
  coversHost,
  hostnamesOverlap,
  resolveBackendRef,
  sameParentRef
} from "../src/GatewayAttachment.js"
import {
  type ClusterView,
  gatewayStatus,
  kubeTime,
  mergeRouteParents,
  routeParentEntries,
  sameStatusIgnoringTimes,
  stampCondition
} from "../src/GatewayStatus.js"

const GROUP = "gateway.networking.k8s.io"
const identity = { gatewayClassName: "local", controllerName: "example.test/gw" }

const gateway = (listeners: ReadonlyArray<GatewayListener>, namespace = "infra"): Gateway => ({
  metadata: { name: "gw", namespace, generation: 3 },
  spec: { gatewayClassName: "local", listeners }
})

const route = (spec: NonNullable<HttpRoute["spec"]>, namespace = "apps"): HttpRoute => ({
  metadata: { name: "r", namespace, generation: 2 },
  spec
})

const view = (overrides: Partial<ClusterView> = {}): ClusterView => ({
  gateways: [],
  services: [],
  namespaces: [],
  routes: [],
  ...overrides
})

describe("hostnames", () => {
  it("matches a wildcard against one or more leading labels, never the apex", () => {
    expect(coversHost("*.example.com", "a.example.com")).toBe(true)
    expect(coversHost("*.example.com", "a.b.example.com")).toBe(true)
    expect(coversHost("*.example.com", "example.com")).toBe(false)
    expect(coversHost("*.example.com", "aexample.com")).toBe(false)
    expect(coversHost("A.Example.com", "a.example.COM")).toBe(true)
  })

  it("intersects listener and route hostnames when either covers the other", () => {
    expect(hostnamesOverlap("*.example.com", "a.example.com")).toBe(true)
    expect(hostnamesOverlap("a.example.com", "*.example.com")).toBe(true)
    expect(hostnamesOverlap("*.example.com", "*.a.example.com")).toBe(true)
    expect(hostnamesOverlap("*.example.com", "example.com")).toBe(false)
    expect(hostnamesOverlap("*.example.com", "*.example.org")).toBe(false)
    expect(hostnamesOverlap("a.example.com", "b.example.com")).toBe(false)
  })
})

describe("parentRefs", () => {
  it("compares parentRefs with the API defaults applied", () => {
    expect(sameParentRef({ name: "gw" }, { group: GROUP, kind: "Gateway", namespace: "apps", name: "gw" }, "apps"))
      .toBe(true)
    expect(sameParentRef({ name: "gw" }, { name: "gw", sectionName: "http" }, "apps")).toBe(false)
    expect(sameParentRef({ name: "gw" }, { name: "gw", namespace: "infra" }, "apps")).toBe(false)
  })
})

describe("attachRoute", () => {
  const http: GatewayListener = {
    name: "http",
    port: 80,
    protocol: "HTTP",
    allowedRoutes: { namespaces: { from: "All" } }
  }

  it("attaches to the listeners that admit the route's namespace, kind and hostnames", () => {
    const gw = gateway([
      { ...http, hostname: "*.example.com" },
      { ...http, name: "other", hostname: "*.example.org" },
      { ...http, name: "tcp", protocol: "TCP" }
    ])
    const attachment = attachRoute(route({ hostnames: ["a.example.com"] }), { name: "gw", namespace: "infra" }, gw, [])
    expect(attachment).toEqual({ accepted: true, listeners: [gw.spec!.listeners[0]] })
  })

  it("selects namespaces by label, the name label the API server sets on each among them, and by expression", () => {
    const selector = (
      matchLabels: Record<string, string>,
      matchExpressions: ReadonlyArray<{ key: string; operator: string; values?: ReadonlyArray<string> }> = []
    ): GatewayListener => ({
      ...http,
      allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels, matchExpressions } } }
    } as GatewayListener)
    // As stored: the API server labels every namespace with its name.
    const namespaces = [{ metadata: { name: "apps", labels: { team: "a", "kubernetes.io/metadata.name": "apps" } } }]
    const ref = { name: "gw", namespace: "infra" }
    expect(attachRoute(route({}), ref, gateway([selector({ team: "a" })]), namespaces).accepted).toBe(true)
    expect(
      attachRoute(route({}), ref, gateway([selector({ "kubernetes.io/metadata.name": "apps" })]), namespaces).accepted
    ).toBe(true)
    const expression = (operator: string, values?: ReadonlyArray<string>) =>
      attachRoute(
        route({}),
        ref,
        gateway([selector({}, [{ key: "team", operator, ...(values ? { values } : {}) }])]),
        namespaces
      )
        .accepted
    expect([expression("In", ["a", "b"]), expression("NotIn", ["a"]), expression("Exists"), expression("DoesNotExist")])
      .toEqual([true, false, true, false])
    expect(attachRoute(route({}), ref, gateway([selector({ team: "b" })]), namespaces)).toMatchObject({
      accepted: false,
      reason: "NotAllowedByListeners"
    })
  })

  it("attaches only to listeners whose allowedRoutes.kinds, when given, list HTTPRoute", () => {
    const kinds = (
      list: ReadonlyArray<{ group?: string; kind: string }>
    ): GatewayListener => ({ ...http, allowedRoutes: { namespaces: { from: "All" }, kinds: list } } as GatewayListener)
    const ref = { name: "gw", namespace: "infra" }
    expect(attachRoute(route({}), ref, gateway([kinds([{ kind: "GRPCRoute" }])]), []).accepted).toBe(false)
    expect(attachRoute(route({}), ref, gateway([kinds([{ group: "other.example", kind: "HTTPRoute" }])]), []).accepted)
      .toBe(false)
    expect(attachRoute(route({}), ref, gateway([kinds([{ kind: "HTTPRoute" }])]), []).accepted).toBe(true)
  })

  it("refuses a parentRef whose port matches no listener with NoMatchingParent", () => {
    expect(attachRoute(route({}), { name: "gw", namespace: "infra", port: 8443 }, gateway([http]), [])).toEqual({
      accepted: false,
      reason: "NoMatchingParent",
      message: "Gateway infra/gw has no listener matching port 8443"
    })
  })

  it("refuses a route on a listener that carries no HTTPRoutes with NotAllowedByListeners", () => {
    const gw = gateway([{ ...http, protocol: "TCP" }])
    expect(attachRoute(route({}), { name: "gw", namespace: "infra" }, gw, [])).toMatchObject({
      accepted: false,
      reason: "NotAllowedByListeners"
    })
  })
})

describe("resolveBackendRef", () => {
  const services = [{ metadata: { name: "web", namespace: "apps" }, spec: { ports: [{ port: 8080 }] } }]

  it("resolves a Service port in the route's namespace", () => {
    expect(resolveBackendRef({ name: "web", port: 8080 }, "apps", services)).toEqual({
      resolved: true,
      namespace: "apps",
      name: "web",
      port: 8080
    })
  })

  it("names each problem with its standard reason", () => {
    const reason = (ref: Parameters<typeof resolveBackendRef>[0]) => {
      const r = resolveBackendRef(ref, "apps", services)
      return r.resolved ? "resolved" : r.reason
    }
    expect(reason({ name: "missing", port: 8080 })).toBe("BackendNotFound")
    expect(reason({ name: "web", port: 9090 })).toBe("BackendNotFound")
    expect(reason({ name: "web", port: 8080, namespace: "other" })).toBe("RefNotPermitted")
    expect(reason({ name: "web", port: 8080, kind: "Bucket", group: "example.test" })).toBe("InvalidKind")
  })
})

describe("conditions", () => {
  const base = { type: "Accepted", status: "True" as const, reason: "Accepted", message: "ok", observedGeneration: 1 }

  it("keeps the transition time while the status holds and moves it when the status flips", () => {
    const previous = [{ ...base, lastTransitionTime: "2024-01-01T00:00:00Z" }]
    expect(stampCondition({ ...base, observedGeneration: 2 }, previous, "2024-06-01T00:00:00Z").lastTransitionTime)
      .toBe("2024-01-01T00:00:00Z")
    expect(stampCondition({ ...base, status: "False" }, previous, "2024-06-01T00:00:00Z").lastTransitionTime)
      .toBe("2024-06-01T00:00:00Z")
  })

  it("formats times as metav1.Time does: whole seconds, UTC", () => {
    expect(kubeTime(1_700_000_000_999)).toBe("2023-11-14T22:13:20Z")
  })

  it("compares statuses ignoring transition times, key order and undefined members", () => {
    expect(sameStatusIgnoringTimes(
      { a: [{ lastTransitionTime: "x", type: "T", status: "True" }] },
      { a: [{ status: "True", type: "T", lastTransitionTime: "y", extra: undefined }] }
    )).toBe(true)
    expect(sameStatusIgnoringTimes({ a: [{ status: "True" }] }, { a: [{ status: "False" }] })).toBe(false)
  })
})

describe("route status entries", () => {
  const gw = gateway([{ name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }])

  it("writes one entry per distinct parentRef to a Gateway of its class, with the route's generation", () => {
    const r = route({
      parentRefs: [{ name: "gw", namespace: "infra" }, { name: "gw", namespace: "infra" }, { name: "nope" }]
    })
    const entries = routeParentEntries(r, view({ gateways: [gw] }), identity, "2024-01-01T00:00:00Z")
    expect(entries).toEqual([{
      parentRef: { group: GROUP, kind: "Gateway", namespace: "infra", name: "gw" },
      controllerName: identity.controllerName,
      conditions: [
        {
          type: "Accepted",
          status: "True",
          reason: "Accepted",
          message: "Route is accepted",
          observedGeneration: 2,
          lastTransitionTime: "2024-01-01T00:00:00Z"
        },
        {
          type: "ResolvedRefs",
          status: "True",
          reason: "ResolvedRefs",
          message: "All references resolved",
          observedGeneration: 2,
          lastTransitionTime: "2024-01-01T00:00:00Z"
        }
      ]
    }])
  })

  it("merges in place: others' entries stay, ours are replaced, dropped or appended", () => {
    const entry = (controllerName: string, name: string, message = ""): RouteParentStatus => ({
      parentRef: { name },
      controllerName,
      conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message, lastTransitionTime: "t" }]
    })
    const existing = [entry("ours", "a", "old"), entry("theirs", "x"), entry("ours", "gone")]
    const merged = mergeRouteParents(existing, [entry("ours", "new"), entry("ours", "a", "fresh")], "ours", "apps")
    expect(merged).toEqual([entry("ours", "a", "fresh"), entry("theirs", "x"), entry("ours", "new")])
  })
})

describe("gatewayStatus", () => {
  it("counts each route once per listener it attached to", () => {
    const gw = gateway([
      { name: "a", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } },
      { name: "b", port: 81, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }
    ])
    const both = route({
      parentRefs: [{ name: "gw", namespace: "infra" }, { name: "gw", namespace: "infra", sectionName: "a" }]
    })
    const onlyB = route({ parentRefs: [{ name: "gw", namespace: "infra", sectionName: "b" }] })
    const status = gatewayStatus(gw, view({ routes: [both, onlyB] }), [{ type: "IPAddress", value: "127.0.0.1" }], "t")
    expect(status.listeners?.map((l) => [l.name, l.attachedRoutes])).toEqual([["a", 1], ["b", 2]])
    expect(status.conditions?.map((c) => [c.type, c.status, c.observedGeneration])).toEqual([
      ["Accepted", "True", 3],
      ["Programmed", "True", 3]
    ])
  })
})
