/**
 * LocalCluster's own copy of the API server's string rules: each rule's messages
 * written out as the server prints them, and a check that the library's rules of the
 * same name answer the same, so a mistake in either shows as a disagreement.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Library from "session-routing/kubernetes"
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
} from "../src/internal/nameRules.js"

// The server's messages, spelled out rather than built, so the expected text does not
// share a mistake with the code. The two spaces after each example's comma are the
// server's own.
const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
const WILDCARD =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const QUALIFIED =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const PORT_CHARS = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
const PORT_LETTER = "must contain at least one letter (a-z)"
const PORT_DOUBLE_HYPHEN = "must not contain consecutive hyphens"
const PORT_HYPHEN_END = "must not begin or end with a hyphen"

const tooLong = (limit: number) => `must be no more than ${limit} characters`
// Label keys and values: apimachinery's content package (since 1.35) counts and says bytes.
const tooManyBytes = (limit: number) => `must be no more than ${limit} bytes`

/** A valid DNS subdomain of exactly `length` characters (labels of one letter). */
const subdomainOfLength = (length: number) => "a.".repeat((length - 1) / 2) + "a"

describe("regexError", () => {
  it("puts each example in quotes followed by a comma and joins them with ' or '", () => {
    expect(regexError("bad", "x+", "a", "b")).toBe("bad (e.g. 'a',  or 'b', regex used for validation is 'x+')")
    expect(regexError("bad", "x+", "a")).toBe("bad (e.g. 'a', regex used for validation is 'x+')")
  })

  it("names only the regex when there is no example", () => {
    expect(regexError("Invalid path", HTTP_PATH_FMT)).toBe(
      "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"
    )
  })
})

describe("byteLength", () => {
  it("counts UTF-8 bytes, as Go's len does", () => {
    expect(["", "abc", "é", "日本", "😀"].map(byteLength)).toEqual([0, 3, 2, 6, 4])
  })
})

describe("HTTP_PATH", () => {
  it("accepts RFC 3986 path characters and nothing else", () => {
    expect(["foo", "foo/bar", "a-b._~%20!$&'()*+,;=:"].map((p) => HTTP_PATH.test(p))).toEqual([true, true, true])
    expect(["", "foo bar", "foo?bar", "foo#bar", "fü"].map((p) => HTTP_PATH.test(p))).toEqual([
      false,
      false,
      false,
      false,
      false
    ])
  })
})

describe("isDns1123Label", () => {
  it("accepts lowercase alphanumerics and inner hyphens up to 63 characters", () => {
    expect(isDns1123Label("my-name")).toEqual([])
    expect(isDns1123Label("123-abc")).toEqual([])
    expect(isDns1123Label("a".repeat(63))).toEqual([])
  })

  it("refuses uppercase and edge hyphens with the label message", () => {
    expect(isDns1123Label("A")).toEqual([LABEL])
    expect(isDns1123Label("-a")).toEqual([LABEL])
    expect(isDns1123Label("a-")).toEqual([LABEL])
    expect(isDns1123Label("")).toEqual([LABEL])
  })

  it("says only that dots are wrong when the name would be a good subdomain", () => {
    expect(isDns1123Label("a.b")).toEqual(["must not contain dots"])
    expect(isDns1123Label("a..b")).toEqual([LABEL])
  })

  it("reports the length and the pattern separately, measuring bytes", () => {
    expect(isDns1123Label("a".repeat(64))).toEqual([tooLong(63)])
    expect(isDns1123Label(subdomainOfLength(65))).toEqual([tooLong(63), "must not contain dots"])
    // 32 characters but 64 bytes.
    expect(isDns1123Label("é".repeat(32))).toEqual([tooLong(63), LABEL])
  })
})

describe("isDns1123Subdomain", () => {
  it("accepts dotted lowercase labels up to 253 characters", () => {
    expect(isDns1123Subdomain("example.com")).toEqual([])
    expect(isDns1123Subdomain(subdomainOfLength(253))).toEqual([])
  })

  it("refuses empty labels, uppercase and underscores", () => {
    expect(isDns1123Subdomain("a..b")).toEqual([SUBDOMAIN])
    expect(isDns1123Subdomain(".a")).toEqual([SUBDOMAIN])
    expect(isDns1123Subdomain("Example.com")).toEqual([SUBDOMAIN])
    expect(isDns1123Subdomain("my_name")).toEqual([SUBDOMAIN])
  })

  it("refuses more than 253 characters, with the pattern message too when that also fails", () => {
    expect(isDns1123Subdomain(subdomainOfLength(255))).toEqual([tooLong(253)])
    expect(isDns1123Subdomain("-".repeat(254))).toEqual([tooLong(253), SUBDOMAIN])
  })
})

