/**
 * What a real API server refuses, and how it says so. The checks mirror the
 * apiserver's own: apimachinery's name, label and metadata rules, the Service,
 * Ingress, IngressClass and Namespace validators, and the Gateway API v1 CRD
 * schemas with their CEL rules. Each returns field errors worded as the server
 * words them, so the local cluster answers the 422 a real one would; they are
 * right on their own terms, not tuned to what our builders happen to produce.
 */
import type { KubeObject, ObjectMeta, Status } from "./Objects.js"
import type { ResourceType } from "./Resources.js"

// ---------------------------------------------------------------------------
// Field errors, rendered as apimachinery's `field.Error.ErrorBody()` renders them
// ---------------------------------------------------------------------------

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
  let out = '"'
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0
    switch (ch) {
      case '"':
        out += '\\"'
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
const renderValue = (value: unknown): string => {
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  if (value === undefined || value === null) return "null"
  return JSON.stringify(value)
}

const withDetail = (head: string, detail: string): string => (detail.length > 0 ? `${head}: ${detail}` : head)

/** `field.Invalid`. */
const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  reason: "FieldValueInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail)
})

/** `field.TypeInvalid`: a value of the wrong JSON type for a CRD schema. */
const typeInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  reason: "FieldValueTypeInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail)
})

/** `field.Required`: the value is never printed. */
const required = (field: string, detail = ""): FieldError => ({
  reason: "FieldValueRequired",
  field,
  message: withDetail("Required value", detail)
})

/** `field.Forbidden`. */
const forbidden = (field: string, detail: string): FieldError => ({
  reason: "FieldValueForbidden",
  field,
  message: withDetail("Forbidden", detail)
})

/** `field.NotSupported`: the valid values are listed quoted, in the order given. */
const notSupported = (field: string, value: unknown, valid: ReadonlyArray<string>): FieldError => ({
  reason: "FieldValueNotSupported",
  field,
  message: withDetail(
    `Unsupported value: ${renderValue(value)}`,
    valid.length > 0 ? `supported values: ${valid.map(goQuote).join(", ")}` : ""
  )
})

/** `field.Duplicate`. */
const duplicate = (field: string, value: unknown): FieldError => ({
  reason: "FieldValueDuplicate",
  field,
  message: `Duplicate value: ${renderValue(value)}`
})

/** `field.TooLong`: the too-long value is deliberately left out of the message. */
const tooLong = (field: string, max: number): FieldError => ({
  reason: "FieldValueTooLong",
  field,
  message: withDetail("Too long", `may not be more than ${max} ${max === 1 ? "byte" : "bytes"}`)
})

/** `field.TooMany`. */
const tooMany = (field: string, actual: number, max: number): FieldError => ({
  reason: "FieldValueTooMany",
  field,
  message: withDetail(`Too many: ${actual}`, `must have at most ${max} ${max === 1 ? "item" : "items"}`)
})

/** A child path: `spec` + `rules` → `spec.rules`. */
const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)
const index = (path: string, i: number): string => `${path}[${i}]`

// ---------------------------------------------------------------------------
// apimachinery's string rules (k8s.io/apimachinery/pkg/util/validation)
// ---------------------------------------------------------------------------

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"

const anchored = (fmt: string): RegExp => new RegExp(`^${fmt}$`)
const DNS1123_LABEL = anchored(DNS1123_LABEL_FMT)
const DNS1123_SUBDOMAIN = anchored(DNS1123_SUBDOMAIN_FMT)
const DNS1035_LABEL = anchored(DNS1035_LABEL_FMT)
const WILDCARD_DNS1123_SUBDOMAIN = anchored(WILDCARD_DNS1123_SUBDOMAIN_FMT)
const QUALIFIED_NAME = anchored(QUALIFIED_NAME_FMT)
const LABEL_VALUE = anchored(LABEL_VALUE_FMT)
const HTTP_PATH = anchored(HTTP_PATH_FMT)

/** Go's `len(s)`: the server measures names in UTF-8 bytes, not characters. */
const byteLength = (value: string): number => {
  let n = 0
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0
    n += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
  }
  return n
}

const maxLenError = (length: number): string => `must be no more than ${length} characters`

const regexError = (msg: string, fmt: string, ...examples: ReadonlyArray<string>): string =>
  examples.length === 0
    ? `${msg} (regex used for validation is '${fmt}')`
    // Go joins "'a', " items with " or ", hence the double space the server prints.
    : `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${fmt}')`

/** `IsDNS1123Label`: problems with `value` as a DNS label (≤63), empty when none. */
export const isDns1123Label = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 63) errs.push(maxLenError(63))
  if (!DNS1123_LABEL.test(value)) {
    // A valid subdomain that is not a label can only be one with dots (length was checked).
    errs.push(
      DNS1123_SUBDOMAIN.test(value)
        ? "must not contain dots"
        : regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          "my-name",
          "123-abc"
        )
    )
  }
  return errs
}

/** `IsDNS1123Subdomain`: problems with `value` as a DNS subdomain (≤253), empty when none. */
export const isDns1123Subdomain = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 253) errs.push(maxLenError(253))
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        "example.com"
      )
    )
  }
  return errs
}

