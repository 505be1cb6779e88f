/**
 * Session ids and ports: what is refused, and that the refusal names the value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { OBJECT_PREFIX, parsePorts, parsePortSpec, parseSessionId, sessionIdProblem } from "../../src/domain/Session.js"
import { isDns1035Label, isDns1123Label, isDns1123Subdomain } from "../../src/domain/Validation.js"

/** 63 − `telo-run-` − `-` − five port digits. */
const LONGEST_ID = 63 - OBJECT_PREFIX.length - 1 - 5

describe("sessionIdProblem", () => {
  it.each(["abc", "a", "0", "hzyayvabgyvz", "a-b-c", "123", "a".repeat(LONGEST_ID)])("accepts %s", (id) => {
    expect(sessionIdProblem(id)).toBeUndefined()
    expect(parseSessionId(id)).toEqual(Either.right(id))
  })

  it("refuses an empty id", () => {
    expect(sessionIdProblem("")).toBe("a session id may not be empty")
  })

  it.each(["Abc", "a_b", "a.b", "-ab", "ab-", "a b", "ä"])("refuses %s, naming it", (id) => {
    expect(sessionIdProblem(id)).toBe(
      `session id "${id}" must be lower-case letters, digits and '-', starting and ending with a letter or digit`
    )
  })

  it("allows 48 characters, because the longest derived name must stay a 63-character label", () => {
    expect(LONGEST_ID).toBe(48)
    const id = "a".repeat(LONGEST_ID)
    // Every name derived from the longest id is still valid where the server checks it.
    expect(`${OBJECT_PREFIX}${id}-65535`).toHaveLength(63)
    expect(isDns1123Label(`${OBJECT_PREFIX}${id}-65535`)).toEqual([])
    expect(isDns1123Label(`65535-${id}`)).toEqual([])
    expect(isDns1035Label(`${OBJECT_PREFIX}${id}`)).toEqual([])
    expect(isDns1123Subdomain(`${OBJECT_PREFIX}${id}-65535`)).toEqual([])
  })

  it("refuses 49 characters, naming the id, the limit and why", () => {
    const id = "a".repeat(LONGEST_ID + 1)
    expect(sessionIdProblem(id)).toBe(
      `session id "${id}" is 49 characters; at most 48 fit, because the HTTPRoute name "telo-run-${id}-<port>" must be at most 63 characters`
    )
  })

  it("starts every Service name with a letter, so an id may start with a digit", () => {
    expect(sessionIdProblem("1abc")).toBeUndefined()
    expect(isDns1035Label(`${OBJECT_PREFIX}1abc`)).toEqual([])
  })

  it("gives parseSessionId the same reason", () => {
    expect(parseSessionId("Abc")).toEqual(Either.left(sessionIdProblem("Abc")))
    expect(parseSessionId("")).toEqual(Either.left("a session id may not be empty"))
  })
})

describe("parsePortSpec", () => {
  it.each(
    [
      ["8080", { port: 8080, protocol: "tcp" }],
      ["8080/tcp", { port: 8080, protocol: "tcp" }],
      ["5000/udp", { port: 5000, protocol: "udp" }],
      ["5000/UDP", { port: 5000, protocol: "udp" }],
      [" 80 ", { port: 80, protocol: "tcp" }],
      ["1", { port: 1, protocol: "tcp" }],
      ["65535/tcp", { port: 65535, protocol: "tcp" }]
    ] as const
  )("reads %j", (spec, expected) => {
    expect(parsePortSpec(spec)).toEqual(Either.right(expected))
  })

  it.each([
    ["0", "port \"0\": 0 is outside 1..65535"],
    ["65536", "port \"65536\": 65536 is outside 1..65535"],
    ["99999/udp", "port \"99999/udp\": 99999 is outside 1..65535"],
    ["80/sctp", "port \"80/sctp\": protocol \"sctp\" is not tcp or udp"],
    ["123456", "port \"123456\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"],
    ["http", "port \"http\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"],
    ["80/", "port \"80/\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"],
    ["80/tcp/x", "port \"80/tcp/x\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"],
    ["-80", "port \"-80\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"],
    ["", "port \"\" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)"]
  ])("refuses %j, naming it", (spec, reason) => {
    expect(parsePortSpec(spec)).toEqual(Either.left(reason))
  })
})

describe("parsePorts", () => {
  it("accepts distinct ports, and one port open as both tcp and udp", () => {
    const ports = [
      { port: 8080, protocol: "tcp" },
      { port: 53, protocol: "tcp" },
      { port: 53, protocol: "udp" }
    ]
    expect(parsePorts(ports)).toEqual(Either.right(ports))
  })

  it("accepts both ends of the port range, 1 and 65535", () => {
    const highest = [{ port: 65535, protocol: "tcp" }]
    expect(parsePorts(highest)).toEqual(Either.right(highest))
    const lowest = [{ port: 1, protocol: "udp" }]
    expect(parsePorts(lowest)).toEqual(Either.right(lowest))
  })

  it("accepts no ports: a reload may drop them all", () => {
    expect(parsePorts([])).toEqual(Either.right([]))
  })

  it("refuses a (port, protocol) pair listed twice, naming it", () => {
    expect(
      parsePorts([
        { port: 8080, protocol: "tcp" },
        { port: 8080, protocol: "tcp" }
      ])
    ).toEqual(Either.left("port 8080/tcp is listed twice; each port/protocol pair may appear once"))
  })

  it.each([
    [{ port: 0, protocol: "tcp" }, "port 0 is outside 1..65535"],
    [{ port: 65536, protocol: "tcp" }, "port 65536 is outside 1..65535"],
    [{ port: 70000, protocol: "udp" }, "port 70000 is outside 1..65535"],
    [{ port: 80.5, protocol: "tcp" }, "Expected an integer, actual 80.5"],
    // Both protocols are named: the bare literal union said only `Expected "tcp"`.
    [{ port: 80, protocol: "sctp" }, "protocol \"sctp\" is not tcp or udp"],
    [{ port: 80, protocol: "TCP" }, "protocol \"TCP\" is not tcp or udp"]
  ])("refuses %j, naming the bad value", (mapping, reason) => {
    expect(parsePorts([mapping])).toEqual(Either.left(reason))
  })

  it("refuses something that is not a port mapping, naming it", () => {
    expect(parsePorts(["8080"])).toEqual(
      Either.left("Expected { readonly port: PortNumber; readonly protocol: \"tcp\" | \"udp\" }, actual \"8080\"")
    )
  })

  it("names the field a mapping lacks", () => {
    // Without the field's own message the refusal read just "is missing".
    expect(parsePorts([{ port: 8080 }])).toEqual(Either.left("a port mapping needs a protocol (tcp or udp)"))
    expect(parsePorts([{ protocol: "tcp" }])).toEqual(Either.left("a port mapping needs a port"))
  })
})
