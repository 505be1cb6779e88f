/**
 * Custom resources: a structural schema with defaults and CEL rules, checked the
 * way apiextensions-apiserver checks them (kube-openapi messages, list-map keys,
 * then CEL unless an earlier error blocks it).
 */
import type { ObjectMeta } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import {
  child,
  duplicate,
  type FieldError,
  goQuote,
  index,
  invalid,
  invalidOmittingValue,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid
} from "./fieldErrors.js"
import { asRecord, isRecord, type JsonRecord, nameIsDnsSubdomain, validateObjectMeta } from "./objectMeta.js"

/** One `x-kubernetes-validations` rule: the CEL expression, written as a predicate on `self`. */
export interface CelRule {
  readonly message: string
  readonly holds: (self: never) => boolean
}

export interface SchemaBase {
  readonly default?: unknown
  readonly rules?: ReadonlyArray<CelRule>
}

export interface ObjectSchema extends SchemaBase {
  readonly type: "object"
  readonly properties: Readonly<Record<string, Schema>>
  readonly required?: ReadonlyArray<string>
  /** A map's values: every member, whatever its key. */
  readonly additionalProperties?: Schema
}

export interface ArraySchema extends SchemaBase {
  readonly type: "array"
  readonly items: Schema
  readonly minItems?: number
  readonly maxItems?: number
  /** `x-kubernetes-list-type: map` with these keys. */
  readonly mapKeys?: ReadonlyArray<string>
}

export interface StringSchema extends SchemaBase {
  readonly type: "string"
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  readonly enum?: ReadonlyArray<string>
}

export interface IntegerSchema extends SchemaBase {
  readonly type: "integer"
  readonly minimum?: number
  readonly maximum?: number
}

export interface BooleanSchema extends SchemaBase {
  readonly type: "boolean"
}

/** `x-kubernetes-preserve-unknown-fields`: any JSON, kept whole and not checked. */
export interface PreservedSchema extends SchemaBase {
  readonly type?: undefined
  readonly "x-kubernetes-preserve-unknown-fields": true
}

export type Schema = ObjectSchema | ArraySchema | StringSchema | IntegerSchema | BooleanSchema | PreservedSchema

export const rule = <A>(message: string, holds: (self: A) => boolean): CelRule => ({
  message,
  holds: holds as (self: never) => boolean
})

export const cloneJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown

/**
 * Structural defaulting: a missing (or null) field with a default gets it, then
 * its contents are defaulted too; other nulls are pruned. Returns a new value.
 */
export const applyDefaults = (value: unknown, schema: Schema): unknown => {
  if (schema.type === "object" && isRecord(value)) {
    const out: Record<string, unknown> = { ...value }
    for (const [key, prop] of Object.entries(schema.properties)) {
      if (out[key] === undefined || out[key] === null) {
        if (prop.default !== undefined) out[key] = cloneJson(prop.default)
        else delete out[key]
      }
      if (out[key] !== undefined) out[key] = applyDefaults(out[key], prop)
    }
    return out
  }
  if (schema.type === "array" && Array.isArray(value)) return value.map((item) => applyDefaults(item, schema.items))
  return value
}

