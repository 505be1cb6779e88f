/**
 * What the fields a person reads with `kubectl explain` mean, for the OpenAPI
 * descriptions: by qualified resource name and field path (list items are transparent,
 * `""` is the kind itself). Structure and constraints stay in the shapes and CRD
 * schemas; a test checks that every path here names a field they have.
 */

export const TYPE_DOCS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "ingresses.networking.k8s.io": {
    "":
      "An Ingress routes HTTP requests from outside the cluster to Services by host and path. The controller of its class programs it and writes the address it serves at into status.",
    "spec": "The rules, TLS and default backend of the Ingress.",
    "spec.ingressClassName":
      "The IngressClass whose controller programs this Ingress. Unset: the cluster's default class, if one is marked default.",
    "spec.defaultBackend": "Where requests that match no rule go.",
    "spec.tls": "Hosts served over TLS, and the Secret holding their certificate and key.",
    "spec.rules": "Rules by host; each sends the requests whose path matches to a backend.",
    "spec.rules.host":
      "The domain name the rule matches: a DNS name, not an IP address, at most one leading wildcard label (\"*.example.com\" matches one label). Empty matches every host.",
    "spec.rules.http.paths": "Paths of the host, each with its backend.",
    "spec.rules.http.paths.path": "Matched against the request path; must start with \"/\".",
    "spec.rules.http.paths.pathType":
      "How the path matches: Exact, Prefix (element by element, split on \"/\"), or ImplementationSpecific (up to the controller).",
    "spec.rules.http.paths.backend": "Where matching requests go: a Service port, or another resource.",
    "spec.rules.http.paths.backend.service.name": "The Service, in the Ingress's namespace.",
    "spec.rules.http.paths.backend.service.port": "The Service port, by number or by name.",
    "status.loadBalancer.ingress":
      "Where the controller serves the Ingress (an IP or a hostname); empty until a controller programs it. An Ingress has no way to say a controller refused it."
  },
  "httproutes.gateway.networking.k8s.io": {
    "":
      "An HTTPRoute (Gateway API) attaches to Gateway listeners and routes HTTP requests by host name, path, headers and method to backends. Each parent's controller says in status.parents whether it accepted the route.",
    "spec": "The parents, host names and rules of the route.",
    "spec.parentRefs": "The Gateways (or single listeners of them, by sectionName or port) the route attaches to.",
    "spec.parentRefs.group": "Group of the parent; gateway.networking.k8s.io unless set.",
    "spec.parentRefs.kind": "Kind of the parent; Gateway unless set.",
    "spec.parentRefs.namespace":
      "Namespace of the parent; the route's own unless set. The listener must allow routes from this namespace.",
    "spec.parentRefs.name": "Name of the parent.",
    "spec.parentRefs.sectionName": "A listener of the Gateway, by name. Unset: every listener that admits the route.",
    "spec.parentRefs.port": "A listener of the Gateway, by port.",
    "spec.hostnames":
      "Host names the route matches, each possibly with one leading wildcard label. At least one must overlap a listener's hostname for the route to attach to it.",
    "spec.rules": "Matches, filters and backends. A request takes the rule with the most specific match.",
    "spec.rules.matches": "Conditions a request must meet, any one of them. Unset: every request (path prefix \"/\").",
    "spec.rules.matches.path": "Path match: Exact, PathPrefix or RegularExpression, with its value.",
    "spec.rules.matches.method": "The HTTP method the request must have.",
    "spec.rules.backendRefs": "Where matching requests go, shared by weight. A Service backend needs a port.",
    "spec.rules.backendRefs.name": "Name of the backend, a Service unless kind says otherwise.",
    "spec.rules.backendRefs.port": "Port of the Service; required for a Service.",
    "spec.rules.backendRefs.weight":
      "This backend's share of the requests, relative to the rule's other backends; 1 unless set, 0 sends none.",
    "status.parents":
      "One entry per parent whose controller considered the route, with its conditions: Accepted (attached or why not) and ResolvedRefs (every backend found)."
  }
}
