/**
 * The needs `check` asks the authorizer about: which ones routing cannot do without,
 * where each is asked (the Gateway in its own namespace), what each is for, the line
 * that grants a refused one, and that they are, verb for verb, what the
 * least-privilege manifest grants, in both modes and both status sources.
 */
import { describe, expect, it } from "@effect/vitest"
import { clusterRules, sessionRules } from "../../src/domain/RbacManifest.js"
import {
  bindingSubject,
  controllerNeeds,
  describeNeed,
  featureNeeds,
  grantHint,
  needResource,
  routingNeeds
} from "../../src/domain/Requirements.js"
import {
  EndpointSliceResource,
  EventResource,
  EventV1Resource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  LeaseResource,
  PodResource,
  ServiceResource
} from "../../src/domain/Resources.js"

const NS = "telo-sessions"

const sorted = (verbs: ReadonlyArray<string>) => [...verbs].sort()

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
        verbs: ["get", "list", "create", "patch", "delete"],
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
        verbs: ["get", "list", "create", "patch", "delete"],
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

describe("the needs against the least-privilege manifest", () => {
  for (const mode of ["ingress", "gateway"] as const) {
    for (
      const [statusSource, probe, controller] of [
        ["watch", false, false],
        ["poll", false, false],
        ["watch", true, false],
        ["watch", false, true],
        ["poll", true, true]
      ] as const
    ) {
      const what = `${statusSource}${probe ? ", probing" : ""}${controller ? ", controller mode" : ""}`
      it(`asks for exactly the verbs the ${mode} manifest grants (${what})`, () => {
        const settings = {
          sessionNamespace: NS,
          gatewayNamespace: NS,
          watch: statusSource === "watch",
          events: true,
          probe
        }
        const rbac = { mode, sessionNamespace: NS, gateway: { name: "sessions" }, statusSource, probe, controller }
        const asked = [
          ...routingNeeds(mode, settings),
          ...(controller ? controllerNeeds(NS) : []),
          ...featureNeeds(settings)
        ].map((need) => ({
          group: need.resource.group,
          resource: need.subresource === undefined
            ? need.resource.plural
            : `${need.resource.plural}/${need.subresource}`,
          scope: need.namespace === undefined ? "cluster" : "namespace",
          verbs: sorted(need.verbs)
        }))
        const granted = [
          ...sessionRules(rbac).map((rule) => ({ rule, scope: "namespace" })),
          ...clusterRules(rbac).map((rule) => ({ rule, scope: "cluster" }))
        ]
          // The namespace's own read is the namespace check, not a permission question.
          .filter(({ rule }) => rule.resources?.[0] !== "namespaces")
          .map(({ rule, scope }) => ({
            group: rule.apiGroups?.[0] ?? "",
            resource: rule.resources?.[0] ?? "",
            scope,
            verbs: sorted(rule.verbs)
          }))
        const byResource = (
          a: { readonly resource: string; readonly group: string },
          b: { readonly resource: string; readonly group: string }
        ) => a.resource.localeCompare(b.resource) || a.group.localeCompare(b.group)
        expect([...asked].sort(byResource)).toEqual([...granted].sort(byResource))
      })
    }
  }
})

describe("controllerNeeds", () => {
  it("asks for the Pods, their status and the Lease in the session namespace, all required", () => {
    expect(controllerNeeds(NS)).toEqual([
      {
        resource: PodResource,
        verbs: ["get", "list", "watch", "patch"],
        namespace: NS,
        required: true,
        use: "finding the session Pods and writing their session label and endpoints annotation"
      },
      {
        resource: PodResource,
        subresource: "status",
        verbs: ["patch"],
        namespace: NS,
        required: true,
        use: "the Pods' RoutesProgrammed condition"
      },
      {
        resource: LeaseResource,
        verbs: ["get", "list", "create", "update"],
        namespace: NS,
        required: true,
        use: "electing the replica that routes (list: no replica runs with another --shards)"
      }
    ])
  })
})

describe("how a need is named and granted", () => {
  const subject = "--serviceaccount=telo-sessions:runner"

  it("names a subresource need and grants it by its resource/subresource", () => {
    const finalizers = routingNeeds("ingress", { sessionNamespace: NS, watch: false }).at(-1)!
    expect(describeNeed(finalizers)).toBe(`pods/finalizers in namespace "${NS}"`)
    expect(grantHint(finalizers, ["update"], subject)).toBe(
      `grant them to this identity: kubectl create role session-routing-pods-finalizers -n ${NS} --verb=update --resource=pods/finalizers && kubectl create rolebinding session-routing-pods-finalizers -n ${NS} --role=session-routing-pods-finalizers ${subject}`
    )
  })

  const [service, ingress, ingressClass] = routingNeeds("ingress", { sessionNamespace: NS, watch: false })

  it("names a namespaced need with its namespace and a cluster-scoped one as cluster-wide", () => {
    expect(describeNeed(service!)).toBe(`services in namespace "${NS}"`)
    expect(describeNeed(ingress!)).toBe(`ingresses.networking.k8s.io in namespace "${NS}"`)
    expect(describeNeed(ingressClass!)).toBe("ingressclasses.networking.k8s.io (cluster-wide)")
  })

  it("grants a namespaced need through a Role and its binding, a cluster-scoped one through a ClusterRole", () => {
    expect(grantHint(ingress!, ["get", "watch"], subject)).toBe(
      `grant them to this identity: kubectl create role session-routing-ingresses-networking-k8s-io -n ${NS} --verb=get,watch --resource=ingresses.networking.k8s.io && kubectl create rolebinding session-routing-ingresses-networking-k8s-io -n ${NS} --role=session-routing-ingresses-networking-k8s-io ${subject}`
    )
    expect(grantHint(ingressClass!, ["list"], "--user=alice")).toBe(
      "grant them to this identity: kubectl create clusterrole session-routing-ingressclasses-networking-k8s-io --verb=list --resource=ingressclasses.networking.k8s.io && kubectl create clusterrolebinding session-routing-ingressclasses-networking-k8s-io --clusterrole=session-routing-ingressclasses-networking-k8s-io --user=alice"
    )
  })

  // Several refused needs each get a line: run one after another, none may meet AlreadyExists.
  it("names each grant after its role and resource, so the lines of several needs never share a name", () => {
    const needs = [...routingNeeds("ingress", { sessionNamespace: NS, watch: true }), ...controllerNeeds(NS)]
    const names = needs.map((need) =>
      /kubectl create (?:cluster)?role (\S+)/.exec(grantHint(need, ["get"], subject, "session-routing-controller"))![1]
    )
    expect(new Set(names).size).toBe(new Set(needs.map(needResource)).size)
  })

  it("binds a ServiceAccount as one, anyone else as a user, and asks the server when it is not known", () => {
    expect(bindingSubject("system:serviceaccount:ops:deployer")).toBe("--serviceaccount=ops:deployer")
    expect(bindingSubject("kubernetes-admin")).toBe("--user=kubernetes-admin")
    expect(bindingSubject(undefined)).toBe(
      `--user="$(kubectl auth whoami -o jsonpath='{.status.userInfo.username}')"`
    )
  })
})
