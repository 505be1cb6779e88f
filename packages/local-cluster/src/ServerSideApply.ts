/**
 * Server-side apply's field ownership: managers decoded from and encoded to
 * managedFields, updates recorded, apply configurations merged, conflicts reported.
 * It also offers, from `internal/`, what the API server derives from each served
 * type's structural schema: pruning, CRD defaults, field sets in FieldsV1, merges.
 */
import {
  apiVersionOf,
  type KubeObject,
  type ManagedFieldsEntry,
  type ResourceType,
  type StatusCause
} from "session-routing/kubernetes"
import { isKeyField, isLeafPath, merge, removePath } from "./internal/fieldMerge.js"
import {
  encodePath,
  FieldSet,
  fieldSetOf,
  fieldValuesOf,
  fromFieldsV1,
  type Path,
  pathString,
  projection,
  type Scope,
  toFieldsV1
} from "./internal/fieldSets.js"
import { jsonEqual } from "./internal/json.js"
import { shapeOf } from "./internal/typeShapes.js"
import { servedOf, type ServedResource } from "./ServedResources.js"

export { merge, removePath, valueAt } from "./internal/fieldMerge.js"
export {
  FieldSet,
  fieldSetOf,
  fromFieldsV1,
  pathString,
  projection,
  type Scope,
  toFieldsV1
} from "./internal/fieldSets.js"
export { clone, isObject, jsonEqual } from "./internal/json.js"
export type { GoType, Shape } from "./internal/shape.js"
export { applyDefaults, decodeProblem, prune } from "./internal/shapeValues.js"
export { shapeOf } from "./internal/typeShapes.js"

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

const compare = (
  resource: ServedResource<unknown>,
  before: Record<string, unknown>,
  after: Record<string, unknown>
): Comparison => {
  // Each side's values are read in the same walk that lists its paths: looking each
  // path up again searched its lists once per path, and a status of 10,000
  // conditions took seconds.
  const was = fieldValuesOf(resource, before)
  const now = fieldValuesOf(resource, after)
  const modified = new FieldSet()
  for (const [key, path] of was.set.intersection(now.set).entries()) {
    if (isLeafPath(path) && !jsonEqual(was.values.get(key), now.values.get(key))) modified.insert(path)
  }
  return { added: now.set.difference(was.set), removed: was.set.difference(now.set), modified }
}

/** A field another manager owns that this write would change. */
export interface Conflict {
  readonly manager: Manager
  readonly path: Path
}

const describeManager = (m: Manager): string => {
  const name = `${JSON.stringify(m.manager)}${
    m.subresource !== undefined ? ` with subresource ${JSON.stringify(m.subresource)}` : ""
  }`
  if (m.operation === "Apply") return name
  return m.time === undefined ? `${name} using ${m.apiVersion}` : `${name} using ${m.apiVersion} at ${m.time}`
}

/** The 409 message and causes the server answers for apply conflicts. */
export const conflictReport = (
  conflicts: ReadonlyArray<Conflict>
): { readonly message: string; readonly causes: ReadonlyArray<StatusCause> } => {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${describeManager(c.manager)}`,
    field: pathString(c.path)
  }))
  if (conflicts.length === 1) {
    const c = conflicts[0]!
    return {
      message: `Apply failed with 1 conflict: conflict with ${describeManager(c.manager)}: ${pathString(c.path)}`,
      causes
    }
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

/**
 * What a create is compared with: a built-in type's Go zero value, whose `spec` and
 * `status` are structs, never pointers, so a create that sends `spec: {}` changes
 * nothing there. A custom resource starts from nothing.
 */
const zeroObject = (resource: ServedResource<unknown>): KubeObject => {
  const shape = shapeOf(resource)
  const zero: Record<string, unknown> = {}
  if (!resource.custom && shape._tag === "Struct") {
    for (const field of ["spec", "status"]) {
      if (shape.fields[field]?._tag === "Struct") zero[field] = {}
    }
  }
  return zero as unknown as KubeObject
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
  const { scope } = input
  const resource = servedOf(input.resource)
  // kube-apiserver starts tracking an object's fields on its create, or with an apply:
  // an update of an object that has no managedFields (cleared, or none on create)
  // records none.
  if (input.before !== undefined && input.managers.size === 0) return input.managers
  const before = projection(resource, input.before ?? zeroObject(resource), scope)
  const cmp = compare(resource, before, projection(resource, input.after, scope))
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
  const resource = servedOf(input.resource)
  const shape = shapeOf(resource)
  const configPart = projection(resource, input.config, "main")
  const applier = managerId(input.manager, "Apply", undefined)
  const lastSet = input.managers.get(applier)?.set ?? new FieldSet()
  const set = fieldSetOf(resource, configPart)
  let merged = merge(input.live, configPart, shape)
  // What the other managers own, and every path above it: one lookup per dropped path.
  const kept = new Set(
    [...input.managers.entries()].filter(([id]) => id !== applier).flatMap(([, m]) => [...m.set.selvesAndAncestors()])
  )
  // Shortest paths first: a dropped list item goes whole, and its fields are then
  // gone with it. Removing fields first would change a keyed item's key under it.
  const dropped = lastSet.difference(set).paths().slice().sort((a, b) => a.length - b.length)
  for (const path of dropped) {
    if (kept.has(encodePath(path)) || isKeyField(path)) continue
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
  const { applied } = input
  const resource = servedOf(input.resource)
  const cmp = compare(resource, projection(resource, input.live, "main"), projection(resource, input.result, "main"))
  const moved = transferOwnership(applied.managers, applied.applier, cmp, input.force)
  if ("conflicts" in moved) return moved
  const own = moved.managers.get(applied.applier)!
  // The applier keeps exactly what it applied, whatever the removal pass did. Its
  // entry is stamped only when the apply changed the object: a manager that applies
  // values others already set joins them with no time.
  const contentChanged = !jsonEqual(
    projection(resource, input.live, "main"),
    projection(resource, input.result, "main")
  )
  moved.managers.set(applied.applier, {
    ...own,
    set: applied.managers.get(applied.applier)!.set,
    ...(contentChanged ? { time: input.now } : {})
  })
  return moved
}
