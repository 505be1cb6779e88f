/**
 * Which endpoints of a Service port take traffic, read as a proxy reads them: Pods
 * behind the Service decide through their EndpointSlices; none behind it leaves the
 * data plane's registered backends to decide.
 */
import { describe, expect, it } from "@effect/vitest"
import type { EndpointSlice, Pod, Service } from "session-routing/kubernetes"
import { readyEndpoints } from "../src/internal/readyEndpoints.js"

const service: Service = {
  metadata: { name: "web", namespace: "ns" },
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] }
}
const pod: Pod = {
  metadata: { name: "web-0", namespace: "ns", labels: { app: "web" } },
  spec: { containers: [{ name: "main" }] }
}
const slice = (ready: boolean): EndpointSlice => ({
  metadata: { name: "web-abcde", namespace: "ns", labels: { "kubernetes.io/service-name": "web" } },
  addressType: "IPv4",
  endpoints: [{
    addresses: ["10.0.0.7"],
    conditions: { ready },
    targetRef: { kind: "Pod", namespace: "ns", name: "web-0" }
  }],
  ports: [{ name: "http", port: 8080, protocol: "TCP" }]
})

describe("readyEndpoints", () => {
  it("leaves a Service no Pod stands behind, or one without a selector, to registered backends", () => {
    expect(readyEndpoints(service, 80, [], [])).toEqual({ _tag: "NoPods" })
    expect(readyEndpoints({ ...service, spec: { ports: service.spec!.ports! } }, 80, [pod], [])).toEqual({
      _tag: "NoPods"
    })
  })

  it("names a selected Pod no EndpointSlice lists apart from one that is not ready", () => {
    expect(readyEndpoints(service, 80, [pod], [])).toEqual({
      _tag: "NoneReady",
      message:
        "no endpoints for Service ns/web port 80 (1 Pod selected, but no EndpointSlice lists them: is the EndpointSlice controller running?)"
    })
    expect(readyEndpoints(service, 80, [pod], [slice(false)])).toEqual({
      _tag: "NoneReady",
      message: "no ready endpoints for Service ns/web port 80 (1 Pod selected, none Ready)"
    })
  })

  it("names the selected Pods no workload serves before any symptom, a few and then how many more", () => {
    const none = () => false
    expect(readyEndpoints(service, 80, [pod], [slice(false)], none)).toEqual({
      _tag: "NoneReady",
      message:
        "no ready endpoints for Service ns/web port 80: Pod ns/web-0 selected, but LocalCluster runs no containers and no workload is registered for it (DataPlane.registerPod serves a Pod at an address and makes it Ready)"
    })
    const many = ["a", "b", "c", "d", "e"].map((name): Pod => ({ ...pod, metadata: { ...pod.metadata, name } }))
    expect(readyEndpoints(service, 80, many, [], none)).toEqual({
      _tag: "NoneReady",
      message:
        "no ready endpoints for Service ns/web port 80: Pods ns/a, ns/b, ns/c and 2 more selected, but LocalCluster runs no containers and no workload is registered for them (DataPlane.registerPod serves a Pod at an address and makes it Ready)"
    })
    // One Pod served is enough to look further: then it is the slices or readiness.
    expect(readyEndpoints(service, 80, many, [slice(false)], (p) => p.metadata?.name === "a")).toEqual({
      _tag: "NoneReady",
      message: "no ready endpoints for Service ns/web port 80 (5 Pods selected, none Ready)"
    })
  })

  it("lists a ready endpoint with the slice port that has the Service port's name", () => {
    expect(readyEndpoints(service, 80, [pod], [slice(true)])).toEqual({
      _tag: "Ready",
      endpoints: [{ pod: { namespace: "ns", name: "web-0" }, address: "10.0.0.7", port: 8080 }]
    })
  })
})
