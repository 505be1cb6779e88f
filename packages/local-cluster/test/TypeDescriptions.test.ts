/**
 * The Gateway API types, Ingress, IngressClass, Pod, Event, EndpointSlice and Lease are
 * described once (`typeDescription.ts`); their SSA shapes, CRD schemas, OpenAPI
 * schemas and field docs are derived. What the derived values do: each list merges in
 * apply as its type declares it, and the published OpenAPI says so; every field apply
 * accepts is published with the JSON type it is checked as; the defaults each type
 * fills in; the required fields and value sets the CRD schemas check; and the field
 * docs shown wherever a documented node is used.
 */
import { describe, expect, it } from "@effect/vitest"
import { type KubeObject, qualifiedName } from "session-routing/kubernetes"
import { docsFor, schemaFor } from "../src/internal/describedTypes.js"
import { kindSchema } from "../src/internal/openApi.js"
import { defaulted } from "../src/internal/storeDefaults.js"
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
  LeaseResource,
  PodResource,
  type ServedResource
} from "../src/ServedResources.js"
import { merge } from "../src/ServerSideApply.js"
import { validateObject } from "../src/Validation.js"

type Json = Record<string, any>

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
  EventV1Resource,
  EndpointSliceResource,
  LeaseResource
] as never

const byKind = (kind: string) => resources.find((r) => r.kind === kind && r !== EventV1Resource)!

type ListType = "atomic" | "set" | readonly [string, ...Array<string>]

/**
 * Every list of each type outside metadata, by path (`[]` for a list's items), as apply
 * merges it: atomic (replaced whole), a set of scalars, or a map by its keys.
 */
const LISTS: Record<string, Record<string, ListType>> = {
  Ingress: {
    ".spec.tls": "atomic",
    ".spec.tls[].hosts": "atomic",
    ".spec.rules": "atomic",
    ".spec.rules[].http.paths": "atomic",
    ".status.loadBalancer.ingress": "atomic",
    ".status.loadBalancer.ingress[].ports": "atomic"
  },
  IngressClass: {},
  Gateway: {
    ".spec.listeners": ["name"],
    ".spec.listeners[].tls.certificateRefs": "atomic",
    ".spec.listeners[].allowedRoutes.namespaces.selector.matchExpressions": "atomic",
    ".spec.listeners[].allowedRoutes.namespaces.selector.matchExpressions[].values": "atomic",
    ".spec.listeners[].allowedRoutes.kinds": "atomic",
    ".spec.addresses": "atomic",
    ".status.addresses": "atomic",
    ".status.conditions": ["type"],
    ".status.listeners": ["name"],
    ".status.listeners[].supportedKinds": "atomic",
    ".status.listeners[].conditions": ["type"]
  },
  GatewayClass: {
    ".status.conditions": ["type"],
    ".status.supportedFeatures": "atomic"
  },
  HTTPRoute: {
    ".spec.parentRefs": "atomic",
    ".spec.hostnames": "atomic",
    ".spec.rules": "atomic",
    ".spec.rules[].matches": "atomic",
    ".spec.rules[].matches[].headers": ["name"],
    ".spec.rules[].matches[].queryParams": ["name"],
    ".spec.rules[].filters": "atomic",
    ".spec.rules[].filters[].requestHeaderModifier.set": ["name"],
    ".spec.rules[].filters[].requestHeaderModifier.add": ["name"],
    ".spec.rules[].filters[].requestHeaderModifier.remove": "set",
    ".spec.rules[].filters[].responseHeaderModifier.set": ["name"],
    ".spec.rules[].filters[].responseHeaderModifier.add": ["name"],
    ".spec.rules[].filters[].responseHeaderModifier.remove": "set",
    ".spec.rules[].backendRefs": "atomic",
    ".spec.rules[].backendRefs[].filters": "atomic",
    ".spec.rules[].backendRefs[].filters[].requestHeaderModifier.set": ["name"],
    ".spec.rules[].backendRefs[].filters[].requestHeaderModifier.add": ["name"],
    ".spec.rules[].backendRefs[].filters[].requestHeaderModifier.remove": "set",
    ".spec.rules[].backendRefs[].filters[].responseHeaderModifier.set": ["name"],
    ".spec.rules[].backendRefs[].filters[].responseHeaderModifier.add": ["name"],
    ".spec.rules[].backendRefs[].filters[].responseHeaderModifier.remove": "set",
    ".spec.rules[].retry.codes": "atomic",
    ".status.parents": "atomic",
    ".status.parents[].conditions": ["type"]
  },
  Pod: {
    ...Object.fromEntries(
      ["containers", "initContainers"].flatMap((list) => [
        [`.spec.${list}`, ["name"]],
        [`.spec.${list}[].command`, "atomic"],
        [`.spec.${list}[].args`, "atomic"],
        [`.spec.${list}[].ports`, ["containerPort", "protocol"]],
        [`.spec.${list}[].env`, ["name"]],
        [`.spec.${list}[].envFrom`, "atomic"],
        [`.spec.${list}[].volumeMounts`, ["mountPath"]]
      ])
    ),
    ".spec.volumes": ["name"],
    ".spec.imagePullSecrets": "atomic",
    ".spec.tolerations": "atomic",
    ".spec.readinessGates": "atomic",
    ".status.conditions": ["type"],
    ".status.hostIPs": ["ip"],
    ".status.podIPs": ["ip"],
    ".status.initContainerStatuses": "atomic",
    ".status.containerStatuses": "atomic"
  },
  Event: {},
  EndpointSlice: {
    ".endpoints": "atomic",
    ".endpoints[].addresses": "set",
    ".ports": "atomic"
  },
  Lease: {}
}