/** `IsDNS1035Label`: a DNS label that starts with a letter (Service names). */
export const isDns1035Label = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 63) errs.push(maxLenError(63))
  if (!DNS1035_LABEL.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        "my-name",
        "abc-123"
      )
    )
  }
  return errs
}

/** `IsWildcardDNS1123Subdomain`: `*.` followed by a DNS subdomain, and nothing else. */
export const isWildcardDns1123Subdomain = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 253) errs.push(maxLenError(253))
  if (!WILDCARD_DNS1123_SUBDOMAIN.test(value)) {
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_DNS1123_SUBDOMAIN_FMT,
        "*.example.com"
      )
    )
  }
  return errs
}

/** `IsQualifiedName`: a label key, `[prefix/]name` with a DNS-subdomain prefix and a ≤63 name. */
export const isQualifiedName = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  const parts = value.split("/")
  const nameMsg = regexError(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    QUALIFIED_NAME_FMT,
    "MyName",
    "my.name",
    "123-abc"
  )
  let name: string
  if (parts.length === 1) {
    name = parts[0] ?? ""
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? ""
    name = parts[1] ?? ""
    if (prefix.length === 0) errs.push("prefix part must be non-empty")
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`))
  } else {
    return [
      `a qualified name ${nameMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ]
  }
  if (name.length === 0) errs.push("name part must be non-empty")
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`)
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${nameMsg}`)
  return errs
}

/** `IsValidLabelValue`: empty, or ≤63 with alphanumeric ends and `-_.` inside. */
export const isValidLabelValue = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 63) errs.push(maxLenError(63))
  if (!LABEL_VALUE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        "MyValue",
        "my_value",
        "12345"
      )
    )
  }
  return errs
}

/** `IsValidPortNum`: 1..65535. */
export const isValidPortNum = (port: number): ReadonlyArray<string> =>
  Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : ["must be between 1 and 65535, inclusive"]

/** `IsValidPortName`: an IANA service name (≤15, `[-a-z0-9]`, a letter, no `--`, no hyphen at either end). */
export const isValidPortName = (port: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(port) > 15) errs.push(maxLenError(15))
  if (!/^[-a-z0-9]+$/.test(port)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
  if (!/[a-z]/.test(port)) errs.push("must contain at least one letter (a-z)")
  if (port.includes("--")) errs.push("must not contain consecutive hyphens")
  if (port.length > 0 && (port.startsWith("-") || port.endsWith("-"))) errs.push("must not begin or end with a hyphen")
  return errs
}

/** `IsValidPathSegmentName`: a name that can sit in a URL path segment. */
const isValidPathSegmentName = (name: string): ReadonlyArray<string> => {
  if (name === "." || name === "..") return [`may not be '${name}'`]
  return ["/", "%"].filter((bad) => name.includes(bad)).map((bad) => `may not contain '${bad}'`)
}

const isIPv4 = (value: string): boolean => {
  // Sloppy like the server's parser: leading zeros are accepted ("010.0.0.1").
  const parts = value.split(".")
  return parts.length === 4 && parts.every((p) => /^[0-9]+$/.test(p) && Number(p) <= 255)
}

const ipv6Groups = (part: string, allowIPv4Tail: boolean): number | undefined => {
  if (part === "") return 0
  const groups = part.split(":")
  let count = 0
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i] ?? ""
    if (allowIPv4Tail && i === groups.length - 1 && group.includes(".")) {
      if (!isIPv4(group)) return undefined
      count += 2
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      count += 1
    } else {
      return undefined
    }
  }
  return count
}

/** Whether the server's IP parser (`ParseIPSloppy`) reads `value` as an IPv4 or IPv6 address. */
export const isIPAddress = (value: string): boolean => {
  if (isIPv4(value)) return true
  if (!value.includes(":")) return false
  const halves = value.split("::")
  if (halves.length > 2) return false
  if (halves.length === 1) return ipv6Groups(value, true) === 8
  const left = ipv6Groups(halves[0] ?? "", false)
  const right = ipv6Groups(halves[1] ?? "", true)
  return left !== undefined && right !== undefined && left + right <= 7
}

// ---------------------------------------------------------------------------
// Reading JSON the way Go decodes it: a missing or mistyped field is its zero value
// ---------------------------------------------------------------------------

type JsonRecord = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const asRecord = (value: unknown): JsonRecord => (isRecord(value) ? value : {})
const asString = (value: unknown): string => (typeof value === "string" ? value : "")
const asNumber = (value: unknown): number => (typeof value === "number" ? value : 0)
const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const isPresent = (value: unknown): boolean => value !== undefined && value !== null

// ---------------------------------------------------------------------------
// Object metadata (apimachinery/pkg/api/validation/objectmeta.go)
// ---------------------------------------------------------------------------

type NameValidator = (name: string, prefix: boolean) => ReadonlyArray<string>

/**
 * A generateName may end in `-`; the server checks it as if that dash were
 * followed by generated characters (its own quirk: the last two characters
 * become one `a`).
 */
const maskTrailingDash = (name: string): string =>
  name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name

const nameIsDnsSubdomain: NameValidator = (name, prefix) =>
  isDns1123Subdomain(prefix ? maskTrailingDash(name) : name)