describe("isDns1035Label", () => {
  it("accepts a label that starts with a letter", () => {
    expect(isDns1035Label("my-name")).toEqual([])
    expect(isDns1035Label("abc-123")).toEqual([])
  })

  it("refuses a leading digit, a trailing hyphen and dots", () => {
    expect(isDns1035Label("1abc")).toEqual([DNS1035])
    expect(isDns1035Label("abc-")).toEqual([DNS1035])
    expect(isDns1035Label("a.b")).toEqual([DNS1035])
  })

  it("refuses more than 63 characters", () => {
    expect(isDns1035Label("a".repeat(64))).toEqual([tooLong(63)])
  })
})

describe("isWildcardDns1123Subdomain", () => {
  it("accepts '*.' followed by a subdomain, up to 253 characters in all", () => {
    expect(isWildcardDns1123Subdomain("*.example.com")).toEqual([])
    expect(isWildcardDns1123Subdomain(`*.${subdomainOfLength(251)}`)).toEqual([])
  })

  it("refuses a bare name, a second wildcard and a lone star", () => {
    expect(isWildcardDns1123Subdomain("example.com")).toEqual([WILDCARD])
    expect(isWildcardDns1123Subdomain("*.*.example.com")).toEqual([WILDCARD])
    expect(isWildcardDns1123Subdomain("*")).toEqual([WILDCARD])
    expect(isWildcardDns1123Subdomain("f*.example.com")).toEqual([WILDCARD])
  })

  it("refuses more than 253 characters", () => {
    expect(isWildcardDns1123Subdomain(`*.${subdomainOfLength(253)}`)).toEqual([tooLong(253)])
  })
})

