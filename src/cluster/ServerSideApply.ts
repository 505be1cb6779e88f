/**
 * The structural schema of each served type and what the API server derives from
 * it: pruning of unknown fields, CRD defaults, and server-side apply's field
 * ownership (managedFields in FieldsV1, merge by list keys, conflicts, removals).
 */
import type { KubeObject, ManagedFieldsEntry, StatusCause } from "../domain/Objects.js"
import { apiVersionOf, type ResourceType } from "../domain/Resources.js"

// ---------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------

/** A plain JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Structural equality of JSON values; key order does not matter. */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/** A deep copy of a JSON value. */
export const clone = <A>(value: A): A => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as A))

// ---------------------------------------------------------------------------
// Structural schema
// ---------------------------------------------------------------------------

/** The Go type a built-in field decodes into; a JSON value of another type is a 400. */
export type GoType = "string" | "int32" | "int64" | "bool" | "intstr"

/** How the server sees one node of an object: what to keep, default, merge and own. */
export type Shape =
  | { readonly _tag: "Scalar"; readonly goType?: GoType }
  | {
    readonly _tag: "Struct"
    readonly fields: Readonly<Record<string, Shape>>
    /** CRD `default`s, applied when the field is absent and its parent present. */
    readonly defaults?: Readonly<Record<string, unknown>>
    /** `x-kubernetes-map-type: atomic`: owned and replaced as one value. */
    readonly atomic?: boolean
  }
  | { readonly _tag: "Map"; readonly values: Shape; readonly atomic?: boolean }
  | {
    readonly _tag: "List"
    readonly listType: "atomic" | "set" | "map"
    readonly keys?: ReadonlyArray<string>
    /** Key fields an item may omit, with the value the schema defaults them to. */
    readonly keyDefaults?: Readonly<Record<string, unknown>>
    readonly items: Shape
  }
  /** Untyped: kept whole; maps are granular and lists atomic, as for a deduced schema. */
  | { readonly _tag: "Unknown" }

const scalar: Shape = { _tag: "Scalar", goType: "string" }
const typed = (goType: GoType): Shape => ({ _tag: "Scalar", goType })
const unknown: Shape = { _tag: "Unknown" }
const struct = (
  fields: Record<string, Shape>,
  options: { readonly defaults?: Record<string, unknown>; readonly atomic?: boolean } = {}
): Shape => ({ _tag: "Struct", fields, ...options })
// Field types that are not strings; everything else named in `scalars` is.
const NON_STRING: Readonly<Record<string, GoType>> = {
  generation: "int64",
  deletionGracePeriodSeconds: "int64",
  observedGeneration: "int64",
  controller: "bool",
  blockOwnerDeletion: "bool",
  publishNotReadyAddresses: "bool",
  allocateLoadBalancerNodePorts: "bool",
  port: "int32",
  number: "int32",
  nodePort: "int32",
  healthCheckNodePort: "int32",
  timeoutSeconds: "int32",
  targetPort: "intstr",
  weight: "int32",
  percent: "int32",
  statusCode: "int32",
  attachedRoutes: "int32",
  numerator: "int32",
  denominator: "int32",
  attempts: "int32"
}
const scalars = (...names: ReadonlyArray<string>): Record<string, Shape> =>
  Object.fromEntries(names.map((n) => [n, NON_STRING[n] !== undefined ? typed(NON_STRING[n]) : scalar]))
const stringMap = (atomic = false): Shape => ({ _tag: "Map", values: scalar, ...(atomic ? { atomic } : {}) })
const atomicList = (items: Shape): Shape => ({ _tag: "List", listType: "atomic", items })
const setList: Shape = { _tag: "List", listType: "set", items: scalar }
const mapList = (keys: ReadonlyArray<string>, items: Shape, keyDefaults?: Record<string, unknown>): Shape => ({
  _tag: "List",
  listType: "map",
  keys,
  items,
  ...(keyDefaults !== undefined ? { keyDefaults } : {})
})

const objectMeta = struct({
  ...scalars(
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds"
  ),
  labels: stringMap(),
  annotations: stringMap(),
  ownerReferences: mapList(["uid"], struct(scalars("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"))),
  finalizers: setList,
  managedFields: atomicList(
    struct({ ...scalars("manager", "operation", "apiVersion", "time", "fieldsType", "subresource"), fieldsV1: unknown })
  )
})

const condition = struct(scalars("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"))
const conditions = mapList(["type"], condition)

const topLevel = (spec: Shape, status?: Shape, defaults?: Record<string, unknown>): Shape =>
  struct(
    {
      apiVersion: scalar,
      kind: scalar,
      metadata: objectMeta,
      spec,
      ...(status !== undefined ? { status } : {})
    },
    defaults !== undefined ? { defaults } : {}
  )

const portStatus = atomicList(struct(scalars("port", "protocol", "error")))
const loadBalancerStatus = struct({
  ingress: atomicList(struct({ ...scalars("ip", "hostname", "ipMode"), ports: portStatus }))
})

