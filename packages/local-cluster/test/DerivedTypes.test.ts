/**
 * What the types described once do to objects: defaults filled in in one pass (a
 * route's CRD defaults, an Ingress's status, a Pod's spec and status, an EndpointSlice's
 * ports, an IngressClass's parameter scope), field types and keyed lists checked from
 * the description, and the validators refusing a value outside a described set.
 */
import { describe, expect, it } from "@effect/vitest"
import { type KubeObject } from "session-routing/kubernetes"
import { defaulted } from "../src/internal/storeDefaults.js"
import {
  EndpointSliceResource,
  GatewayClassResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  PodResource
} from "../src/ServedResources.js"
import { validateObject } from "../src/Validation.js"

type Json = Record<string, any>

describe("what the derived Ingress types do", () => {
  const ingress = (extra: Json): KubeObject =>
    ({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "web", namespace: "demo" },
      spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
      ...extra
    }) as never

  it("defaults an Ingress's status to an empty load balancer, and keeps what a controller wrote", () => {
    expect((defaulted(IngressResource, ingress({})) as Json).status).toEqual({ loadBalancer: {} })
    expect((defaulted(IngressResource, ingress({ status: {} })) as Json).status).toEqual({ loadBalancer: {} })
    const programmed = { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } }
    expect((defaulted(IngressResource, ingress({ status: programmed })) as Json).status).toEqual(programmed)
  })

  it("fills in an IngressClass's parameter scope, and refuses one outside the described set", () => {
    const ingressClass = (parameters: Json): KubeObject =>
      ({
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "local" },
        spec: { controller: "example.com/local", parameters }
      }) as never
    const parameters = { apiGroup: "example.com", kind: "Params", name: "p" }
    expect((defaulted(IngressClassResource, ingressClass(parameters)) as Json).spec.parameters).toEqual({
      ...parameters,
      scope: "Cluster"
    })
    expect(validateObject(IngressClassResource, ingressClass({ ...parameters, scope: "Node" }))).toEqual([{
      reason: "FieldValueNotSupported",
      field: "spec.parameters.scope",
      message: "Unsupported value: \"Node\": supported values: \"Cluster\", \"Namespace\""
    }])
  })

  it("refuses a path type outside the described set", () => {
    const rules = [{
      http: { paths: [{ path: "/", pathType: "Glob", backend: { service: { name: "web", port: { number: 80 } } } }] }
    }]
    const errors = validateObject(IngressResource, ingress({ spec: { rules } }))
    expect(errors).toEqual([{
      reason: "FieldValueNotSupported",
      field: "spec.rules[0].http.paths[0].pathType",
      message: "Unsupported value: \"Glob\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""
    }])
  })
})

describe("what the derived workload types do", () => {
  const tolerations = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].map((key) => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300
  }))

  // The whole defaulted Pod, as the hand-written podDefaults made it: the description's
  // defaults and the ones worked out from other fields or added by admission together.
  it("defaults a Pod's spec, containers and status as the server does", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: {
        containers: [{ name: "main", image: "nginx:1.27", ports: [{ containerPort: 80 }] }],
        initContainers: [{ name: "init", image: "busybox", resources: { limits: { cpu: "1" } } }]
      }
    } as unknown as KubeObject
    const container = { terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File" }
    expect(defaulted(PodResource, pod)).toEqual({
      ...pod,
      spec: {
        containers: [{
          name: "main",
          image: "nginx:1.27",
          ports: [{ containerPort: 80, protocol: "TCP" }],
          ...container,
          resources: {},
          imagePullPolicy: "IfNotPresent"
        }],
        initContainers: [{
          name: "init",
          image: "busybox",
          ...container,
          resources: { limits: { cpu: "1" } },
          imagePullPolicy: "Always"
        }],
        restartPolicy: "Always",
        terminationGracePeriodSeconds: 30,
        dnsPolicy: "ClusterFirst",
        securityContext: {},
        schedulerName: "default-scheduler",
        serviceAccountName: "default",
        serviceAccount: "default",
        enableServiceLinks: true,
        priority: 0,
        preemptionPolicy: "PreemptLowerPriority",
        tolerations
      },
      status: { phase: "Pending", qosClass: "BestEffort" }
    })
  })

  it("defaults an EndpointSlice port's name and protocol, and keeps those it was given", () => {
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-1", namespace: "demo" },
      addressType: "IPv4",
      ports: [{ port: 8080 }, { name: "dns", port: 53, protocol: "UDP" }]
    } as unknown as KubeObject
    expect((defaulted(EndpointSliceResource, slice) as Json).ports).toEqual([
      { name: "", protocol: "TCP", port: 8080 },
      { name: "dns", port: 53, protocol: "UDP" }
    ])
  })

  it("refuses a restart policy and an address type outside the described sets", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: { containers: [{ name: "main", image: "nginx" }], restartPolicy: "Sometimes" }
    } as unknown as KubeObject
    expect(validateObject(PodResource, pod).map((e) => [e.field, e.message])).toEqual([[
      "spec.restartPolicy",
      "Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\", \"OnFailure\""
    ]])
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-1", namespace: "demo" },
      addressType: "IPv5"
    } as unknown as KubeObject
    expect(validateObject(EndpointSliceResource, slice).map((e) => [e.field, e.message])).toEqual([[
      "addressType",
      "Unsupported value: \"IPv5\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
    ]])
  })
})