/** The item a keyed list on the way to a nested list holds, the same in the live object and the config. */
const PARENT_ITEMS: Record<string, Json> = {
  ".spec.listeners": { name: "http" },
  ".status.listeners": { name: "http" },
  ".spec.containers": { name: "app" },
  ".spec.initContainers": { name: "init" }
}

/** `leaf` at `path`, each list on the way a one-item list of its parent item. */
const at = (path: string, leaf: unknown): Json => {
  const names = path.split(".").slice(1)
  const go = (i: number, prefix: string): unknown => {
    if (i === names.length) return leaf
    const name = names[i]!
    if (!name.endsWith("[]")) return { [name]: go(i + 1, `${prefix}.${name}`) }
    const list = `${prefix}.${name.slice(0, -2)}`
    return { [name.slice(0, -2)]: [{ ...PARENT_ITEMS[list], ...(go(i + 1, `${list}[]`) as Json) }] }
  }
  return go(0, "") as Json
}

/** The lists apply can merge on their own: every list on the way to them is keyed. */
const mergeable = (path: string): boolean =>
  path.split(".").slice(1).every((name, i, names) =>
    !name.endsWith("[]") || PARENT_ITEMS[`.${names.slice(0, i).concat(name.slice(0, -2)).join(".")}`] !== undefined
  )

/** An item of a keyed list, its keys set apart by `tag`. */
const keyedItem = (keys: ReadonlyArray<string>, tag: "live" | "config"): Json =>
  Object.fromEntries(
    keys.map((key) => [key, key === "containerPort" ? (tag === "live" ? 80 : 81) : key === "protocol" ? "TCP" : tag])
  )

/** Every list the published schema declares, by path, as the table writes it. */
const publishedLists = (schema: Json, path = ""): Record<string, ListType> => {
  if (schema === undefined || schema.$ref !== undefined) return {}
  const own: Record<string, ListType> = schema.type === "array"
    ? {
      [path]: schema["x-kubernetes-list-type"] === "map"
        ? schema["x-kubernetes-list-map-keys"]
        : schema["x-kubernetes-list-type"]
    }
    : {}
  return {
    ...own,
    ...Object.assign(
      {},
      ...Object.entries(schema.properties ?? {}).map(([name, property]) =>
        publishedLists(property as Json, `${path}.${name}`)
      )
    ),
    ...(schema.items !== undefined ? publishedLists(schema.items, `${path}[]`) : {})
  }
}

