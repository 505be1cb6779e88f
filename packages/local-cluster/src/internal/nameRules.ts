/**
 * The API server's string rules (apimachinery's pkg/util/validation and
 * pkg/api/validation/path): DNS labels and subdomains, qualified names, label values,
 * ports, path segments, IP addresses. LocalCluster keeps its own copy rather than the
 * library's, so a mistake in the library's rules shows up as a disagreement with this
 * server instead of being repeated by it. The wording is v1.35's, the release
 * LocalCluster reports: label keys and values are judged by apimachinery's content
 * package, which counts in bytes and says so, and calls a bad key a label key.
 */

// The regex formats are part of the messages: the server prints them verbatim.
const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`

/** The characters RFC 3986 allows in an HTTP path, as the server prints the rule. */
export const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"

// Go's regexp matches `^…$` against the whole text, as these do without the `m` flag.
const wholly = (fmt: string): RegExp => new RegExp(`^${fmt}$`)

const DNS1123_LABEL = wholly(DNS1123_LABEL_FMT)
const DNS1123_SUBDOMAIN = wholly(DNS1123_SUBDOMAIN_FMT)
const DNS1035_LABEL = wholly(DNS1035_LABEL_FMT)
const WILDCARD_DNS1123_SUBDOMAIN = wholly(WILDCARD_DNS1123_SUBDOMAIN_FMT)
const QUALIFIED_NAME = wholly(QUALIFIED_NAME_FMT)
const LABEL_VALUE = wholly(LABEL_VALUE_FMT)

/** A whole HTTP path of allowed characters (`IsDomainPrefixedPath`'s check). */
export const HTTP_PATH = wholly(HTTP_PATH_FMT)

const DNS_LABEL_MAX = 63
const DNS_SUBDOMAIN_MAX = 253
const QUALIFIED_NAME_MAX = 63
const LABEL_VALUE_MAX = 63
const PORT_NAME_MAX = 15

/** Go's `len(s)`: the server bounds strings in UTF-8 bytes, so "é" counts twice. */
export const byteLength = (value: string): number => Buffer.byteLength(value, "utf8")

const maxLenError = (limit: number): string => `must be no more than ${limit} characters`
/** The content package's length message (label keys and values, and a key's prefix). */
const maxBytesError = (limit: number): string => `must be no more than ${limit} bytes`

/**
 * `RegexError`: the message, then the examples and the regex in parentheses. Each
 * example is followed by ", " and the next is introduced by " or ", which is why the
 * server prints two spaces between examples.
 */
export const regexError = (msg: string, fmt: string, ...examples: ReadonlyArray<string>): string => {
  let text = `${msg} (`
  if (examples.length > 0) {
    text += "e.g. "
    examples.forEach((example, i) => {
      text += `${i > 0 ? " or " : ""}'${example}', `
    })
  }
  return `${text}regex used for validation is '${fmt}')`
}

const DNS1123_LABEL_MSG = regexError(
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  DNS1123_LABEL_FMT,
  "my-name",
  "123-abc"
)
const DNS1123_SUBDOMAIN_MSG = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123_SUBDOMAIN_FMT,
  "example.com"
)
const DNS1035_LABEL_MSG = regexError(
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  DNS1035_LABEL_FMT,
  "my-name",
  "abc-123"
)
const WILDCARD_DNS1123_SUBDOMAIN_MSG = regexError(
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
  WILDCARD_DNS1123_SUBDOMAIN_FMT,
  "*.example.com"
)
const QUALIFIED_NAME_MSG = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  QUALIFIED_NAME_FMT,
  "MyName",
  "my.name",
  "123-abc"
)
const LABEL_VALUE_MSG = regexError(
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LABEL_VALUE_FMT,
  "MyValue",
  "my_value",
  "12345"
)

/**
 * One rule's messages: the length check first, then the pattern, each adding its
 * message when it fails, in the order the Go function appends them.
 */
const boundedPattern = (
  limit: number,
  pattern: RegExp,
  message: (value: string) => string,
  tooLong: (limit: number) => string = maxLenError
) =>
(value: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (byteLength(value) > limit) problems.push(tooLong(limit))
  if (!pattern.test(value)) problems.push(message(value))
  return problems
}

/** `IsDNS1123Subdomain`: lowercase labels joined by dots, at most 253 bytes. */
export const isDns1123Subdomain = boundedPattern(DNS_SUBDOMAIN_MAX, DNS1123_SUBDOMAIN, () => DNS1123_SUBDOMAIN_MSG)

/** `IsDNS1123Label`: one lowercase DNS label, at most 63 bytes. */
export const isDns1123Label = boundedPattern(
  DNS_LABEL_MAX,
  DNS1123_LABEL,
  // The server singles out a name that would be a good subdomain: only its dots are wrong.
  (value) => (DNS1123_SUBDOMAIN.test(value) ? "must not contain dots" : DNS1123_LABEL_MSG)
)

/** `IsDNS1035Label`: a DNS label that starts with a letter (Service names), at most 63 bytes. */
export const isDns1035Label = boundedPattern(DNS_LABEL_MAX, DNS1035_LABEL, () => DNS1035_LABEL_MSG)

/** `IsWildcardDNS1123Subdomain`: `*.` and a DNS subdomain, at most 253 bytes in all. */
export const isWildcardDns1123Subdomain = boundedPattern(
  DNS_SUBDOMAIN_MAX,
  WILDCARD_DNS1123_SUBDOMAIN,
  () => WILDCARD_DNS1123_SUBDOMAIN_MSG
)

/** `IsValidLabelValue`: empty, or at most 63 bytes of `[-A-Za-z0-9_.]` with alphanumeric ends. */
export const isValidLabelValue = boundedPattern(LABEL_VALUE_MAX, LABEL_VALUE, () => LABEL_VALUE_MSG, maxBytesError)

/** A label key's prefix: a DNS subdomain, its length said in bytes. */
const labelKeyPrefix = boundedPattern(DNS_SUBDOMAIN_MAX, DNS1123_SUBDOMAIN, () => DNS1123_SUBDOMAIN_MSG, maxBytesError)

/**
 * `IsQualifiedName` (label and annotation keys, condition types): `name` or
 * `prefix/name`, the prefix a DNS subdomain and the name at most 63 bytes. The
 * prefix and the name are each judged, so one key can earn several messages.
 */
export const isQualifiedName = (value: string): ReadonlyArray<string> => {
  const parts = value.split("/")
  if (parts.length > 2) {
    return [
      `a valid label key ${QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ]
  }
  const problems: Array<string> = []
  const prefix = parts.length === 2 ? parts[0] : undefined
  const name = parts[parts.length - 1] ?? ""
  if (prefix !== undefined) {
    if (prefix === "") problems.push("prefix part must be non-empty")
    else problems.push(...labelKeyPrefix(prefix).map((m) => `prefix part ${m}`))
  }
  if (name === "") problems.push("name part must be non-empty")
  else if (byteLength(name) > QUALIFIED_NAME_MAX) problems.push(`name part ${maxBytesError(QUALIFIED_NAME_MAX)}`)
  if (!QUALIFIED_NAME.test(name)) problems.push(`name part ${QUALIFIED_NAME_MSG}`)
  return problems
}

