/**
 * What the defaults and value sets declared in the built-in types' one description
 * do to objects: the same defaults the server filled in before they were declared
 * there (an Ingress's status, a Pod's spec and status, an EndpointSlice's ports), the
 * ones it lacked (an IngressClass's parameter scope), and the validators refusing a
 * value outside a described set.
 */
import { describe, expect, it } from "@effect/vitest"
import { defaulted } from "../../src/cluster/internal/storeDefaults.js"
import { validateObject } from "../../src/cluster/Validation.js"
import type { KubeObject } from "../../src/domain/Objects.js"
import {
  EndpointSliceResource,
  IngressClassResource,
  IngressResource,
  PodResource
} from "../../src/domain/Resources.js"

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
