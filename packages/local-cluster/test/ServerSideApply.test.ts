/**
 * The pieces of server-side apply on their own: FieldsV1 in and out, paths as
 * conflict messages print them, merges by list keys, pruning and defaults.
 */
import { describe, expect, it } from "@effect/vitest"
import { GatewayResource, ServiceResource } from "../src/ServedResources.js"
import {
  applyDefaults,
  fieldSetOf,
  fromFieldsV1,
  merge,
  pathString,
  prune,
  shapeOf,
  toFieldsV1
} from "../src/ServerSideApply.js"

describe("FieldsV1", () => {
  it("writes a set as the server does: members with children carry '.'", () => {
    const set = fieldSetOf(ServiceResource, {
      metadata: { labels: { app: "web" } },
      spec: { ports: [{ port: 80, name: "http" }], selector: { app: "web" } }
    })
    const fields = toFieldsV1(set)
    expect(fields).toEqual({
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:spec": {
        "f:ports": { "k:{\"port\":80,\"protocol\":\"TCP\"}": { ".": {}, "f:name": {}, "f:port": {} } },
        "f:selector": {}
      }
    })
    expect(fromFieldsV1(fields).equals(set)).toBe(true)
  })

  it("prints paths as conflict messages do", () => {
    expect(pathString(["f:spec", "f:ports", "k:{\"port\":80,\"protocol\":\"TCP\"}", "f:name"])).toBe(
      `.spec.ports[port=80,protocol="TCP"].name`
    )
    expect(pathString(["f:metadata", "f:finalizers", "v:\"x\""])).toBe(`.metadata.finalizers[="x"]`)
  })
})

describe("merge", () => {
  it("merges keyed list items and keeps the live ones the config does not name", () => {
    const shape = shapeOf(ServiceResource)
    const merged = merge(
      { spec: { ports: [{ port: 80, protocol: "TCP", name: "http" }, { port: 443, protocol: "TCP", name: "https" }] } },
      { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 53, protocol: "UDP" }] } },
      shape
    )
    expect(merged).toEqual({
      spec: {
        ports: [
          { port: 80, protocol: "TCP", name: "http", targetPort: 8080 },
          { port: 443, protocol: "TCP", name: "https" },
          { port: 53, protocol: "UDP" }
        ]
      }
    })
  })

  it("replaces atomic values whole", () => {
    const shape = shapeOf(ServiceResource)
    expect(merge({ spec: { selector: { a: "1", b: "2" } } }, { spec: { selector: { a: "1" } } }, shape)).toEqual({
      spec: { selector: { a: "1" } }
    })
  })
})

describe("schema", () => {
  it("prunes unknown fields and nulls, and for built-ins empty lists", () => {
    const shape = shapeOf(ServiceResource)
    expect(prune({ spec: { ports: [], bogus: 1, type: null, clusterIP: "None" } }, shape, true)).toEqual({
      spec: { clusterIP: "None" }
    })
  })

  it("defaults a Gateway listener's allowedRoutes and status", () => {
    const defaulted = applyDefaults(
      { spec: { gatewayClassName: "x", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] } },
      shapeOf(GatewayResource)
    ) as { spec: { listeners: Array<Record<string, unknown>> }; status: { conditions: Array<{ type: string }> } }
    expect(defaulted.spec.listeners[0]?.allowedRoutes).toEqual({ namespaces: { from: "Same" } })
    expect(defaulted.status.conditions.map((c) => c.type)).toEqual(["Accepted", "Programmed"])
  })
})