const namespaceShape = topLevel(
  struct({ finalizers: atomicList(scalar) }),
  struct({ phase: scalar, conditions: mapList(["type"], struct(scalars("type", "status", "lastTransitionTime", "reason", "message"))) })
)

const serviceShape = topLevel(
  struct({
    ports: mapList(
      ["port", "protocol"],
      struct(scalars("name", "protocol", "appProtocol", "port", "targetPort", "nodePort")),
      { protocol: "TCP" }
    ),
    selector: stringMap(true),
    clusterIPs: atomicList(scalar),
    externalIPs: atomicList(scalar),
    loadBalancerSourceRanges: atomicList(scalar),
    ipFamilies: atomicList(scalar),
    sessionAffinityConfig: struct({ clientIP: struct(scalars("timeoutSeconds")) }),
    ...scalars(
      "clusterIP",
      "type",
      "sessionAffinity",
      "loadBalancerIP",
      "externalName",
      "externalTrafficPolicy",
      "healthCheckNodePort",
      "publishNotReadyAddresses",
      "ipFamilyPolicy",
      "allocateLoadBalancerNodePorts",
      "loadBalancerClass",
      "internalTrafficPolicy",
      "trafficDistribution"
    )
  }),
  struct({ loadBalancer: loadBalancerStatus, conditions })
)

const ingressBackend = struct({
  service: struct({ name: scalar, port: struct(scalars("name", "number")) }),
  resource: struct(scalars("apiGroup", "kind", "name"))
})

const ingressShape = topLevel(
  struct({
    ingressClassName: scalar,
    defaultBackend: ingressBackend,
    tls: atomicList(struct({ hosts: atomicList(scalar), secretName: scalar })),
    rules: atomicList(
      struct({
        host: scalar,
        http: struct({ paths: atomicList(struct({ path: scalar, pathType: scalar, backend: ingressBackend })) })
      })
    )
  }),
  struct({ loadBalancer: struct({ ingress: atomicList(struct({ ...scalars("ip", "hostname"), ports: portStatus })) }) })
)

const ingressClassShape = topLevel(
  struct({ controller: scalar, parameters: struct(scalars("apiGroup", "kind", "name", "scope", "namespace")) })
)

// Gateway API (standard channel, v1). Lists without x-kubernetes-list-type are atomic.
const GATEWAY_GROUP = "gateway.networking.k8s.io"
const PATH_PREFIX_ROOT = { type: "PathPrefix", value: "/" }

const parentReference = struct(scalars("group", "kind", "namespace", "name", "sectionName", "port"), {
  defaults: { group: GATEWAY_GROUP, kind: "Gateway" }
})

const headerModifier = struct({
  set: mapList(["name"], struct(scalars("name", "value"))),
  add: mapList(["name"], struct(scalars("name", "value"))),
  remove: setList
})
const pathModifier = struct(scalars("type", "replaceFullPath", "replacePrefixMatch"))
const httpRouteFilter = struct({
  type: scalar,
  requestHeaderModifier: headerModifier,
  responseHeaderModifier: headerModifier,
  requestMirror: struct({
    backendRef: struct(scalars("group", "kind", "name", "namespace", "port"), { defaults: { group: "", kind: "Service" } }),
    percent: scalar,
    fraction: struct(scalars("numerator", "denominator"), { defaults: { denominator: 100 } })
  }),
  requestRedirect: struct({ ...scalars("scheme", "hostname", "port", "statusCode"), path: pathModifier }, {
    defaults: { statusCode: 302 }
  }),
  urlRewrite: struct({ hostname: scalar, path: pathModifier }),
  extensionRef: struct(scalars("group", "kind", "name"))
})
const httpHeaderMatch = struct(scalars("type", "name", "value"), { defaults: { type: "Exact" } })
const httpRouteMatch = struct(
  {
    path: struct(scalars("type", "value"), { defaults: { type: "PathPrefix", value: "/" } }),
    headers: mapList(["name"], httpHeaderMatch),
    queryParams: mapList(["name"], httpHeaderMatch),
    method: scalar
  },
  { defaults: { path: PATH_PREFIX_ROOT } }
)
const httpBackendRef = struct(
  { ...scalars("group", "kind", "name", "namespace", "port", "weight"), filters: atomicList(httpRouteFilter) },
  { defaults: { group: "", kind: "Service", weight: 1 } }
)
const httpRouteRule = struct(
  {
    name: scalar,
    matches: atomicList(httpRouteMatch),
    filters: atomicList(httpRouteFilter),
    backendRefs: atomicList(httpBackendRef),
    timeouts: struct(scalars("request", "backendRequest")),
    retry: struct({ codes: atomicList(scalar), attempts: scalar, backoff: scalar }),
    sessionPersistence: struct({
      ...scalars("sessionName", "absoluteTimeout", "idleTimeout", "type"),
      cookieConfig: struct(scalars("lifetimeType"))
    })
  },
  { defaults: { matches: [{ path: PATH_PREFIX_ROOT }] } }
)

