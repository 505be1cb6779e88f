/**
 * The session's objects: the Ingress (one rule per tcp port, class and TLS only when
 * they apply), the Service and the HTTPRoutes, pinned as whole values.
 */
import { describe, expect, it } from "@effect/vitest"
import { validateObject } from "@session-routing/local-cluster"
import {
  buildSessionHttpRoutes,
  buildSessionIngress,
  buildSessionObjects,
  buildSessionService,
  httpRouteName,
  type ManifestSettings,
  notOursToTakeOver,
  podOwnerReference,
  sessionLabels,
  sessionObjectName,
  sessionSelector,
  type SessionSpec
} from "../../src/domain/Manifests.js"
import { HttpRouteResource, IngressResource, type ResourceType, ServiceResource } from "../../src/domain/Resources.js"
import type { PortMapping } from "../../src/domain/Session.js"

const sessionId = "hzyayvabgyvz"
const serviceName = `telo-run-${sessionId}`
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
]

const settings: ManifestSettings = {
  sessionNamespace: "telo-sessions",
  managedBy: "telo-k8s-runner",
  baseDomain: "telo.run",
  ingressClassName: "nginx"
}

const spec = (given: ReadonlyArray<PortMapping> = ports): SessionSpec => ({
  sessionId,
  podName: "pod",
  podUid: "uid",
  ports: given
})

const ownerReferences = [
  { apiVersion: "v1", kind: "Pod", name: "pod", uid: "uid", controller: true, blockOwnerDeletion: true }
]
const labels = { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/session-id": sessionId }

/** An Ingress rule as the reference writes it: the host, `/` Prefix, the Service port. */
const ingressRule = (port: number) => ({
  host: `${port}-${sessionId}.telo.run`,
  http: {
    paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: serviceName, port: { number: port } } } }]
  }
})

const withoutClass: ManifestSettings = {
  sessionNamespace: settings.sessionNamespace,
  managedBy: settings.managedBy,
  baseDomain: settings.baseDomain
}

const accepted = (resource: ResourceType<unknown>, object: object) =>
  expect(validateObject(resource, object)).toEqual([])

describe("names and labels", () => {
  it("names the Service and Ingress telo-run-<id> and each HTTPRoute telo-run-<id>-<port>", () => {
    expect(sessionObjectName(sessionId)).toBe(serviceName)
    expect(httpRouteName(sessionId, 8080)).toBe(`${serviceName}-8080`)
  })

  it("selects a session's objects by its session label", () => {
    expect(sessionSelector(sessionId)).toBe(`telo.run/session-id=${sessionId}`)
    expect(sessionLabels(settings, sessionId)).toEqual(labels)
  })

  it("makes the Pod the controlling owner, so the cluster collects the objects with it", () => {
    expect(podOwnerReference("pod", "uid")).toEqual(ownerReferences[0])
  })
})

describe("what a publish may take over", () => {
  const written = { metadata: { name: serviceName, labels, ownerReferences } }
  const live = (metadata: object) => ({ metadata: { name: serviceName, ...metadata } })

  it("takes over an object of this runner and session that a Pod owns", () => {
    expect(notOursToTakeOver(live({ labels, ownerReferences }), written)).toBeUndefined()
  })

  it("leaves an object without the runner's label, or with another runner's or session's", () => {
    expect(notOursToTakeOver(live({ ownerReferences }), written)).toBe(
      "it has no app.kubernetes.io/managed-by label, so it was not published by this runner"
    )
    expect(notOursToTakeOver(live({ labels: { ...labels, "app.kubernetes.io/managed-by": "helm" } }), written))
      .toBe("its app.kubernetes.io/managed-by label is \"helm\", not \"telo-k8s-runner\"")
    expect(notOursToTakeOver(live({ labels: { ...labels, "telo.run/session-id": "other" }, ownerReferences }), written))
      .toBe(`its telo.run/session-id label is "other", not "${sessionId}"`)
  })

  it("leaves an object with every label of ours that no Pod owns", () => {
    expect(notOursToTakeOver(live({ labels }), written)).toMatch(/no owner reference to a Pod/)
  })
})

