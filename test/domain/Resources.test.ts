/**
 * The resource descriptors as the API server serves those types: where each lives on
 * the wire (kubectl api-resources' columns that the live client reads), and the paths
 * and names built from them.
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

type Row = readonly [kind: string, listKind: string, apiVersion: string, plural: string, namespaced: boolean]

/** As `kubectl api-resources` lists them on a cluster with Gateway API v1 installed. */
const served: ReadonlyArray<Row> = [
  ["Namespace", "NamespaceList", "v1", "namespaces", false],
  ["Service", "ServiceList", "v1", "services", true],
  ["Pod", "PodList", "v1", "pods", true],
  ["Event", "EventList", "v1", "events", true],
  ["Ingress", "IngressList", "networking.k8s.io/v1", "ingresses", true],
  ["IngressClass", "IngressClassList", "networking.k8s.io/v1", "ingressclasses", false],
  ["Event", "EventList", "events.k8s.io/v1", "events", true],
  ["EndpointSlice", "EndpointSliceList", "discovery.k8s.io/v1", "endpointslices", true],
  ["ServiceAccount", "ServiceAccountList", "v1", "serviceaccounts", true],
  ["Role", "RoleList", "rbac.authorization.k8s.io/v1", "roles", true],
  ["ClusterRole", "ClusterRoleList", "rbac.authorization.k8s.io/v1", "clusterroles", false],
  ["RoleBinding", "RoleBindingList", "rbac.authorization.k8s.io/v1", "rolebindings", true],
  ["ClusterRoleBinding", "ClusterRoleBindingList", "rbac.authorization.k8s.io/v1", "clusterrolebindings", false],
  ["GatewayClass", "GatewayClassList", "gateway.networking.k8s.io/v1", "gatewayclasses", false],
  ["Gateway", "GatewayList", "gateway.networking.k8s.io/v1", "gateways", true],
  ["HTTPRoute", "HTTPRouteList", "gateway.networking.k8s.io/v1", "httproutes", true],
  ["Lease", "LeaseList", "coordination.k8s.io/v1", "leases", true]
]

describe("resource descriptors", () => {
  it("describe every type as the API server serves it", () => {
    expect(
      allResources.map((r): Row => [
        r.kind,
        r.listKind,
        apiVersionOf(r),
        r.plural,
        r.namespaced
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