const httpRouteShape = topLevel(
  struct(
    {
      parentRefs: atomicList(parentReference),
      hostnames: atomicList(scalar),
      rules: atomicList(httpRouteRule)
    },
    { defaults: { rules: [{ matches: [{ path: PATH_PREFIX_ROOT }] }] } }
  ),
  struct({
    parents: atomicList(struct({ parentRef: parentReference, controllerName: scalar, conditions }))
  })
)

const GATEWAY_PENDING_CONDITION = (type: string) => ({
  lastTransitionTime: "1970-01-01T00:00:00Z",
  message: "Waiting for controller",
  reason: "Pending",
  status: "Unknown",
  type
})

const allowedRoutes = struct(
  {
    namespaces: struct(
      {
        from: scalar,
        selector: struct({
          matchLabels: stringMap(),
          matchExpressions: atomicList(struct({ key: scalar, operator: scalar, values: atomicList(scalar) }))
        })
      },
      { defaults: { from: "Same" } }
    ),
    kinds: atomicList(struct(scalars("group", "kind")))
  },
  { defaults: { namespaces: { from: "Same" } } }
)

const gatewayShape = topLevel(
  struct({
    gatewayClassName: scalar,
    listeners: mapList(
      ["name"],
      struct(
        {
          ...scalars("name", "hostname", "port", "protocol"),
          tls: struct(
            {
              mode: scalar,
              certificateRefs: atomicList(
                struct(scalars("group", "kind", "name", "namespace"), { defaults: { group: "", kind: "Secret" } })
              ),
              options: stringMap()
            },
            { defaults: { mode: "Terminate" } }
          ),
          allowedRoutes
        },
        { defaults: { allowedRoutes: { namespaces: { from: "Same" } } } }
      )
    ),
    addresses: atomicList(struct(scalars("type", "value"), { defaults: { type: "IPAddress" } })),
    infrastructure: struct({
      labels: stringMap(),
      annotations: stringMap(),
      parametersRef: struct(scalars("group", "kind", "name"))
    })
  }),
  struct({
    addresses: atomicList(struct(scalars("type", "value"))),
    conditions,
    listeners: mapList(
      ["name"],
      struct({
        name: scalar,
        supportedKinds: atomicList(struct(scalars("group", "kind"))),
        attachedRoutes: scalar,
        conditions
      })
    )
  }),
  // The CRD defaults status, so a Gateway nobody reconciled still says why.
  { status: { conditions: [GATEWAY_PENDING_CONDITION("Accepted"), GATEWAY_PENDING_CONDITION("Programmed")] } }
)

const gatewayClassShape = topLevel(
  struct({
    controllerName: scalar,
    parametersRef: struct(scalars("group", "kind", "name", "namespace")),
    description: scalar
  }),
  struct({ conditions, supportedFeatures: atomicList(unknown) }),
  { status: { conditions: [GATEWAY_PENDING_CONDITION("Accepted")] } }
)

const shapes: ReadonlyMap<string, Shape> = new Map([
  ["namespaces", namespaceShape],
  ["services", serviceShape],
  ["ingresses.networking.k8s.io", ingressShape],
  ["ingressclasses.networking.k8s.io", ingressClassShape],
  ["gateways.gateway.networking.k8s.io", gatewayShape],
  ["gatewayclasses.gateway.networking.k8s.io", gatewayClassShape],
  ["httproutes.gateway.networking.k8s.io", httpRouteShape]
])