/** The JSON type name kube-openapi reports for a value. */
export const jsonType = (value: unknown): string => {
  if (Array.isArray(value)) return "array"
  if (value === null) return "null"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

/** Characters, not bytes: kube-openapi counts runes for minLength/maxLength. */
export const runeLength = (value: string): number => [...value].length

/** kube-openapi's checks (type, lengths, pattern, bounds, items, enum, required), depth first. */
export const schemaErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
  // Null fields were pruned by defaulting; a null left inside a list is a type error.
  if (value === undefined || schema.type === undefined) return
  const actual = jsonType(value)
  if (actual !== schema.type) {
    errs.push(typeInvalid(path, actual, `${path} in body must be of type ${schema.type}: ${goQuote(actual)}`))
    return
  }
  switch (schema.type) {
    case "string": {
      const text = value as string
      // kube-openapi's string validator stops at its first failure (maxLength, minLength,
      // pattern): an empty hostname is too short, and not also reported as unmatched.
      if (schema.maxLength !== undefined && runeLength(text) > schema.maxLength) {
        errs.push(tooLong(path, schema.maxLength))
      } else if (schema.minLength !== undefined && runeLength(text) < schema.minLength) {
        errs.push(invalid(path, text, `${path} in body should be at least ${schema.minLength} chars long`))
      } else if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(text)) {
        // The CRD's pattern, unanchored as Go's MatchString applies it.
        errs.push(invalid(path, text, `${path} in body should match '${schema.pattern}'`))
      }
      if (schema.enum !== undefined && !schema.enum.includes(text)) errs.push(notSupported(path, text, schema.enum))
      return
    }
    case "integer": {
      const n = value as number
      if (schema.maximum !== undefined && n > schema.maximum) {
        errs.push(invalid(path, n, `${path} in body should be less than or equal to ${schema.maximum}`))
      }
      if (schema.minimum !== undefined && n < schema.minimum) {
        errs.push(invalid(path, n, `${path} in body should be greater than or equal to ${schema.minimum}`))
      }
      return
    }
    case "array": {
      const items = value as ReadonlyArray<unknown>
      if (schema.minItems !== undefined && items.length < schema.minItems) {
        errs.push(invalid(path, items.length, `${path} in body should have at least ${schema.minItems} items`))
      }
      if (schema.maxItems !== undefined && items.length > schema.maxItems) {
        errs.push(tooMany(path, items.length, schema.maxItems))
      }
      items.forEach((item, i) => schemaErrors(item, schema.items, index(path, i), errs))
      return
    }
    case "object": {
      const record = value as JsonRecord
      for (const key of schema.required ?? []) {
        if (record[key] === undefined || record[key] === null) errs.push(required(child(path, key)))
      }
      for (const [key, prop] of Object.entries(schema.properties)) {
        schemaErrors(record[key], prop, child(path, key), errs)
      }
      const values = schema.additionalProperties
      if (values !== undefined) {
        for (const [key, member] of Object.entries(record)) schemaErrors(member, values, child(path, key), errs)
      }
      return
    }
    case "boolean":
      return
  }
}

/** `x-kubernetes-list-type: map`: two items with the same key are a duplicate. */
export const listMapErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
  if (schema.type === "array" && Array.isArray(value)) {
    const keys = schema.mapKeys
    if (keys !== undefined) {
      const seen = new Set<string>()
      value.forEach((item, i) => {
        if (!isRecord(item)) return
        const key: Record<string, unknown> = {}
        for (const k of [...keys].sort()) if (item[k] !== undefined) key[k] = item[k]
        const text = JSON.stringify(key)
        if (seen.has(text)) errs.push(duplicate(index(path, i), key))
        seen.add(text)
      })
    }
    value.forEach((item, i) => listMapErrors(item, schema.items, index(path, i), errs))
  } else if (schema.type === "object" && isRecord(value)) {
    for (const [key, prop] of Object.entries(schema.properties)) listMapErrors(value[key], prop, child(path, key), errs)
  }
}

/** CEL rules, each node's own before its children's, as the apiserver walks them. */
export const celErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
  if (value === undefined || value === null || jsonType(value) !== schema.type) return
  for (const r of schema.rules ?? []) {
    if (!r.holds(value as never)) errs.push(invalidOmittingValue(path, r.message))
  }
  if (schema.type === "array") {
    ;(value as ReadonlyArray<unknown>).forEach((item, i) => celErrors(item, schema.items, index(path, i), errs))
  } else if (schema.type === "object") {
    const record = value as JsonRecord
    for (const [key, prop] of Object.entries(schema.properties)) celErrors(record[key], prop, child(path, key), errs)
  }
}

/** Error types that stop the apiserver from running CEL rules at all. */
export const BLOCKING_REASONS: ReadonlySet<string> = new Set([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid"
])

/** Whether any node of `schema` carries `x-kubernetes-validations`. */
export const hasRules = (schema: Schema): boolean =>
  (schema.rules ?? []).length > 0 ||
  (schema.type === "object" &&
    (Object.values(schema.properties).some(hasRules) ||
      (schema.additionalProperties !== undefined && hasRules(schema.additionalProperties)))) ||
  (schema.type === "array" && hasRules(schema.items))

export const validateCustomResource = (
  resource: ServedResource<unknown>,
  object: JsonRecord,
  schema: ObjectSchema
): Array<FieldError> => {
  const defaulted = asRecord(applyDefaults(object, schema))
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: resource.namespaced,
    name: nameIsDnsSubdomain
  })
  schemaErrors(defaulted, schema, "", errs)
  listMapErrors(defaulted, schema, "", errs)
  // A schema without rules has no CEL validator, so nothing goes unchecked to report.
  if (!hasRules(schema)) return errs
  if (errs.some((e) => BLOCKING_REASONS.has(e.reason))) {
    // What the apiserver says when a schema error kept it from evaluating the CEL rules.
    errs.push(
      invalid(
        "<nil>",
        null,
        "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
      )
    )
  } else {
    celErrors(defaulted, schema, "", errs)
  }
  return errs
}
