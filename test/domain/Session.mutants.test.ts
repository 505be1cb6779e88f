/**
 * Port bounds that mutation testing found unchecked: both ends of 1..65535 are
 * valid ports, through `parsePorts` (the library's spec) and not only the CLI's
 * `parsePortSpec`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parsePorts } from "../../src/domain/Session.js"

describe("parsePorts at the ends of the port range", () => {
  it("parsePorts accepts 65535", () => {
    const ports = [{ port: 65535, protocol: "tcp" }]
    expect(parsePorts(ports)).toEqual(Either.right(ports))
  })

  it("parsePorts accepts 1", () => {
    const ports = [{ port: 1, protocol: "udp" }]
    expect(parsePorts(ports)).toEqual(Either.right(ports))
  })

  it("parsePorts refuses 65536, naming it", () => {
    expect(parsePorts([{ port: 65536, protocol: "tcp" }])).toEqual(Either.left("port 65536 is outside 1..65535"))
  })
})