/** The structural schema of a served type; an untyped one for anything else. */
export const shapeOf = (resource: ResourceType<unknown>): Shape =>
  shapes.get(resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`) ??
    topLevel(unknown, unknown)

const childShape = (shape: Shape, key: string): Shape | undefined => {
  switch (shape._tag) {
    case "Struct":
      return shape.fields[key]
    case "Map":
      return shape.values
    case "Unknown":
      return unknown
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------
// Pruning and defaulting
// ---------------------------------------------------------------------------

/**
 * What the server stores of `value`: unknown fields dropped (as a CRD's structural
 * schema prunes, and as decoding into Go types does), nulls dropped, and for
 * built-in types empty lists and maps dropped (`omitempty`).
 */
export const prune = (value: unknown, shape: Shape, omitEmpty: boolean): unknown => {
  switch (shape._tag) {
    case "Scalar":
    case "Unknown":
      return value
    case "Struct":
    case "Map": {
      if (!isObject(value)) return value
      const out: Record<string, unknown> = {}
      for (const [key, child] of Object.entries(value)) {
        if (child === null || child === undefined) continue
        const sub = childShape(shape, key)
        if (sub === undefined) continue
        const pruned = prune(child, sub, omitEmpty)
        if (omitEmpty && isEmptyCollection(pruned, sub)) continue
        out[key] = pruned
      }
      return out
    }
    case "List":
      return Array.isArray(value) ? value.map((item) => prune(item, shape.items, omitEmpty)) : value
  }
}

const isEmptyCollection = (value: unknown, shape: Shape): boolean =>
  (Array.isArray(value) && value.length === 0) || (shape._tag === "Map" && isObject(value) && Object.keys(value).length === 0)

/** Applies the schema's defaults where fields are absent, then defaults inside every value. */
export const applyDefaults = (value: unknown, shape: Shape): unknown => {
  switch (shape._tag) {
    case "Scalar":
    case "Unknown":
      return value
    case "Struct":
    case "Map": {
      if (!isObject(value)) return value
      const out: Record<string, unknown> = { ...value }
      if (shape._tag === "Struct" && shape.defaults !== undefined) {
        for (const [key, fallback] of Object.entries(shape.defaults)) {
          if (out[key] === undefined) out[key] = clone(fallback)
        }
      }
      for (const [key, child] of Object.entries(out)) {
        const sub = childShape(shape, key)
        if (sub !== undefined) out[key] = applyDefaults(child, sub)
      }
      return out
    }
    case "List":
      return Array.isArray(value) ? value.map((item) => applyDefaults(item, shape.items)) : value
  }
}

const jsonTypeName = (value: unknown): string =>
  Array.isArray(value) ? "array" : value === null ? "null" : typeof value === "boolean" ? "bool" : typeof value === "number" ? `number ${value}` : typeof value

const scalarFits = (value: unknown, goType: GoType): boolean => {
  switch (goType) {
    case "string":
      return typeof value === "string"
    case "bool":
      return typeof value === "boolean"
    case "int32":
    case "int64":
      return typeof value === "number" && Number.isInteger(value)
    case "intstr":
      return typeof value === "string" || (typeof value === "number" && Number.isInteger(value))
  }
}

const GO_TYPE_NAMES: Readonly<Record<GoType, string>> = {
  string: "string",
  bool: "bool",
  int32: "int32",
  int64: "int64",
  intstr: "intstr.IntOrString"
}

/**
 * The decode error a built-in type's JSON would hit (`json: cannot unmarshal string
 * into Go struct field Ingress.spec.rules.http.paths.backend.service.port.number of
 * type int32`), or undefined. The server answers it with 400, before validation.
 */
export const decodeProblem = (value: unknown, shape: Shape, kind: string): string | undefined => {
  const walk = (v: unknown, s: Shape, path: string): string | undefined => {
    if (v === null || v === undefined) return undefined
    const fail = (goType: string) =>
      `json: cannot unmarshal ${jsonTypeName(v).split(" ")[0]} into Go struct field ${kind}${path} of type ${goType}`
    switch (s._tag) {
      case "Unknown":
        return undefined
      case "Scalar":
        if (s.goType === undefined || scalarFits(v, s.goType)) return undefined
        if (typeof v === "number" && (s.goType === "int32" || s.goType === "int64")) {
          return `json: cannot unmarshal number ${v} into Go struct field ${kind}${path} of type ${s.goType}`
        }
        return fail(GO_TYPE_NAMES[s.goType])
      case "Struct":
      case "Map": {
        if (!isObject(v)) return fail(s._tag === "Map" ? "map[string]string" : "struct")
        for (const [key, child] of Object.entries(v)) {
          const sub = childShape(s, key)
          if (sub === undefined) continue
          const problem = walk(child, sub, `${path}.${key}`)
          if (problem !== undefined) return problem
        }
        return undefined
      }
      case "List": {
        if (!Array.isArray(v)) return fail("array")
        for (const item of v) {
          const problem = walk(item, s.items, path)
          if (problem !== undefined) return problem
        }
        return undefined
      }
    }
  }
  return walk(value, shape, "")
}

// ---------------------------------------------------------------------------
// Field sets
// ---------------------------------------------------------------------------

/** A path element as FieldsV1 writes it: `f:name`, `k:{"port":80}`, `v:"x"`, `i:0`. */
type PathElement = string
type Path = ReadonlyArray<PathElement>

const encodePath = (path: Path): string => JSON.stringify(path)

/** A set of field paths, as server-side apply tracks ownership. */
export class FieldSet {
  private readonly members = new Map<string, Path>()

  static of(paths: Iterable<Path>): FieldSet {
    const set = new FieldSet()
    for (const p of paths) set.insert(p)
    return set
  }
  insert(path: Path): void {
    this.members.set(encodePath(path), path)
  }
  has(path: Path): boolean {
    return this.members.has(encodePath(path))
  }
  get size(): number {
    return this.members.size
  }
  isEmpty(): boolean {
    return this.members.size === 0
  }
  paths(): ReadonlyArray<Path> {
    return [...this.members.values()]
  }
  union(other: FieldSet): FieldSet {
    return FieldSet.of([...this.paths(), ...other.paths()])
  }
  difference(other: FieldSet): FieldSet {
    return FieldSet.of(this.paths().filter((p) => !other.has(p)))
  }
  intersection(other: FieldSet): FieldSet {
    return FieldSet.of(this.paths().filter((p) => other.has(p)))
  }
  equals(other: FieldSet): boolean {
    return this.size === other.size && this.paths().every((p) => other.has(p))
  }
  /** Whether `path` or anything below it is a member. */
  hasSelfOrDescendant(path: Path): boolean {
    return this.paths().some((p) => p.length >= path.length && path.every((e, i) => p[i] === e))
  }
}

const keyElement = (item: unknown, keys: ReadonlyArray<string>, keyDefaults: Readonly<Record<string, unknown>>): PathElement => {
  const record = isObject(item) ? item : {}
  const key: Record<string, unknown> = {}
  for (const k of [...keys].sort()) key[k] = record[k] ?? keyDefaults[k] ?? null
  return `k:${JSON.stringify(key)}`
}

const listItemElement = (shape: Extract<Shape, { _tag: "List" }>, item: unknown, index: number): PathElement =>
  shape.listType === "map"
    ? keyElement(item, shape.keys ?? [], shape.keyDefaults ?? {})
    : shape.listType === "set"
    ? `v:${JSON.stringify(item)}`
    : `i:${index}`

const collect = (value: unknown, shape: Shape, path: Path, out: FieldSet): void => {
  switch (shape._tag) {
    case "Scalar":
      out.insert(path)
      return
    case "Unknown":
    case "Struct":
    case "Map": {
      const atomic = shape._tag !== "Unknown" && shape.atomic === true
      if (atomic || !isObject(value) || Object.keys(value).length === 0) {
        out.insert(path)
        return
      }
      for (const [key, child] of Object.entries(value)) {
        const sub = childShape(shape, key) ?? unknown
        if (child === null) out.insert([...path, `f:${key}`])
        else collect(child, sub, [...path, `f:${key}`], out)
      }
      return
    }
    case "List": {
      if (shape.listType === "atomic" || !Array.isArray(value)) {
        out.insert(path)
        return
      }
      value.forEach((item, index) => {
        const itemPath = [...path, listItemElement(shape, item, index)]
        if (shape.listType === "map") collect(item, shape.items, itemPath, out)
        out.insert(itemPath)
      })
      return
    }
  }
}

/** Fields server-side apply never tracks: identity and bookkeeping the server owns. */
const SYSTEM_METADATA = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "selfLink",
  "managedFields"
]

/** Which part of an object a write may change: the object, or its status subresource. */
export type Scope = "main" | "status"

/** The part of `object` a writer at `scope` can own. */
export const projection = (resource: ResourceType<unknown>, object: KubeObject | undefined, scope: Scope): Record<string, unknown> => {
  if (object === undefined) return {}
  const record = object as unknown as Record<string, unknown>
  if (scope === "status") return record.status === undefined ? {} : { status: record.status }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    if (key === "apiVersion" || key === "kind") continue
    if (key === "status" && resource.statusSubresource) continue
    if (key === "metadata" && isObject(value)) {
      const meta: Record<string, unknown> = {}
      for (const [mk, mv] of Object.entries(value)) if (!SYSTEM_METADATA.includes(mk)) meta[mk] = mv
      if (Object.keys(meta).length > 0) out.metadata = meta
      continue
    }
    out[key] = value
  }
  return out
}

/** Every field path `value` sets, as the server computes an applier's set. */
export const fieldSetOf = (resource: ResourceType<unknown>, value: Record<string, unknown>): FieldSet => {
  const out = new FieldSet()
  if (Object.keys(value).length > 0) collect(value, shapeOf(resource), [], out)
  return out
}

// FieldsV1 is the set written as a trie; "." marks a member that also has children.
const ELEMENT_ORDER = { ".": 0, f: 1, k: 2, v: 3, i: 4 } as const

const sortTrie = (node: Record<string, unknown>): Record<string, unknown> => {
  const keys = Object.keys(node).sort((a, b) => {
    const ra = a === "." ? 0 : ELEMENT_ORDER[a[0] as "f"] ?? 5
    const rb = b === "." ? 0 : ELEMENT_ORDER[b[0] as "f"] ?? 5
    return ra !== rb ? ra - rb : a < b ? -1 : a > b ? 1 : 0
  })
  const out: Record<string, unknown> = {}
  for (const k of keys) out[k] = isObject(node[k]) ? sortTrie(node[k]) : node[k]
  return out
}

/** The FieldsV1 form of a set. */
export const toFieldsV1 = (set: FieldSet): Record<string, unknown> => {
  const root: Record<string, unknown> = {}
  const members: Array<Record<string, unknown>> = []
  for (const path of set.paths()) {
    let node = root
    for (const element of path) {
      if (!isObject(node[element])) node[element] = {}
      node = node[element] as Record<string, unknown>
    }
    members.push(node)
  }
  for (const node of members) if (Object.keys(node).some((k) => k !== ".")) node["."] = {}
  return sortTrie(root)
}

/** The set a FieldsV1 trie describes. */
export const fromFieldsV1 = (fields: unknown): FieldSet => {
  const out = new FieldSet()
  const walk = (node: unknown, path: Path) => {
    if (!isObject(node)) return
    const children = Object.keys(node).filter((k) => k !== ".")
    if (path.length > 0 && (children.length === 0 || "." in node)) out.insert(path)
    for (const k of children) walk(node[k], [...path, k])
  }
  walk(fields, [])
  return out
}

/** A path as conflict messages print it: `.spec.ports[port=80,protocol="TCP"]`. */
export const pathString = (path: Path): string =>
  path
    .map((element) => {
      const body = element.slice(2)
      switch (element[0]) {
        case "f":
          return `.${body}`
        case "k": {
          const key = JSON.parse(body) as Record<string, unknown>
          return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}]`
        }
        case "v":
          return `[=${body}]`
        default:
          return `[${body}]`
      }
    })
    .join("")

