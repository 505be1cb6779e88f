/**
 * apimachinery's string rules on their own, at their edges, with the problems worded
 * as the API server prints them: lengths counted in UTF-8 bytes, one past each limit,
 * each rule's own message and regex, qualified names' prefix and name parts, IANA port
 * names, path segments, and IP addresses with `::` and an IPv4 tail. Names, labels and
 * ports are also checked through the objects LocalCluster validates
 * (packages/local-cluster/test/Validation.test.ts) and the session ids and hosts the
 * domain builds (Session.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  byteLength,
  HTTP_PATH,
  HTTP_PATH_FMT,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isIPAddress,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDns1123Subdomain,
  regexError
} from "../../src/domain/Validation.js"

const LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const SUBDOMAIN_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const subdomainError =
  `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN_FMT}')`
const qualifiedNameError =
  `must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME_FMT}')`

describe("lengths counted in UTF-8 bytes", () => {
  it("counts each code point in the bytes UTF-8 writes it in", () => {
    expect(["a", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff", "\u{10000}", "é€😀", ""].map(byteLength)).toEqual([
      1,
      1,
      2,
      2,
      3,
      3,
      4,
      9,
      0
    ])
  })

  it("measures a name's limit in bytes: 32 two-byte letters are too long for a label", () => {
    expect(isValidLabelValue("é".repeat(32))).toContain("must be no more than 63 bytes")
  })
})

describe("how a refusal by regex is worded", () => {
  it("writes the regex alone, or after examples joined as Go joins them", () => {
    expect(regexError("bad", "x+")).toBe("bad (regex used for validation is 'x+')")
    expect(regexError("bad", "x+", "x", "xx")).toBe("bad (e.g. 'x',  or 'xx', regex used for validation is 'x+')")
  })
})

describe("DNS names", () => {
  it("takes a 63-byte label and refuses a 64-byte one", () => {
    expect(isDns1123Label("a".repeat(63))).toEqual([])
    expect(isDns1123Label("a".repeat(64))).toEqual(["must be no more than 63 characters"])
  })

  it("says a subdomain is not a label because of its dots, and words any other refusal with the regex", () => {
    expect(isDns1123Label("a.b")).toEqual(["must not contain dots"])
    expect(isDns1123Label(`${"a.".repeat(32)}a`)).toEqual([
      "must be no more than 63 characters",
      "must not contain dots"
    ])
    expect(isDns1123Label("A_b")).toEqual([
      `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL_FMT}')`
    ])
    expect(isDns1123Label("a-")).toHaveLength(1)
    expect(isDns1123Label("0-a")).toEqual([])
  })

  it("takes a 253-byte subdomain and refuses a 254-byte one or an empty label", () => {
    expect(isDns1123Subdomain("a".repeat(253))).toEqual([])
    expect(isDns1123Subdomain("a".repeat(254))).toEqual(["must be no more than 253 characters"])
    expect(isDns1123Subdomain("a..b")).toEqual([subdomainError])
    expect(isDns1123Subdomain("a.b-c.d")).toEqual([])
  })

  it("refuses a DNS-1035 label that starts with a digit or is too long", () => {
    expect(isDns1035Label("a1")).toEqual([])
    expect(isDns1035Label("1a")).toEqual([
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ])
    expect(isDns1035Label("a".repeat(63))).toEqual([])
    expect(isDns1035Label("a".repeat(64))).toEqual(["must be no more than 63 characters"])
  })

  it("takes only `*.` and a subdomain as a wildcard, up to 253 bytes", () => {
    expect(isWildcardDns1123Subdomain("*.example.com")).toEqual([])
    expect(isWildcardDns1123Subdomain("example.com")).toEqual([
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ])
    expect(isWildcardDns1123Subdomain("x*.example.com")).toHaveLength(1)
    expect(isWildcardDns1123Subdomain(`*.${"a".repeat(251)}`)).toEqual([])
    expect(isWildcardDns1123Subdomain(`*.${"a".repeat(252)}`)).toEqual(["must be no more than 253 characters"])
  })
})

describe("qualified names", () => {
  it("takes a name with or without a subdomain prefix", () => {
    expect(isQualifiedName("My_name.x")).toEqual([])
    expect(isQualifiedName("example.com/My_name.x")).toEqual([])
    expect(isQualifiedName("a".repeat(63))).toEqual([])
  })

  it("refuses more than one slash with the whole rule", () => {
    expect(isQualifiedName("a/b/c")).toEqual([
      `a valid label key ${qualifiedNameError} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ])
  })

  it("names the prefix part's problem", () => {
    expect(isQualifiedName("/name")).toEqual(["prefix part must be non-empty"])
    expect(isQualifiedName("Bad_Prefix/name")).toEqual([`prefix part ${subdomainError}`])
  })

  it("names the name part's problem: empty, too long, or against the rule", () => {
    expect(isQualifiedName("")).toEqual(["name part must be non-empty", `name part ${qualifiedNameError}`])
    expect(isQualifiedName("example.com/")).toEqual(["name part must be non-empty", `name part ${qualifiedNameError}`])
    expect(isQualifiedName("a".repeat(64))).toEqual(["name part must be no more than 63 bytes"])
    expect(isQualifiedName("example.com/-a")).toEqual([`name part ${qualifiedNameError}`])
  })
})

describe("label values", () => {
  it("takes an empty value and 63 bytes, refuses 64 and a value with a hyphen at an end", () => {
    expect(isValidLabelValue("")).toEqual([])
    expect(isValidLabelValue("a".repeat(63))).toEqual([])
    expect(isValidLabelValue("a".repeat(64))).toEqual(["must be no more than 63 bytes"])
    expect(isValidLabelValue("-a")).toEqual([
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ])
  })
})

describe("ports", () => {
  it("takes whole numbers from 1 to 65535", () => {
    const refused = ["must be between 1 and 65535, inclusive"]
    expect([0, 1, 65535, 65536, 1.5].map(isValidPortNum)).toEqual([refused, [], [], refused, refused])
  })

  it("names each problem of a port name", () => {
    expect(["http", "a".repeat(15), "a".repeat(16), "HTTP", "80", "a--b", "-a", "a-", ""].map(isValidPortName)).toEqual(
      [
        [],
        [],
        ["must be no more than 15 characters"],
        [
          "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
          "must contain at least one letter (a-z)"
        ],
        ["must contain at least one letter (a-z)"],
        ["must not contain consecutive hyphens"],
        ["must not begin or end with a hyphen"],
        ["must not begin or end with a hyphen"],
        [
          "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
          "must contain at least one letter (a-z)"
        ]
      ]
    )
    expect(isValidPortName("a_b")).toEqual(["must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"])
    expect(isValidPortName("http-8080")).toEqual([])
  })
})

describe("path segment names", () => {
  it("refuses . and .., and names each of / and % a name contains", () => {
    expect([".", "..", "a/b%c", "ok", "a%", "...", ".a"].map(isValidPathSegmentName)).toEqual([
      ["may not be '.'"],
      ["may not be '..'"],
      ["may not contain '/'", "may not contain '%'"],
      [],
      ["may not contain '%'"],
      [],
      []
    ])
  })
})

describe("HTTP paths", () => {
  it("takes a path of URL characters whole, and nothing with a space or angle bracket in it", () => {
    expect(HTTP_PATH_FMT).toBe("[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+")
    expect(["ingress-controller", "a/B_c.~%20!$&'()*+,;=:", "a b", "a<b", "", "x\ny"].map((p) => HTTP_PATH.test(p)))
      .toEqual([true, true, false, false, false, false])
  })
})

describe("IP addresses", () => {
  it.each([
    "10.0.0.1",
    "010.0.0.1",
    "::1",
    "fe80::1",
    "2001:db8::8a2e:370:7334",
    "::ffff:10.0.0.1",
    "1:2:3:4:5:6:7:8",
    "::",
    "1::",
    "::1.2.3.4",
    "1:2:3:4:5:6:1.2.3.4",
    "1::2:3:4:5:6:7",
    "255.255.255.255",
    "ABCD:ef01::1"
  ])("reads %s as an IP address", (value) => expect(isIPAddress(value)).toBe(true))

  it.each([
    "10.0.0",
    "256.0.0.1",
    "a.b.c.d",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "telo.run",
    "fe80::1%eth0",
    "",
    "1.2.3.4.5",
    "1.2.3.-1",
    // Number() reads both, so only the digits-only rule refuses them.
    "1.2.3.1e2",
    "1.2.3.0x10",
    "1.2.3.",
    "1:2:3:4:5:6:7:1.2.3.4",
    "1.2.3.4::",
    "1::2:3:4:5:6:7:8",
    "12345::1",
    "g::1",
    "::ffff:1.2.3.256",
    "1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8:",
    "::1.2.3.4:1",
    "1:2:3:4:5:6:7:8.1",
    "::1.2.3",
    ":::",
    "1:::2"
  ])("does not read %s as one", (value) => expect(isIPAddress(value)).toBe(false))
})