const nameIsDnsLabel: NameValidator = (name, prefix) => isDns1123Label(prefix ? maskTrailingDash(name) : name)
const nameIsDns1035Label: NameValidator = (name, prefix) => isDns1035Label(prefix ? maskTrailingDash(name) : name)

/** Annotations may total 256 KiB (keys and values, in bytes). */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

const validateLabels = (labels: unknown, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  // The server reports every label problem against the map itself, not the key.
  for (const [key, value] of Object.entries(asRecord(labels))) {
    errs.push(...isQualifiedName(key).map((m) => invalid(path, key, m)))
    const text = asString(value)
    errs.push(...isValidLabelValue(text).map((m) => invalid(path, text, m)))
  }
  return errs
}

const validateAnnotations = (annotations: unknown, path: string): Array<FieldError> => {
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
const ownerReferenceJson = (ref: JsonRecord): Record<string, unknown> => ({
  apiVersion: asString(ref.apiVersion),
  kind: asString(ref.kind),
  name: asString(ref.name),
  uid: asString(ref.uid),
  ...(typeof ref.controller === "boolean" ? { controller: ref.controller } : {}),
  ...(typeof ref.blockOwnerDeletion === "boolean" ? { blockOwnerDeletion: ref.blockOwnerDeletion } : {})
})

/** The version in an apiVersion (`v1`, `group/v1`), or "" when it has none or does not parse. */
const versionOf = (apiVersion: string): { readonly group: string; readonly version: string } => {
  const parts = apiVersion.split("/")
  if (apiVersion === "") return { group: "", version: "" }
  if (parts.length === 1) return { group: "", version: parts[0] ?? "" }
  if (parts.length === 2) return { group: parts[0] ?? "", version: parts[1] ?? "" }
  return { group: "", version: "" }
}

const validateOwnerReferences = (refs: unknown, path: string): Array<FieldError> => {
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

interface MetaRules {
  readonly namespaced: boolean
  readonly name: NameValidator
}

/**
 * `ValidateObjectMeta` on create. The server first fills a namespaced object's
 * namespace from the URL and clears a cluster-scoped one's (and generates a name
 * from generateName); a caller that skips that step gets the errors those
 * fields would then cause.
 */
const validateObjectMeta = (meta: ObjectMeta | undefined, rules: MetaRules): Array<FieldError> => {
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

// ---------------------------------------------------------------------------
// Namespace, Service (pkg/apis/core/validation)
// ---------------------------------------------------------------------------

/** A Namespace's name is a DNS label; its `spec.finalizers` are not checked here. */
const validateNamespace = (object: JsonRecord): Array<FieldError> =>
  validateObjectMeta(object.metadata as ObjectMeta | undefined, { namespaced: false, name: nameIsDnsLabel })

const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"] as const
const PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"] as const

const validateServicePort = (
  port: JsonRecord,
  requireName: boolean,
  names: Set<string>,
  path: string
): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const name = asString(port.name)
  if (requireName && name === "") {
    errs.push(required(child(path, "name")))
  } else if (name !== "") {
    // Service port names are DNS labels; only container and target port names follow the IANA rules.
    errs.push(...isDns1123Label(name).map((m) => invalid(child(path, "name"), name, m)))
    if (names.has(name)) errs.push(duplicate(child(path, "name"), name))
    else names.add(name)
  }
  const number = asNumber(port.port)
  errs.push(...isValidPortNum(number).map((m) => invalid(child(path, "port"), number, m)))
  const protocol = asString(port.protocol) || "TCP" // defaulted before validation
  if (!(PORT_PROTOCOLS as ReadonlyArray<string>).includes(protocol)) {
    errs.push(notSupported(child(path, "protocol"), protocol, PORT_PROTOCOLS))
  }
  // An unset (or zero, or empty) targetPort is defaulted to the port, so a bad port is reported twice.
  const unset = !isPresent(port.targetPort) || port.targetPort === 0 || port.targetPort === ""
  const target = unset ? number : port.targetPort
  if (typeof target === "string") {
    errs.push(...isValidPortName(target).map((m) => invalid(child(path, "targetPort"), target, m)))
  } else {
    const n = asNumber(target)
    errs.push(...isValidPortNum(n).map((m) => invalid(child(path, "targetPort"), n, m)))
  }
  if (typeof port.appProtocol === "string") {
    const appProtocol = port.appProtocol
    errs.push(...isQualifiedName(appProtocol).map((m) => invalid(child(path, "appProtocol"), appProtocol, m)))
  }
  return errs
}

const validateService = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDns1035Label
  })
  const spec = asRecord(object.spec)
  const type = asString(spec.type) || "ClusterIP" // defaulted before validation
  const ports = asArray(spec.ports).map(asRecord)
  const headless = type === "ClusterIP" && asString(spec.clusterIP) === "None"
  if (ports.length === 0 && !headless && type !== "ExternalName") errs.push(required("spec.ports"))
  if (type === "ExternalName") {
    // The name may end with a dot to say it is fully qualified.
    const cname = asString(spec.externalName).replace(/\.$/, "")
    if (cname === "") errs.push(required("spec.externalName"))
    else errs.push(...isDns1123Subdomain(cname).map((m) => invalid("spec.externalName", cname, m)))
  }
  const names = new Set<string>()
  ports.forEach((port, i) => errs.push(...validateServicePort(port, ports.length > 1, names, index("spec.ports", i))))
  if (isRecord(spec.selector)) errs.push(...validateLabels(spec.selector, "spec.selector"))
  if (!(SERVICE_TYPES as ReadonlyArray<string>).includes(type)) errs.push(notSupported("spec.type", type, SERVICE_TYPES))
  const seen = new Set<string>()
  ports.forEach((port, i) => {
    const protocol = asString(port.protocol) || "TCP"
    const number = asNumber(port.port)
    const key = `${protocol}/${number}`
    if (seen.has(key)) {
      // The server compares (protocol, port) as a ServicePort struct and prints that struct.
      errs.push(
        duplicate(index("spec.ports", i), {
          Name: "",
          Protocol: protocol,
          AppProtocol: null,
          Port: number,
          TargetPort: 0,
          NodePort: 0
        })
      )
    }
    seen.add(key)
  })
  return errs
}

