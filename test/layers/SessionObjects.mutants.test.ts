/**
 * `serverDidNotAnswer`, which decides whether unpublish stops early: only a server
 * that is not there ends the attempt, never one that answered with an error.
 */
import { describe, expect, it } from "@effect/vitest"
import { serverDidNotAnswer } from "../../src/layers/internal/SessionObjects.js"
import { Transport, Unavailable } from "../../src/services/KubeError.js"

describe("serverDidNotAnswer", () => {
  it.each(["no-answer", "refused", "dns"] as const)(
    "is true for a transport failure of kind %s, whatever its words",
    (kind) => {
      expect(serverDidNotAnswer(new Transport({ reason: "something went wrong", kind }))).toBe(true)
    }
  )

  it.each(["tls", "other"] as const)("is false for a transport failure of kind %s with no telling words", (kind) => {
    expect(serverDidNotAnswer(new Transport({ reason: "socket hang up", kind }))).toBe(false)
  })

  it("reads the words of a transport failure that carries no kind", () => {
    expect(serverDidNotAnswer(new Transport({ reason: "connect ECONNREFUSED 127.0.0.1:6443" }))).toBe(true)
    expect(serverDidNotAnswer(new Transport({ reason: "socket hang up" }))).toBe(false)
  })

  it("is false for an answer, even one whose words say no answer", () => {
    expect(serverDidNotAnswer(new Unavailable({ reason: "the upstream gave no answer" }))).toBe(false)
  })
})