// ---------------------------------------------------------------------------
// Navigation, merge and removal
// ---------------------------------------------------------------------------

const findItem = (list: ReadonlyArray<unknown>, shape: Extract<Shape, { _tag: "List" }>, element: PathElement): number =>
  list.findIndex((item, index) => listItemElement(shape, item, index) === element)

/** The value at `path`, or undefined. */
export const valueAt = (value: unknown, shape: Shape, path: Path): unknown => {
  let current = value
  let currentShape: Shape = shape
  for (const element of path) {
    if (element.startsWith("f:")) {
      if (!isObject(current)) return undefined
      const key = element.slice(2)
      current = current[key]
      currentShape = childShape(currentShape, key) ?? unknown
    } else {
      if (!Array.isArray(current) || currentShape._tag !== "List") return undefined
      const index = findItem(current, currentShape, element)
      if (index < 0) return undefined
      current = current[index]
      currentShape = currentShape.items
    }
  }
  return current
}

const isLeafPath = (path: Path): boolean => {
  const last = path[path.length - 1]
  return last !== undefined && last.startsWith("f:")
}

// A key field of a list item that stays (someone else owns part of it) is never
// removed: without it the item could not be told apart.
const isKeyField = (path: Path): boolean => {
  const parent = path[path.length - 2]
  const last = path[path.length - 1]
  if (parent === undefined || last === undefined || !parent.startsWith("k:") || !last.startsWith("f:")) return false
  const key = JSON.parse(parent.slice(2)) as Record<string, unknown>
  return last.slice(2) in key
}

