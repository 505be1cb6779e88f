/**
 * `metav1.MicroTime` as the API server decodes and encodes it: read with Go's
 * `time.Parse` and the layout `2006-01-02T15:04:05.000000Z07:00` (exactly six
 * fractional digits, a `Z` or a `±hh:mm` offset), written back in UTC. A Lease's
 * `acquireTime` and `renewTime` are MicroTimes; a value the layout refuses is a 400.
 */

/** The layout MicroTime is parsed and printed with (`metav1.RFC3339Micro`). */
export const MICRO_TIME_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"

/** A parsed MicroTime: its UTC text, or the error Go's parser words. */
export type MicroTime =
  | { readonly _tag: "Parsed"; readonly utc: string }
  | { readonly _tag: "Refused"; readonly message: string }

/** Go's `time` package quoting: `"` and `\` escaped, bytes outside printable ASCII as `\xNN`. */
const goTimeQuote = (text: string): string => {
  let out = "\""
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0
    if (code < 0x20 || code >= 0x80) {
      for (const byte of Buffer.from(ch, "utf8")) out += `\\x${byte.toString(16).padStart(2, "0")}`
    } else {
      out += ch === "\"" || ch === "\\" ? `\\${ch}` : ch
    }
  }
  return `${out}"`
}

const isDigit = (text: string, at: number): boolean => at < text.length && text[at]! >= "0" && text[at]! <= "9"

/**
 * Go's `getnum`: one or two leading digits (two when `fixed`), and what follows; a
 * value that does not start with the digits is refused.
 */
const number = (text: string, fixed: boolean): readonly [number, string] | undefined => {
  if (!isDigit(text, 0)) return undefined
  if (!isDigit(text, 1)) return fixed ? undefined : [Number(text[0]), text.slice(1)]
  return [Number(text.slice(0, 2)), text.slice(2)]
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const daysIn = (month: number, year: number): number =>
  month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS[month - 1]!

/** Month, day, hour, minute and second, each after its separator; only the hour may have one digit. */
const CLOCK_FIELDS = [
  { separator: "-", element: "01", fixed: true, max: 12, name: "month" },
  // The day is checked against its month once everything else has parsed, as Go does.
  { separator: "-", element: "02", fixed: true, max: 99, name: "day" },
  { separator: "T", element: "15", fixed: false, max: 23, name: "hour" },
  { separator: ":", element: "04", fixed: true, max: 59, name: "minute" },
  { separator: ":", element: "05", fixed: true, max: 59, name: "second" }
] as const

/** `text` read as a MicroTime, as the server's JSON decoding reads one. */
export const parseMicroTime = (text: string): MicroTime => {
  const quoted = goTimeQuote(text)
  // Where the input stopped matching (its rest), and which element of the layout it did not match.
  const cannot = (rest: string, element: string): MicroTime => ({
    _tag: "Refused",
    message: `parsing time ${quoted} as ${goTimeQuote(MICRO_TIME_LAYOUT)}: cannot parse ${goTimeQuote(rest)} as ${
      goTimeQuote(element)
    }`
  })
  const outOfRange = (what: string): MicroTime => ({
    _tag: "Refused",
    message: `parsing time ${quoted}: ${what} out of range`
  })
  const literal = (rest: string, expected: string): string | undefined =>
    rest.startsWith(expected) ? rest.slice(expected.length) : undefined

  let rest = text
  if (!/^\d{4}/.test(rest)) return cannot(rest, "2006")
  const year = Number(rest.slice(0, 4))
  rest = rest.slice(4)
  const fields: Array<number> = []
  for (const { element, fixed, max, name, separator } of CLOCK_FIELDS) {
    const after = literal(rest, separator)
    if (after === undefined) return cannot(rest, separator)
    const read = number(after, fixed)
    if (read === undefined) return cannot(after, element)
    if (read[0] > max || (name === "month" && read[0] === 0)) return outOfRange(name)
    fields.push(read[0])
    rest = read[1]
  }
  if (rest.length < 7 || (rest[0] !== "." && rest[0] !== ",") || !/^\d{6}$/.test(rest.slice(1, 7))) {
    return cannot(rest, ".000000")
  }
  const fraction = rest.slice(1, 7)
  rest = rest.slice(7)
  let offsetMinutes = 0
  if (rest.startsWith("Z")) {
    rest = rest.slice(1)
  } else {
    const zone = /^([+-])(\d\d):(\d\d)/.exec(rest)
    if (zone === null) return cannot(rest, "Z07:00")
    const [, sign, hours, minutes] = zone
    if (Number(hours) > 24) return outOfRange("time zone offset hour")
    if (Number(minutes) > 60) return outOfRange("time zone offset minute")
    offsetMinutes = (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes))
    rest = rest.slice(6)
  }
  if (rest !== "") return { _tag: "Refused", message: `parsing time ${quoted}: extra text: ${goTimeQuote(rest)}` }
  const [month, day, hour, minute, second] = fields as [number, number, number, number, number]
  if (day < 1 || day > daysIn(month, year)) return outOfRange("day")
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute - offsetMinutes, second, 0)
  const pad = (n: number, width = 2) => String(n).padStart(width, "0")
  return {
    _tag: "Parsed",
    utc: `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}T${
      pad(at.getUTCHours())
    }:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}.${fraction}Z`
  }
}

/** A MicroTime as the server stores and answers it: in UTC; text it would refuse is left as it is. */
export const canonicalMicroTime = (text: string): string => {
  const parsed = parseMicroTime(text)
  return parsed._tag === "Parsed" ? parsed.utc : text
}
