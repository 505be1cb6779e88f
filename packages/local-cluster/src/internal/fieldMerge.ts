/**
 * Navigation, merge and removal over an object by its shape: the value at a field
 * path, an apply configuration merged into the live object (lists by their keys),
 * and a field a manager gave up removed.
 */
import { listItemElement, type Path, type PathElement } from "./fieldSets.js"
import { isObject } from "./json.js"
import { childShape, type Shape, unknown } from "./shape.js"

export const findItem = (
  list: ReadonlyArray<unknown>,
  shape: Extract<Shape, { _tag: "List" }>,
  element: PathElement
): number => list.findIndex((item, index) => listItemElement(shape, item, index) === element)

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

export const isLeafPath = (path: Path): boolean => {
  const last = path[path.length - 1]
  return last !== undefined && last.startsWith("f:")
}

// A key field of a list item that stays (someone else owns part of it) is never
// removed: without it the item could not be told apart.
export const isKeyField = (path: Path): boolean => {
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
      // Each element's first place in the config, and how far the config has been
      // emitted: found by lookup, so merging a long list is not a search per item.
      const configPlaces = new Map<string, number>()
      configElements.forEach((e, i) => {
        if (!configPlaces.has(e)) configPlaces.set(e, i)
      })
      const liveByElement = new Map(live.map((item, index) => [element(item, index), item]))
      const emitted = new Set<string>()
      const out: Array<unknown> = []
      let next = 0
      const emitConfigUpTo = (upTo: number) => {
        for (; next <= upTo; next++) {
          const e = configElements[next]!
          if (emitted.has(e)) continue
          emitted.add(e)
          out.push(shape.listType === "map" ? merge(liveByElement.get(e), config[next], shape.items) : config[next])
        }
      }
      // Items only the live object has keep their place; the config decides the
      // order of the items it names.
      live.forEach((item, index) => {
        const e = element(item, index)
        const inConfig = configPlaces.get(e)
        if (inConfig === undefined) {
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