// ---------------------------------------------------------------------------
// Ingress, IngressClass (pkg/apis/networking/validation)
// ---------------------------------------------------------------------------

const PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"] as const
const INVALID_PATH_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"] as const
const INVALID_PATH_SUFFIXES = ["/..", "/."] as const
const INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"

/** A host or TLS host: a DNS subdomain, or a wildcard that is exactly `*.` and a subdomain. */
const hostMessages = (host: string): ReadonlyArray<string> =>
  host.includes("*") ? isWildcardDns1123Subdomain(host) : isDns1123Subdomain(host)

const validateTypedLocalObjectReference = (ref: JsonRecord, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if (typeof ref.apiGroup === "string") {
    const group = ref.apiGroup
    errs.push(...isDns1123Subdomain(group).map((m) => invalid(child(path, "apiGroup"), group, m)))
  }
  for (const key of ["kind", "name"] as const) {
    const value = asString(ref[key])
    if (value === "") errs.push(required(child(path, key), `${key} is required`))
    else errs.push(...isValidPathSegmentName(value).map((m) => invalid(child(path, key), value, m)))
  }
  return errs
}

const validateIngressBackend = (backend: JsonRecord, path: string): Array<FieldError> => {
  const hasResource = isPresent(backend.resource)
  const hasService = isPresent(backend.service)
  if (hasResource && hasService) return [invalid(path, "", "cannot set both resource and service backends")]
  if (hasResource) return validateTypedLocalObjectReference(asRecord(backend.resource), child(path, "resource"))
  if (!hasService) return [invalid(path, "", "resource or service backend is required")]
  const errs: Array<FieldError> = []
  const service = asRecord(backend.service)
  const name = asString(service.name)
  if (name === "") errs.push(required(child(path, "service.name")))
  else errs.push(...isDns1035Label(name).map((m) => invalid(child(path, "service.name"), name, m)))
  const port = asRecord(service.port)
  const portName = asString(port.name)
  const portNumber = asNumber(port.number)
  if (portName !== "" && portNumber !== 0) {
    errs.push(invalid(path, "", "cannot set both port name & port number"))
  } else if (portName !== "") {
    errs.push(...isValidPortName(portName).map((m) => invalid(child(path, "service.port.name"), portName, m)))
  } else if (portNumber !== 0) {
    errs.push(...isValidPortNum(portNumber).map((m) => invalid(child(path, "service.port.number"), portNumber, m)))
  } else {
    errs.push(required(path, "port name or number is required"))
  }
  return errs
}

const validateIngressPath = (entry: JsonRecord, path: string): Array<FieldError> => {
  // Without a pathType the server stops here: the backend is not checked.
  if (!isPresent(entry.pathType)) return [required(child(path, "pathType"), "pathType must be specified")]
  const errs: Array<FieldError> = []
  const pathType = asString(entry.pathType)
  const value = asString(entry.path)
  const at = child(path, "path")
  switch (pathType) {
    case "Exact":
    case "Prefix":
      if (!value.startsWith("/")) errs.push(invalid(at, value, "must be an absolute path"))
      if (value.length > 0) {
        for (const seq of INVALID_PATH_SEQUENCES) {
          if (value.includes(seq)) errs.push(invalid(at, value, `must not contain '${seq}'`))
        }
        for (const suffix of INVALID_PATH_SUFFIXES) {
          if (value.endsWith(suffix)) errs.push(invalid(at, value, `cannot end with '${suffix}'`))
        }
      }
      break
    case "ImplementationSpecific":
      if (value.length > 0 && !value.startsWith("/")) errs.push(invalid(at, value, "must be an absolute path"))
      break
    default:
      errs.push(notSupported(child(path, "pathType"), pathType, PATH_TYPES))
  }
  errs.push(...validateIngressBackend(asRecord(entry.backend), child(path, "backend")))
  return errs
}

