/**
 * The language each custom type is described in once: per node, what server-side apply
 * needs (atomic, set and keyed lists, atomic maps) and what the CRD declares (JSON type,
 * bounds, pattern, enum, required fields, CEL rules, default). The SSA shape and the CRD
 * schema are both read off one description, so they cannot drift apart.
 */
import type { CelRule, ObjectSchema, Schema } from "./crdSchema.js"
import { type GoType, objectMeta, scalar, type Shape } from "./shape.js"

interface Declared {
  /** The CRD `default` (or a Go type's `+default`): filled in when the field is absent and its parent present. */
  readonly default?: unknown
  /**
   * A default the server's defaulting code fills in the same way (a built-in type's Go
   * defaulter), which its published schema does not show.
   */
  readonly serverDefault?: unknown
  /** What the field means, as `kubectl explain` shows it from the OpenAPI. */
  readonly doc?: string
  /** `x-kubernetes-validations`, as predicates on `self`. */
  readonly rules?: ReadonlyArray<CelRule>
}

export interface ScalarChecks {
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  readonly enum?: ReadonlyArray<string>
  readonly minimum?: number
  readonly maximum?: number
}

export interface ListChecks {
  readonly minItems?: number
  readonly maxItems?: number
}

/** One node of a type: how it merges, what it accepts, what it defaults to. */
export type Description =
  | Declared & ScalarChecks & { readonly _tag: "Scalar"; readonly goType: GoType }
  | Declared & {
    readonly _tag: "Struct"
    readonly fields: Readonly<Record<string, Description>>
    readonly required?: ReadonlyArray<string>
    /** `x-kubernetes-map-type: atomic`: owned and replaced as one value. */
    readonly atomic?: boolean
  }
  | Declared & { readonly _tag: "Map"; readonly values: Description; readonly atomic?: boolean }
  | Declared & ListChecks & {
    readonly _tag: "List"
    readonly listType: "atomic" | "set" | "map"
    readonly keys?: ReadonlyArray<string>
    readonly items: Description
  }
  | Declared & { readonly _tag: "Unknown" }

/**
 * A served kind: its spec and status, and which of them a body must carry; or, for
 * the kinds without a spec (Event, EndpointSlice), its fields beside `metadata`.
 */
export type KindDescription =
  & { readonly required?: ReadonlyArray<string>; /** What the kind is for. */ readonly doc?: string }
  & (
    | { readonly spec: Description; readonly status?: Description }
    | { readonly fields: Readonly<Record<string, Description>> }
  )

type ScalarOptions = Declared & ScalarChecks
type StructOptions = Declared & { readonly required?: ReadonlyArray<string>; readonly atomic?: boolean }
type ListOptions = Declared & ListChecks

export const string = (options: ScalarOptions = {}): Description => ({ _tag: "Scalar", goType: "string", ...options })
export const int32 = (options: ScalarOptions = {}): Description => ({ _tag: "Scalar", goType: "int32", ...options })
export const int64 = (options: ScalarOptions = {}): Description => ({ _tag: "Scalar", goType: "int64", ...options })
export const bool = (options: ScalarOptions = {}): Description => ({ _tag: "Scalar", goType: "bool", ...options })
/** A `metav1.MicroTime`: RFC 3339 with microseconds. */
export const microTime = (options: ScalarOptions = {}): Description => ({
  _tag: "Scalar",
  goType: "microTime",
  ...options
})
export const unknown: Description = { _tag: "Unknown" }
/** A value kept whole, with a default of its own. */
export const untyped = (options: Declared): Description => ({ _tag: "Unknown", ...options })

/** Plain strings, one per name. */
export const strings = (...names: ReadonlyArray<string>): Record<string, Description> =>
  Object.fromEntries(names.map((name) => [name, string()]))

export const object = (fields: Record<string, Description>, options: StructOptions = {}): Description => ({
  _tag: "Struct",
  fields,
  ...options
})
export const map = (
  values: Description = string(),
  options: Declared & { readonly atomic?: boolean } = {}
): Description => ({
  _tag: "Map",
  values,
  ...options
})
/** A list without `x-kubernetes-list-type`: atomic, replaced whole by an apply. */
export const list = (items: Description, options: ListOptions = {}): Description => ({
  _tag: "List",
  listType: "atomic",
  items,
  ...options
})
export const setOf = (items: Description, options: ListOptions = {}): Description => ({
  _tag: "List",
  listType: "set",
  items,
  ...options
})
/** `x-kubernetes-list-type: map`: items merge by these keys, and two with the same key are refused. */
export const listMap = (
  keys: ReadonlyArray<string>,
  items: Description,
  options: ListOptions = {}
): Description => ({
  _tag: "List",
  listType: "map",
  keys,
  items,
  ...options
})

/** `description` with what it means where it is used (a shared type documented at one use). */
export const documented = (description: Description, doc: string): Description => ({ ...description, doc })

/** `description` with a default of its own (a shared reference type defaulted where it is used). */
export const defaulting = (description: Description, value: unknown): Description =>
  description._tag === "Unknown" ? description : { ...description, default: value }

const definedOnly = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined))

