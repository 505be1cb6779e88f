/**
 * Strategic merge patches (`application/strategic-merge-patch+json`) on built-in types,
 * merged by each field's structural shape: keyed lists merge item by item on their
 * patch merge key, set lists take the union, atomic lists are replaced, and the
 * `$patch`, `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList`
 * directives do what they do on the API server. kubectl sends these for client-side
 * apply, `edit` and `diff` of Services: merged as a JSON merge patch, a changed target
 * port would drop the Service's other ports.
 */
import { failure, Refused } from "./httpReply.js"
import { canonical, clone, isObject } from "./json.js"
import { childShape, type Shape } from "./shape.js"

type Json = Record<string, unknown>

const SET_ORDER = "$setElementOrder/"
const DELETE_FROM = "$deleteFromPrimitiveList/"

/** A patch the server cannot apply: answered with 422, as the patcher's own errors are. */
const unusable = (message: string): never => {
  throw new Refused(failure(422, "Invalid", message))
}

const mergeKeyOf = (shape: Shape): string | undefined =>
  shape._tag === "List" && shape.listType === "map" ? shape.keys?.[0] : undefined

/**
 * A merged list in the order the server gives it (strategicpatch's `normalizeElementOrder`):
 * the items `patchOrder` names, in its order, interleaved with the others (the server's
 * own, in their order) by their places in `serverOrder`, where an item the server did
 * not have goes before the server's next. So a new condition or finalizer comes first,
 * not last. Places are found by lookup: a list of thousands of items must not take seconds.
 */
const normalizedOrder = (
  merged: ReadonlyArray<unknown>,
  patchOrder: ReadonlyArray<unknown>,
  serverOrder: ReadonlyArray<unknown>,
  key: string | undefined
): Array<unknown> => {
  const identity = (item: unknown) => canonical(key !== undefined && isObject(item) ? item[key] : item)
  const placesIn = (list: ReadonlyArray<unknown>) => {
    const places = new Map<string, number>()
    list.forEach((item, at) => {
      const id = identity(item)
      if (!places.has(id)) places.set(id, at)
    })
    return places
  }
  const inPatch = placesIn(patchOrder)
  const inServer = placesIn(serverOrder)
  const patched = merged.filter((item) => inPatch.has(identity(item)))
    .map((item, i) => ({ item, i, at: inPatch.get(identity(item))! }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ item }) => item)
  const serverOnly = merged.filter((item) => !inPatch.has(identity(item)))
  const out: Array<unknown> = []
  let i = 0
  let j = 0
  while (i < serverOnly.length || j < patched.length) {
    if (j >= patched.length) {
      out.push(serverOnly[i++])
      continue
    }
    if (i >= serverOnly.length) {
      out.push(patched[j++])
      continue
    }
    const left = inServer.get(identity(serverOnly[i]))
    const right = inServer.get(identity(patched[j]))
    if (left !== undefined && right !== undefined && left < right) out.push(serverOnly[i++])
    else out.push(patched[j++])
  }
  return out
}

/** An item `mergeList` took out; dropped when the list is put back together. */
const REMOVED: unique symbol = Symbol("removed")

/**
 * `live` with a patch's items merged in. Items are found by lookup (merge key, or
 * value for a set), never by scanning the list for each patch item: that made a
 * 10,000-condition patch on a Pod take seconds, and the server answers nobody else
 * meanwhile.
 */
