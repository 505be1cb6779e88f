/**
 * Strategic merge patches on built-in types, merged by their structural shapes: what
 * kubectl's client-side apply, edit and diff send for a Service must change one port,
 * not replace the list.
 */
import { describe, expect, it } from "@effect/vitest"
import { strategicMerge } from "../src/internal/strategicMerge.js"
import { shapeOf } from "../src/internal/typeShapes.js"
import { IngressResource, PodResource, ServiceResource } from "../src/ServedResources.js"

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
    // The patch's items in its order, as the server orders a merged list.
    expect([merged.metadata.finalizers, merged.metadata.labels]).toEqual([["b", "a"], { tier: "front" }])
    const removed = strategicMerge(
      service,
      { metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } },
      SERVICE
    ) as typeof service
    expect(removed.metadata.finalizers).toEqual([])
  })

  it("orders a merged list as kube-apiserver 1.35 does: what the live list lacks before the live items, the rest in live order", () => {
    // Each step's answer was recorded from the real control plane (`npm run cluster:real`), patching pods/status.
    const POD = shapeOf(PodResource)
    const steps: ReadonlyArray<readonly [ReadonlyArray<readonly [string, string]>, ReadonlyArray<string>]> = [
      [[["A", "True"]], ["A=True"]],
      [[["B", "True"]], ["B=True", "A=True"]],
      [[["C", "True"], ["A", "False"]], ["C=True", "B=True", "A=False"]],
      [[["D", "True"]], ["D=True", "C=True", "B=True", "A=False"]],
      [[["A", "True"], ["E", "True"]], ["D=True", "C=True", "B=True", "A=True", "E=True"]],
      [[["E", "False"], ["F", "True"]], ["D=True", "C=True", "B=True", "A=True", "E=False", "F=True"]]
    ]
    let pod: unknown = { status: {} }
    for (const [conditions, expected] of steps) {
      pod = strategicMerge(pod, {
        status: { conditions: conditions.map(([type, status]) => ({ type, status })) }
      }, POD)
      const merged = (pod as { status: { conditions: Array<{ type: string; status: string }> } }).status.conditions
      expect(merged.map((c) => `${c.type}=${c.status}`)).toEqual(expected)
    }
    // A set list alike, and `$setElementOrder` places the items it names among the live ones by their live places.
    let meta: unknown = { metadata: {} }
    for (
      const [patch, expected] of [
        [{ finalizers: ["one"] }, ["one"]],
        [{ finalizers: ["two"] }, ["two", "one"]],
        [{ finalizers: ["three", "one"] }, ["three", "two", "one"]],
        [{ "$setElementOrder/finalizers": ["one", "two"], finalizers: ["one"] }, ["three", "one", "two"]]
      ] as const
    ) {
      meta = strategicMerge(meta, { metadata: patch }, POD)
      expect((meta as { metadata: { finalizers: Array<string> } }).metadata.finalizers).toEqual(expected)
    }
  })

  it("replaces an atomic list whole, as an Ingress's rules are", () => {
    const ingress = { spec: { rules: [{ host: "a.example.test" }, { host: "b.example.test" }] } }
    expect(strategicMerge(ingress, { spec: { rules: [{ host: "c.example.test" }] } }, shapeOf(IngressResource)))
      .toEqual({
        spec: { rules: [{ host: "c.example.test" }] }
      })
  })
})
