/**
 * The resource descriptors as the API server serves those types: every field the live
 * client, LocalCluster and the validators read (kubectl api-resources' columns, plus
 * the status subresource, generation and CRD flags), and the paths and names built from them.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  allResources,
  apiVersionOf,
  ClusterRoleResource,
  EventResource,
  EventV1Resource,
  GatewayClassResource,
  HttpRouteResource,
  IngressResource,
  NamespaceResource,
  qualifiedName,
  resourcePath,
  ServiceResource
} from "../../src/domain/Resources.js"

type Row = readonly [
  kind: string,
  listKind: string,
  apiVersion: string,
  plural: string,
  singular: string,
  namespaced: boolean,
  statusSubresource: boolean,
  hasGeneration: boolean,
  custom: boolean,
  shortNames: ReadonlyArray<string>
]

const served: ReadonlyArray<Row> = [
  ["Namespace", "NamespaceList", "v1", "namespaces", "namespace", false, true, false, false, ["ns"]],
  ["Service", "ServiceList", "v1", "services", "service", true, true, false, false, ["svc"]],
  ["Pod", "PodList", "v1", "pods", "pod", true, true, false, false, ["po"]],
  ["Event", "EventList", "v1", "events", "event", true, false, false, false, ["ev"]],
  ["Ingress", "IngressList", "networking.k8s.io/v1", "ingresses", "ingress", true, true, true, false, ["ing"]],
  [
    "IngressClass",
    "IngressClassList",
    "networking.k8s.io/v1",
    "ingressclasses",
    "ingressclass",
    false,
    false,
    true,
    false,
    []
  ],
  ["Event", "EventList", "events.k8s.io/v1", "events", "event", true, false, false, false, ["ev"]],
  [
    "EndpointSlice",
    "EndpointSliceList",
    "discovery.k8s.io/v1",
    "endpointslices",
    "endpointslice",
    true,
    false,
    true,
    false,
    []
  ],
  ["ServiceAccount", "ServiceAccountList", "v1", "serviceaccounts", "serviceaccount", true, false, false, false, [
    "sa"
  ]],
  ["Role", "RoleList", "rbac.authorization.k8s.io/v1", "roles", "role", true, false, false, false, []],
  [
    "ClusterRole",
    "ClusterRoleList",
    "rbac.authorization.k8s.io/v1",
    "clusterroles",
    "clusterrole",
    false,
    false,
    false,
    false,
    []
  ],
  [
    "RoleBinding",
    "RoleBindingList",
    "rbac.authorization.k8s.io/v1",
    "rolebindings",
    "rolebinding",
    true,
    false,
    false,
    false,
    []
  ],
  [
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "rbac.authorization.k8s.io/v1",
    "clusterrolebindings",
    "clusterrolebinding",
    false,
    false,
    false,
    false,
    []
  ],
  [
    "GatewayClass",
    "GatewayClassList",
    "gateway.networking.k8s.io/v1",
    "gatewayclasses",
    "gatewayclass",
    false,
    true,
    true,
    true,
    ["gc"]
  ],
  ["Gateway", "GatewayList", "gateway.networking.k8s.io/v1", "gateways", "gateway", true, true, true, true, ["gtw"]],
  ["HTTPRoute", "HTTPRouteList", "gateway.networking.k8s.io/v1", "httproutes", "httproute", true, true, true, true, []]
]

describe("resource descriptors", () => {
  it("describe every type as the API server serves it", () => {
    expect(
      allResources.map((r): Row => [
        r.kind,
        r.listKind,
        apiVersionOf(r),
        r.plural,
        r.singular,
        r.namespaced,
        r.statusSubresource,
        r.hasGeneration,
        r.custom,
        r.shortNames
      ])
    ).toEqual(served)
  })

  it("keep the group and version apart, the core group empty", () => {
    expect([ServiceResource.group, ServiceResource.version]).toEqual(["", "v1"])
    expect([HttpRouteResource.group, HttpRouteResource.version]).toEqual(["gateway.networking.k8s.io", "v1"])
    expect([EventV1Resource.group, EventResource.group]).toEqual(["events.k8s.io", ""])
  })

  it("name a type as the server's messages do, the core group's by its plural alone", () => {
    expect(qualifiedName(IngressResource)).toBe("ingresses.networking.k8s.io")
    expect(qualifiedName(ServiceResource)).toBe("services")
    expect(qualifiedName(ClusterRoleResource)).toBe("clusterroles.rbac.authorization.k8s.io")
  })

  it("build the paths of collections and objects, namespaced only where the type is", () => {
    expect(resourcePath(ServiceResource)).toBe("/api/v1/services")
    expect(resourcePath(ServiceResource, "ns")).toBe("/api/v1/namespaces/ns/services")
    expect(resourcePath(ServiceResource, "ns", "web")).toBe("/api/v1/namespaces/ns/services/web")
    expect(resourcePath(HttpRouteResource, "ns", "r")).toBe(
      "/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes/r"
    )
    expect(resourcePath(IngressResource)).toBe("/apis/networking.k8s.io/v1/ingresses")
    expect(resourcePath(GatewayClassResource, "ns", "cls")).toBe(
      "/apis/gateway.networking.k8s.io/v1/gatewayclasses/cls"
    )
    expect(resourcePath(NamespaceResource, undefined, "ns")).toBe("/api/v1/namespaces/ns")
  })
})