const mergeList = (
  live: unknown,
  patch: ReadonlyArray<unknown>,
  shape: Extract<Shape, { _tag: "List" }>
): Array<unknown> => {
  const key = mergeKeyOf(shape)
  if (shape.listType === "atomic") return clone([...patch])
  if (patch.some((item) => isObject(item) && item.$patch === "replace")) {
    return clone(patch.filter((item) => !(isObject(item) && item.$patch === "replace")))
  }
  const out: Array<unknown> = Array.isArray(live) ? clone(live) : []
  if (key === undefined) {
    // A set of scalars: the union.
    const seen = new Set(out.map(canonical))
    for (const value of patch) {
      const id = canonical(value)
      if (seen.has(id)) continue
      seen.add(id)
      out.push(clone(value))
    }
    return normalizedOrder(out, patch, Array.isArray(live) ? live : [], undefined)
  }
  // Where the items of each key value are, in list order: a patch item merges into the
  // first one still there, as the server's search from the front finds it.
  const places = new Map<string, Array<number>>()
  const placeOf = (id: string, at: number) => {
    const list = places.get(id)
    if (list === undefined) places.set(id, [at])
    else list.push(at)
  }
  out.forEach((existing, at) => {
    if (isObject(existing) && existing[key] !== undefined) placeOf(canonical(existing[key]), at)
  })
  const slots: Array<unknown> = out
  for (const item of patch) {
    if (!isObject(item)) {
      return unusable(`unable to find api field in struct for the list item ${JSON.stringify(item)}`)
    }
    if (item[key] === undefined) {
      return unusable(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`)
    }
    const id = canonical(item[key])
    const at = places.get(id)?.[0]
    if (item.$patch === "delete") {
      if (at !== undefined) {
        slots[at] = REMOVED
        places.get(id)!.shift()
      }
    } else if (at !== undefined) {
      slots[at] = mergeValue(slots[at], item, shape.items)
    } else {
      placeOf(id, slots.length)
      slots.push(mergeValue(undefined, item, shape.items))
    }
  }
  const merged = slots.filter((slot) => slot !== REMOVED)
  const patchOrder = patch.filter((item) => !(isObject(item) && item.$patch === "delete"))
  return normalizedOrder(merged, patchOrder, Array.isArray(live) ? live : [], key)
}

/** Merges `patch` into `live` as the server does for a field of `shape`. */
const mergeValue = (live: unknown, patch: unknown, shape: Shape): unknown => {
  if (!isObject(patch)) {
    if (Array.isArray(patch) && shape._tag === "List") return mergeList(live, patch, shape)
    return clone(patch)
  }
  if (patch.$patch === "delete") return undefined
  const base: Json = patch.$patch === "replace" || !isObject(live) ? {} : clone(live)
  const orders: Array<[string, ReadonlyArray<unknown>]> = []
  for (const [field, value] of Object.entries(patch)) {
    if (field === "$patch" || field === "$retainKeys") continue
    if (field.startsWith(SET_ORDER)) {
      if (Array.isArray(value)) orders.push([field.slice(SET_ORDER.length), value])
      continue
    }
    if (field.startsWith(DELETE_FROM)) {
      const target = field.slice(DELETE_FROM.length)
      const values = Array.isArray(value) ? value : []
      if (Array.isArray(base[target])) {
        const deleted = new Set(values.map(canonical))
        base[target] = (base[target] as Array<unknown>).filter((v) => !deleted.has(canonical(v)))
      }
      continue
    }
    const sub = childShape(shape, field) ?? { _tag: "Unknown" }
    if (value === null) {
      delete base[field]
      continue
    }
    const merged = mergeValue(base[field], value, sub)
    if (merged === undefined) delete base[field]
    else base[field] = merged
  }
  for (const [field, order] of orders) {
    const sub = childShape(shape, field)
    if (Array.isArray(base[field])) {
      const before = isObject(live) && Array.isArray(live[field]) ? live[field] : []
      base[field] = normalizedOrder(base[field], order, before, sub === undefined ? undefined : mergeKeyOf(sub))
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String))
    for (const field of Object.keys(base)) if (!keep.has(field)) delete base[field]
  }
  return base
}

/** `live` with the strategic merge patch applied, by the type's structural shape. */
export const strategicMerge = (live: unknown, patch: Json, shape: Shape): unknown => mergeValue(live, patch, shape)