const validateIngress = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  const rules = asArray(spec.rules).map(asRecord)
  if (rules.length === 0 && !isPresent(spec.defaultBackend)) {
    errs.push(invalid("spec", Array.isArray(spec.rules) ? [] : null, "either `defaultBackend` or `rules` must be specified"))
  }
  if (isPresent(spec.defaultBackend)) {
    errs.push(...validateIngressBackend(asRecord(spec.defaultBackend), "spec.defaultBackend"))
  }
  rules.forEach((rule, i) => {
    const at = index("spec.rules", i)
    const host = asString(rule.host)
    if (host !== "") {
      if (isIPAddress(host)) errs.push(invalid(child(at, "host"), host, "must be a DNS name, not an IP address"))
      errs.push(...hostMessages(host).map((m) => invalid(child(at, "host"), host, m)))
    }
    // A rule without `http` is allowed (a host with no paths); with it, paths are required.
    if (isPresent(rule.http)) {
      const paths = asArray(asRecord(rule.http).paths).map(asRecord)
      if (paths.length === 0) errs.push(required(child(at, "http.paths")))
      paths.forEach((entry, j) => errs.push(...validateIngressPath(entry, index(child(at, "http.paths"), j))))
    }
  })
  asArray(spec.tls).map(asRecord).forEach((tls, i) => {
    const at = index("spec.tls", i)
    asArray(tls.hosts).forEach((h, j) => {
      const host = asString(h)
      errs.push(...hostMessages(host).map((m) => invalid(index(child(at, "hosts"), j), host, m)))
    })
    const secretName = asString(tls.secretName)
    if (secretName !== "") {
      errs.push(...isDns1123Subdomain(secretName).map((m) => invalid(child(at, "secretName"), secretName, m)))
    }
  })
  if (typeof spec.ingressClassName === "string") {
    const className = spec.ingressClassName
    errs.push(...nameIsDnsSubdomain(className, false).map((m) => invalid("spec.ingressClassName", className, m)))
  }
  const annotations = asRecord(asRecord(object.metadata).annotations)
  const annotated = annotations[INGRESS_CLASS_ANNOTATION]
  if (typeof annotated === "string" && typeof spec.ingressClassName === "string" && annotated !== spec.ingressClassName) {
    // The server names this field without `metadata.`, as it does.
    errs.push(
      invalid(`annotations.${INGRESS_CLASS_ANNOTATION}`, annotated, "must match `ingressClassName` when both are specified")
    )
  }
  return errs
}

/** `IsDomainPrefixedPath`: `acme.io/foo`, as an IngressClass controller is named. */
const validateDomainPrefixedPath = (value: string, path: string): Array<FieldError> => {
  if (value === "") return [required(path)]
  const slash = value.indexOf("/")
  const host = slash < 0 ? value : value.slice(0, slash)
  const rest = slash < 0 ? "" : value.slice(slash + 1)
  if (slash < 0 || host === "" || rest === "") {
    return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
  }
  const errs = isDns1123Subdomain(host).map((m) => invalid(path, host, m))
  if (!HTTP_PATH.test(rest)) errs.push(invalid(path, rest, regexError("Invalid path", HTTP_PATH_FMT)))
  return errs
}

const PARAMETER_SCOPES = ["Cluster", "Namespace"] as const

const validateIngressClass = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: false,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  const controller = asString(spec.controller)
  if (byteLength(controller) > 250) errs.push(tooLong("spec.controller", 250))
  errs.push(...validateDomainPrefixedPath(controller, "spec.controller"))
  if (isRecord(spec.parameters)) {
    const params = spec.parameters
    errs.push(...validateTypedLocalObjectReference(params, "spec.parameters"))
    const scope = typeof params.scope === "string" ? params.scope : "Cluster" // defaulted before validation
    if (!(PARAMETER_SCOPES as ReadonlyArray<string>).includes(scope)) {
      errs.push(notSupported("spec.parameters.scope", scope, PARAMETER_SCOPES))
    } else if (scope === "Namespace") {
      if (typeof params.namespace !== "string") {
        errs.push(required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"))
      } else {
        const ns = params.namespace
        errs.push(...nameIsDnsLabel(ns, false).map((m) => invalid("spec.parameters.namespace", ns, m)))
      }
    } else if (isPresent(params.namespace)) {
      errs.push(forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"))
    }
  }
  return errs
}

// ---------------------------------------------------------------------------
// Custom resources: a structural schema with defaults and CEL rules, checked the
// way apiextensions-apiserver checks them (kube-openapi messages, list-map keys,
// then CEL unless an earlier error blocks it)
// ---------------------------------------------------------------------------

/** One `x-kubernetes-validations` rule: the CEL expression, written as a predicate on `self`. */
interface CelRule {
  readonly message: string
  readonly holds: (self: never) => boolean
}

interface SchemaBase {
  readonly default?: unknown
  readonly rules?: ReadonlyArray<CelRule>
}

interface ObjectSchema extends SchemaBase {
  readonly type: "object"
  readonly properties: Readonly<Record<string, Schema>>
  readonly required?: ReadonlyArray<string>
}

interface ArraySchema extends SchemaBase {
  readonly type: "array"
  readonly items: Schema
  readonly minItems?: number
  readonly maxItems?: number
  /** `x-kubernetes-list-type: map` with these keys. */
  readonly mapKeys?: ReadonlyArray<string>
}

interface StringSchema extends SchemaBase {
  readonly type: "string"
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  readonly enum?: ReadonlyArray<string>
}

interface IntegerSchema extends SchemaBase {
  readonly type: "integer"
  readonly minimum?: number
  readonly maximum?: number
}

type Schema = ObjectSchema | ArraySchema | StringSchema | IntegerSchema

const rule = <A>(message: string, holds: (self: A) => boolean): CelRule => ({
  message,
  holds: holds as (self: never) => boolean
})

// The Gateway API v1 string types, as their CRDs declare them.
const GROUP_PATTERN = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const KIND_PATTERN = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
const NAMESPACE_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
const SECTION_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const HOSTNAME_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const PROTOCOL_PATTERN =
  "^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$"
const PATH_CHARACTERS = "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$"

const groupSchema = (fallback?: string): StringSchema => ({
  type: "string",
  maxLength: 253,
  pattern: GROUP_PATTERN,
  ...(fallback !== undefined ? { default: fallback } : {})
})
const kindSchema = (fallback?: string): StringSchema => ({
  type: "string",
  minLength: 1,
  maxLength: 63,
  pattern: KIND_PATTERN,
  ...(fallback !== undefined ? { default: fallback } : {})
})
const objectNameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253 }
const namespaceSchema: StringSchema = { type: "string", minLength: 1, maxLength: 63, pattern: NAMESPACE_PATTERN }
const sectionNameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253, pattern: SECTION_NAME_PATTERN }
const hostnameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN }
const portNumberSchema: IntegerSchema = { type: "integer", minimum: 1, maximum: 65535 }

