/**
 * Strategic merge patches on built-in types, merged by their structural shapes: what
 * kubectl's client-side apply, edit and diff send for a Service must change one port,
 * not replace the list.
 */
import { describe, expect, it } from "@effect/vitest"
import { strategicMerge } from "../src/internal/strategicMerge.js"
import { shapeOf } from "../src/internal/typeShapes.js"
import { IngressResource, ServiceResource } from "../src/ServedResources.js"

const service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", labels: { app: "web" }, finalizers: ["a"] },
  spec: {
    selector: { app: "web" },
    ports: [
      { name: "http", port: 80, protocol: "TCP", targetPort: 8080 },
      { name: "admin", port: 9000, protocol: "TCP", targetPort: 9000 }
    ]
  }
}
const SERVICE = shapeOf(ServiceResource)

describe("strategicMerge", () => {
  it("merges a keyed list item by its merge key and keeps the others", () => {
    // What kubectl 1.35 apply sends when one port's targetPort changed.
    const patch = {
      spec: { "$setElementOrder/ports": [{ port: 80 }, { port: 9000 }], ports: [{ port: 80, targetPort: 8081 }] }
    }
    expect(strategicMerge(service, patch, SERVICE)).toEqual({
      ...service,
      spec: { ...service.spec, ports: [{ ...service.spec.ports[0], targetPort: 8081 }, service.spec.ports[1]] }
    })
  })

  it("deletes an item with $patch: delete, orders by $setElementOrder, and appends a new key", () => {
    const patch = {
      spec: {
        "$setElementOrder/ports": [{ port: 443 }, { port: 80 }],
        ports: [{ port: 9000, $patch: "delete" }, { name: "https", port: 443, targetPort: 8443 }]
      }
    }
    const merged = strategicMerge(service, patch, SERVICE) as typeof service
    expect(merged.spec.ports).toEqual([{ name: "https", port: 443, targetPort: 8443 }, service.spec.ports[0]])
  })

  it("replaces a list with a $patch: replace item, and a map with $patch: replace", () => {
    const list = strategicMerge(
      service,
      { spec: { ports: [{ $patch: "replace" }, { port: 81 }] } },
      SERVICE
    ) as typeof service
    expect(list.spec.ports).toEqual([{ port: 81 }])
    const map = strategicMerge(
      service,
      { spec: { selector: { $patch: "replace", tier: "front" } } },
      SERVICE
    ) as typeof service
    expect(map.spec.selector).toEqual({ tier: "front" })
  })

  it("takes the union of a set list, removes with $deleteFromPrimitiveList, and deletes a field set to null", () => {
    const merged = strategicMerge(
      service,
      { metadata: { finalizers: ["b", "a"], labels: { app: null, tier: "front" } } },
      SERVICE
    ) as typeof service
    expect([merged.metadata.finalizers, merged.metadata.labels]).toEqual([["a", "b"], { tier: "front" }])
    const removed = strategicMerge(
      service,
      { metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } },
      SERVICE
    ) as typeof service
    expect(removed.metadata.finalizers).toEqual([])
  })

  it("replaces an atomic list whole, as an Ingress's rules are", () => {
    const ingress = { spec: { rules: [{ host: "a.example.test" }, { host: "b.example.test" }] } }
    expect(strategicMerge(ingress, { spec: { rules: [{ host: "c.example.test" }] } }, shapeOf(IngressResource)))
      .toEqual({
        spec: { rules: [{ host: "c.example.test" }] }
      })
  })
})
