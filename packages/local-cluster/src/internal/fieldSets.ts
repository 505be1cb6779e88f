/**
 * Field sets: the paths of an object a manager owns, collected by its shape (list
 * items by key), the parts apply tracks per scope, and FieldsV1, the trie they are
 * written as in managedFields.
 */
import type { KubeObject } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import { isObject } from "./json.js"
import { childShape, type Shape, unknown } from "./shape.js"
import { shapeOf } from "./typeShapes.js"

/** A path element as FieldsV1 writes it: `f:name`, `k:{"port":80}`, `v:"x"`, `i:0`. */
export type PathElement = string
export type Path = ReadonlyArray<PathElement>

export const encodePath = (path: Path): string => JSON.stringify(path)

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
  /** `insert`, with the path's `encodePath` already at hand. */
  insertEncoded(key: string, path: Path): void {
    this.members.set(key, path)
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
  /** Each member with its encoded form, so set operations need not encode it again. */
  entries(): IterableIterator<[string, Path]> {
    return this.members.entries()
  }
  union(other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [key, path] of this.members) out.members.set(key, path)
    for (const [key, path] of other.members) out.members.set(key, path)
    return out
  }
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [key, path] of this.members) if (!other.members.has(key)) out.members.set(key, path)
    return out
  }
  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const [key, path] of this.members) if (other.members.has(key)) out.members.set(key, path)
    return out
  }
  equals(other: FieldSet): boolean {
    return this.size === other.size && [...this.members.keys()].every((key) => other.members.has(key))
  }
  /**
   * Every member and every path above one, encoded: whether a path or anything below
   * it is a member, for many paths, as one lookup each rather than a pass over the set.
   */
  selvesAndAncestors(): ReadonlySet<string> {
    const out = new Set<string>()
    for (const path of this.members.values()) {
      for (let length = path.length; length >= 0; length--) {
        const key = encodePath(path.slice(0, length))
        if (out.has(key)) break
        out.add(key)
      }
    }
    return out
  }
}

export const keyElement = (
  item: unknown,
  keys: ReadonlyArray<string>,
  keyDefaults: Readonly<Record<string, unknown>>
): PathElement => {
  const record = isObject(item) ? item : {}
  const key: Record<string, unknown> = {}
  for (const k of [...keys].sort()) key[k] = record[k] ?? keyDefaults[k] ?? null
  return `k:${JSON.stringify(key)}`
}

export const listItemElement = (shape: Extract<Shape, { _tag: "List" }>, item: unknown, index: number): PathElement =>
  shape.listType === "map"
    ? keyElement(item, shape.keys ?? [], shape.keyDefaults ?? {})
    : shape.listType === "set"
    ? `v:${JSON.stringify(item)}`
    : `i:${index}`

/**
 * Adds to `out` every field path `value` sets, by `shape`; with `values`, also the
 * value at each path (the first item's, where two list items share a key), so a
 * caller comparing two objects path by path reads each value once instead of
 * searching the lists again for every path.
 */
export const collect = (
  value: unknown,
  shape: Shape,
  path: Path,
  out: FieldSet,
  values?: Map<string, unknown>
): void => collectFrom(value, shape, path, encodePath(path).slice(1, -1), out, values)

/**
 * `collect`, with `inner` the path's encoding without its brackets: each child's is
 * built from its parent's, not encoded again from the whole path.
 */
const collectFrom = (
  value: unknown,
  shape: Shape,
  path: Path,
  inner: string,
  out: FieldSet,
  values: Map<string, unknown> | undefined
): void => {
  const member = (at: Path, atInner: string, found: unknown) => {
    const key = `[${atInner}]`
    out.insertEncoded(key, at)
    if (values !== undefined && !values.has(key)) values.set(key, found)
  }
  const below = (element: PathElement) => `${inner === "" ? "" : `${inner},`}${JSON.stringify(element)}`
  switch (shape._tag) {
    case "Scalar":
      member(path, inner, value)
      return
    case "Unknown":
    case "Struct":
    case "Map": {
      const atomic = shape._tag !== "Unknown" && shape.atomic === true
      if (atomic || !isObject(value) || Object.keys(value).length === 0) {
        member(path, inner, value)
        return
      }
      for (const [key, child] of Object.entries(value)) {
        const sub = childShape(shape, key) ?? unknown
        const element = `f:${key}`
        if (child === null) member([...path, element], below(element), child)
        else collectFrom(child, sub, [...path, element], below(element), out, values)
      }
      return
    }
    case "List": {
      if (shape.listType === "atomic" || !Array.isArray(value)) {
        member(path, inner, value)
        return
      }
      value.forEach((item, index) => {
        const element = listItemElement(shape, item, index)
        const itemPath = [...path, element]
        const itemInner = below(element)
        if (shape.listType === "map") collectFrom(item, shape.items, itemPath, itemInner, out, values)
        member(itemPath, itemInner, item)
      })
      return
    }
  }
}

/** Fields server-side apply never tracks: identity and bookkeeping the server owns. */
export const SYSTEM_METADATA = [
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
export const projection = (
  resource: ServedResource<unknown>,
  object: KubeObject | undefined,
  scope: Scope
): Record<string, unknown> => {
  if (object === undefined) return {}
  const record = object as unknown as Record<string, unknown>
  const ownMetadata = (value: unknown): Record<string, unknown> => {
    const meta: Record<string, unknown> = {}
    if (isObject(value)) {
      for (const [mk, mv] of Object.entries(value)) {
        if (!SYSTEM_METADATA.includes(mk)) meta[mk] = mv
      }
    }
    return meta
  }
  if (scope === "status") {
    // A built-in type's status write takes the request's metadata as well; a custom resource's, the status alone.
    const meta = resource.custom ? {} : ownMetadata(record.metadata)
    return {
      ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}),
      ...(record.status === undefined ? {} : { status: record.status })
    }
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    if (key === "apiVersion" || key === "kind") continue
    if (key === "status" && resource.statusSubresource) continue
    if (key === "metadata" && isObject(value)) {
      const meta = ownMetadata(value)
      if (Object.keys(meta).length > 0) out.metadata = meta
      continue
    }
    out[key] = value
  }
  return out
}

/** Every field path `value` sets, as the server computes an applier's set. */
export const fieldSetOf = (resource: ServedResource<unknown>, value: Record<string, unknown>): FieldSet => {
  const out = new FieldSet()
  if (Object.keys(value).length > 0) collect(value, shapeOf(resource), [], out)
  return out
}

/** `fieldSetOf`, and the value at each of its paths, keyed by `encodePath`. */
export const fieldValuesOf = (
  resource: ServedResource<unknown>,
  value: Record<string, unknown>
): { readonly set: FieldSet; readonly values: ReadonlyMap<string, unknown> } => {
  const set = new FieldSet()
  const values = new Map<string, unknown>()
  if (Object.keys(value).length > 0) collect(value, shapeOf(resource), [], set, values)
  return { set, values }
}

// FieldsV1 is the set written as a trie; "." marks a member that also has children.
export const ELEMENT_ORDER = { ".": 0, f: 1, k: 2, v: 3, i: 4 } as const

export const sortTrie = (node: Record<string, unknown>): Record<string, unknown> => {
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