describe("buildSessionIngress", () => {
  it("emits one rule per tcp port to the matching service port", () => {
    const { ingress, hosts } = buildSessionIngress(settings, spec())
    expect(hosts).toEqual([`8080-${sessionId}.telo.run`, `9090-${sessionId}.telo.run`])
    expect(ingress).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: serviceName, namespace: "telo-sessions", labels, ownerReferences },
      spec: { ingressClassName: "nginx", rules: [ingressRule(8080), ingressRule(9090)] }
    })
    accepted(IngressResource, ingress)
  })

  it("produces no rules when there are no tcp ports", () => {
    const { ingress, hosts } = buildSessionIngress(settings, spec([{ port: 5000, protocol: "udp" }]))
    expect(hosts).toEqual([])
    expect(ingress.spec?.rules).toEqual([])
  })

  it("builds a rule-less Ingress the server would refuse, which is why it is never published", () => {
    // The router deletes the Ingress instead, and buildSessionObjects leaves it out.
    const { ingress } = buildSessionIngress(settings, spec([{ port: 5000, protocol: "udp" }]))
    expect(validateObject(IngressResource, ingress)).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec",
        message: "Invalid value: []: either `defaultBackend` or `rules` must be specified"
      }
    ])
    expect(buildSessionObjects("ingress", settings, spec([{ port: 5000, protocol: "udp" }])).map((o) => o.kind))
      .toEqual([
        "Service"
      ])
  })

  it("sets ingressClassName only when one is configured", () => {
    const { ingress } = buildSessionIngress(withoutClass, spec())
    expect(ingress.spec).toEqual({ rules: [ingressRule(8080), ingressRule(9090)] })
    accepted(IngressResource, ingress)
  })

  it("omits the tls block when no tls secret is configured", () => {
    expect(buildSessionIngress(settings, spec()).ingress.spec?.tls).toBeUndefined()
  })

  it("presents the configured tls secret for every tcp host", () => {
    const { ingress } = buildSessionIngress({ ...settings, tlsSecretName: "telo-origin-tls" }, spec())
    expect(ingress.spec).toEqual({
      ingressClassName: "nginx",
      tls: [{ hosts: [`8080-${sessionId}.telo.run`, `9090-${sessionId}.telo.run`], secretName: "telo-origin-tls" }],
      rules: [ingressRule(8080), ingressRule(9090)]
    })
    accepted(IngressResource, ingress)
  })

  it("omits the tls block when there are no tcp hosts to secure", () => {
    const { ingress } = buildSessionIngress(
      { ...settings, tlsSecretName: "telo-origin-tls" },
      spec([{ port: 5000, protocol: "udp" }])
    )
    expect(ingress.spec).toEqual({ ingressClassName: "nginx", rules: [] })
  })

  it("carries the session labels and the pod ownerReference every routing object does", () => {
    const { ingress } = buildSessionIngress(settings, spec())
    expect(ingress.metadata?.labels).toEqual(labels)
    expect(ingress.metadata?.ownerReferences).toEqual(ownerReferences)
  })
})

