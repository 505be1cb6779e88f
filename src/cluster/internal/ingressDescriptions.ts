/**
 * Ingress and IngressClass (networking.k8s.io/v1) described once: how each field
 * merges under server-side apply, its Go type, what the server defaults, and the
 * closed value sets and bounds their validators (`coreValidation.ts`) check.
 */
import { type Description, int32, type KindDescription, list, object, string, strings } from "./typeDescription.js"

/** The path types an Ingress path may have (`PathType`, an enum in the Go type). */
export const PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"] as const

/** Where an IngressClass's parameters live: one cluster-scoped object, or one per namespace. */
export const PARAMETER_SCOPES = ["Cluster", "Namespace"] as const

/** The longest IngressClass controller name the server accepts. */
export const CONTROLLER_MAX_LENGTH = 250

const typedLocalObjectReference = object(strings("apiGroup", "kind", "name"))

const ingressBackend = object({
  service: object({ name: string(), port: object({ name: string(), number: int32() }) }),
  resource: typedLocalObjectReference
})

const portStatus = list(object({ port: int32(), ...strings("protocol", "error") }))

const httpIngressPath = object({
  path: string(),
  pathType: string({ enum: PATH_TYPES }),
  backend: ingressBackend
})

// The Go type's status and its load balancer are structs, never absent: an Ingress no
// controller has programmed reads `status: { loadBalancer: {} }`, as on a real server.
const ingressStatus: Description = object({
  loadBalancer: object({
    ingress: list(object({ ...strings("ip", "hostname"), ports: portStatus }))
  }, { default: {} })
}, { default: {} })

/** Ingress v1: rules by host and path, TLS, a default backend; status written by the class's controller. */
export const ingressDescription: KindDescription = {
  spec: object({
    ingressClassName: string(),
    defaultBackend: ingressBackend,
    tls: list(object({ hosts: list(string()), secretName: string() })),
    rules: list(object({
      host: string(),
      http: object({ paths: list(httpIngressPath) })
    }))
  }),
  status: ingressStatus
}

/** IngressClass v1: which controller programs the Ingresses of the class, and its parameters. */
export const ingressClassDescription: KindDescription = {
  spec: object({
    controller: string({ maxLength: CONTROLLER_MAX_LENGTH }),
    parameters: object({
      ...strings("apiGroup", "kind", "name"),
      // The server fills in the scope when parameters come without one (its defaulter, not its schema).
      scope: string({ enum: PARAMETER_SCOPES, serverDefault: "Cluster" }),
      namespace: string()
    })
  })
}
