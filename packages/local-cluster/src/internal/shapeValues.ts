/**
 * What a structural schema does to a value: pruning of unknown fields (and empty
 * ones for built-ins), CRD defaults, and the decode check that refuses a JSON value
 * of the wrong Go type with a 400.
 */
import { clone, isObject } from "./json.js"
import { canonicalMicroTime, parseMicroTime } from "./microTime.js"
import { childShape, type GoType, type Shape } from "./shape.js"

/**
 * What the server stores of `value`: unknown fields dropped (as a CRD's structural
 * schema prunes, and as decoding into Go types does), nulls dropped, and for
 * built-in types empty lists and maps dropped (`omitempty`).
 */
export const prune = (value: unknown, shape: Shape, omitEmpty: boolean): unknown => {
  switch (shape._tag) {
    case "Scalar":
      // Decoding into a MicroTime and encoding it again gives the time in UTC.
      return shape.goType === "microTime" && typeof value === "string" ? canonicalMicroTime(value) : value
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

export const isEmptyCollection = (value: unknown, shape: Shape): boolean =>
  (Array.isArray(value) && value.length === 0) ||
  (shape._tag === "Map" && isObject(value) && Object.keys(value).length === 0)

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
      if (shape._tag === "Struct") {
        for (const [key, fallback] of Object.entries({ ...shape.serverDefaults, ...shape.defaults })) {
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

export const jsonTypeName = (value: unknown): string =>
  Array.isArray(value)
    ? "array"
    : value === null
    ? "null"
    : typeof value === "boolean"
    ? "bool"
    : typeof value === "number"
    ? `number ${value}`
    : typeof value

export const scalarFits = (value: unknown, goType: GoType): boolean => {
  switch (goType) {
    case "string":
    case "microTime":
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

export const GO_TYPE_NAMES: Readonly<Record<GoType, string>> = {
  string: "string",
  bool: "bool",
  int32: "int32",
  int64: "int64",
  intstr: "intstr.IntOrString",
  // MicroTime reads its JSON into a string first: a number fails as a string would.
  microTime: "string"
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
        if (s.goType === "microTime" && typeof v === "string") {
          const parsed = parseMicroTime(v)
          return parsed._tag === "Refused" ? parsed.message : undefined
        }
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
