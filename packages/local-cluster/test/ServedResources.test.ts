/**
 * What the cluster serves of each type beyond where it lives: discovery's singular
 * and short names, whether writes keep status, whether generation is kept, whether it
 * is a custom resource, as a real API server with Gateway API v1 installed has them;
 * and any descriptor of a served type, the library's included, finds its served one.
 */
import { describe, expect, it } from "@effect/vitest"
import { allResources, IngressResource, type ResourceType } from "session-routing/kubernetes"
import * as Served from "../src/ServedResources.js"

type Row = readonly [
  group: string,
  plural: string,
  singular: string,
  statusSubresource: boolean,
  hasGeneration: boolean,
  custom: boolean,
  shortNames: ReadonlyArray<string>
]

const served: ReadonlyArray<Row> = [
  ["", "namespaces", "namespace", true, false, false, ["ns"]],
  ["", "services", "service", true, false, false, ["svc"]],
  ["", "pods", "pod", true, false, false, ["po"]],
  ["", "events", "event", false, false, false, ["ev"]],
  ["networking.k8s.io", "ingresses", "ingress", true, true, false, ["ing"]],
  ["networking.k8s.io", "ingressclasses", "ingressclass", false, true, false, []],
  ["events.k8s.io", "events", "event", false, false, false, ["ev"]],
  ["discovery.k8s.io", "endpointslices", "endpointslice", false, true, false, []],
  ["", "serviceaccounts", "serviceaccount", false, false, false, ["sa"]],
  ["rbac.authorization.k8s.io", "roles", "role", false, false, false, []],
  ["rbac.authorization.k8s.io", "clusterroles", "clusterrole", false, false, false, []],
  ["rbac.authorization.k8s.io", "rolebindings", "rolebinding", false, false, false, []],
  ["rbac.authorization.k8s.io", "clusterrolebindings", "clusterrolebinding", false, false, false, []],
  ["coordination.k8s.io", "leases", "lease", false, false, false, []],
  ["gateway.networking.k8s.io", "gatewayclasses", "gatewayclass", true, true, true, ["gc"]],
  ["gateway.networking.k8s.io", "gateways", "gateway", true, true, true, ["gtw"]],
  ["gateway.networking.k8s.io", "httproutes", "httproute", true, true, true, []]
]

describe("the served resource types", () => {
  it("carry what discovery and the store need of each type", () => {
    expect(
      Served.servedResources.map((r): Row => [
        r.group,
        r.plural,
        r.singular,
        r.statusSubresource,
        r.hasGeneration,
        r.custom,
        r.shortNames
      ])
    ).toEqual(served)
  })

  // The registries' AllowCreateOnUpdate and AllowUnconditionalUpdate.
  it("let a PUT create only Services and Leases, and update unconditionally all but Leases and custom resources", () => {
    const puts = (pick: (r: Served.ServedResource) => boolean) =>
      Served.servedResources.filter(pick).map((r) => `${r.plural}${r.group === "" ? "" : `.${r.group}`}`)
    expect(puts((r) => r.createOnUpdate)).toEqual(["services", "leases.coordination.k8s.io"])
    expect(puts((r) => !r.unconditionalUpdate)).toEqual([
      "leases.coordination.k8s.io",
      "gatewayclasses.gateway.networking.k8s.io",
      "gateways.gateway.networking.k8s.io",
      "httproutes.gateway.networking.k8s.io"
    ])
  })

  it("serve every type the library names, and find each from the library's descriptor", () => {
    expect(allResources.map((r) => Served.servedOf(r).plural)).toEqual(allResources.map((r) => r.plural))
    expect(Served.servedOf(IngressResource)).toBe(Served.IngressResource)
    expect(Served.servedOf(Served.IngressResource)).toBe(Served.IngressResource)
  })

  it("refuse a type they do not serve, naming it", () => {
    const unknown: ResourceType<unknown> = {
      kind: "Widget",
      listKind: "WidgetList",
      group: "example.com",
      version: "v1",
      plural: "widgets",
      namespaced: true
    }
    expect(() => Served.servedOf(unknown)).toThrow("the local cluster does not serve widgets.example.com")
  })
})
