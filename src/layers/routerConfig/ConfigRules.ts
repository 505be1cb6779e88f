/**
 * The rule of each RouterConfig setting: the valid value, or what would be valid,
 * phrased to follow "must be" so every refusal reads the same way.
 */
import { Either } from "effect"
import { isIP } from "node:net"
import { hostProblem, MAX_HOST_LENGTH, type RoutingMode } from "../../domain/Routes.js"
import { MAX_SESSION_ID_LENGTH } from "../../domain/Session.js"
import { isDns1123Label, isDns1123Subdomain, isValidLabelValue } from "../../domain/Validation.js"

const MAX_LABEL = 63

/**
 * The longest base domain that leaves room for every host: `65535-<longest id>.<domain>`
 * must fit a DNS name. Refusing a longer domain at start-up means no valid session
 * can later fail on its host length.
 */
export const MAX_BASE_DOMAIN_LENGTH = MAX_HOST_LENGTH - "65535-".length - MAX_SESSION_ID_LENGTH - ".".length

/** A rule: the valid value, or what would be valid (phrased to follow "must be"). */
export type Rule<A> = (value: string | number | boolean) => Either.Either<A, string>

const text = (check: (value: string) => string | undefined): Rule<string> => (value) => {
  if (typeof value !== "string") return Either.left("a string")
  const expected = check(value)
  return expected === undefined ? Either.right(value) : Either.left(expected)
}

/** When only the case is wrong, say so: `Example.COM` is a common slip. */
const lowerCaseHint = (value: string, valid: (v: string) => boolean): string =>
  value !== value.toLowerCase() && valid(value.toLowerCase()) ? ` (lower case: "${value.toLowerCase()}")` : ""

/**
 * A fully qualified name (`sessions.example.com.`, as zone files and `dig` write it) is
 * a common slip: hosts are `<port>-<session>.<domain>`, and a host may not end in a dot.
 * Say to drop it, with the value that would pass (`valid` on the name without it).
 */
const trailingDotHint = (value: string, valid: (v: string) => boolean): string => {
  const dropped = value.replace(/\.+$/, "")
  if (dropped === value) return ""
  if (valid(dropped)) return ` (drop the trailing dot: "${dropped}")`
  return valid(dropped.toLowerCase()) ? ` (drop the trailing dot, lower case: "${dropped.toLowerCase()}")` : ""
}

const isDnsLabel = (v: string) => isDns1123Label(v).length === 0
const isDnsSubdomain = (v: string) => isDns1123Subdomain(v).length === 0
/** A name DNS resolves: a subdomain whose every label also fits 63 characters. */
const isDnsName = (v: string) => isDnsSubdomain(v) && v.split(".").every((label) => label.length <= MAX_LABEL)

/**
 * An IPv4 address, or any name whose last label is all digits: no top-level domain
 * is numeric, resolvers treat such a name as an address, and `8080-s1.10.0.0.1` would
 * never resolve. (An IPv6 address already fails the DNS name rule on its ':'.)
 */
const isNumericDomain = (v: string) => /^[0-9]+$/.test(v.split(".").at(-1) ?? "")

export const statusSourceRule: Rule<"watch" | "poll"> = (value) =>
  value === "watch" || value === "poll"
    ? Either.right(value)
    : Either.left("one of watch (one shared watch per routed kind), poll (a read per host per interval)")

export const booleanRule: Rule<boolean> = (value) => {
  const v = typeof value === "string" ? value.trim().toLowerCase() : value
  return v === true || v === "true"
    ? Either.right(true)
    : v === false || v === "false"
    ? Either.right(false)
    : Either.left("true or false")
}

export const probeRule: Rule<"off" | "http" | "https"> = (value) =>
  value === "off" || value === "http" || value === "https"
    ? Either.right(value)
    : Either.left("one of off, http, https")

/**
 * Where a probe connects: an address or a name, without a scheme or a port (the port
 * has its own setting, named by `portSetting`).
 */
export const probeAddressRule = (portSetting: string): Rule<string> =>
  text((v) =>
    isIP(v) !== 0 || isDnsName(v)
      ? undefined
      : `an IP address or a DNS name, without a scheme or a port (${portSetting} sets the port), e.g. 203.0.113.10`
  )

/** Strict digits: `60s`, `1e3` or `60000.5` are NaN rather than read as something else. */
const wholeNumber = (value: string | number | boolean): number =>
  typeof value === "number"
    ? value
    : /^\d+$/.test(String(value).trim())
    ? Number(String(value).trim())
    : Number.NaN

export const portRule: Rule<number> = (value) => {
  const n = wholeNumber(value)
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? Either.right(n) : Either.left("a port number from 1 to 65535")
}

export const modeRule: Rule<RoutingMode> = (value) =>
  value === "ingress" || value === "gateway" || value === "none"
    ? Either.right(value)
    : Either.left("one of ingress, gateway, none")

export const baseDomainRule: Rule<string> = text((v) => {
  if (isNumericDomain(v)) {
    return `a DNS name, not an IP address: session hosts are "<port>-<session>.<domain>", and a last label of digits (${v}) is an address, not a domain. Use a name whose records point at the load balancer, e.g. sessions.example.com`
  }
  if (!isDnsName(v)) {
    return `a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most ${MAX_LABEL} characters) joined by '.', e.g. sessions.example.com${
      lowerCaseHint(v, isDnsName)
    }${trailingDotHint(v, (dropped) => isDnsName(dropped) && !isNumericDomain(dropped))}`
  }
  if (v.length > MAX_BASE_DOMAIN_LENGTH || hostProblem(v, "x".repeat(MAX_SESSION_ID_LENGTH)) !== undefined) {
    return `at most ${MAX_BASE_DOMAIN_LENGTH} characters (it has ${v.length}), so the longest host "65535-<${MAX_SESSION_ID_LENGTH}-character session id>.<domain>" fits in ${MAX_HOST_LENGTH}`
  }
  return undefined
})

/** Object names (IngressClass, Secret, Gateway) are DNS-1123 subdomains. */
export const objectNameRule = (what: string): Rule<string> =>
  text((v) =>
    isDnsSubdomain(v)
      ? undefined
      : `${what}: at most ${MAX_HOST_LENGTH} characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit${
        lowerCaseHint(v, isDnsSubdomain)
      }`
  )

export const namespaceRule: Rule<string> = text((v) =>
  isDnsLabel(v)
    ? undefined
    : `a namespace name (DNS-1123 label): at most ${MAX_LABEL} characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions${
      lowerCaseHint(v, isDnsLabel)
    }`
)

/** Gateway API `SectionName`: the same pattern as a subdomain, at most 253 characters. */
export const sectionRule: Rule<string> = text((v) =>
  isDnsSubdomain(v)
    ? undefined
    : `a listener name: at most ${MAX_HOST_LENGTH} characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit, e.g. https${
      lowerCaseHint(v, isDnsSubdomain)
    }`
)

export const labelValueRule: Rule<string> = text((v) =>
  v.length > 0 && isValidLabelValue(v).length === 0
    ? undefined
    : `a label value: at most ${MAX_LABEL} characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit, e.g. telo-k8s-runner`
)

export const millisecondsRule: Rule<number> = (value) => {
  const n = wholeNumber(value)
  return Number.isSafeInteger(n) && n > 0
    ? Either.right(n)
    : Either.left("a positive whole number of milliseconds, e.g. 60000")
}