/** `IsValidPortNum`: 1 to 65535. */
export const isValidPortNum = (port: number): ReadonlyArray<string> =>
  Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : ["must be between 1 and 65535, inclusive"]

/**
 * `IsValidPortName`: an IANA service name. Every rule it breaks is reported, so
 * `"--"` earns three messages.
 */
export const isValidPortName = (port: string): ReadonlyArray<string> => {
  const checks: ReadonlyArray<readonly [boolean, string]> = [
    [byteLength(port) > PORT_NAME_MAX, maxLenError(PORT_NAME_MAX)],
    [!/^[-a-z0-9]+$/.test(port), "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"],
    [!/[a-z]/.test(port), "must contain at least one letter (a-z)"],
    [port.includes("--"), "must not contain consecutive hyphens"],
    [/^-|-$/.test(port), "must not begin or end with a hyphen"]
  ]
  return checks.filter(([broken]) => broken).map(([, message]) => message)
}

/**
 * `IsValidPathSegmentName`: a name that can sit in a URL path segment and an etcd
 * key. Neither empty names nor long ones are refused here; other rules see to those.
 */
export const isValidPathSegmentName = (name: string): ReadonlyArray<string> => {
  if (name === "." || name === "..") return [`may not be '${name}'`]
  const problems: Array<string> = []
  if (name.includes("/")) problems.push("may not contain '/'")
  if (name.includes("%")) problems.push("may not contain '%'")
  return problems
}

// ---------------------------------------------------------------------------
// IP addresses, as `ParseIPSloppy` (k8s.io/utils/net) reads them: the ParseIP of Go
// 1.16, kept by Kubernetes because addresses stored before Go 1.17 refused leading
// zeros ("010.0.0.1") must still read back. Being that old, it reads a number by its
// value, not its digits: "0000f::" is as good an IPv6 address as "f::".
// ---------------------------------------------------------------------------

/** A dotted quad: four decimal numbers of at most 255, leading zeros allowed. */
const isDottedQuad = (text: string): boolean => {
  const fields = text.split(".")
  return fields.length === 4 && fields.every((field) => /^[0-9]+$/.test(field) && Number(field) <= 255)
}

/**
 * An IPv6 address: up to eight hex numbers of at most ffff, one `::` standing for at
 * least one zero group, and a dotted quad allowed only in the last 32 bits. A zone
 * (`%eth0`) is not part of the grammar.
 */
const isIPv6 = (text: string): boolean => {
  let rest = text
  let filled = 0 // bytes of the 16 the groups so far account for
  let elided = false
  if (rest.startsWith("::")) {
    elided = true
    rest = rest.slice(2)
    if (rest === "") return true
  }
  while (filled < 16) {
    const digits = /^[0-9A-Fa-f]*/.exec(rest)?.[0] ?? ""
    if (digits.length === 0 || Number.parseInt(digits, 16) > 0xffff) return false
    if (rest[digits.length] === ".") {
      // The quad takes two groups' room: it must end the address, with room for it.
      if ((!elided && filled !== 12) || filled + 4 > 16 || !isDottedQuad(rest)) return false
      filled += 4
      rest = ""
      break
    }
    filled += 2
    rest = rest.slice(digits.length)
    if (rest === "") break
    if (!rest.startsWith(":") || rest.length === 1) return false
    rest = rest.slice(1)
    if (rest.startsWith(":")) {
      if (elided) return false
      elided = true
      rest = rest.slice(1)
      if (rest === "") break
    }
  }
  if (rest !== "") return false
  // Short of 16 bytes needs a `::` to fill; a full address must not have one.
  return filled < 16 ? elided : !elided
}

/**
 * Whether the server's IP parser (`ParseIPSloppy`) reads `value` as an IPv4 or IPv6
 * address. The first `.` or `:` decides which of the two the text is read as.
 */
export const isIPAddress = (value: string): boolean => {
  const first = /[.:]/.exec(value)?.[0]
  if (first === ".") return isDottedQuad(value)
  if (first === ":") return isIPv6(value)
  return false
}