/** `live` with `config` merged in: structs and granular maps per key, keyed lists per item, the rest replaced. */
export const merge = (live: unknown, config: unknown, shape: Shape): unknown => {
  if (config === undefined) return live
  if (live === undefined || live === null || config === null) return config
  switch (shape._tag) {
    case "Scalar":
      return config
    case "Unknown":
    case "Struct":
    case "Map": {
      const atomic = shape._tag !== "Unknown" && shape.atomic === true
      if (atomic || !isObject(live) || !isObject(config)) return config
      const out: Record<string, unknown> = { ...live }
      for (const [key, value] of Object.entries(config)) {
        out[key] = merge(live[key], value, childShape(shape, key) ?? unknown)
      }
      return out
    }
    case "List": {
      if (shape.listType === "atomic" || !Array.isArray(live) || !Array.isArray(config)) return config
      const element = (item: unknown, index: number) => listItemElement(shape, item, index)
      const configElements = config.map(element)
      const liveByElement = new Map(live.map((item, index) => [element(item, index), item]))
      const emitted = new Set<string>()
      const out: Array<unknown> = []
      const emitConfigUpTo = (upTo: number) => {
        for (let i = 0; i <= upTo; i++) {
          const e = configElements[i]!
          if (emitted.has(e)) continue
          emitted.add(e)
          out.push(shape.listType === "map" ? merge(liveByElement.get(e), config[i], shape.items) : config[i])
        }
      }
      // Items only the live object has keep their place; the config decides the
      // order of the items it names.
      live.forEach((item, index) => {
        const e = element(item, index)
        const inConfig = configElements.indexOf(e)
        if (inConfig < 0) {
          if (!emitted.has(e)) out.push(item)
          emitted.add(e)
        } else {
          emitConfigUpTo(inConfig)
        }
      })
      emitConfigUpTo(config.length - 1)
      return out
    }
  }
}

/** `value` without whatever is at `path` (a field, a map entry or a list item). */
export const removePath = (value: unknown, shape: Shape, path: Path): unknown => {
  if (path.length === 0) return undefined
  const [head, ...rest] = path as [PathElement, ...Array<PathElement>]
  if (head.startsWith("f:")) {
    if (!isObject(value)) return value
    const key = head.slice(2)
    if (!(key in value)) return value
    const out = { ...value }
    if (rest.length === 0) delete out[key]
    else out[key] = removePath(value[key], childShape(shape, key) ?? unknown, rest)
    return out
  }
  if (!Array.isArray(value) || shape._tag !== "List") return value
  const index = findItem(value, shape, head)
  if (index < 0) return value
  if (rest.length === 0) return value.filter((_, i) => i !== index)
  return value.map((item, i) => (i === index ? removePath(item, shape.items, rest) : item))
}