describe("buildSessionService", () => {
  it("builds a ClusterIP Service selecting the session, one port p<port> per mapping, protocol upper-cased", () => {
    const service = buildSessionService(settings, spec())
    expect(service).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: serviceName, namespace: "telo-sessions", labels, ownerReferences },
      spec: {
        type: "ClusterIP",
        selector: { "telo.run/session-id": sessionId },
        ports: [
          { name: "p8080", port: 8080, targetPort: 8080, protocol: "TCP" },
          { name: "p9090", port: 9090, targetPort: 9090, protocol: "TCP" },
          { name: "p5000", port: 5000, targetPort: 5000, protocol: "UDP" }
        ]
      }
    })
    accepted(ServiceResource, service)
  })

  it("names the udp port of a port open as tcp and udp p<port>-udp, so names stay unique", () => {
    const both = spec([
      { port: 53, protocol: "udp" },
      { port: 53, protocol: "tcp" }
    ])
    const service = buildSessionService(settings, both)
    expect(service.spec?.ports).toEqual([
      { name: "p53-udp", port: 53, targetPort: 53, protocol: "UDP" },
      { name: "p53", port: 53, targetPort: 53, protocol: "TCP" }
    ])
    accepted(ServiceResource, service)
  })

  it("names a udp-only port p<port>", () => {
    expect(buildSessionService(settings, spec([{ port: 5000, protocol: "udp" }])).spec?.ports).toEqual([
      { name: "p5000", port: 5000, targetPort: 5000, protocol: "UDP" }
    ])
  })

  it("builds a port-less Service the server would refuse, which buildSessionObjects leaves out", () => {
    const service = buildSessionService(settings, spec([]))
    expect(validateObject(ServiceResource, service)).toEqual([
      { reason: "FieldValueRequired", field: "spec.ports", message: "Required value" }
    ])
    expect(buildSessionObjects("ingress", settings, spec([]))).toEqual([])
    expect(buildSessionObjects("gateway", { ...settings, gateway: { name: "gw", namespace: "gw" } }, spec([]))).toEqual(
      []
    )
  })
})

describe("buildSessionHttpRoutes", () => {
  const gatewaySettings: ManifestSettings = { ...withoutClass, gateway: { name: "gw", namespace: "gw-ns" } }

  const route = (port: number, sectionName?: string) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name: `${serviceName}-${port}`,
      namespace: "telo-sessions",
      labels: { ...labels, "telo.run/port": String(port) },
      ownerReferences
    },
    spec: {
      parentRefs: [
        {
          group: "gateway.networking.k8s.io",
          kind: "Gateway",
          namespace: "gw-ns",
          name: "gw",
          ...(sectionName !== undefined ? { sectionName } : {})
        }
      ],
      hostnames: [`${port}-${sessionId}.telo.run`],
      rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: serviceName, port }] }]
    }
  })

  it("builds one HTTPRoute per tcp port, each to its Service port, none for udp", () => {
    const routes = buildSessionHttpRoutes(gatewaySettings, spec())
    expect(routes).toEqual([route(8080), route(9090)])
    for (const r of routes) accepted(HttpRouteResource, r)
  })

  it("attaches to the configured listener when a sectionName is set", () => {
    const routes = buildSessionHttpRoutes(
      { ...gatewaySettings, gateway: { name: "gw", namespace: "gw-ns", sectionName: "https" } },
      spec([{ port: 8080, protocol: "tcp" }])
    )
    expect(routes).toEqual([route(8080, "https")])
    accepted(HttpRouteResource, routes[0] ?? {})
  })

  it("builds nothing without a Gateway to attach to", () => {
    expect(buildSessionHttpRoutes(withoutClass, spec())).toEqual([])
  })

  it("builds nothing when there are no tcp ports", () => {
    expect(buildSessionHttpRoutes(gatewaySettings, spec([{ port: 5000, protocol: "udp" }]))).toEqual([])
  })
})

describe("buildSessionObjects", () => {
  const gatewaySettings: ManifestSettings = { ...settings, gateway: { name: "gw", namespace: "gw-ns" } }

  it("publishes the Service first, then the Ingress, in ingress mode", () => {
    expect(buildSessionObjects("ingress", settings, spec())).toEqual([
      buildSessionService(settings, spec()),
      buildSessionIngress(settings, spec()).ingress
    ])
  })

  it("publishes the Service first, then one HTTPRoute per tcp port, in gateway mode", () => {
    expect(buildSessionObjects("gateway", gatewaySettings, spec())).toEqual([
      buildSessionService(gatewaySettings, spec()),
      ...buildSessionHttpRoutes(gatewaySettings, spec())
    ])
  })

  it("publishes nothing in mode none", () => {
    expect(buildSessionObjects("none", gatewaySettings, spec())).toEqual([])
  })

  it("keeps the Service for udp ports when no tcp port is left", () => {
    const udp = spec([{ port: 5000, protocol: "udp" }])
    expect(buildSessionObjects("gateway", gatewaySettings, udp)).toEqual([buildSessionService(gatewaySettings, udp)])
  })
})
