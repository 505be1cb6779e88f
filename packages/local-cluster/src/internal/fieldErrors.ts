/** Field errors, rendered as apimachinery's `field.Error.ErrorBody()` renders them. */

/** The `reason` (Go `field.ErrorType`) of a cause in an `Invalid` Status. */
export type FieldErrorReason =
  | "FieldValueInvalid"
  | "FieldValueRequired"
  | "FieldValueNotSupported"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueDuplicate"
  | "FieldValueForbidden"
  | "FieldValueTypeInvalid"

/** One field error, as in `Status.details.causes`. */
export interface FieldError {
  /** A {@link FieldErrorReason}; kept a string so callers may carry others (e.g. `FieldValueNotFound`). */
  readonly reason: string
  /** The path the server names: `spec.rules[0].host`, `metadata.labels`, or `<nil>` for none. */
  readonly field: string
  /** The message without the field, e.g. `Invalid value: "foo_bar": a lowercase RFC 1123 subdomain ...`. */
  readonly message: string
}

/** `field: message`, the way the server joins them in a Status message. */
export const fieldErrorText = (error: FieldError): string => `${error.field}: ${error.message}`

/**
 * Go's `strconv.Quote`, which `%q` uses: the server quotes string values this
 * way, so a value with a quote or a control character reads the same here.
 */
export const goQuote = (value: string): string => {
  let out = "\""
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0
    switch (ch) {
      case "\"":
        out += "\\\""
        continue
      case "\\":
        out += "\\\\"
        continue
      case "\x07":
        out += "\\a"
        continue
      case "\b":
        out += "\\b"
        continue
      case "\f":
        out += "\\f"
        continue
      case "\n":
        out += "\\n"
        continue
      case "\r":
        out += "\\r"
        continue
      case "\t":
        out += "\\t"
        continue
      case "\v":
        out += "\\v"
        continue
    }
    if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, "0")}`
    else out += ch
  }
  return `${out}"`
}

/**
 * A bad value as `ErrorBody` prints it: strings quoted, numbers and booleans
 * bare, anything else as JSON (the server marshals complex values to JSON).
 * Callers pass objects with their keys already in the Go struct's order.
 */
export const renderValue = (value: unknown): string => {
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  if (value === undefined || value === null) return "null"
  return JSON.stringify(value)
}

export const withDetail = (head: string, detail: string): string => (detail.length > 0 ? `${head}: ${detail}` : head)

/** `field.Invalid`. */
export const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  reason: "FieldValueInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail)
})

/**
 * `field.Invalid` with `field.OmitValueType`: no value printed. The apiserver reports a
 * failed CEL rule this way (`Invalid value: <the rule's message>`), not with the node's type.
 */
export const invalidOmittingValue = (field: string, detail: string): FieldError => ({
  reason: "FieldValueInvalid",
  field,
  message: withDetail("Invalid value", detail)
})

/** `field.TypeInvalid`: a value of the wrong JSON type for a CRD schema. */
export const typeInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  reason: "FieldValueTypeInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail)
})

/** `field.Required`: the value is never printed. */
export const required = (field: string, detail = ""): FieldError => ({
  reason: "FieldValueRequired",
  field,
  message: withDetail("Required value", detail)
})

/** `field.Forbidden`. */
export const forbidden = (field: string, detail: string): FieldError => ({
  reason: "FieldValueForbidden",
  field,
  message: withDetail("Forbidden", detail)
})

/** `field.NotSupported`: the valid values are listed quoted, in the order given. */
export const notSupported = (field: string, value: unknown, valid: ReadonlyArray<string>): FieldError => ({
  reason: "FieldValueNotSupported",
  field,
  message: withDetail(
    `Unsupported value: ${renderValue(value)}`,
    valid.length > 0 ? `supported values: ${valid.map(goQuote).join(", ")}` : ""
  )
})

/** `field.Duplicate`. */
export const duplicate = (field: string, value: unknown): FieldError => ({
  reason: "FieldValueDuplicate",
  field,
  message: `Duplicate value: ${renderValue(value)}`
})

/** `field.TooLong`: the too-long value is deliberately left out of the message. */
export const tooLong = (field: string, max: number): FieldError => ({
  reason: "FieldValueTooLong",
  field,
  message: withDetail("Too long", `may not be more than ${max} ${max === 1 ? "byte" : "bytes"}`)
})

/** `field.TooMany`. */
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  reason: "FieldValueTooMany",
  field,
  message: withDetail(`Too many: ${actual}`, `must have at most ${max} ${max === 1 ? "item" : "items"}`)
})

/** A child path: `spec` + `rules` → `spec.rules`. */
export const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)
export const index = (path: string, i: number): string => `${path}[${i}]`
