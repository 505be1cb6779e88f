/** `isUnprogrammed`, which the CLI's exit code rests on: only a terminal route event that is not served counts. */
import { describe, expect, it } from "@effect/vitest"
import { isUnprogrammed } from "../../src/runner/SessionRunner.js"

describe("isUnprogrammed", () => {
  it("is true only for a route event that ended unprogrammed", () => {
    const route = { type: "route", port: 8080, host: "8080-s.example.com" } as const
    expect(isUnprogrammed({ ...route, state: "unprogrammed", reason: "refused" })).toBe(true)
    expect(isUnprogrammed({ ...route, state: "programmed" })).toBe(false)
    expect(isUnprogrammed({ ...route, state: "pending" })).toBe(false)
    expect(isUnprogrammed({ type: "read-error", reason: "forbidden" })).toBe(false)
    expect(isUnprogrammed({ type: "published", layer: "ingress", routes: [], endpoints: [] })).toBe(false)
  })
})
