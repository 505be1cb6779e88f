/**
 * The Gateway API types, Ingress, IngressClass, Pod, Event and EndpointSlice are
 * described once (`typeDescription.ts`); their SSA shapes, CRD schemas, OpenAPI
 * schemas and field docs are derived. `typeDescriptions.before.json` holds
 * those values as they were when each was written by hand (CEL rules as their
 * messages), and the derived ones must equal them but for the differences listed here.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { type KubeObject, qualifiedName } from "session-routing/kubernetes"
import { docsFor, schemaFor } from "../src/internal/describedTypes.js"
import { kindSchema } from "../src/internal/openApi.js"
import { shapeOf } from "../src/internal/typeShapes.js"
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
  type ServedResource
} from "../src/ServedResources.js"

type Json = Record<string, any>

const before: Record<string, { shape: Json; schema: Json | null; openApi: Json; docs?: Record<string, string> }> = JSON
  .parse(
    readFileSync(new URL("./typeDescriptions.before.json", import.meta.url), "utf8")
  )

/** A value as JSON holds it: functions (a CEL rule's predicate) and undefined dropped. */
const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? null))

const resources: ReadonlyArray<ServedResource<KubeObject>> = [
  IngressResource,
  IngressClassResource,
  GatewayResource,
  GatewayClassResource,
  HttpRouteResource,
  PodResource,
  EventResource,
  EndpointSliceResource
] as never

/** The derived schema cut down to the properties the hand-written one had. */
const restrict = (derived: Json, old: Json): Json => {
  const out: Json = { ...derived }
  if (old.properties !== undefined && derived.properties !== undefined) {
    out.properties = Object.fromEntries(
      Object.keys(old.properties).map((key) => [key, restrict(derived.properties[key] ?? {}, old.properties[key])])
    )
  }
  if (old.items !== undefined && derived.items !== undefined) out.items = restrict(derived.items, old.items)
  return out
}

/** The paths of the properties the derived schema has and the hand-written one lacked. */
const gained = (derived: Json, old: Json, path = ""): Array<string> => [
  ...Object.keys(derived.properties ?? {}).flatMap((key) =>
    old.properties?.[key] === undefined
      ? [`${path}.${key}`]
      : gained(derived.properties[key], old.properties[key], `${path}.${key}`)
  ),
  ...(derived.items !== undefined && old.items !== undefined ? gained(derived.items, old.items, `${path}[]`) : [])
]

/** `value` with the node at `path` (property names, `[]` for a list's items) replaced. */
const edit = (value: Json, path: ReadonlyArray<string>, replace: (node: Json) => Json): Json => {
  if (path.length === 0) return replace(value)
  const [head, ...rest] = path
  return { ...value, [head!]: edit(value[head!], rest, replace) }
}

/** `.a.b[].c` as the steps through a shape (`fields`/`items`) or a schema (`properties`/`items`). */
const steps = (path: string, field: string): Array<string> =>
  path.split(".").slice(1).flatMap((name) => name.endsWith("[]") ? [field, name.slice(0, -2), "items"] : [field, name])

// Deliberate differences from the hand-written values:
// - Integer fields the shape had as strings are int32, as the CRDs declare them. Only
//   the published OpenAPI read these types (custom resources are not decoded into Go
//   types), but a schema checking them as strings would refuse every Gateway status
//   (attachedRoutes) and every retry, mirror percentage and retry status code.
const INTEGERS: Record<string, ReadonlyArray<string>> = {
  Gateway: [".status.listeners[].attachedRoutes"],
  HTTPRoute: [
    ".spec.rules[].retry.codes[]",
    ".spec.rules[].retry.attempts",
    ".spec.rules[].filters[].requestMirror.percent",
    ".spec.rules[].backendRefs[].filters[].requestMirror.percent"
  ]
}

const withIntegers = (kind: string, value: Json, field: string, int32: Json): Json =>
  (INTEGERS[kind] ?? []).reduce((out, path) => edit(out, steps(path, field), () => int32), value)