const route = (rule: Json): KubeObject =>
  ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "r", namespace: "demo" },
    spec: { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "web", port: 80 }], ...rule }] }
  }) as never

describe("what the derived types do", () => {
  // Defaults were filled in twice, the CRD schema's then the shape's; now once, from the
  // description, with the same result: the CRD's defaults and those it lacked alike.
  it("defaults a route in one pass, header matches, redirects and mirrors included", () => {
    const object = defaulted(
      HttpRouteResource,
      route({
        matches: [{ headers: [{ name: "x-session", value: "a" }] }],
        filters: [
          { type: "RequestRedirect", requestRedirect: { scheme: "https" } },
          {
            type: "RequestMirror",
            requestMirror: { backendRef: { name: "copy", port: 80 }, fraction: { numerator: 5 } }
          }
        ]
      })
    ) as Json
    expect(object.spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }],
      rules: [{
        matches: [{
          path: { type: "PathPrefix", value: "/" },
          headers: [{ type: "Exact", name: "x-session", value: "a" }]
        }],
        filters: [
          { type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 302 } },
          {
            type: "RequestMirror",
            requestMirror: {
              backendRef: { group: "", kind: "Service", name: "copy", port: 80 },
              fraction: { numerator: 5, denominator: 100 }
            }
          }
        ],
        backendRefs: [{ group: "", kind: "Service", name: "web", port: 80, weight: 1 }]
      }]
    })
  })

  it("accepts a retry's status codes as the integers the CRD declares", () => {
    expect(validateObject(HttpRouteResource, route({ retry: { codes: [503], attempts: 2 } }))).toEqual([])
  })

  it("refuses a field the schema did not check before when its JSON type is wrong", () => {
    expect(validateObject(HttpRouteResource, route({ timeouts: { request: 10 } }))).toEqual([
      {
        reason: "FieldValueTypeInvalid",
        field: "spec.rules[0].timeouts.request",
        message:
          "Invalid value: \"integer\": spec.rules[0].timeouts.request in body must be of type string: \"integer\""
      },
      {
        reason: "FieldValueInvalid",
        field: "<nil>",
        message:
          "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
      }
    ])
  })

  it("refuses two header matches of the same name, a keyed list in the CRD", () => {
    const errors = validateObject(
      HttpRouteResource,
      route({ matches: [{ headers: [{ name: "x-a", value: "1" }, { name: "x-a", value: "2" }] }] })
    )
    expect(errors.map((e) => [e.reason, e.field])).toEqual([[
      "FieldValueDuplicate",
      "spec.rules[0].matches[0].headers[1]"
    ]])
  })

  it("checks a GatewayClass's field types, and says nothing of CEL rules it has none of", () => {
    const gatewayClass = (spec: Json, name = "local"): KubeObject =>
      ({ apiVersion: "gateway.networking.k8s.io/v1", kind: "GatewayClass", metadata: { name }, spec }) as never
    expect(validateObject(GatewayClassResource, gatewayClass({ controllerName: "example.com/local" }))).toEqual([])
    expect(validateObject(GatewayClassResource, gatewayClass({ controllerName: 1 }, "Bad")).map((e) => e.field))
      .toEqual([
        "metadata.name",
        "spec.controllerName"
      ])
  })
})