/** The structural shape server-side apply, pruning and defaulting read: defaults sit on the parent struct. */
export const shapeOfDescription = (description: Description): Shape => {
  switch (description._tag) {
    case "Scalar":
      return { _tag: "Scalar", goType: description.goType }
    case "Unknown":
      return { _tag: "Unknown" }
    case "Map":
      return { _tag: "Map", values: shapeOfDescription(description.values), ...atomicFlag(description.atomic) }
    case "List":
      return {
        _tag: "List",
        listType: description.listType,
        ...(description.keys !== undefined ? { keys: description.keys } : {}),
        ...keyDefaultsOf(description),
        items: shapeOfDescription(description.items)
      }
    case "Struct": {
      const fields = Object.fromEntries(
        Object.entries(description.fields).map(([key, field]) => [key, shapeOfDescription(field)])
      )
      const defaults = fieldValues(description.fields, "default")
      const serverDefaults = fieldValues(description.fields, "serverDefault")
      return {
        _tag: "Struct",
        fields,
        ...(Object.keys(defaults).length > 0 ? { defaults } : {}),
        ...(Object.keys(serverDefaults).length > 0 ? { serverDefaults } : {}),
        ...atomicFlag(description.atomic)
      }
    }
  }
}

/** A keyed list's key fields that an item may omit, because the item's description defaults them. */
const keyDefaultsOf = (list: Extract<Description, { _tag: "List" }>) => {
  const items = list.items
  if (items._tag !== "Struct" || list.keys === undefined) return {}
  const keyDefaults = definedOnly(Object.fromEntries(list.keys.map((key) => [key, items.fields[key]?.default])))
  return Object.keys(keyDefaults).length > 0 ? { keyDefaults } : {}
}

const atomicFlag = (atomic: boolean | undefined) => (atomic === true ? { atomic } : {})

/** The fields' declared defaults of one kind, by field name. */
const fieldValues = (
  fields: Readonly<Record<string, Description>>,
  key: "default" | "serverDefault"
): Record<string, unknown> =>
  definedOnly(
    Object.fromEntries(
      Object.entries(fields).map(([name, field]) => [name, key in field ? (field as Declared)[key] : undefined])
    )
  )

const JSON_TYPES: Readonly<Record<GoType, "string" | "integer" | "boolean" | undefined>> = {
  string: "string",
  int32: "integer",
  int64: "integer",
  bool: "boolean",
  intstr: undefined,
  microTime: "string"
}

/** The CRD's structural schema: JSON types, every check and default, and the list-map keys. */
export const schemaOfDescription = (description: Description): Schema => {
  switch (description._tag) {
    case "Unknown":
      return { "x-kubernetes-preserve-unknown-fields": true }
    case "Scalar": {
      const { _tag: _scalar, doc: _doc, goType, serverDefault: _server, ...checks } = description
      const type = JSON_TYPES[goType]
      // An int-or-string has no one JSON type; its CRD says so with an extension we do not check.
      return type === undefined
        ? { "x-kubernetes-preserve-unknown-fields": true }
        : ({ type, ...definedOnly(checks) } as Schema)
    }
    case "Map":
      return {
        type: "object",
        properties: {},
        additionalProperties: schemaOfDescription(description.values),
        ...declaredOf(description)
      }
    case "List":
      return {
        type: "array",
        items: schemaOfDescription(description.items),
        ...(description.minItems !== undefined ? { minItems: description.minItems } : {}),
        ...(description.maxItems !== undefined ? { maxItems: description.maxItems } : {}),
        ...(description.listType === "map" && description.keys !== undefined ? { mapKeys: description.keys } : {}),
        ...declaredOf(description)
      }
    case "Struct":
      return {
        type: "object",
        properties: Object.fromEntries(
          Object.entries(description.fields).map(([key, field]) => [key, schemaOfDescription(field)])
        ),
        ...(description.required !== undefined ? { required: description.required } : {}),
        ...declaredOf(description)
      }
  }
}

const declaredOf = (declared: Declared): Declared =>
  definedOnly({ default: declared.default, rules: declared.rules }) as Declared

/**
 * The SSA shape of a kind: its spec and status (or its own fields) under the object
 * layout every type shares, with the defaults they declare for themselves.
 */
export const kindShape = (kind: KindDescription): Shape => {
  const body = shapeOfDescription(object(topFields(kind))) as Extract<Shape, { _tag: "Struct" }>
  return { ...body, fields: { apiVersion: scalar, kind: scalar, metadata: objectMeta, ...body.fields } }
}

const topFields = (kind: KindDescription): Readonly<Record<string, Description>> =>
  "fields" in kind ? kind.fields : { spec: kind.spec, ...(kind.status !== undefined ? { status: kind.status } : {}) }

/** The CRD schema of a kind: metadata is checked by the object-meta rules, not the schema. */
export const kindSchema = (kind: KindDescription): ObjectSchema => ({
  type: "object",
  ...(kind.required !== undefined ? { required: kind.required } : {}),
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    ...Object.fromEntries(Object.entries(topFields(kind)).map(([key, field]) => [key, schemaOfDescription(field)]))
  }
})

/**
 * The kind's documentation by field path (`spec.rules.host`; `""` is the kind itself):
 * list items are transparent, so a list's items are documented under the list's path.
 */
export const kindDocs = (kind: KindDescription): Record<string, string> => {
  const out: Record<string, string> = kind.doc !== undefined ? { "": kind.doc } : {}
  const walk = (description: Description, path: string): void => {
    if ("doc" in description && description.doc !== undefined && out[path] === undefined) out[path] = description.doc
    if (description._tag === "List") walk(description.items, path)
    if (description._tag === "Struct") {
      for (const [key, field] of Object.entries(description.fields)) walk(field, path === "" ? key : `${path}.${key}`)
    }
  }
  for (const [key, field] of Object.entries(topFields(kind))) walk(field, key)
  return out
}
