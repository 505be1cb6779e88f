/**
 * The authenticator's rules for the ServiceAccount tokens the TokenRequest API issues,
 * on TestClock: accepted until a minute past their expiry (the JWT library's leeway the
 * server validates with), only for the API server's audiences, and only while what they
 * are bound to still stands; and the user such a token is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { IncomingMessage } from "node:http"
import {
  anonymousUser,
  API_AUDIENCES,
  bearerToken,
  type BoundToken,
  makeAuthenticator,
  serviceAccountTokenUser,
  serviceAccountUser
} from "../src/Authentication.js"

/** A request presenting `token`, over a socket without a client certificate. */
const presenting = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, socket: {} }) as IncomingMessage

const runner = serviceAccountUser("demo", "runner")
const asRunner = {
  name: "system:serviceaccount:demo:runner",
  groups: ["system:serviceaccounts", "system:serviceaccounts:demo", "system:authenticated"]
}

const issue = (overrides: Partial<BoundToken> = {}) =>
  Effect.gen(function*() {
    const authenticator = makeAuthenticator()
    authenticator.recordBoundToken("t", {
      user: runner,
      audiences: API_AUDIENCES,
      expiresAt: (yield* Clock.currentTimeMillis) + 600_000,
      bound: Effect.succeed(true),
      ...overrides
    })
    return (token = "t") => authenticator.authenticate(presenting(token))
  })

describe("ServiceAccount tokens", () => {
  it.effect("are accepted as the ServiceAccount until a minute past their expiry, then never again", () =>
    Effect.gen(function*() {
      const authenticate = yield* issue()
      expect(yield* authenticate()).toEqual(asRunner)
      yield* TestClock.adjust("11 minutes")
      expect(yield* authenticate()).toEqual(asRunner)
      yield* TestClock.adjust("1 millis")
      expect(yield* authenticate()).toBeUndefined()
      expect(yield* authenticate("unknown")).toBeUndefined()
    }))

  it.effect("are refused when issued for other audiences only", () =>
    Effect.gen(function*() {
      expect(yield* (yield* issue({ audiences: ["vault"] }))()).toBeUndefined()
      expect(yield* (yield* issue({ audiences: ["vault", ...API_AUDIENCES] }))()).toEqual(asRunner)
    }))

  it.effect("are refused once what they are bound to is gone", () =>
    Effect.gen(function*() {
      let standing = true
      const authenticate = yield* issue({ bound: Effect.sync(() => standing) })
      expect(yield* authenticate()).toEqual(asRunner)
      standing = false
      expect(yield* authenticate()).toBeUndefined()
    }))
})

describe("the user a ServiceAccount token is", () => {
  const claims = {
    namespace: "demo",
    serviceAccount: { name: "runner", uid: "sa-uid" },
    audiences: API_AUDIENCES,
    issuedAt: 0,
    expiresAt: 3600,
    id: "jti-1"
  }

  it("carries the ServiceAccount's uid and, as extra, the token's id", () => {
    expect(serviceAccountTokenUser(claims)).toEqual({
      ...runner,
      uid: "sa-uid",
      extra: { "authentication.kubernetes.io/credential-id": ["JTI=jti-1"] }
    })
  })

  it("adds the Pod it is bound to, and its node, with the node's uid only when known", () => {
    const bound = { ...claims, pod: { name: "worker", uid: "pod-uid" } }
    expect(serviceAccountTokenUser({ ...bound, node: { name: "node-1" } }).extra).toEqual({
      "authentication.kubernetes.io/credential-id": ["JTI=jti-1"],
      "authentication.kubernetes.io/node-name": ["node-1"],
      "authentication.kubernetes.io/pod-name": ["worker"],
      "authentication.kubernetes.io/pod-uid": ["pod-uid"]
    })
    expect(serviceAccountTokenUser({ ...bound, node: { name: "node-1", uid: "node-uid" } }).extra).toMatchObject({
      "authentication.kubernetes.io/node-uid": ["node-uid"]
    })
    // The authenticator names a Pod only with both its name and uid.
    expect(serviceAccountTokenUser({ ...claims, pod: { name: "worker" } }).extra).toEqual({
      "authentication.kubernetes.io/credential-id": ["JTI=jti-1"]
    })
  })
})

describe("the Authorization header", () => {
  // As kube-apiserver 1.35 answered each (recorded with `npm run cluster:real`): a header
  // that is no bearer token is no credential, and the request is anonymous, not a 401.
  it("takes the token of `Bearer <token>` in any case, split on single spaces", () => {
    expect(bearerToken("Bearer abc")).toBe("abc")
    expect(bearerToken("bearer abc")).toBe("abc")
    expect(bearerToken("  Bearer abc  ")).toBe("abc")
    expect(bearerToken("Bearer a b")).toBe("a")
  })

  it("finds no credential in another scheme, a bearer without a token, or none", () => {
    for (const header of [undefined, "", "Bearer", "Bearer ", "Bearer  abc", "Basic YTpi", "Token abc"]) {
      expect(bearerToken(header)).toBeUndefined()
    }
  })

  it.effect("makes such a request anonymous, and a token nobody issued unauthenticated", () =>
    Effect.gen(function*() {
      const authenticator = makeAuthenticator()
      const withHeader = (authorization: string) => ({ headers: { authorization }, socket: {} }) as IncomingMessage
      expect(yield* authenticator.authenticate(withHeader("Basic YTpi"))).toEqual(anonymousUser)
      expect(yield* authenticator.authenticate(withHeader("Bearer "))).toEqual(anonymousUser)
      expect(yield* authenticator.authenticate(withHeader("Bearer nobody-issued-this"))).toBeUndefined()
    }))
})
