/**
 * HTTPRoute v1 (standard channel) described once: matches, filters, backends and
 * status, with the CRD's checks, defaults and CEL rules on the nodes that carry them.
 */
import { type CelRule, rule } from "./crdSchema.js"
import {
  conditions,
  group,
  hostname,
  kind,
  namespace,
  objectName,
  parentReference,
  parentRefRules,
  portNumber,
  sectionName
} from "./gatewayDescriptions.js"
import {
  defaulting,
  type Description,
  documented,
  int32,
  type KindDescription,
  list,
  listMap,
  object,
  setOf,
  string,
  strings
} from "./typeDescription.js"

const PATH_CHARACTERS = "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$"
const PATH_PREFIX_ROOT = { type: "PathPrefix", value: "/" }
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"] as const

type PathMatchValue = { readonly type: string; readonly value: string }
const exactOrPrefix = (p: PathMatchValue): boolean => p.type === "Exact" || p.type === "PathPrefix"
const pathRule = (message: string, holds: (value: string) => boolean): CelRule =>
  rule<PathMatchValue>(
    `${message} when type one of ['Exact', 'PathPrefix']`,
    (self) => exactOrPrefix(self) ? holds(self.value) : true
  )

const pathMatch = object({
  type: string({ enum: ["Exact", "PathPrefix", "RegularExpression"], default: "PathPrefix" }),
  value: string({ maxLength: 1024, default: "/" })
}, {
  default: PATH_PREFIX_ROOT,
  rules: [
    pathRule("value must be an absolute path and start with '/'", (v) => v.startsWith("/")),
    pathRule("must not contain '//'", (v) => !v.includes("//")),
    pathRule("must not contain '/./'", (v) => !v.includes("/./")),
    pathRule("must not contain '/../'", (v) => !v.includes("/../")),
    pathRule("must not contain '%2f'", (v) => !v.includes("%2f")),
    pathRule("must not contain '%2F'", (v) => !v.includes("%2F")),
    pathRule("must not contain '#'", (v) => !v.includes("#")),
    pathRule("must not end with '/..'", (v) => !v.endsWith("/..")),
    pathRule("must not end with '/.'", (v) => !v.endsWith("/.")),
    rule<PathMatchValue>(
      "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
      (self) => exactOrPrefix(self) || self.type === "RegularExpression"
    ),
    rule<PathMatchValue>(
      `must only contain valid characters (matching ${PATH_CHARACTERS}) for types ['Exact', 'PathPrefix']`,
      (self) => (exactOrPrefix(self) ? new RegExp(PATH_CHARACTERS).test(self.value) : true)
    )
  ]
})

const headerMatch = object({ type: string({ default: "Exact" }), ...strings("name", "value") })

const routeMatch = object({
  path: documented(pathMatch, "Path match: Exact, PathPrefix or RegularExpression, with its value."),
  headers: listMap(["name"], headerMatch),
  queryParams: listMap(["name"], headerMatch),
  method: string({ enum: HTTP_METHODS, doc: "The HTTP method the request must have." })
})

const headerModifier = object({
  set: listMap(["name"], object(strings("name", "value"))),
  add: listMap(["name"], object(strings("name", "value"))),
  remove: setOf(string())
})
const pathModifier = object(strings("type", "replaceFullPath", "replacePrefixMatch"))

const routeFilter = object({
  type: string(),
  requestHeaderModifier: headerModifier,
  responseHeaderModifier: headerModifier,
  requestMirror: object({
    backendRef: object({
      group: string({ default: "" }),
      kind: string({ default: "Service" }),
      ...strings("name", "namespace"),
      port: int32()
    }),
    percent: int32(),
    fraction: object({ numerator: int32(), denominator: int32({ default: 100 }) })
  }),
  requestRedirect: object({
    ...strings("scheme", "hostname"),
    port: int32(),
    statusCode: int32({ default: 302 }),
    path: pathModifier
  }),
  urlRewrite: object({ hostname: string(), path: pathModifier }),
  extensionRef: object(strings("group", "kind", "name"))
})

type BackendRefValue = { readonly group: string; readonly kind: string; readonly port?: number }

const backendRef = object({
  group: defaulting(group, ""),
  kind: defaulting(kind, "Service"),
  name: documented(objectName, "Name of the backend, a Service unless kind says otherwise."),
  namespace,
  port: documented(portNumber, "Port of the Service; required for a Service."),
  weight: int32({
    minimum: 0,
    maximum: 1000000,
    default: 1,
    doc: "This backend's share of the requests, relative to the rule's other backends; 1 unless set, 0 sends none."
  }),
  filters: list(routeFilter)
}, {
  required: ["name"],
  rules: [
    rule<BackendRefValue>(
      "Must have port for Service reference",
      (self) => (self.group.length === 0 && self.kind === "Service" ? self.port !== undefined : true)
    )
  ]
})

type RuleValue = { readonly matches?: ReadonlyArray<unknown> }

const routeRule: Description = object({
  name: sectionName,
  matches: list(routeMatch, {
    maxItems: 64,
    default: [{ path: PATH_PREFIX_ROOT }],
    doc: "Conditions a request must meet, any one of them. Unset: every request (path prefix \"/\")."
  }),
  filters: list(routeFilter),
  backendRefs: list(backendRef, {
    maxItems: 16,
    doc: "Where matching requests go, shared by weight. A Service backend needs a port."
  }),
  timeouts: object(strings("request", "backendRequest")),
  retry: object({ codes: list(int32()), attempts: int32(), backoff: string() }),
  sessionPersistence: object({
    ...strings("sessionName", "absoluteTimeout", "idleTimeout", "type"),
    cookieConfig: object(strings("lifetimeType"))
  })
})

/** HTTPRoute v1: parents, hostnames and rules, and the status each parent's controller writes. */
export const httpRouteDescription: KindDescription = {
  doc:
    "An HTTPRoute (Gateway API) attaches to Gateway listeners and routes HTTP requests by host name, path, headers and method to backends. Each parent's controller says in status.parents whether it accepted the route.",
  required: ["spec"],
  spec: object({
    hostnames: list(hostname, {
      maxItems: 16,
      doc:
        "Host names the route matches, each possibly with one leading wildcard label. At least one must overlap a listener's hostname for the route to attach to it."
    }),
    parentRefs: list(parentReference, {
      maxItems: 32,
      rules: parentRefRules,
      doc: "The Gateways (or single listeners of them, by sectionName or port) the route attaches to."
    }),
    rules: list(routeRule, {
      maxItems: 16,
      doc: "Matches, filters and backends. A request takes the rule with the most specific match.",
      default: [{ matches: [{ path: PATH_PREFIX_ROOT }] }],
      rules: [
        rule<ReadonlyArray<RuleValue>>(
          "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128",
          (self) => self.reduce((sum, r) => sum + (r.matches?.length ?? 0), 0) <= 128
        )
      ]
    })
  }, { doc: "The parents, host names and rules of the route." }),
  status: object({
    parents: list(object({ parentRef: parentReference, controllerName: string(), conditions }), {
      doc:
        "One entry per parent whose controller considered the route, with its conditions: Accepted (attached or why not) and ResolvedRefs (every backend found)."
    })
  })
}