describe("isQualifiedName", () => {
  it("accepts a name with or without a subdomain prefix", () => {
    expect(isQualifiedName("MyName")).toEqual([])
    expect(isQualifiedName("my.name_x-1")).toEqual([])
    expect(isQualifiedName("example.com/MyName")).toEqual([])
    expect(isQualifiedName("a".repeat(63))).toEqual([])
  })

  it("judges the prefix and the name each, so one key can earn several messages", () => {
    expect(isQualifiedName("/MyName")).toEqual(["prefix part must be non-empty"])
    expect(isQualifiedName("Example.com/-x")).toEqual([`prefix part ${SUBDOMAIN}`, `name part ${QUALIFIED}`])
    expect(isQualifiedName("example.com/")).toEqual(["name part must be non-empty", `name part ${QUALIFIED}`])
    expect(isQualifiedName("")).toEqual(["name part must be non-empty", `name part ${QUALIFIED}`])
    expect(isQualifiedName("-a")).toEqual([`name part ${QUALIFIED}`])
  })

  it("refuses more than one slash with a single message", () => {
    expect(isQualifiedName("a/b/c")).toEqual([
      `a valid label key ${QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ])
  })

  it("bounds the name at 63 bytes and the prefix at 253, saying bytes as the content package does", () => {
    expect(isQualifiedName("a".repeat(64))).toEqual([`name part ${tooManyBytes(63)}`])
    expect(isQualifiedName(`${subdomainOfLength(255)}/a`)).toEqual([`prefix part ${tooManyBytes(253)}`])
  })
})

describe("isValidLabelValue", () => {
  it("accepts the empty string and alphanumeric-ended values", () => {
    expect(isValidLabelValue("")).toEqual([])
    expect(isValidLabelValue("MyValue")).toEqual([])
    expect(isValidLabelValue("my_value.1-x")).toEqual([])
  })

  it("refuses edge punctuation, slashes and spaces", () => {
    expect(isValidLabelValue("-a")).toEqual([LABEL_VALUE])
    expect(isValidLabelValue("a/b")).toEqual([LABEL_VALUE])
    expect(isValidLabelValue("a b")).toEqual([LABEL_VALUE])
  })

  it("refuses more than 63 bytes, saying bytes as the content package does", () => {
    expect(isValidLabelValue("a".repeat(64))).toEqual([tooManyBytes(63)])
    expect(isValidLabelValue("-".repeat(64))).toEqual([tooManyBytes(63), LABEL_VALUE])
  })
})

describe("isValidPortNum", () => {
  it("accepts 1 to 65535 and refuses the rest", () => {
    expect([1, 80, 65535].map(isValidPortNum)).toEqual([[], [], []])
    expect([0, -1, 65536].map(isValidPortNum)).toEqual([
      ["must be between 1 and 65535, inclusive"],
      ["must be between 1 and 65535, inclusive"],
      ["must be between 1 and 65535, inclusive"]
    ])
  })
})

describe("isValidPortName", () => {
  it("accepts IANA service names", () => {
    expect(isValidPortName("http")).toEqual([])
    expect(isValidPortName("h2c")).toEqual([])
    expect(isValidPortName("web-8080")).toEqual([])
    expect(isValidPortName("a".repeat(15))).toEqual([])
  })

  it("reports every rule a name breaks, in the server's order", () => {
    expect(isValidPortName("80")).toEqual([PORT_LETTER])
    expect(isValidPortName("HTTP")).toEqual([PORT_CHARS, PORT_LETTER])
    expect(isValidPortName("")).toEqual([PORT_CHARS, PORT_LETTER])
    expect(isValidPortName("-")).toEqual([PORT_LETTER, PORT_HYPHEN_END])
    expect(isValidPortName("--")).toEqual([PORT_LETTER, PORT_DOUBLE_HYPHEN, PORT_HYPHEN_END])
    expect(isValidPortName("a--b")).toEqual([PORT_DOUBLE_HYPHEN])
    expect(isValidPortName("http-")).toEqual([PORT_HYPHEN_END])
  })

  it("refuses more than 15 characters", () => {
    expect(isValidPortName("a-long-port-name")).toEqual([tooLong(15)])
    expect(isValidPortName("A-LONG-PORT-NAME")).toEqual([tooLong(15), PORT_CHARS, PORT_LETTER])
  })
})

describe("isValidPathSegmentName", () => {
  it("accepts any other name, the empty one included (other rules refuse that)", () => {
    expect(isValidPathSegmentName("system:admin")).toEqual([])
    expect(isValidPathSegmentName("...")).toEqual([])
    expect(isValidPathSegmentName("")).toEqual([])
  })

  it("refuses '.' and '..' alone, and '/' or '%' anywhere", () => {
    expect(isValidPathSegmentName(".")).toEqual(["may not be '.'"])
    expect(isValidPathSegmentName("..")).toEqual(["may not be '..'"])
    expect(isValidPathSegmentName("a/b")).toEqual(["may not contain '/'"])
    expect(isValidPathSegmentName("a%/b")).toEqual(["may not contain '/'", "may not contain '%'"])
  })
})

describe("isIPAddress", () => {
  const parses = (values: ReadonlyArray<string>) => Object.fromEntries(values.map((v) => [v, isIPAddress(v)]))

  it("reads IPv4 and IPv6 addresses, compressed and with an IPv4 tail", () => {
    const valid = [
      "10.0.0.1",
      "0.0.0.0",
      "255.255.255.255",
      "::",
      "::1",
      "1::",
      "2001:db8::ffff",
      "1:2:3:4:5:6:7:8",
      "1:2:3:4:5:6:7::",
      "::ffff:10.0.0.1",
      "1:2:3:4:5:6:1.2.3.4",
      "1:2:3:4:5::1.2.3.4",
      "ABCD::EF01"
    ]
    expect(parses(valid)).toEqual(Object.fromEntries(valid.map((v) => [v, true])))
  })

  it("reads leading zeros in a dotted quad, as addresses stored by older servers have them", () => {
    const valid = ["010.0.0.1", "1.2.3.004", "00000000001.2.3.4", "::0001.2.3.4", "::ffff:010.0.0.1"]
    expect(parses(valid)).toEqual(Object.fromEntries(valid.map((v) => [v, true])))
  })

  it("reads an IPv6 group by its value, so zero padding past four digits is allowed", () => {
    const valid = ["0000f::", "00001::", "::00001", "1:2:3:4:5:6:7:00008", "000000000000000000ffff::1"]
    expect(parses(valid)).toEqual(Object.fromEntries(valid.map((v) => [v, true])))
    expect(parses(["12345::", "10000::"])).toEqual({ "12345::": false, "10000::": false })
  })

  it("refuses names, bad numbers, misplaced tails, zones and malformed groups", () => {
    const invalid = [
      "",
      "host.example.com",
      "256.0.0.1",
      "1.2.3",
      "1.2.3.4.5",
      "1..2.3",
      "1.2.3.4/24",
      ":",
      ":::",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:8::",
      "::1:2:3:4:5:6:7:8",
      "1:2:3:4:5:6:7:8:",
      ":1:2:3:4:5:6:7:8",
      "12345::",
      "g::1",
      "fe80::1%eth0",
      "1:2:3:4:5:1.2.3.4",
      "1:2:3:4:5:6:7:1.2.3.4",
      "::1.2.3.4:5",
      "1.2.3.4::",
      "::1a.2.3.4",
      "::0000a.1.1.1"
    ]
    expect(parses(invalid)).toEqual(Object.fromEntries(invalid.map((v) => [v, false])))
  })
})

describe("LocalCluster's rules and the library's", () => {
  // Varied on purpose: every boundary, every rule's odd branch, and non-ASCII text.
  const inputs: ReadonlyArray<string> = [
    "",
    "a",
    "A",
    "my-name",
    "123-abc",
    "-a",
    "a-",
    "a_b",
    "a.b",
    "a..b",
    ".a",
    "a.",
    "example.com",
    "Example.com",
    "*.example.com",
    "*.*.example.com",
    "*",
    "*.",
    "MyName",
    "my.name",
    "example.com/MyName",
    "example.com/",
    "/MyName",
    "a/b/c",
    "Example.com/-x",
    "a".repeat(63),
    "a".repeat(64),
    `${"a".repeat(254)}/n`,
    subdomainOfLength(253),
    subdomainOfLength(255),
    `*.${subdomainOfLength(253)}`,
    "é",
    "é".repeat(32),
    "ünïcode-名前",
    "http",
    "h2c",
    "80",
    "-",
    "--",
    "a--b",
    "HTTP",
    "a-long-port-name",
    ".",
    "..",
    "...",
    "a/b%c",
    "spaces in it",
    "tab\there",
    "trailing\n",
    "10.0.0.1",
    "010.0.0.1",
    "256.0.0.1",
    "1.2.3.4.5",
    "::",
    "::1",
    "::ffff:10.0.0.1",
    "::0001.2.3.4",
    "2001:db8::ffff",
    "1:2:3:4:5:6:1.2.3.4",
    "1:2:3:4:5:6:7:8::",
    "fe80::1%eth0",
    "1::2::3",
    "12345::"
  ]

  const stringRules = [
    "isDns1035Label",
    "isDns1123Label",
    "isDns1123Subdomain",
    "isWildcardDns1123Subdomain",
    "isQualifiedName",
    "isValidLabelValue",
    "isValidPathSegmentName",
    "isValidPortName"
  ] as const
  const ours = {
    isDns1035Label,
    isDns1123Label,
    isDns1123Subdomain,
    isWildcardDns1123Subdomain,
    isQualifiedName,
    isValidLabelValue,
    isValidPathSegmentName,
    isValidPortName
  }

  // A whole table per rule, so a disagreement names the input it is about.
  const table = <A>(rule: (input: string) => A) => Object.fromEntries(inputs.map((input) => [input, rule(input)]))

  it.each(stringRules)("%s answers every input as the library does", (name) => {
    expect(table(ours[name])).toEqual(table(Library[name]))
  })

  it("isIPAddress reads every input as the library does", () => {
    expect(table(isIPAddress)).toEqual(table(Library.isIPAddress))
  })

  // The server's parser (ParseIPSloppy, Go 1.16's ParseIP) reads an IPv6 group by its
  // value, so "00001::" is an address to it (and "10000::" is not).
  it("isIPAddress reads a zero-padded IPv6 group by its value, as the server and the library do", () => {
    const padded = ["0000f::", "00001::", "1:2:3:4:5:6:7:00008", "10000::", "0000g::"]
    expect(padded.map(isIPAddress)).toEqual([true, true, true, false, false])
    expect(padded.map(Library.isIPAddress)).toEqual(padded.map(isIPAddress))
  })

  it("isValidPortNum answers every number as the library does", () => {
    const ports = [-1, 0, 1, 80, 443, 65535, 65536, 1.5, Number.NaN]
    expect(ports.map(isValidPortNum)).toEqual(ports.map(Library.isValidPortNum))
  })

  it("byteLength, regexError and the HTTP path rule agree with the library's", () => {
    expect(inputs.map(byteLength)).toEqual(inputs.map(Library.byteLength))
    expect(regexError("m", "f", "a", "b", "c")).toBe(Library.regexError("m", "f", "a", "b", "c"))
    expect(regexError("m", "f")).toBe(Library.regexError("m", "f"))
    expect(HTTP_PATH_FMT).toBe(Library.HTTP_PATH_FMT)
    expect(inputs.map((i) => HTTP_PATH.test(i))).toEqual(inputs.map((i) => Library.HTTP_PATH.test(i)))
  })
})
