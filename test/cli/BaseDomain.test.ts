/**
 * A base domain refused at start-up says what to change: a fully qualified name
 * (`sessions.example.com.`, as zone files write it) was refused as no DNS name without
 * saying that the trailing dot was all that was wrong.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "./TestCli.js"

const DNS_NAME =
  "a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com"

describe("SESSION_ROUTING_BASE_DOMAIN with a trailing dot", () => {
  const render = (baseDomain: string) =>
    runCli(["render", "--session", "s1", "--port", "8080"], {
      SESSION_ROUTING_BASE_DOMAIN: baseDomain,
      SESSION_INGRESS_CLASS: "nginx"
    })

  it.effect("is refused with the variable, the value, and the name to use without the dot", () =>
    Effect.gen(function*() {
      expect(yield* render("sessions.example.com.")).toEqual({
        exitCode: 1,
        stdout: "",
        stderr:
          `error: invalid configuration: SESSION_ROUTING_BASE_DOMAIN="sessions.example.com." must be ${DNS_NAME} (drop the trailing dot: "sessions.example.com")\n`
      })
    }))

  it.effect("says both fixes when the case is wrong too", () =>
    Effect.gen(function*() {
      expect((yield* render("Sessions.Example.com.")).stderr).toBe(
        `error: invalid configuration: SESSION_ROUTING_BASE_DOMAIN="Sessions.Example.com." must be ${DNS_NAME} (drop the trailing dot, lower case: "sessions.example.com")\n`
      )
    }))

  it.effect("says nothing of the dot when the name would still be refused without it", () =>
    Effect.gen(function*() {
      expect((yield* render("10.0.0.1.")).stderr).toBe(
        `error: invalid configuration: SESSION_ROUTING_BASE_DOMAIN="10.0.0.1." must be ${DNS_NAME}\n`
      )
    }))
})
