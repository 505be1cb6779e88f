/**
 * The time limits of one API call on TestClock: each attempt bounded, the whole call
 * within its budget, a refused connection retried only briefly, failures that never
 * heal not retried at all, and the last evidence named when time runs out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Ref, Schedule } from "effect"
import { callLimits, REFUSED_BUDGET, withinLimits } from "../../src/layers/KubeRetry.js"
import {
  Forbidden,
  isPermanent,
  isTransient,
  NotServed,
  Transport,
  Unauthorized,
  Unavailable
} from "../../src/services/KubeError.js"
import { runFor, scripted } from "../support/ScriptedCalls.js"

const target = { what: `get ingresses.networking.k8s.io "web" in namespace "ns"`, server: "https://api:6443" }
const unavailable = new Unavailable({
  reason: "the API server could not answer get ... (503: etcd is down)",
  code: 503
})
const refused = new Transport({
  reason: "could not get ...: the connection was refused (ECONNREFUSED)",
  kind: "refused"
})
const tls = new Transport({ reason: "could not get ...: the TLS handshake failed (EPROTO)", kind: "tls" })
const dns = new Transport({ reason: "could not get ...: the host name does not resolve (ENOTFOUND)", kind: "dns" })
const unauthorized = new Unauthorized({ reason: "the API server refused the credentials (401)", code: 401 })

/** A fixed, short retry schedule, so the budget (not the schedule) is what ends a call. */
const every100ms = Schedule.spaced(Duration.millis(100))

describe("withinLimits", () => {
  it("gives each attempt half the budget", () => {
    expect(Duration.toMillis(callLimits(20_000).attempt)).toBe(10_000)
    expect(Duration.toMillis(callLimits(20_000).budget)).toBe(20_000)
    expect(Duration.toMillis(callLimits(1).attempt)).toBe(1)
  })

  it.effect("names the call and the whole budget when no attempt ever answered", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* scripted(["hang"])
      const result = yield* runFor(
        withinLimits(call, { target, limits: callLimits(1_000), retry: true, schedule: every100ms }),
        2_000
      )
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") {
        expect(result.left).toEqual(
          new Transport({
            reason:
              `could not ${target.what} at ${target.server}: no answer within 1 s, the time limit of one call (SESSION_API_TIMEOUT_MS); 2 attempts`,
            kind: "no-answer"
          })
        )
      }
      // One attempt timed out at 500 ms, the second was cut by the budget at 1000 ms.
      expect(yield* Ref.get(attempts)).toBe(2)
    }))

  it.effect("reports the server's own answer when the budget runs out between attempts", () =>
    Effect.gen(function*() {
      const { call } = yield* scripted([unavailable])
      const result = yield* runFor(
        withinLimits(call, {
          target,
          limits: callLimits(1_000),
          retry: true,
          schedule: Schedule.spaced(Duration.millis(400))
        }),
        2_000
      )
      expect(result).toEqual(Either.left(unavailable))
    }))

  it.effect("reports a hang that follows a 503 as the hang: the last evidence decides", () =>
    Effect.gen(function*() {
      const { call } = yield* scripted([unavailable, "hang"])
      const result = yield* runFor(
        withinLimits(call, { target, limits: callLimits(10_000), retry: true, schedule: every100ms }),
        11_000
      )
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") {
        expect(result.left._tag).toBe("Transport")
        // The 503 came at once; from then on two attempts went unanswered until the budget ran out.
        expect(result.left.reason).toBe(
          `could not ${target.what} at ${target.server}: no answer within 10 s, the time limit of one call (SESSION_API_TIMEOUT_MS); 3 attempts`
        )
      }
    }))

  it.effect("retries a refused connection only for a few seconds, as an API server restart takes", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* scripted([refused])
      const result = yield* runFor(
        withinLimits(call, { target, limits: callLimits(60_000), retry: true, schedule: every100ms }),
        10_000
      )
      expect(result).toEqual(Either.left(refused))
      const budget = Duration.toMillis(REFUSED_BUDGET)
      // An attempt every 100 ms until the refused budget is spent, then the failure.
      expect(yield* Ref.get(attempts)).toBe(budget / 100 + 1)
    }))

  it.effect("lets a server that comes back within the refused budget answer", () =>
    Effect.gen(function*() {
      const { attempts, call } = yield* scripted([refused, refused, refused, "ok"])
      const result = yield* runFor(
        withinLimits(call, { target, limits: callLimits(60_000), retry: true, schedule: every100ms }),
        1_000
      )
      expect(result).toEqual(Either.right("answer"))
      expect(yield* Ref.get(attempts)).toBe(4)
    }))

  it.effect.each(
    [
      ["a TLS handshake failure", tls],
      ["a server name that does not resolve", dns],
      ["refused credentials (401)", unauthorized]
    ] as const
  )("fails at once on %s: waiting does not heal it", ([, error]) =>
    Effect.gen(function*() {
      const { attempts, call } = yield* scripted([error, "ok"])
      const result = yield* runFor(
        withinLimits(call, { target, limits: callLimits(60_000), retry: true, schedule: every100ms }),
        1_000
      )
      expect(result).toEqual(Either.left(error))
      expect(yield* Ref.get(attempts)).toBe(1)
    }))

  it.effect("makes one attempt when retries are off, and still bounds it", () =>
    Effect.gen(function*() {
      const failing = yield* scripted([unavailable, "ok"])
      expect(
        yield* runFor(
          withinLimits(failing.call, { target, limits: callLimits(1_000), retry: false, schedule: every100ms }),
          500
        )
      ).toEqual(Either.left(unavailable))
      expect(yield* Ref.get(failing.attempts)).toBe(1)

      const hanging = yield* scripted(["hang"])
      const result = yield* runFor(
        withinLimits(hanging.call, { target, limits: callLimits(1_000), retry: false, schedule: every100ms }),
        1_000
      )
      expect(result._tag === "Left" && result.left.reason).toBe(
        `could not ${target.what} at ${target.server}: no answer within 500 ms, the time limit of one attempt (half of the 1 s SESSION_API_TIMEOUT_MS allows a call)`
      )
    }))
})

describe("which failures heal by waiting", () => {
  it.each([500, 502, 503, 504])("counts a %i (an API server or the proxy in front of it) as transient", (code) => {
    expect(isTransient(new Unavailable({ reason: "x", code }))).toBe(true)
    expect(isPermanent(new Unavailable({ reason: "x", code }))).toBe(false)
  })

  it("counts 501 as an answer that will not change", () => {
    expect(isTransient(new Unavailable({ reason: "x", code: 501 }))).toBe(false)
  })

  it("never retries TLS, DNS or credential failures, and backs off from them as permanent", () => {
    for (const error of [tls, dns, unauthorized, new Forbidden({ reason: "x", code: 403 })]) {
      expect(isTransient(error)).toBe(false)
      expect(isPermanent(error)).toBe(true)
    }
    expect(isPermanent(new NotServed({ reason: "x", code: 404, resource: "httproutes.gateway.networking.k8s.io" })))
      .toBe(
        true
      )
  })

  it("retries a refused, reset or unanswered request", () => {
    for (const kind of ["refused", "no-answer", "other"] as const) {
      const error = new Transport({ reason: "x", kind })
      expect(isTransient(error)).toBe(true)
      expect(isPermanent(error)).toBe(false)
    }
  })
})