// ---------------------------------------------------------------------------
// Managers
// ---------------------------------------------------------------------------

/** One manager's ownership, decoded from a managedFields entry. */
export interface Manager {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly apiVersion: string
  readonly time?: string
  readonly subresource?: string
  readonly set: FieldSet
}

/** Managers by identity: name, operation and subresource (appliers ignore the version). */
export type Managers = Map<string, Manager>

/** The identity of a managedFields entry: manager, operation and subresource. */
export const managerId = (manager: string, operation: "Apply" | "Update", subresource: string | undefined): string =>
  JSON.stringify([manager, operation, subresource ?? ""])

/** The managers recorded on an object. */
export const decodeManagers = (entries: ReadonlyArray<ManagedFieldsEntry> | undefined): Managers => {
  const out: Managers = new Map()
  for (const entry of entries ?? []) {
    if (typeof entry?.manager !== "string") continue
    const operation = entry.operation === "Apply" ? "Apply" : "Update"
    out.set(managerId(entry.manager, operation, entry.subresource), {
      manager: entry.manager,
      operation,
      apiVersion: entry.apiVersion,
      ...(entry.time !== undefined ? { time: entry.time } : {}),
      ...(entry.subresource !== undefined && entry.subresource !== "" ? { subresource: entry.subresource } : {}),
      set: fromFieldsV1(entry.fieldsV1)
    })
  }
  return out
}

/** The managedFields the server writes: appliers first, then by time, then by name. */
export const encodeManagers = (managers: Managers): Array<ManagedFieldsEntry> =>
  [...managers.values()]
    .filter((m) => !m.set.isEmpty())
    .sort((a, b) =>
      a.operation !== b.operation
        ? a.operation < b.operation ? -1 : 1
        : (a.time ?? "") !== (b.time ?? "")
        ? (a.time ?? "") < (b.time ?? "") ? -1 : 1
        : a.manager !== b.manager
        ? a.manager < b.manager ? -1 : 1
        : (a.subresource ?? "") < (b.subresource ?? "")
        ? -1
        : 1
    )
    .map((m) => ({
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
      ...(m.time !== undefined ? { time: m.time } : {}),
      fieldsType: "FieldsV1" as const,
      fieldsV1: toFieldsV1(m.set),
      ...(m.subresource !== undefined ? { subresource: m.subresource } : {})
    }))

/** What changed between two projections of an object, by path. */
interface Comparison {
  readonly added: FieldSet
  readonly removed: FieldSet
  readonly modified: FieldSet
}

const compare = (resource: ResourceType<unknown>, before: Record<string, unknown>, after: Record<string, unknown>): Comparison => {
  const shape = shapeOf(resource)
  const beforeSet = fieldSetOf(resource, before)
  const afterSet = fieldSetOf(resource, after)
  const modified = FieldSet.of(
    beforeSet
      .intersection(afterSet)
      .paths()
      .filter((p) => isLeafPath(p) && !jsonEqual(valueAt(before, shape, p), valueAt(after, shape, p)))
  )
  return { added: afterSet.difference(beforeSet), removed: beforeSet.difference(afterSet), modified }
}

/** A field another manager owns that this write would change. */
export interface Conflict {
  readonly manager: Manager
  readonly path: Path
}

const describeManager = (m: Manager): string => {
  const name = `${JSON.stringify(m.manager)}${m.subresource !== undefined ? ` with subresource ${JSON.stringify(m.subresource)}` : ""}`
  if (m.operation === "Apply") return name
  return m.time === undefined ? `${name} using ${m.apiVersion}` : `${name} using ${m.apiVersion} at ${m.time}`
}

/** The 409 message and causes the server answers for apply conflicts. */
export const conflictReport = (
  conflicts: ReadonlyArray<Conflict>
): { readonly message: string; readonly causes: ReadonlyArray<StatusCause> } => {
  const causes = conflicts.map((c) => ({
    type: "FieldManagerConflict",
    message: `conflict with ${describeManager(c.manager)}`,
    field: pathString(c.path)
  }))
  if (conflicts.length === 1) {
    const c = conflicts[0]!
    return { message: `Apply failed with 1 conflict: conflict with ${describeManager(c.manager)}: ${pathString(c.path)}`, causes }
  }
  const byManager = new Map<string, { manager: Manager; paths: Array<string> }>()
  for (const c of conflicts) {
    const entry = byManager.get(c.manager.manager) ?? { manager: c.manager, paths: [] }
    entry.paths.push(pathString(c.path))
    byManager.set(c.manager.manager, entry)
  }
  const lines: Array<string> = []
  for (const name of [...byManager.keys()].sort()) {
    const entry = byManager.get(name)!
    lines.push(`conflicts with ${describeManager(entry.manager)}:`, ...entry.paths.map((p) => `- ${p}`))
  }
  return { message: `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`, causes }
}

