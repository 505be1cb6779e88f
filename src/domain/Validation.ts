/**
 * apimachinery's string rules (k8s.io/apimachinery/pkg/util/validation): DNS labels
 * and subdomains, qualified names, label values, ports, IP addresses. Each returns
 * the problems the API server would print, worded as it words them; the library
 * checks names with them before it builds objects, and LocalCluster validates with them.
 */

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`
export const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"

const anchored = (fmt: string): RegExp => new RegExp(`^${fmt}$`)
const DNS1123_LABEL = anchored(DNS1123_LABEL_FMT)
const DNS1123_SUBDOMAIN = anchored(DNS1123_SUBDOMAIN_FMT)
const DNS1035_LABEL = anchored(DNS1035_LABEL_FMT)
const WILDCARD_DNS1123_SUBDOMAIN = anchored(WILDCARD_DNS1123_SUBDOMAIN_FMT)
const QUALIFIED_NAME = anchored(QUALIFIED_NAME_FMT)
const LABEL_VALUE = anchored(LABEL_VALUE_FMT)
export const HTTP_PATH = anchored(HTTP_PATH_FMT)

/** Go's `len(s)`: the server measures names in UTF-8 bytes, not characters. */
export const byteLength = (value: string): number => {
  let n = 0
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0
    n += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
  }
  return n
}

const maxLenError = (length: number): string => `must be no more than ${length} characters`
/** Label keys and values (apimachinery's content package since 1.35) count in bytes, and say so. */
const maxBytesError = (length: number): string => `must be no more than ${length} bytes`

export const regexError = (msg: string, fmt: string, ...examples: ReadonlyArray<string>): string =>
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
export const isDns1123Subdomain = (value: string): ReadonlyArray<string> => subdomainProblems(value, maxLenError)

/** A DNS subdomain's problems, its length said by `tooLong`. */
const subdomainProblems = (value: string, tooLong: (length: number) => string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 253) errs.push(tooLong(253))
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
    else errs.push(...subdomainProblems(prefix, maxBytesError).map((m) => `prefix part ${m}`))
  } else {
    return [
      `a valid label key ${nameMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ]
  }
  if (name.length === 0) errs.push("name part must be non-empty")
  else if (byteLength(name) > 63) errs.push(`name part ${maxBytesError(63)}`)
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${nameMsg}`)
  return errs
}

/** `IsValidLabelValue`: empty, or ≤63 with alphanumeric ends and `-_.` inside. */
export const isValidLabelValue = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (byteLength(value) > 63) errs.push(maxBytesError(63))
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
export const isValidPathSegmentName = (name: string): ReadonlyArray<string> => {
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
    } else if (/^[0-9a-fA-F]+$/.test(group) && Number.parseInt(group, 16) <= 0xffff) {
      // Read by its value, leading zeros and all ("00001"), as the server's parser does.
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