describe("lists in apply", () => {
  const rows = Object.entries(LISTS).flatMap(([kind, lists]) =>
    Object.entries(lists).filter(([path]) => mergeable(path)).map(([path, type]) => [kind, path, type] as const)
  )

  it.each(rows)("merges %s's %s as declared: %j", (kind, path, type) => {
    const shape = shapeOf(byKind(kind))
    if (type === "atomic") {
      // Replaced whole, whatever the items: scalars, or objects carrying any key a keyed list has.
      expect(merge(at(path, ["live"]), at(path, ["config"]), shape)).toEqual(at(path, ["config"]))
      const anyKeys = keyedItem(["name", "type", "ip", "mountPath", "containerPort", "protocol"], "live")
      const otherKeys = keyedItem(["name", "type", "ip", "mountPath", "containerPort", "protocol"], "config")
      expect(merge(at(path, [anyKeys]), at(path, [otherKeys]), shape)).toEqual(at(path, [otherKeys]))
    } else if (type === "set") {
      expect(merge(at(path, ["live"]), at(path, ["config"]), shape)).toEqual(at(path, ["live", "config"]))
    } else {
      const live = keyedItem(type, "live")
      const config = keyedItem(type, "config")
      // Another key is another item; the same key is the same item, its fields merged.
      expect(merge(at(path, [live]), at(path, [config]), shape)).toEqual(at(path, [live, config]))
      expect(merge(at(path, [{ ...live, a: "1" }]), at(path, [{ ...live, b: "2" }]), shape)).toEqual(
        at(path, [{ ...live, a: "1", b: "2" }])
      )
    }
  })

  it.each(Object.keys(LISTS))("publishes each list of %s with the type apply merges it by, and no other", (kind) => {
    const schema = plain(kindSchema(byKind(kind)))
    expect(publishedLists(schema)).toEqual(LISTS[kind])
  })

  it("publishes the events.k8s.io Event's lists as the core one's: it has none", () => {
    expect(publishedLists(plain(kindSchema(EventV1Resource)))).toEqual({})
  })
})

/** The JSON type a Go scalar is published and checked as. */
const JSON_TYPES: Record<string, string> = {
  string: "string",
  bool: "boolean",
  int32: "integer",
  int64: "integer",
  microTime: "string"
}

/** The paths where the published schema and the shape disagree on a field or its JSON type. */
const disagreements = (shape: Json, schema: Json | undefined, path: string): Array<string> => {
  if (schema === undefined) return [`${path}: not published`]
  if (schema.$ref !== undefined) return []
  switch (shape._tag) {
    case "Scalar":
      return schema.type === JSON_TYPES[shape.goType] || schema["x-kubernetes-int-or-string"] === true
        ? []
        : [`${path}: ${shape.goType} published as ${schema.type}`]
    case "List":
      return schema.type === "array"
        ? disagreements(shape.items, schema.items, `${path}[]`)
        : [`${path}: published as ${schema.type}`]
    case "Map":
      return schema.type === "object" && schema.additionalProperties !== undefined
        ? disagreements(shape.values, schema.additionalProperties, `${path}{}`)
        : [`${path}: published as ${schema.type}`]
    case "Struct":
      return [
        ...(schema.type === "object" ? [] : [`${path}: published as ${schema.type}`]),
        ...Object.entries(shape.fields).flatMap(([name, field]) =>
          disagreements(field as Json, schema.properties?.[name], `${path}.${name}`)
        ),
        ...Object.keys(schema.properties ?? {}).filter((name) => shape.fields[name] === undefined).map((name) =>
          `${path}.${name}: published, not in the shape`
        )
      ]
    default:
      return []
  }
}

describe("the published OpenAPI", () => {
  it.each(resources.map((r) => [r.kind === "Event" ? `${r.group || "core"} Event` : r.kind, r] as const))(
    "publishes every field of %s that apply keeps, with the JSON type it is checked as",
    (_name, resource) => {
      expect(disagreements(plain(shapeOf(resource)), plain(kindSchema(resource)), "")).toEqual([])
    }
  )

  it("publishes the integers the CRDs declare as int32", () => {
    const int32 = { type: "integer", format: "int32" }
    const gateway = plain(kindSchema(GatewayResource))
    expect(gateway.properties.status.properties.listeners.items.properties.attachedRoutes).toMatchObject(int32)
    const rule = plain(kindSchema(HttpRouteResource)).properties.spec.properties.rules.items.properties
    expect(rule.retry.properties.attempts).toMatchObject(int32)
    expect(rule.retry.properties.codes.items).toMatchObject(int32)
    expect(rule.filters.items.properties.requestMirror.properties.percent).toMatchObject(int32)
  })

  it("publishes a Lease's times as the date-times MicroTime is, and its counts as int32", () => {
    const spec = plain(kindSchema(LeaseResource)).properties.spec.properties
    for (const time of ["acquireTime", "renewTime"]) {
      expect(spec[time], time).toMatchObject({ type: "string", format: "date-time" })
    }
    for (const count of ["leaseDurationSeconds", "leaseTransitions"]) {
      expect(spec[count], count).toMatchObject({ type: "integer", format: "int32" })
    }
  })

  it("publishes the defaults a real server's schema shows, and not those only its defaulting code fills in", () => {
    const ingress = plain(kindSchema(IngressResource)).properties.status
    expect(ingress.default).toEqual({})
    expect(ingress.properties.loadBalancer.default).toEqual({})
    const pod = plain(kindSchema(PodResource)).properties
    expect(pod.spec.properties.containers.items.properties.ports.items.properties.protocol.default).toBe("TCP")
    expect(pod.spec.default).toBeUndefined()
    expect(pod.spec.properties.restartPolicy.default).toBeUndefined()
    expect(pod.status.properties.phase.default).toBeUndefined()
    const ingressClass = plain(kindSchema(IngressClassResource)).properties.spec.properties.parameters
    expect(ingressClass.properties.scope.default).toBeUndefined()
    const slice = plain(kindSchema(EndpointSliceResource)).properties.ports.items.properties
    expect([slice.name.default, slice.protocol.default]).toEqual([undefined, undefined])
  })

  it("publishes a status parentRef with the spec parentRef's checks", () => {
    const route = plain(kindSchema(HttpRouteResource)).properties
    const { description: _, ...statusRef } = route.status.properties.parents.items.properties.parentRef
    const { description: __, ...specRef } = route.spec.properties.parentRefs.items
    expect(plain(statusRef)).toEqual(plain(specRef))
    expect(specRef.required).toEqual(["name"])
  })
})