type ParentRefValue = {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly sectionName?: string
}

/** Two parentRefs that select the same object (the CRD's CEL, defaults applied). */
const sameParent = (a: ParentRefValue, b: ParentRefValue): boolean =>
  a.group === b.group &&
  a.kind === b.kind &&
  a.name === b.name &&
  (((a.namespace ?? "") === "" && (b.namespace ?? "") === "") ||
    (a.namespace !== undefined && b.namespace !== undefined && a.namespace === b.namespace))

const noSection = (p: ParentRefValue): boolean => (p.sectionName ?? "") === ""

const parentRefsSchema: ArraySchema = {
  type: "array",
  maxItems: 32,
  items: {
    type: "object",
    required: ["name"],
    properties: {
      group: groupSchema("gateway.networking.k8s.io"),
      kind: kindSchema("Gateway"),
      name: objectNameSchema,
      namespace: namespaceSchema,
      port: portNumberSchema,
      sectionName: sectionNameSchema
    }
  },
  // The standard channel's two rules on parentRefs that select the same parent.
  rules: [
    rule<ReadonlyArray<ParentRefValue>>(
      "sectionName must be specified when parentRefs includes 2 or more references to the same parent",
      (self) => self.every((p1) => self.every((p2) => (sameParent(p1, p2) ? noSection(p1) === noSection(p2) : true)))
    ),
    rule<ReadonlyArray<ParentRefValue>>(
      "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
      (self) =>
        self.every(
          (p1) =>
            self.filter(
              (p2) =>
                sameParent(p1, p2) &&
                ((noSection(p1) && noSection(p2)) ||
                  (p1.sectionName !== undefined && p2.sectionName !== undefined && p1.sectionName === p2.sectionName))
            ).length === 1
        )
    )
  ]
}

type PathMatchValue = { readonly type: string; readonly value: string }
const exactOrPrefix = (p: PathMatchValue): boolean => p.type === "Exact" || p.type === "PathPrefix"
const pathRule = (message: string, holds: (value: string) => boolean): CelRule =>
  rule<PathMatchValue>(`${message} when type one of ['Exact', 'PathPrefix']`, (self) =>
    exactOrPrefix(self) ? holds(self.value) : true
  )

const pathMatchSchema: ObjectSchema = {
  type: "object",
  default: { type: "PathPrefix", value: "/" },
  properties: {
    type: { type: "string", enum: ["Exact", "PathPrefix", "RegularExpression"], default: "PathPrefix" },
    value: { type: "string", maxLength: 1024, default: "/" }
  },
  rules: [
    pathRule("value must be an absolute path and start with '/'", (v) => v.startsWith("/")),
    pathRule("must not contain '//'", (v) => !v.includes("//")),
    pathRule("must not contain '/./'", (v) => !v.includes("/./")),
    pathRule("must not contain '/../'", (v) => !v.includes("/../")),
    pathRule("must not contain '%2f'", (v) => !v.includes("%2f")),
    pathRule("must not contain '%2F'", (v) => !v.includes("%2F")),
    pathRule("must not contain '#'", (v) => !v.includes("#")),
    pathRule("must not end with '/..'", (v) => !v.endsWith("/..")),
    pathRule("must not end with '/.'", (v) => !v.endsWith("/.")),
    rule<PathMatchValue>(
      "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
      (self) => exactOrPrefix(self) || self.type === "RegularExpression"
    ),
    rule<PathMatchValue>(
      `must only contain valid characters (matching ${PATH_CHARACTERS}) for types ['Exact', 'PathPrefix']`,
      (self) => (exactOrPrefix(self) ? new RegExp(PATH_CHARACTERS).test(self.value) : true)
    )
  ]
}

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"] as const

