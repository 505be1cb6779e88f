/**
 * Object metadata as the API server validates it (apimachinery/pkg/api/validation/objectmeta.go):
 * names by each type's rule, labels, annotations, owner references; and JSON read
 * the way Go decodes it, a missing or mistyped field being its zero value.
 */
import type { ObjectMeta } from "session-routing/kubernetes"
import { child, type FieldError, forbidden, invalid, required, tooLong } from "./fieldErrors.js"
import {
  byteLength,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue
} from "./nameRules.js"

// ---------------------------------------------------------------------------
// Reading JSON the way Go decodes it: a missing or mistyped field is its zero value
// ---------------------------------------------------------------------------

export type JsonRecord = Readonly<Record<string, unknown>>

export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)
export const asRecord = (value: unknown): JsonRecord => (isRecord(value) ? value : {})
export const asString = (value: unknown): string => (typeof value === "string" ? value : "")
export const asNumber = (value: unknown): number => (typeof value === "number" ? value : 0)
export const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
export const isPresent = (value: unknown): boolean => value !== undefined && value !== null

// ---------------------------------------------------------------------------
// Object metadata (apimachinery/pkg/api/validation/objectmeta.go)
// ---------------------------------------------------------------------------

export type NameValidator = (name: string, prefix: boolean) => ReadonlyArray<string>

/**
 * A generateName may end in `-`; the server checks it as if that dash were
 * followed by generated characters (its own quirk: the last two characters
 * become one `a`).
 */
export const maskTrailingDash = (name: string): string =>
  name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name

export const nameIsDnsSubdomain: NameValidator = (name, prefix) =>
  isDns1123Subdomain(prefix ? maskTrailingDash(name) : name)
export const nameIsDnsLabel: NameValidator = (name, prefix) => isDns1123Label(prefix ? maskTrailingDash(name) : name)
export const nameIsDns1035Label: NameValidator = (name, prefix) =>
  isDns1035Label(prefix ? maskTrailingDash(name) : name)

/** Annotations may total 256 KiB (keys and values, in bytes). */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

export const validateLabels = (labels: unknown, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  // The server reports every label problem against the map itself, not the key.
  for (const [key, value] of Object.entries(asRecord(labels))) {
    errs.push(...isQualifiedName(key).map((m) => invalid(path, key, m)))
    const text = asString(value)
    errs.push(...isValidLabelValue(text).map((m) => invalid(path, text, m)))
  }
  return errs
}

export const validateAnnotations = (annotations: unknown, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  let size = 0
  for (const [key, value] of Object.entries(asRecord(annotations))) {
    // Annotation keys are qualified names except that case does not matter.
    errs.push(...isQualifiedName(key.toLowerCase()).map((m) => invalid(path, key, m)))
    size += byteLength(key) + byteLength(asString(value))
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT))
  return errs
}

/** `metav1.OwnerReference` as the server marshals it (struct order, omitempty). */
export const ownerReferenceJson = (ref: JsonRecord): Record<string, unknown> => ({
  apiVersion: asString(ref.apiVersion),
  kind: asString(ref.kind),
  name: asString(ref.name),
  uid: asString(ref.uid),
  ...(typeof ref.controller === "boolean" ? { controller: ref.controller } : {}),
  ...(typeof ref.blockOwnerDeletion === "boolean" ? { blockOwnerDeletion: ref.blockOwnerDeletion } : {})
})

/** The version in an apiVersion (`v1`, `group/v1`), or "" when it has none or does not parse. */
export const versionOf = (apiVersion: string): { readonly group: string; readonly version: string } => {
  const parts = apiVersion.split("/")
  if (apiVersion === "") return { group: "", version: "" }
  if (parts.length === 1) return { group: "", version: parts[0] ?? "" }
  if (parts.length === 2) return { group: parts[0] ?? "", version: parts[1] ?? "" }
  return { group: "", version: "" }
}

export const validateOwnerReferences = (refs: unknown, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const list = asArray(refs).map(asRecord)
  let firstController = ""
  // The server names these fields without an index: `metadata.ownerReferences.uid`.
  for (const ref of list) {
    const apiVersion = asString(ref.apiVersion)
    const kind = asString(ref.kind)
    const gv = versionOf(apiVersion)
    if (gv.version === "") errs.push(invalid(child(path, "apiVersion"), apiVersion, "version must not be empty"))
    if (kind === "") errs.push(invalid(child(path, "kind"), kind, "kind must not be empty"))
    if (asString(ref.name) === "") errs.push(invalid(child(path, "name"), asString(ref.name), "name must not be empty"))
    if (asString(ref.uid) === "") errs.push(invalid(child(path, "uid"), asString(ref.uid), "uid must not be empty"))
    if (gv.group === "" && gv.version === "v1" && kind === "Event") {
      errs.push(invalid(path, ownerReferenceJson(ref), "/v1, Kind=Event is disallowed from being an owner"))
    }
    if (ref.controller === true) {
      const current = `${kind}/${asString(ref.name)}`
      if (firstController !== "") {
        errs.push(
          invalid(
            path,
            list.map(ownerReferenceJson),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`
          )
        )
      } else {
        firstController = current
      }
    }
  }
  return errs
}

export interface MetaRules {
  readonly namespaced: boolean
  readonly name: NameValidator
}

/**
 * `ValidateObjectMeta` on create. The server first fills a namespaced object's
 * namespace from the URL and clears a cluster-scoped one's (and generates a name
 * from generateName); a caller that skips that step gets the errors those
 * fields would then cause.
 */
export const validateObjectMeta = (meta: ObjectMeta | undefined, rules: MetaRules): Array<FieldError> => {
  const m = asRecord(meta)
  const errs: Array<FieldError> = []
  const generateName = asString(m.generateName)
  const name = asString(m.name)
  if (generateName !== "") {
    errs.push(...rules.name(generateName, true).map((msg) => invalid("metadata.generateName", generateName, msg)))
  }
  if (name === "") {
    // With a generateName the server makes the name before it validates.
    if (generateName === "") errs.push(required("metadata.name", "name or generateName is required"))
  } else {
    errs.push(...rules.name(name, false).map((msg) => invalid("metadata.name", name, msg)))
  }
  const namespace = asString(m.namespace)
  if (rules.namespaced) {
    if (namespace === "") errs.push(required("metadata.namespace"))
    else errs.push(...nameIsDnsLabel(namespace, false).map((msg) => invalid("metadata.namespace", namespace, msg)))
  } else if (namespace !== "") {
    errs.push(forbidden("metadata.namespace", "not allowed on this type"))
  }
  const generation = asNumber(m.generation)
  if (generation < 0) errs.push(invalid("metadata.generation", generation, "must be greater than or equal to 0"))
  errs.push(...validateLabels(m.labels, "metadata.labels"))
  errs.push(...validateAnnotations(m.annotations, "metadata.annotations"))
  errs.push(...validateOwnerReferences(m.ownerReferences, "metadata.ownerReferences"))
  return errs
}
