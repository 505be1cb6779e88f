/**
 * Ingress and IngressClass (networking.k8s.io/v1) described once: how each field
 * merges under server-side apply, its Go type, what the server defaults, and the
 * closed value sets and bounds their validators (`coreValidation.ts`) check.
 */
import {
  type Description,
  documented,
  int32,
  type KindDescription,
  list,
  object,
  string,
  strings
} from "./typeDescription.js"

/** The path types an Ingress path may have (`PathType`, an enum in the Go type). */
export const PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"] as const

/** Where an IngressClass's parameters live: one cluster-scoped object, or one per namespace. */
export const PARAMETER_SCOPES = ["Cluster", "Namespace"] as const

/** The longest IngressClass controller name the server accepts. */
export const CONTROLLER_MAX_LENGTH = 250

const typedLocalObjectReference = object(strings("apiGroup", "kind", "name"))

const ingressBackend = object({
  service: object({
    name: string({ doc: "The Service, in the Ingress's namespace." }),
    port: object({ name: string(), number: int32() }, { doc: "The Service port, by number or by name." })
  }),
  resource: typedLocalObjectReference
})

const portStatus = list(object({ port: int32(), ...strings("protocol", "error") }))

const httpIngressPath = object({
  path: string({ doc: "Matched against the request path; must start with \"/\"." }),
  pathType: string({
    enum: PATH_TYPES,
    doc:
      "How the path matches: Exact, Prefix (element by element, split on \"/\"), or ImplementationSpecific (up to the controller)."
  }),
  backend: documented(ingressBackend, "Where matching requests go: a Service port, or another resource.")
})

// The Go type's status and its load balancer are structs, never absent: an Ingress no
// controller has programmed reads `status: { loadBalancer: {} }`, as on a real server.
const ingressStatus: Description = object({
  loadBalancer: object({
    ingress: list(object({ ...strings("ip", "hostname"), ports: portStatus }), {
      doc:
        "Where the controller serves the Ingress (an IP or a hostname); empty until a controller programs it. An Ingress has no way to say a controller refused it."
    })
  }, { default: {} })
}, { default: {} })

/** Ingress v1: rules by host and path, TLS, a default backend; status written by the class's controller. */
export const ingressDescription: KindDescription = {
  doc:
    "An Ingress routes HTTP requests from outside the cluster to Services by host and path. The controller of its class programs it and writes the address it serves at into status.",
  spec: object({
    ingressClassName: string({
      doc:
        "The IngressClass whose controller programs this Ingress. Unset: the cluster's default class, if one is marked default."
    }),
    defaultBackend: documented(ingressBackend, "Where requests that match no rule go."),
    tls: list(object({ hosts: list(string()), secretName: string() }), {
      doc: "Hosts served over TLS, and the Secret holding their certificate and key."
    }),
    rules: list(
      object({
        host: string({
          doc:
            "The domain name the rule matches: a DNS name, not an IP address, at most one leading wildcard label (\"*.example.com\" matches one label). Empty matches every host."
        }),
        http: object({ paths: list(httpIngressPath, { doc: "Paths of the host, each with its backend." }) })
      }),
      { doc: "Rules by host; each sends the requests whose path matches to a backend." }
    )
  }, { doc: "The rules, TLS and default backend of the Ingress." }),
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