/**
 * Moves ownership for a write from `before` to `after`: other managers lose the
 * fields the write changed (a conflict unless forced) and the fields it removed.
 */
const transferOwnership = (
  managers: Managers,
  writer: string,
  cmp: Comparison,
  force: boolean
): { readonly managers: Managers } | { readonly conflicts: ReadonlyArray<Conflict> } => {
  const changed = cmp.modified.union(cmp.added)
  const conflicts: Array<Conflict> = []
  const next: Managers = new Map()
  for (const [id, m] of managers) {
    if (id === writer) {
      next.set(id, { ...m, set: m.set.difference(cmp.removed) })
      continue
    }
    const taken = m.set.intersection(changed)
    for (const path of taken.paths()) conflicts.push({ manager: m, path })
    next.set(id, { ...m, set: m.set.difference(taken).difference(cmp.removed) })
  }
  if (!force && conflicts.length > 0) return { conflicts }
  return { managers: next }
}

/** The ownership after an Update (create, replace, patch, status write) by `manager`. */
export const recordUpdate = (input: {
  readonly resource: ResourceType<unknown>
  readonly scope: Scope
  readonly managers: Managers
  readonly manager: string
  readonly before: KubeObject | undefined
  readonly after: KubeObject
  readonly now: string
}): Managers => {
  const { resource, scope } = input
  const cmp = compare(resource, projection(resource, input.before, scope), projection(resource, input.after, scope))
  const subresource = scope === "status" ? "status" : undefined
  const id = managerId(input.manager, "Update", subresource)
  const moved = transferOwnership(input.managers, id, cmp, true)
  const managers = "managers" in moved ? moved.managers : input.managers
  const gained = cmp.modified.union(cmp.added)
  const previous = managers.get(id)
  if (gained.isEmpty()) return managers
  managers.set(id, {
    manager: input.manager,
    operation: "Update",
    apiVersion: apiVersionOf(resource),
    time: input.now,
    ...(subresource !== undefined ? { subresource } : {}),
    set: (previous?.set ?? new FieldSet()).union(gained)
  })
  return managers
}

/** The applier's view of a request: the merged object and its new set, before the server finishes it. */
export interface AppliedObject {
  readonly merged: KubeObject
  readonly managers: Managers
  readonly applier: string
}

/**
 * Merges an apply configuration into the live object and drops what this manager
 * applied before but no longer does, unless another manager still owns it.
 */
export const mergeApplied = (input: {
  readonly resource: ResourceType<unknown>
  readonly live: KubeObject
  readonly config: KubeObject
  readonly managers: Managers
  readonly manager: string
}): AppliedObject => {
  const { resource } = input
  const shape = shapeOf(resource)
  const configPart = projection(resource, input.config, "main")
  const applier = managerId(input.manager, "Apply", undefined)
  const lastSet = input.managers.get(applier)?.set ?? new FieldSet()
  const set = fieldSetOf(resource, configPart)
  let merged = merge(input.live, configPart, shape)
  const others = [...input.managers.entries()].filter(([id]) => id !== applier).map(([, m]) => m.set)
  // Shortest paths first: a dropped list item goes whole, and its fields are then
  // gone with it. Removing fields first would change a keyed item's key under it.
  const dropped = lastSet.difference(set).paths().slice().sort((a, b) => a.length - b.length)
  for (const path of dropped) {
    if (others.some((s) => s.hasSelfOrDescendant(path)) || isKeyField(path)) continue
    merged = removePath(merged, shape, path)
  }
  const managers: Managers = new Map(input.managers)
  const previous = input.managers.get(applier)
  managers.set(applier, {
    manager: input.manager,
    operation: "Apply",
    apiVersion: apiVersionOf(resource),
    ...(previous?.time !== undefined ? { time: previous.time } : {}),
    set
  })
  return { merged: merged as KubeObject, managers, applier }
}

/**
 * Settles ownership once the server has finished the applied object (defaults,
 * reset status): conflicts with other managers, unless forced, or the new managers.
 */
export const settleApply = (input: {
  readonly resource: ResourceType<unknown>
  readonly applied: AppliedObject
  readonly live: KubeObject | undefined
  readonly result: KubeObject
  readonly force: boolean
  readonly now: string
}): { readonly managers: Managers } | { readonly conflicts: ReadonlyArray<Conflict> } => {
  const { resource, applied } = input
  const cmp = compare(resource, projection(resource, input.live, "main"), projection(resource, input.result, "main"))
  const moved = transferOwnership(applied.managers, applied.applier, cmp, input.force)
  if ("conflicts" in moved) return moved
  const own = moved.managers.get(applied.applier)!
  // The applier keeps exactly what it applied, whatever the removal pass did.
  const contentChanged = !jsonEqual(projection(resource, input.live, "main"), projection(resource, input.result, "main"))
  moved.managers.set(applied.applier, {
    ...own,
    set: applied.managers.get(applied.applier)!.set,
    ...(contentChanged || own.time === undefined ? { time: input.now } : {})
  })
  return moved
}
