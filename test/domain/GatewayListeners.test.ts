/**
 * The Gateway API's listener rules on their own: hostname matching and intersection
 * (case-insensitive, a leading `*.` for one or more labels), which protocols carry
 * HTTPRoutes, and `allowedRoutes.namespaces` with its `Same` default.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  allowedRoutesFrom,
  hostnameMatches,
  hostnamesIntersect,
  listenerAdmitsNamespace,
  listenerSupportsHttpRoute,
  NAMESPACE_NAME_LABEL,
  namespaceLabelsOf
} from "../../src/domain/GatewayListeners.js"
import type { GatewayListener } from "../../src/domain/Objects.js"

const listener = (overrides: Partial<GatewayListener> = {}): GatewayListener => ({
  name: "http",
  protocol: "HTTP",
  port: 80,
  ...overrides
})

describe("hostnameMatches", () => {
  it.each(
    [
      ["example.com", "example.com", true],
      ["Example.COM", "example.com", true],
      ["example.com", "EXAMPLE.com", true],
      ["example.com", "a.example.com", false],
      ["*.example.com", "a.example.com", true],
      ["*.Example.com", "A.EXAMPLE.COM", true],
      ["*.example.com", "a.b.example.com", true],
      ["*.example.com", "example.com", false],
      ["*.example.com", ".example.com", false],
      ["*.example.com", "aexample.com", false],
      ["*.example.com", "a.example.org", false],
      ["a.*.example.com", "a.b.example.com", false]
    ] as const
  )("matches %s against %s: %s", (pattern, host, expected) => {
    expect(hostnameMatches(pattern, host)).toBe(expected)
  })
})

describe("hostnamesIntersect", () => {
  it.each(
    [
      ["a.example.com", "a.example.com", true],
      ["A.example.com", "a.EXAMPLE.com", true],
      ["a.example.com", "b.example.com", false],
      ["*.example.com", "a.example.com", true],
      ["*.Example.com", "A.example.com", true],
      ["a.example.com", "*.example.com", true],
      ["a.example.com", "*.EXAMPLE.com", true],
      ["*.example.com", "example.com", false],
      ["example.com", "*.example.com", false],
      ["*.example.com", "a.example.org", false],
      ["a.example.org", "*.example.com", false],
      ["*.example.com", "*.a.example.com", true],
      ["*.a.example.com", "*.example.com", true],
      ["*.A.example.com", "*.EXAMPLE.com", true],
      ["*.example.com", "*.example.org", false],
      ["*.a.example.com", "*.b.example.com", false]
    ] as const
  )("intersects %s with %s: %s", (a, b, expected) => {
    expect(hostnamesIntersect(a, b)).toBe(expected)
  })
})

describe("listenerSupportsHttpRoute", () => {
  it.each([["HTTP", true], ["HTTPS", true], ["TCP", false], ["TLS", false], ["UDP", false]] as const)(
    "says %s carries HTTPRoutes: %s",
    (protocol, expected) => {
      expect(listenerSupportsHttpRoute(listener({ protocol }))).toBe(expected)
    }
  )

  it("takes HTTPRoutes only where allowedRoutes.kinds, when given, names HTTPRoute of the Gateway API's group", () => {
    const kinds = (list: ReadonlyArray<{ group?: string; kind: string }>) =>
      listenerSupportsHttpRoute(listener({ allowedRoutes: { kinds: list } }))
    expect([
      kinds([]),
      kinds([{ kind: "HTTPRoute" }]),
      kinds([{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }]),
      kinds([{ kind: "GRPCRoute" }]),
      kinds([{ group: "other.example", kind: "HTTPRoute" }])
    ]).toEqual([true, true, true, false, false])
  })
})

describe("allowedRoutesFrom", () => {
  it("defaults to Same without allowedRoutes, without namespaces and without from", () => {
    expect(allowedRoutesFrom(listener())).toBe("Same")
    expect(allowedRoutesFrom(listener({ allowedRoutes: {} }))).toBe("Same")
    expect(allowedRoutesFrom(listener({ allowedRoutes: { namespaces: {} } }))).toBe("Same")
  })

  it("reads the from the listener sets", () => {
    expect(allowedRoutesFrom(listener({ allowedRoutes: { namespaces: { from: "All" } } }))).toBe("All")
    expect(allowedRoutesFrom(listener({ allowedRoutes: { namespaces: { from: "Selector" } } }))).toBe("Selector")
  })
})

describe("namespaceLabelsOf", () => {
  it("adds the name label the API server sets to the namespace's own labels", () => {
    expect(namespaceLabelsOf("sessions", { team: "a" })).toEqual({
      "kubernetes.io/metadata.name": "sessions",
      team: "a"
    })
    expect(namespaceLabelsOf("sessions", undefined)).toEqual({ [NAMESPACE_NAME_LABEL]: "sessions" })
  })
})

describe("listenerAdmitsNamespace", () => {
  const selecting = (matchLabels?: Record<string, string>) =>
    listener({
      allowedRoutes: {
        namespaces: { from: "Selector", ...(matchLabels !== undefined ? { selector: { matchLabels } } : {}) }
      }
    })

  it("admits every namespace with All", () => {
    expect(
      listenerAdmitsNamespace(listener({ allowedRoutes: { namespaces: { from: "All" } } }), "infra", "sessions", {})
    )
      .toBe(true)
  })

  it("admits only the Gateway's own namespace with Same, the default", () => {
    expect(listenerAdmitsNamespace(listener(), "infra", "sessions", {})).toBe(false)
    expect(listenerAdmitsNamespace(listener(), "infra", "infra", {})).toBe(true)
    expect(listenerAdmitsNamespace(listener({ allowedRoutes: { namespaces: { from: "Same" } } }), "infra", "infra", {}))
      .toBe(true)
  })

  it("admits a namespace whose labels hold every label of the selector", () => {
    expect(listenerAdmitsNamespace(selecting({ team: "a", tier: "x" }), "infra", "sessions", { team: "a", tier: "x" }))
      .toBe(true)
    expect(listenerAdmitsNamespace(selecting({ team: "a", tier: "x" }), "infra", "sessions", { team: "a" })).toBe(false)
    expect(listenerAdmitsNamespace(selecting({ team: "a" }), "infra", "sessions", { team: "b" })).toBe(false)
  })

  it("admits a namespace only when every matchExpression holds too", () => {
    const expressing = (
      operator: "In" | "NotIn" | "Exists" | "DoesNotExist",
      values?: ReadonlyArray<string>
    ) =>
      listener({
        allowedRoutes: {
          namespaces: {
            from: "Selector",
            selector: { matchExpressions: [{ key: "team", operator, ...(values ? { values } : {}) }] }
          }
        }
      })
    const admits = (l: GatewayListener, labels: Record<string, string>) =>
      listenerAdmitsNamespace(l, "infra", "sessions", labels)
    expect([
      admits(expressing("In", ["a", "b"]), { team: "a" }),
      admits(expressing("In", ["a"]), {}),
      admits(expressing("NotIn", ["a"]), { team: "a" }),
      admits(expressing("NotIn", ["a"]), {}),
      admits(expressing("Exists"), { team: "" }),
      admits(expressing("DoesNotExist"), { team: "a" })
    ]).toEqual([true, false, false, true, true, false])
  })

  it("admits every namespace with a Selector that has no labels", () => {
    expect(listenerAdmitsNamespace(selecting(), "infra", "sessions", {})).toBe(true)
    expect(listenerAdmitsNamespace(selecting({}), "infra", "sessions", {})).toBe(true)
  })
})