describe("defaults", () => {
  const gateway = (spec: Json): KubeObject =>
    ({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gw", namespace: "ns" },
      spec
    }) as never
  const pending = (type: string) => ({
    type,
    status: "Unknown",
    reason: "Pending",
    message: "Waiting for controller",
    lastTransitionTime: "1970-01-01T00:00:00Z"
  })

  it("fills in a Gateway's listeners, their TLS and certificate refs, its addresses, and a status waiting for a controller", () => {
    const object = defaulted(
      GatewayResource,
      gateway({
        gatewayClassName: "local",
        listeners: [
          { name: "http", port: 80, protocol: "HTTP" },
          { name: "https", port: 443, protocol: "HTTPS", tls: { certificateRefs: [{ name: "cert" }] } },
          { name: "team", port: 8080, protocol: "HTTP", allowedRoutes: { namespaces: {} } }
        ],
        addresses: [{ value: "203.0.113.7" }]
      })
    ) as Json
    const sameNamespace = { namespaces: { from: "Same" } }
    expect(object.spec.listeners).toEqual([
      { name: "http", port: 80, protocol: "HTTP", allowedRoutes: sameNamespace },
      {
        name: "https",
        port: 443,
        protocol: "HTTPS",
        allowedRoutes: sameNamespace,
        tls: { mode: "Terminate", certificateRefs: [{ group: "", kind: "Secret", name: "cert" }] }
      },
      { name: "team", port: 8080, protocol: "HTTP", allowedRoutes: sameNamespace }
    ])
    expect(object.spec.addresses).toEqual([{ type: "IPAddress", value: "203.0.113.7" }])
    expect(object.status).toEqual({ conditions: [pending("Accepted"), pending("Programmed")] })
  })

  it("starts a GatewayClass's status waiting for a controller", () => {
    const object = defaulted(
      GatewayClassResource,
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "GatewayClass",
        metadata: { name: "local" },
        spec: { controllerName: "example.com/local" }
      } as never
    ) as Json
    expect(object.status).toEqual({ conditions: [pending("Accepted")] })
  })

  it("fills in a route's query matches, a backend's own filters, and a status parentRef", () => {
    const object = defaulted(
      HttpRouteResource,
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "web", namespace: "ns" },
        spec: {
          parentRefs: [{ name: "gw" }],
          rules: [{
            matches: [{ queryParams: [{ name: "session", value: "a" }] }],
            backendRefs: [{
              name: "web",
              port: 80,
              filters: [
                { type: "RequestRedirect", requestRedirect: { hostname: "example.com" } },
                {
                  type: "RequestMirror",
                  requestMirror: { backendRef: { name: "copy", port: 80 }, fraction: { numerator: 1 } }
                }
              ]
            }]
          }]
        },
        status: { parents: [{ parentRef: { name: "gw" }, controllerName: "example.com/gw", conditions: [] }] }
      } as never
    ) as Json
    const rule = object.spec.rules[0]
    expect(rule.matches).toEqual([{
      path: { type: "PathPrefix", value: "/" },
      queryParams: [{ type: "Exact", name: "session", value: "a" }]
    }])
    expect(rule.backendRefs[0].filters).toEqual([
      { type: "RequestRedirect", requestRedirect: { hostname: "example.com", statusCode: 302 } },
      {
        type: "RequestMirror",
        requestMirror: {
          backendRef: { group: "", kind: "Service", name: "copy", port: 80 },
          fraction: { numerator: 1, denominator: 100 }
        }
      }
    ])
    expect(object.status.parents[0].parentRef).toEqual({
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      name: "gw"
    })
  })

  it("fills in a route with no rules with one that matches every path", () => {
    const object = defaulted(
      HttpRouteResource,
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "web", namespace: "ns" },
        spec: { parentRefs: [{ name: "gw" }] }
      } as never
    ) as Json
    expect(object.spec.rules).toEqual([{ matches: [{ path: { type: "PathPrefix", value: "/" } }] }])
  })
})

