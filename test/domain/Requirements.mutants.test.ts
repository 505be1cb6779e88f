/**
 * The needs as `check` prints them: which ones routing cannot do without, where each
 * is asked (the Gateway in its own namespace), what each is for, and the line that
 * grants a refused one. Requirements.test.ts holds the verbs to the RBAC manifest.
 */
import { describe, expect, it } from "@effect/vitest"
import { describeNeed, featureNeeds, grantHint, routingNeeds } from "../../src/domain/Requirements.js"
import {
  EndpointSliceResource,
  EventResource,
  EventV1Resource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  PodResource,
  ServiceResource
} from "../../src/domain/Resources.js"

const NS = "telo-sessions"

/** What both modes ask of the session Pod, for the owner reference that blocks its deletion. */
const ownerFinalizers = {
  resource: PodResource,
  subresource: "finalizers",
  verbs: ["update"],
  namespace: NS,
  required: false,
  use: "owner references that block the Pod's deletion, where OwnerReferencesPermissionEnforcement is on"
}

describe("routingNeeds", () => {
  it("lists the ingress mode's needs, the Service and the Ingress required, the classes only for a diagnosis", () => {
    expect(routingNeeds("ingress", { sessionNamespace: NS, watch: false })).toEqual([
      {
        resource: ServiceResource,
        verbs: ["list", "create", "patch", "delete"],
        namespace: NS,
        required: true,
        use: "the session Service"
      },
      {
        resource: IngressResource,
        verbs: ["get", "list", "create", "patch", "delete"],
        namespace: NS,
        required: true,
        use: "the session Ingress and its status"
      },
      {
        resource: IngressClassResource,
        verbs: ["list"],
        namespace: undefined,
        required: false,
        use: "diagnosing an unclaimed Ingress"
      },
      ownerFinalizers
    ])
  })

  it("lists the gateway mode's needs, the Gateway asked in its own namespace", () => {
    expect(routingNeeds("gateway", { sessionNamespace: NS, gatewayNamespace: "infra", watch: true })).toEqual([
      {
        resource: ServiceResource,
        verbs: ["list", "create", "patch", "delete"],
        namespace: NS,
        required: true,
        use: "the session Service"
      },
      {
        resource: HttpRouteResource,
        verbs: ["get", "list", "create", "patch", "delete", "watch"],
        namespace: NS,
        required: true,
        use: "the session HTTPRoutes and their status"
      },
      {
        resource: GatewayResource,
        verbs: ["get"],
        namespace: "infra",
        required: false,
        use: "learning the Gateway's controller and diagnosing an unaccepted route"
      },
      {
        resource: GatewayClassResource,
        verbs: ["get"],
        namespace: undefined,
        required: false,
        use: "the same, through the GatewayClass"
      },
      ownerFinalizers
    ])
  })

  it("asks for the Gateway in the session namespace when no other is given", () => {
    const gateway = routingNeeds("gateway", { sessionNamespace: NS, watch: false }).find((need) =>
      need.resource === GatewayResource
    )
    expect(gateway?.namespace).toBe(NS)
  })
})

describe("featureNeeds", () => {
  it("asks for nothing when neither Events nor probes are on", () => {
    expect(featureNeeds({ sessionNamespace: NS, watch: true })).toEqual([])
    expect(featureNeeds({ sessionNamespace: NS, watch: true, events: false, probe: false })).toEqual([])
  })

  it("asks for writing Events and listing EndpointSlices, neither required", () => {
    expect(featureNeeds({ sessionNamespace: NS, watch: false, events: true, probe: true })).toEqual([
      {
        resource: EventV1Resource,
        verbs: ["create", "patch"],
        namespace: NS,
        required: false,
        use: "Events on the session Pod"
      },
      {
        resource: EventResource,
        verbs: ["create", "patch"],
        namespace: NS,
        required: false,
        use: "Events on the session Pod"
      },
      {
        resource: EndpointSliceResource,
        verbs: ["list"],
        namespace: NS,
        required: false,
        use: "probing programmed hosts"
      }
    ])
  })
})

describe("describeNeed and grantHint", () => {
  it("names a subresource need and grants it by its resource/subresource", () => {
    const finalizers = routingNeeds("ingress", { sessionNamespace: NS, watch: false }).at(-1)!
    expect(describeNeed(finalizers)).toBe(`pods/finalizers in namespace "${NS}"`)
    expect(grantHint(finalizers, ["update"])).toBe(
      `grant them in a Role bound to this identity: kubectl create role session-routing -n ${NS} --verb=update --resource=pods/finalizers`
    )
  })

  const [service, ingress, ingressClass] = routingNeeds("ingress", { sessionNamespace: NS, watch: false })

  it("names a namespaced need with its namespace and a cluster-scoped one as cluster-wide", () => {
    expect(describeNeed(service!)).toBe(`services in namespace "${NS}"`)
    expect(describeNeed(ingress!)).toBe(`ingresses.networking.k8s.io in namespace "${NS}"`)
    expect(describeNeed(ingressClass!)).toBe("ingressclasses.networking.k8s.io (cluster-wide)")
  })

  it("grants a namespaced need through a Role and a cluster-scoped one through a ClusterRole", () => {
    expect(grantHint(ingress!, ["get", "watch"])).toBe(
      `grant them in a Role bound to this identity: kubectl create role session-routing -n ${NS} --verb=get,watch --resource=ingresses.networking.k8s.io`
    )
    expect(grantHint(ingressClass!, ["list"])).toBe(
      "grant them in a ClusterRole bound to this identity: kubectl create clusterrole session-routing-read --verb=list --resource=ingressclasses.networking.k8s.io"
    )
  })
})
