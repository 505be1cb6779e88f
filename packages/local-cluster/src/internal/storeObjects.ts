/**
 * Object helpers for the store: metadata access, keys, the field order the server
 * writes, generated names, and the label and field selectors lists and watches filter by.
 */
import { DateTime } from "effect"
import { randomInt } from "node:crypto"
import { type KubeObject, type ObjectMeta, qualifiedName } from "session-routing/kubernetes"
import {
  everything,
  type FieldRequirement,
  type LabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError
} from "../LabelSelector.js"
import type { ServedResource } from "../ServedResources.js"
import { isObject } from "../ServerSideApply.js"
import { fieldValuesOf, selectableFieldsOf } from "./fieldSelectors.js"
import { badRequest, refuse } from "./storeStatus.js"

export type Json = Record<string, unknown>

export const metaOf = (object: KubeObject | undefined): ObjectMeta => object?.metadata ?? {}
export const asJson = (object: KubeObject): Json => object as unknown as Json
export const withMeta = (object: KubeObject, meta: Json): KubeObject => ({ ...object, metadata: meta as ObjectMeta })

export const rfc3339 = (millis: number): string =>
  DateTime.formatIso(DateTime.unsafeMake(Math.floor(millis / 1000) * 1000)).replace(".000Z", "Z")

export const objectKey = (resource: ServedResource<unknown>, namespace: string | undefined, name: string): string =>
  resource.namespaced ? `${namespace ?? ""}/${name}` : name

export const resourceId = (resource: ServedResource<unknown>): string => qualifiedName(resource)

/** Top-level keys in the order the server writes them, for readable output. */
export const ordered = (object: KubeObject): KubeObject => {
  const json = asJson(object)
  const out: Json = {}
  for (const key of ["apiVersion", "kind", "metadata", "spec"]) if (json[key] !== undefined) out[key] = json[key]
  for (const [key, value] of Object.entries(json)) if (!(key in out) && key !== "status") out[key] = value
  if (json.status !== undefined) out.status = json.status
  const meta = json.metadata
  if (isObject(meta)) {
    const m: Json = {}
    for (const key of META_ORDER) if (meta[key] !== undefined) m[key] = meta[key]
    for (const [key, value] of Object.entries(meta)) if (!(key in m)) m[key] = value
    out.metadata = m
  }
  return out as KubeObject
}
export const META_ORDER = [
  "name",
  "generateName",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields"
]

export const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
export const generatedName = (prefix: string): string => {
  let suffix = ""
  for (let i = 0; i < 5; i++) suffix += GENERATE_NAME_ALPHABET[randomInt(GENERATE_NAME_ALPHABET.length)]
  return `${prefix}${suffix}`
}

/** Everything but metadata and status: what a generation counts. */
export const specPart = (object: KubeObject | undefined): Json => {
  const out: Json = {}
  for (const [k, v] of Object.entries(object === undefined ? {} : asJson(object))) {
    if (k !== "metadata" && k !== "status" && k !== "apiVersion" && k !== "kind") out[k] = v
  }
  return out
}

export interface Filter {
  readonly resource: ServedResource<KubeObject>
  readonly namespace: string | undefined
  readonly labels: LabelSelector
  readonly fields: ReadonlyArray<FieldRequirement>
}

export const makeFilter = (
  resource: ServedResource<KubeObject>,
  namespace: string | undefined,
  labelSelector?: string,
  fieldSelector?: string
): Filter => {
  const labels = labelSelector === undefined || labelSelector === "" ? everything : parseLabelSelector(labelSelector)
  if (labels instanceof SelectorError) return refuse(badRequest(labels.message))
  const fields = fieldSelector === undefined ? [] : parseFieldSelector(fieldSelector, selectableFieldsOf(resource))
  if (fields instanceof SelectorError) return refuse(badRequest(fields.message))
  return { resource, namespace: resource.namespaced ? namespace : undefined, labels, fields }
}

export const passes = (filter: Filter, object: KubeObject): boolean => {
  const meta = metaOf(object)
  if (filter.namespace !== undefined && meta.namespace !== filter.namespace) return false
  return (
    matchesLabels(filter.labels, meta.labels) &&
    (filter.fields.length === 0 || matchesFields(filter.fields, fieldValuesOf(filter.resource, object)))
  )
}