describe("what the CRD schemas require", () => {
  const errorsOf = (resource: ServedResource<KubeObject>, object: Json) =>
    validateObject(resource, object as never).map((e) => [e.reason, e.field])
  const listener = { name: "http", port: 80, protocol: "HTTP" }
  const gateway = (spec?: Json): Json => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "gw", namespace: "ns" },
    ...(spec !== undefined ? { spec } : {})
  })
  const route = (spec?: Json): Json => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "web", namespace: "ns" },
    ...(spec !== undefined ? { spec } : {})
  })
  const ruleWith = (rule: Json) => route({ parentRefs: [{ name: "gw" }], rules: [rule] })

  it("accepts a Gateway and a route with every required field", () => {
    expect(errorsOf(GatewayResource, gateway({ gatewayClassName: "local", listeners: [listener] }))).toEqual([])
    expect(errorsOf(HttpRouteResource, ruleWith({ backendRefs: [{ name: "web", port: 80 }] }))).toEqual([])
  })

  it.each<readonly [string, Json, string]>([
    ["spec", gateway(), "spec"],
    ["spec.gatewayClassName", gateway({ listeners: [listener] }), "spec.gatewayClassName"],
    ["spec.listeners", gateway({ gatewayClassName: "local" }), "spec.listeners"],
    ...(["name", "port", "protocol"] as const).map((field) => {
      const { [field]: _, ...rest } = listener
      return [
        `a listener's ${field}`,
        gateway({ gatewayClassName: "local", listeners: [rest] }),
        `spec.listeners[0].${field}`
      ] as const
    }),
    [
      "an allowed route kind's kind",
      gateway({
        gatewayClassName: "local",
        listeners: [{ ...listener, allowedRoutes: { kinds: [{ group: "gateway.networking.k8s.io" }] } }]
      }),
      "spec.listeners[0].allowedRoutes.kinds[0].kind"
    ]
  ])("refuses a Gateway without %s", (_what, object, field) => {
    expect(errorsOf(GatewayResource, object)).toContainEqual(["FieldValueRequired", field])
  })

  it.each(
    [
      ["spec", route(), "spec"],
      ["a parentRef's name", route({ parentRefs: [{ kind: "Gateway" }] }), "spec.parentRefs[0].name"],
      ["a backendRef's name", ruleWith({ backendRefs: [{ port: 80 }] }), "spec.rules[0].backendRefs[0].name"]
    ] as const
  )("refuses a route without %s", (_what, object, field) => {
    expect(errorsOf(HttpRouteResource, object)).toContainEqual(["FieldValueRequired", field])
  })

  it.each(
    [
      [
        "a listener's TLS mode",
        GatewayResource,
        gateway({
          gatewayClassName: "local",
          listeners: [{ ...listener, protocol: "TLS", port: 443, tls: { mode: "Offload" } }]
        }),
        "spec.listeners[0].tls.mode"
      ],
      [
        "the namespaces a listener admits routes from",
        GatewayResource,
        gateway({
          gatewayClassName: "local",
          listeners: [{ ...listener, allowedRoutes: { namespaces: { from: "Some" } } }]
        }),
        "spec.listeners[0].allowedRoutes.namespaces.from"
      ],
      [
        "a path match's type",
        HttpRouteResource,
        ruleWith({ matches: [{ path: { type: "Glob", value: "/" } }] }),
        "spec.rules[0].matches[0].path.type"
      ],
      [
        "a match's method",
        HttpRouteResource,
        ruleWith({ matches: [{ method: "FETCH" }] }),
        "spec.rules[0].matches[0].method"
      ]
    ] as const
  )("refuses %s outside its set", (_what, resource, object, field) => {
    expect(errorsOf(resource as never, object)).toContainEqual(["FieldValueNotSupported", field])
  })

  it("refuses an encoded slash in a path in either case", () => {
    for (const value of ["/a%2fb", "/a%2Fb"]) {
      const errors = validateObject(
        HttpRouteResource,
        ruleWith({ matches: [{ path: { type: "PathPrefix", value } }] }) as never
      )
      expect(errors.map((e) => e.message).join("\n")).toContain(`must not contain '%2${value.at(-2)}'`)
    }
  })

  it.each(
    [
      [
        "a query match",
        { matches: [{ queryParams: [{ name: "q", value: "1" }, { name: "q", value: "2" }] }] },
        "spec.rules[0].matches[0].queryParams[1]"
      ],
      [
        "a header a filter sets",
        {
          filters: [{
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "x", value: "1" }, { name: "x", value: "2" }] }
          }]
        },
        "spec.rules[0].filters[0].requestHeaderModifier.set[1]"
      ],
      [
        "a header a filter adds",
        {
          filters: [{
            type: "ResponseHeaderModifier",
            responseHeaderModifier: { add: [{ name: "x", value: "1" }, { name: "x", value: "2" }] }
          }]
        },
        "spec.rules[0].filters[0].responseHeaderModifier.add[1]"
      ]
    ] as const
  )("refuses %s listed twice by name, a keyed list in the CRD", (_what, rule, field) => {
    expect(errorsOf(HttpRouteResource, ruleWith(rule))).toContainEqual(["FieldValueDuplicate", field])
  })
})