type BackendRefValue = { readonly group: string; readonly kind: string; readonly port?: number }

const backendRefsSchema: ArraySchema = {
  type: "array",
  maxItems: 16,
  items: {
    type: "object",
    required: ["name"],
    properties: {
      group: groupSchema(""),
      kind: kindSchema("Service"),
      name: objectNameSchema,
      namespace: namespaceSchema,
      port: portNumberSchema,
      weight: { type: "integer", minimum: 0, maximum: 1000000, default: 1 }
    },
    rules: [
      rule<BackendRefValue>(
        "Must have port for Service reference",
        (self) => (self.group.length === 0 && self.kind === "Service" ? self.port !== undefined : true)
      )
    ]
  }
}

type RuleValue = { readonly matches?: ReadonlyArray<unknown> }

/** The HTTPRoute v1 CRD (standard channel), reduced to the fields session routing reads or writes. */
const httpRouteSchema: ObjectSchema = {
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    spec: {
      type: "object",
      properties: {
        hostnames: { type: "array", maxItems: 16, items: hostnameSchema },
        parentRefs: parentRefsSchema,
        rules: {
          type: "array",
          maxItems: 16,
          default: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }] }],
          items: {
            type: "object",
            properties: {
              name: sectionNameSchema,
              matches: {
                type: "array",
                maxItems: 64,
                default: [{ path: { type: "PathPrefix", value: "/" } }],
                items: {
                  type: "object",
                  properties: {
                    path: pathMatchSchema,
                    method: { type: "string", enum: HTTP_METHODS }
                  }
                }
              },
              backendRefs: backendRefsSchema
            }
          },
          rules: [
            rule<ReadonlyArray<RuleValue>>(
              "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128",
              (self) => self.reduce((sum, r) => sum + (r.matches?.length ?? 0), 0) <= 128
            )
          ]
        }
      }
    }
  }
}

type ListenerValue = {
  readonly name?: string
  readonly port?: number
  readonly protocol?: string
  readonly hostname?: string
  readonly tls?: { readonly mode?: string }
}

const listenersOnly = (self: ReadonlyArray<ListenerValue>, protocols: ReadonlyArray<string>, ok: (l: ListenerValue) => boolean) =>
  self.every((l) => (protocols.includes(l.protocol ?? "") ? ok(l) : true))

/** The Gateway v1 CRD (standard channel), reduced to gatewayClassName and listeners. */
const gatewaySchema: ObjectSchema = {
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    spec: {
      type: "object",
      required: ["gatewayClassName", "listeners"],
      properties: {
        gatewayClassName: objectNameSchema,
        listeners: {
          type: "array",
          minItems: 1,
          maxItems: 64,
          mapKeys: ["name"],
          items: {
            type: "object",
            required: ["name", "port", "protocol"],
            properties: {
              name: sectionNameSchema,
              hostname: hostnameSchema,
              port: portNumberSchema,
              protocol: { type: "string", minLength: 1, maxLength: 255, pattern: PROTOCOL_PATTERN },
              tls: {
                type: "object",
                properties: { mode: { type: "string", enum: ["Terminate", "Passthrough"], default: "Terminate" } }
              },
              allowedRoutes: {
                type: "object",
                default: { namespaces: { from: "Same" } },
                properties: {
                  namespaces: {
                    type: "object",
                    default: { from: "Same" },
                    properties: {
                      from: { type: "string", enum: ["All", "Selector", "Same"], default: "Same" }
                    }
                  },
                  kinds: {
                    type: "array",
                    maxItems: 8,
                    items: {
                      type: "object",
                      required: ["kind"],
                      properties: { group: groupSchema(), kind: kindSchema() }
                    }
                  }
                }
              }
            }
          },
          rules: [
            rule<ReadonlyArray<ListenerValue>>(
              "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
              (self) => listenersOnly(self, ["HTTP", "TCP", "UDP"], (l) => l.tls === undefined)
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "tls mode must be Terminate for protocol HTTPS",
              (self) =>
                listenersOnly(self, ["HTTPS"], (l) => l.tls === undefined || l.tls.mode === "" || l.tls.mode === "Terminate")
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "hostname must not be specified for protocols ['TCP', 'UDP']",
              (self) => listenersOnly(self, ["TCP", "UDP"], (l) => (l.hostname ?? "") === "")
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "Listener name must be unique within the Gateway",
              (self) => self.every((l1) => self.filter((l2) => l1.name === l2.name).length === 1)
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "Combination of port, protocol and hostname must be unique for each listener",
              (self) =>
                self.every(
                  (l1) =>
                    self.filter(
                      (l2) =>
                        l1.port === l2.port &&
                        l1.protocol === l2.protocol &&
                        (l1.hostname !== undefined && l2.hostname !== undefined
                          ? l1.hostname === l2.hostname
                          : l1.hostname === undefined && l2.hostname === undefined)
                    ).length === 1
                )
            )
          ]
        }
      }
    }
  }
}

const cloneJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown

/**
 * Structural defaulting: a missing (or null) field with a default gets it, then
 * its contents are defaulted too; other nulls are pruned. Returns a new value.
 */
