/**
 * The structural schema language: how the server sees one node of an object (what
 * to keep, default, merge and own), the combinators the served types are described
 * with, and the object metadata and top-level layout they all share.
 */

/**
 * The Go type a built-in field decodes into; a JSON value of another type is a 400.
 * `microTime` is `metav1.MicroTime`: a string in its one layout, stored in UTC.
 */
export type GoType = "string" | "int32" | "int64" | "bool" | "intstr" | "microTime"

/** How the server sees one node of an object: what to keep, default, merge and own. */
export type Shape =
  | { readonly _tag: "Scalar"; readonly goType?: GoType }
  | {
    readonly _tag: "Struct"
    readonly fields: Readonly<Record<string, Shape>>
    /** Declared defaults (a CRD's, a Go type's `+default`), applied when the field is absent and its parent present, and published. */
    readonly defaults?: Readonly<Record<string, unknown>>
    /** Defaults the server's own defaulting code fills in the same way, which no published schema shows. */
    readonly serverDefaults?: Readonly<Record<string, unknown>>
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

export const scalar: Shape = { _tag: "Scalar", goType: "string" }
export const typed = (goType: GoType): Shape => ({ _tag: "Scalar", goType })
export const unknown: Shape = { _tag: "Unknown" }
export const struct = (
  fields: Record<string, Shape>,
  options: { readonly defaults?: Record<string, unknown>; readonly atomic?: boolean } = {}
): Shape => ({ _tag: "Struct", fields, ...options })
// Field types that are not strings; everything else named in `scalars` is.
export const NON_STRING: Readonly<Record<string, GoType>> = {
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
export const scalars = (...names: ReadonlyArray<string>): Record<string, Shape> =>
  Object.fromEntries(names.map((n) => [n, NON_STRING[n] !== undefined ? typed(NON_STRING[n]) : scalar]))
export const stringMap = (atomic = false): Shape => ({ _tag: "Map", values: scalar, ...(atomic ? { atomic } : {}) })
export const atomicList = (items: Shape): Shape => ({ _tag: "List", listType: "atomic", items })
export const setList: Shape = { _tag: "List", listType: "set", items: scalar }
export const mapList = (keys: ReadonlyArray<string>, items: Shape, keyDefaults?: Record<string, unknown>): Shape => ({
  _tag: "List",
  listType: "map",
  keys,
  items,
  ...(keyDefaults !== undefined ? { keyDefaults } : {})
})

export const objectMeta = struct({
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
  ownerReferences: mapList(
    ["uid"],
    struct(scalars("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"))
  ),
  finalizers: setList,
  managedFields: atomicList(
    struct({ ...scalars("manager", "operation", "apiVersion", "time", "fieldsType", "subresource"), fieldsV1: unknown })
  )
})

export const condition = struct(
  scalars("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message")
)
export const conditions = mapList(["type"], condition)

export const topLevel = (spec: Shape, status?: Shape, defaults?: Record<string, unknown>): Shape =>
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

/** The shape of a member of `shape`, if it has one of that name. */
export const childShape = (shape: Shape, key: string): Shape | undefined => {
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
