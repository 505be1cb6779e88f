/** JSON values as the API server compares and copies them. */

/** A plain JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Structural equality of JSON values; key order does not matter. */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/**
 * A JSON value as a string two values share exactly when `jsonEqual` holds (object
 * keys sorted): what a lookup table keys on, so that finding a list item by value
 * costs one hash instead of a comparison with every other item.
 */
export const canonical = (value: unknown): string => {
  if (value === undefined) return "undefined"
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (isObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** A deep copy of a JSON value. */
export const clone = <A>(value: A): A => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as A))