const applyDefaults = (value: unknown, schema: Schema): unknown => {
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
const jsonType = (value: unknown): string => {
  if (Array.isArray(value)) return "array"
  if (value === null) return "null"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

/** Characters, not bytes: kube-openapi counts runes for minLength/maxLength. */
const runeLength = (value: string): number => [...value].length

/** kube-openapi's checks (type, lengths, pattern, bounds, items, enum, required), depth first. */
const schemaErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
  // Null fields were pruned by defaulting; a null left inside a list is a type error.
  if (value === undefined) return
  const actual = jsonType(value)
  if (actual !== schema.type) {
    errs.push(typeInvalid(path, actual, `${path} in body must be of type ${schema.type}: ${goQuote(actual)}`))
    return
  }
  switch (schema.type) {
    case "string": {
      const text = value as string
      if (schema.maxLength !== undefined && runeLength(text) > schema.maxLength) errs.push(tooLong(path, schema.maxLength))
      if (schema.minLength !== undefined && runeLength(text) < schema.minLength) {
        errs.push(invalid(path, text, `${path} in body should be at least ${schema.minLength} chars long`))
      }
      // The CRD's pattern, unanchored as Go's MatchString applies it.
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(text)) {
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
      for (const [key, prop] of Object.entries(schema.properties)) schemaErrors(record[key], prop, child(path, key), errs)
      return
    }
  }
}

/** `x-kubernetes-list-type: map`: two items with the same key are a duplicate. */
const listMapErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
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
const celErrors = (value: unknown, schema: Schema, path: string, errs: Array<FieldError>): void => {
  if (value === undefined || value === null || jsonType(value) !== schema.type) return
  for (const r of schema.rules ?? []) {
    if (!r.holds(value as never)) errs.push(invalid(path, schema.type, r.message))
  }
  if (schema.type === "array") {
    ;(value as ReadonlyArray<unknown>).forEach((item, i) => celErrors(item, schema.items, index(path, i), errs))
  } else if (schema.type === "object") {
    const record = value as JsonRecord
    for (const [key, prop] of Object.entries(schema.properties)) celErrors(record[key], prop, child(path, key), errs)
  }
}

/** Error types that stop the apiserver from running CEL rules at all. */
const BLOCKING_REASONS: ReadonlySet<string> = new Set([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid"
])

const validateCustomResource = (
  resource: ResourceType<unknown>,
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

const schemaFor = (resource: ResourceType<unknown>): ObjectSchema | undefined => {
  if (resource.group !== "gateway.networking.k8s.io") return undefined
  if (resource.kind === "HTTPRoute") return httpRouteSchema
  if (resource.kind === "Gateway") return gatewaySchema
  return undefined
}

/**
 * `object` with the defaults its CRD schema declares filled in, as the server
 * stores it (HTTPRoute: parentRef group/kind, backendRef group/kind/weight, the
 * `/` PathPrefix match; Gateway: listener allowedRoutes). Other kinds unchanged.
 */
export const withSchemaDefaults = <A extends KubeObject>(resource: ResourceType<unknown>, object: A): A => {
  const schema = schemaFor(resource)
  return schema === undefined ? object : (applyDefaults(object, schema) as A)
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/**
 * Every field error the API server would report creating `object` as a
 * `resource`, empty when it would accept it. Built-in kinds list errors in the
 * server's order; custom resources list metadata, then schema errors (in schema
 * order: the server's follows Go map iteration and varies), then CEL's. Expects
 * the body as JSON: wrong JSON types on built-in kinds are a decode error (400)
 * the caller reports, so here they read as the Go zero value.
 */
export const validateObject = (resource: ResourceType<unknown>, object: KubeObject): ReadonlyArray<FieldError> => {
  const body = asRecord(object)
  const schema = schemaFor(resource)
  if (schema !== undefined) return validateCustomResource(resource, body, schema)
  if (resource.group === "") {
    if (resource.kind === "Service") return validateService(body)
    if (resource.kind === "Namespace") return validateNamespace(body)
  }
  if (resource.group === "networking.k8s.io") {
    if (resource.kind === "Ingress") return validateIngress(body)
    if (resource.kind === "IngressClass") return validateIngressClass(body)
  }
  return validateObjectMeta(body.metadata as ObjectMeta | undefined, {
    namespaced: resource.namespaced,
    name: nameIsDnsSubdomain
  })
}

/**
 * The 422 Status the server answers for these errors: message
 * `<Kind>[.<group>] "<name>" is invalid: <errors>` (one error bare, several in
 * brackets, repeats once), `details.kind` the Kind (not the plural, unlike
 * NotFound), one cause per error.
 */
export const invalidStatus = (
  resource: ResourceType<unknown>,
  name: string,
  errors: ReadonlyArray<FieldError>
): Status => {
  const qualifiedKind = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`
  const lines = [...new Set(errors.map(fieldErrorText))]
  const summary = lines.length === 0 ? "" : `: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${qualifiedKind} ${goQuote(name)} is invalid${summary}`,
    reason: "Invalid",
    details: {
      ...(name !== "" ? { name } : {}),
      ...(resource.group !== "" ? { group: resource.group } : {}),
      kind: resource.kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
    },
    code: 422
  }
}