// - Defaults the server filled in outside the description are declared on their
//   fields, so the shape carries them. Those the real server's schema shows are
//   published too: an Ingress's status and its load balancer are Go structs, `{}` when
//   absent, and a container port's protocol is TCP (published before, as a key default).
const DEFAULTED: Record<string, Record<string, unknown>> = {
  Ingress: { ".status": {}, ".status.loadBalancer": {} },
  Pod: { ".spec.containers[].ports[].protocol": "TCP", ".spec.initContainers[].ports[].protocol": "TCP" }
}
//   Those only the server's defaulting code fills in stay out of the OpenAPI: an
//   IngressClass's parameter scope (the real server stores Cluster; LocalCluster did
//   not before); the Pod spec (a Go struct, never absent), its own and its
//   containers' fixed defaults and the status a new Pod starts with (podDefaults
//   wrote them by hand before); an EndpointSlice port's name and protocol
//   (endpointSliceDefaults before).
const containerDefaults = (path: string) => ({
  [`${path}[].terminationMessagePath`]: "/dev/termination-log",
  [`${path}[].terminationMessagePolicy`]: "File",
  [`${path}[].resources`]: {}
})
const SERVER_DEFAULTED: Record<string, Record<string, unknown>> = {
  IngressClass: { ".spec.parameters.scope": "Cluster" },
  Pod: {
    ...containerDefaults(".spec.containers"),
    ...containerDefaults(".spec.initContainers"),
    ".spec": {},
    ".spec.restartPolicy": "Always",
    ".spec.dnsPolicy": "ClusterFirst",
    ".spec.serviceAccountName": "default",
    ".spec.schedulerName": "default-scheduler",
    ".spec.terminationGracePeriodSeconds": 30,
    ".spec.enableServiceLinks": true,
    ".spec.securityContext": {},
    ".status": {},
    ".status.phase": "Pending"
  },
  EndpointSlice: { ".ports[].name": "", ".ports[].protocol": "TCP" }
}

/** The shape with each listed default on the struct that holds the field, under `key`. */
const withShapeDefaults = (defaults: Record<string, unknown>, key: "defaults" | "serverDefaults", shape: Json): Json =>
  Object.entries(defaults).reduce((out, [path, value]) => {
    const parent = path.slice(0, path.lastIndexOf("."))
    const field = path.slice(path.lastIndexOf(".") + 1)
    return edit(out, steps(parent, "fields"), (node) => ({ ...node, [key]: { ...node[key], [field]: value } }))
  }, shape)

/** The OpenAPI schema with each published default on its field. */
const withOpenApiDefaults = (kind: string, openApi: Json): Json =>
  Object.entries(DEFAULTED[kind] ?? {}).reduce(
    (out, [path, value]) => edit(out, steps(path, "properties"), (node) => ({ ...node, default: value })),
    openApi
  )

const expectedShape: Record<string, Json> = Object.fromEntries(
  Object.entries(before).map((
    [kind, values]
  ) => [
    kind,
    withShapeDefaults(
      SERVER_DEFAULTED[kind] ?? {},
      "serverDefaults",
      withShapeDefaults(
        DEFAULTED[kind] ?? {},
        "defaults",
        withIntegers(kind, values.shape, "fields", { _tag: "Scalar", goType: "int32" })
      )
    )
  ])
)
// - A status parentRef is the spec's ParentReference, so it publishes (and checks) the
//   spec's constraints: name required, patterns and bounds on group, kind, namespace,
//   sectionName and port.
/** Without documentation text (a field named `description` is an object and stays). */
const undocumented = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(undocumented)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(
      Object.entries(value).filter(([key, v]) => !(key === "description" && typeof v === "string")).map((
        [k, v]
      ) => [k, undocumented(v)])
    )
    : value
const specParentRef = (openApi: Json): Json => undocumented(openApi.properties.spec.properties.parentRefs.items) as Json
const expectedOpenApi: Record<string, Json> = Object.fromEntries(
  Object.entries(before).map(([kind, values]) => {
    const integers = withOpenApiDefaults(
      kind,
      withIntegers(kind, values.openApi, "properties", { type: "integer", format: "int32" })
    )
    return [
      kind,
      kind === "HTTPRoute"
        ? edit(integers, steps(".status.parents[].parentRef", "properties"), () => specParentRef(values.openApi))
        : integers
    ]
  })
)

// - The CRD schemas describe every field the shape has, so these fields, unchecked
//   before, now get their JSON type checked (strings, integers, objects, arrays), keep
//   their declared defaults (which defaulting applied already through the shape),
//   and refuse two items with the same key in a keyed list (headers and query params
//   by name, header modifiers' set/add by name, conditions by type, status listeners by
//   name). A status parentRef has the spec's checks (required name, patterns, bounds).
const GAINED: Record<string, ReadonlyArray<string>> = {
  Gateway: [
    ".spec.listeners[].tls.certificateRefs",
    ".spec.listeners[].tls.options",
    ".spec.listeners[].allowedRoutes.namespaces.selector",
    ".spec.addresses",
    ".spec.infrastructure",
    ".status"
  ],
  HTTPRoute: [
    ".spec.rules[].matches[].headers",
    ".spec.rules[].matches[].queryParams",
    ".spec.rules[].filters",
    ".spec.rules[].backendRefs[].filters",
    ".spec.rules[].timeouts",
    ".spec.rules[].retry",
    ".spec.rules[].sessionPersistence",
    ".status"
  ]
}