describe("field docs", () => {
  /** The OpenAPI node at a docs path (`spec.rules.http`), through arrays' items. */
  const nodeAt = (schema: Json, path: string): Json | undefined =>
    path === "" ? schema : path.split(".").reduce<Json | undefined>((node, name) => {
      const object = node?.type === "array" ? node.items : node
      return object?.properties?.[name]
    }, schema)

  it.each([IngressResource, HttpRouteResource, LeaseResource].map((r) => [r.kind, r] as const))(
    "shows each documented field of %s's in its published schema",
    (_kind, resource) => {
      const docs = docsFor(qualifiedName(resource))
      expect(Object.keys(docs).length).toBeGreaterThan(5)
      const schema = plain(kindSchema(resource))
      for (const [path, text] of Object.entries(docs)) {
        const node = nodeAt(schema, path)
        expect(node, path).toBeDefined()
        expect(node?.description ?? node?.items?.description, path).toBe(text)
      }
    }
  )

  it("documents a node several fields share once, so its text shows at each of them", () => {
    const ingress = docsFor(qualifiedName(IngressResource))
    expect(ingress["spec.defaultBackend.service.name"]).toBe(ingress["spec.rules.http.paths.backend.service.name"])
    expect(ingress["spec.defaultBackend.service.port"]).toBe(ingress["spec.rules.http.paths.backend.service.port"])
    const route = docsFor(qualifiedName(HttpRouteResource))
    for (const field of ["group", "kind", "name", "namespace", "port", "sectionName"]) {
      expect(route[`status.parents.parentRef.${field}`], field).toBe(route[`spec.parentRefs.${field}`])
      expect(route[`spec.parentRefs.${field}`], field).toEqual(expect.any(String))
    }
  })
})

describe("the CRD schemas and the built-in types", () => {
  it("gives GatewayClass a schema that checks field types", () => {
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
          default: {
            conditions: [{
              lastTransitionTime: "1970-01-01T00:00:00Z",
              message: "Waiting for controller",
              reason: "Pending",
              status: "Unknown",
              type: "Accepted"
            }]
          },
          properties: {
            conditions: plain(schemaFor(GatewayResource)).properties.status.properties.conditions,
            supportedFeatures: { type: "array", items: { "x-kubernetes-preserve-unknown-fields": true } }
          }
        }
      }
    })
  })

  it("serves no CRD schema for the built-in types", () => {
    expect(schemaFor(IngressResource)).toBeUndefined()
    expect(schemaFor(IngressClassResource)).toBeUndefined()
    expect(schemaFor(PodResource)).toBeUndefined()
    expect(schemaFor(EventResource)).toBeUndefined()
    expect(schemaFor(EndpointSliceResource)).toBeUndefined()
    expect(schemaFor(LeaseResource)).toBeUndefined()
  })

  // The events.k8s.io/v1 Event is the core Event's description under the newer names,
  // so both views have the same fields.
  it("derives the events.k8s.io Event from the core one under its newer names", () => {
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