// - The field docs live on the descriptions' nodes. A node several fields share is
//   documented once, so its text shows at each of them, as a real server's OpenAPI
//   shows a type's docs wherever it is used: the default backend's service name and
//   port, and a status parentRef's fields, have the texts of the path backend's and
//   the spec parentRefs' (by target: source).
const DOCS_SHARED: Record<string, Record<string, string>> = {
  Ingress: {
    "spec.defaultBackend.service.name": "spec.rules.http.paths.backend.service.name",
    "spec.defaultBackend.service.port": "spec.rules.http.paths.backend.service.port"
  },
  HTTPRoute: Object.fromEntries(
    ["group", "kind", "name", "namespace", "port", "sectionName"].map((
      field
    ) => [`status.parents.parentRef.${field}`, `spec.parentRefs.${field}`])
  )
}

describe("type descriptions", () => {
  it("carry the field docs the types had", () => {
    for (const resource of resources) {
      const old: Record<string, string> = before[resource.kind]!.docs ?? {}
      const shared = Object.fromEntries(
        Object.entries(DOCS_SHARED[resource.kind] ?? {}).map(([target, source]) => [target, old[source]])
      )
      expect(docsFor(qualifiedName(resource))).toEqual({ ...old, ...shared })
    }
  })

  // Object metadata and the documentation text are shared with every type and change
  // on their own: the comparison holds them equal on both sides.
  const sameMetadata = (shape: Json, like: Json): Json => ({
    ...shape,
    fields: { ...shape.fields, metadata: like.fields.metadata }
  })

  it("derive the server-side apply shapes the types had", () => {
    for (const resource of resources) {
      const derived = plain(shapeOf(resource))
      expect(derived).toEqual(sameMetadata(expectedShape[resource.kind]!, derived))
    }
  })

  it("derive the published OpenAPI schemas the types had", () => {
    for (const resource of resources) {
      expect(undocumented(plain(kindSchema(resource)))).toEqual(undocumented(expectedOpenApi[resource.kind]))
    }
  })

  it("derive the CRD schemas the types had, with checks on the fields they lacked", () => {
    for (const kind of ["Gateway", "HTTPRoute"] as const) {
      const resource = kind === "Gateway" ? GatewayResource : HttpRouteResource
      const derived = plain(schemaFor(resource))
      const old = before[kind]!.schema!
      expect(restrict(derived, old)).toEqual(old)
      expect(gained(derived, old)).toEqual(GAINED[kind])
    }
  })

  // - GatewayClass had no schema: it now has one, which checks types only.
  it("gives GatewayClass a schema that checks field types", () => {
    expect(before.GatewayClass!.schema).toBeNull()
    expect(plain(schemaFor(GatewayClassResource))).toEqual({
      type: "object",
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        spec: {
          type: "object",
          properties: {
            controllerName: { type: "string" },
            parametersRef: {
              type: "object",
              properties: {
                group: { type: "string" },
                kind: { type: "string" },
                name: { type: "string" },
                namespace: { type: "string" }
              }
            },
            description: { type: "string" }
          }
        },
        status: {
          type: "object",
          default: before.GatewayClass!.shape.defaults.status,
          properties: {
            conditions: plain(schemaFor(GatewayResource)).properties.status.properties.conditions,
            supportedFeatures: { type: "array", items: { "x-kubernetes-preserve-unknown-fields": true } }
          }
        }
      }
    })
  })

  it("serve no CRD schema for the built-in types", () => {
    expect(schemaFor(IngressResource)).toBeUndefined()
    expect(schemaFor(IngressClassResource)).toBeUndefined()
    expect(schemaFor(PodResource)).toBeUndefined()
    expect(schemaFor(EventResource)).toBeUndefined()
    expect(schemaFor(EndpointSliceResource)).toBeUndefined()
  })

  // - events.k8s.io/v1 Event had no shape: it was served untyped, and its OpenAPI
  //   published a `spec` and `status` the type does not have. It is now the core
  //   Event's description under the newer names, so both views have the same fields.
  it("derive the events.k8s.io Event from the core one under its newer names", () => {
    const core = plain(shapeOf(EventResource))
    const renames: Record<string, string> = {
      involvedObject: "regarding",
      message: "note",
      reportingComponent: "reportingController",
      source: "deprecatedSource",
      firstTimestamp: "deprecatedFirstTimestamp",
      lastTimestamp: "deprecatedLastTimestamp",
      count: "deprecatedCount"
    }
    const renamed = Object.fromEntries(
      Object.entries(core.fields).map(([name, field]) => [renames[name] ?? name, field])
    )
    expect(plain(shapeOf(EventV1Resource))).toEqual({ ...core, fields: renamed })
    const openApi = plain(kindSchema(EventV1Resource))
    expect(Object.keys(openApi.properties).sort()).toEqual(Object.keys(renamed).sort())
    expect(openApi.properties.deprecatedCount).toEqual({ type: "integer", format: "int32" })
  })
})
