/**
 * The TokenRequest API over HTTPS with RBAC on, as kube-apiserver answers it: the
 * TokenRequest echoed with the token, the refusals worded as the server words them, the
 * request authorized as `create` on `serviceaccounts/token`, and the token accepted as the
 * ServiceAccount until it expires or what it is bound to goes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { Pod } from "session-routing/kubernetes"
import { grant } from "../../../test/support/SecuredCluster.js"
import { Credential } from "../src/ClusterAccess.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { PodResource, ServiceAccountResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { bearerFor, createServiceAccount, secureCall, send } from "./WireFixtures.js"

const API_AUDIENCE = "https://kubernetes.default.svc.cluster.local"
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/

const secured = LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })

const tokenPath = (name: string) => `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`

const admin = (cluster: LocalCluster.Service) => bearerFor(cluster, Credential.token("root", ["system:masters"]))

/** Asks for a token for `name` as the admin; the answer as the server sent it. */
const requestToken = (cluster: LocalCluster.Service, name: string, body: unknown = {}) =>
  Effect.flatMap(admin(cluster), (headers) => secureCall(cluster, "POST", tokenPath(name), { headers, body }))

/** Lists Services in the namespace with `token`: 401 for a token not accepted, 403 or 200 as its user. */
const listServicesWith = (cluster: LocalCluster.Service, token: string) =>
  secureCall(cluster, "GET", `/api/v1/namespaces/${NS}/services`, { headers: { authorization: `Bearer ${token}` } })

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"))

const serviceReader = [{ verbs: ["list"], apiGroups: [""], resources: ["services"] }]

describe("the TokenRequest API", () => {
  it.scopedLive("issues a token and echoes the TokenRequest as the server fills it", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const account = yield* createServiceAccount(cluster, "runner")
      const answer = yield* Effect.flatMap(admin(cluster), (headers) =>
        secureCall(cluster, "POST", tokenPath("runner"), {
          headers: { ...headers, "user-agent": "token-test/1.0" },
          body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} }
        }))
      const uid = account.metadata?.uid
      expect(answer).toEqual({
        status: 201,
        body: {
          kind: "TokenRequest",
          apiVersion: "authentication.k8s.io/v1",
          metadata: {
            name: "runner",
            namespace: NS,
            uid,
            creationTimestamp: expect.stringMatching(RFC3339),
            // The defaulted lifetime is the request's own field; the audiences are filled in later, by the registry.
            managedFields: [{
              manager: "token-test",
              operation: "Update",
              apiVersion: "authentication.k8s.io/v1",
              time: expect.stringMatching(RFC3339),
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:expirationSeconds": {} } },
              subresource: "token"
            }]
          },
          spec: { audiences: [API_AUDIENCE], expirationSeconds: 3600, boundObjectRef: null },
          status: { token: expect.any(String), expirationTimestamp: expect.stringMatching(RFC3339) }
        }
      })
      const { metadata, status } = answer.body
      expect(Date.parse(status.expirationTimestamp) - Date.parse(metadata.creationTimestamp)).toBe(3600_000)
      const issuedAt = Date.parse(metadata.creationTimestamp) / 1000
      expect(claimsOf(status.token)).toEqual({
        aud: [API_AUDIENCE],
        exp: issuedAt + 3600,
        iat: issuedAt,
        iss: API_AUDIENCE,
        jti: expect.any(String),
        "kubernetes.io": { namespace: NS, serviceaccount: { name: "runner", uid } },
        nbf: issuedAt,
        sub: `system:serviceaccount:${NS}:runner`
      })
    }))

  it.scopedLive("authenticates the token as the ServiceAccount, whose RBAC then applies to it", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      const { token } = (yield* requestToken(cluster, "runner")).body.status
      const refused = yield* listServicesWith(cluster, token)
      expect([refused.status, refused.body.message]).toEqual([
        403,
        `services is forbidden: User "system:serviceaccount:${NS}:runner" cannot list resource "services" in API group "" in the namespace "${NS}"`
      ])
      yield* grant(cluster, NS, "service-reader", { serviceAccount: "runner" }, serviceReader)
      expect((yield* listServicesWith(cluster, token)).status).toBe(200)
    }))

  it.scopedLive("refuses what the real server refuses, worded as it words it", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const account = yield* createServiceAccount(cluster, "runner")
      const status = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
        status: code,
        body: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message,
          reason,
          ...(details !== undefined ? { details } : {}),
          code
        }
      })
      expect(yield* requestToken(cluster, "ghost")).toEqual(
        status(404, "NotFound", `serviceaccounts "ghost" not found`, { name: "ghost", kind: "serviceaccounts" })
      )
      const tooShort = "Invalid value: 599: may not specify a duration less than 10 minutes"
      expect(yield* requestToken(cluster, "runner", { spec: { expirationSeconds: 599 } })).toEqual(
        status(
          422,
          "Invalid",
          `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: ${tooShort}`,
          {
            group: "authentication.k8s.io",
            kind: "TokenRequest",
            causes: [{ reason: "FieldValueInvalid", message: tooShort, field: "spec.expirationSeconds" }]
          }
        )
      )
      expect((yield* requestToken(cluster, "runner", { spec: { expirationSeconds: 2 ** 32 + 1 } })).body.message)
        .toBe(
          `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds`
        )
      expect((yield* requestToken(cluster, "runner", { metadata: { name: "other" } })).body.message).toBe(
        `TokenRequest.authentication.k8s.io "runner" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`
      )
      expect(yield* requestToken(cluster, "runner", { metadata: { uid: "stale" } })).toEqual(
        status(
          409,
          "Conflict",
          `Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "runner": the UID in the token request (stale) does not match the UID of the service account (${account.metadata?.uid})`,
          { name: "runner", group: "authentication.k8s.io", kind: "TokenRequest" }
        )
      )
      expect(
        yield* requestToken(cluster, "runner", {
          spec: { boundObjectRef: { kind: "ConfigMap", apiVersion: "v1", name: "settings" } }
        })
      ).toEqual(status(400, "BadRequest", "cannot bind token to object of type /v1, Kind=ConfigMap"))
      expect((yield* requestToken(cluster, "runner", { spec: { expirationSeconds: "1h" } })).body.message).toBe(
        `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal string into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`
      )
      const read = yield* Effect.flatMap(
        admin(cluster),
        (headers) => secureCall(cluster, "GET", tokenPath("runner"), { headers })
      )
      expect([read.status, read.body.reason]).toEqual([405, "MethodNotAllowed"])
    }))

  it.scopedLive("authorizes the request as create on serviceaccounts/token, and on nothing else", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      const bob = yield* bearerFor(cluster, Credential.token("bob"))
      yield* grant(cluster, NS, "account-writer", { user: "bob" }, [
        { verbs: ["create", "get"], apiGroups: [""], resources: ["serviceaccounts"] }
      ])
      expect(yield* secureCall(cluster, "POST", tokenPath("runner"), { headers: bob, body: {} })).toEqual({
        status: 403,
        body: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message:
            `serviceaccounts "runner" is forbidden: User "bob" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${NS}"`,
          reason: "Forbidden",
          details: { name: "runner", kind: "serviceaccounts" },
          code: 403
        }
      })
      yield* grant(cluster, NS, "token-creator", { user: "bob" }, [
        { verbs: ["create"], apiGroups: [""], resources: ["serviceaccounts/token"], resourceNames: ["runner"] }
      ])
      expect((yield* secureCall(cluster, "POST", tokenPath("runner"), { headers: bob, body: {} })).status).toBe(201)
    }))

  it.scopedLive("stops accepting a token once its ServiceAccount is deleted, or replaced by another of the name", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      yield* grant(cluster, NS, "service-reader", { serviceAccount: "runner" }, serviceReader)
      const { token } = (yield* requestToken(cluster, "runner")).body.status
      expect((yield* listServicesWith(cluster, token)).status).toBe(200)
      yield* Effect.orDie(cluster.store.delete(ServiceAccountResource, NS, "runner"))
      expect(yield* listServicesWith(cluster, token)).toEqual({
        status: 401,
        body: expect.objectContaining({ reason: "Unauthorized", message: "Unauthorized" })
      })
      // Bound tokens name the ServiceAccount's uid: a new one of the same name is someone else.
      yield* createServiceAccount(cluster, "runner")
      expect((yield* listServicesWith(cluster, token)).status).toBe(401)
      const renewed = (yield* requestToken(cluster, "runner")).body.status.token
      expect((yield* listServicesWith(cluster, renewed)).status).toBe(200)
    }))

  it.scopedLive("binds a token to a Pod of the ServiceAccount, and stops accepting it once the Pod is gone", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      yield* grant(cluster, NS, "service-reader", { serviceAccount: "runner" }, serviceReader)
      const podOf = (name: string, serviceAccountName?: string) =>
        Effect.orDie(cluster.store.create<Pod>(PodResource, NS, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name },
          spec: {
            containers: [{ name: "main", image: "registry.example/app:1.0" }],
            nodeName: "node-1",
            ...(serviceAccountName !== undefined ? { serviceAccountName } : {})
          } as NonNullable<Pod["spec"]>
        }))
      const worker = yield* podOf("worker", "runner")
      yield* podOf("other")
      const boundTo = (name: string, uid?: string) =>
        requestToken(cluster, "runner", {
          spec: { boundObjectRef: { kind: "Pod", apiVersion: "v1", name, ...(uid !== undefined ? { uid } : {}) } }
        })
      expect((yield* boundTo("missing")).body).toMatchObject({ code: 404, message: `pods "missing" not found` })
      expect((yield* boundTo("other")).body).toMatchObject({
        code: 400,
        message: `cannot bind token for serviceaccount "runner" to pod running with different serviceaccount name.`
      })
      expect((yield* boundTo("worker", "stale")).body).toMatchObject({
        code: 409,
        message:
          `Operation cannot be fulfilled on Pod "worker": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated`
      })
      const bound = yield* boundTo("worker", worker.metadata?.uid)
      expect(bound.body.spec.boundObjectRef).toEqual({
        kind: "Pod",
        apiVersion: "v1",
        name: "worker",
        uid: worker.metadata?.uid
      })
      expect(claimsOf(bound.body.status.token)["kubernetes.io"]).toMatchObject({
        node: { name: "node-1" },
        pod: { name: "worker", uid: worker.metadata?.uid }
      })
      expect((yield* listServicesWith(cluster, bound.body.status.token)).status).toBe(200)
      yield* Effect.orDie(cluster.store.delete(PodResource, NS, "worker"))
      expect((yield* listServicesWith(cluster, bound.body.status.token)).status).toBe(401)
    }))

  it.scopedLive("accepts a token only for the API server's audiences", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      const answer = yield* requestToken(cluster, "runner", { spec: { audiences: ["vault"], expirationSeconds: 600 } })
      expect(answer.body.spec).toEqual({ audiences: ["vault"], expirationSeconds: 600, boundObjectRef: null })
      expect((yield* listServicesWith(cluster, answer.body.status.token)).status).toBe(401)
    }))

  it.scopedLive("reads the protobuf body kubectl's typed client sends", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      yield* createServiceAccount(cluster, "runner")
      const body = envelope(
        message(
          field(2, message(field(1, "https://kubernetes.default.svc.cluster.local"), field(1, "vault"), field(4, 1200)))
        )
      )
      const answer = yield* Effect.flatMap(admin(cluster), (headers) =>
        secureCall(cluster, "POST", tokenPath("runner"), {
          headers: { ...headers, "content-type": "application/vnd.kubernetes.protobuf" },
          body
        }))
      expect([answer.status, answer.body.spec]).toEqual([201, {
        audiences: [API_AUDIENCE, "vault"],
        expirationSeconds: 1200,
        boundObjectRef: null
      }])
      expect((yield* listServicesWith(cluster, answer.body.status.token)).status).toBe(403)
    }))

  // The authenticator reads Effect's Clock: a clock an hour ahead is an hour later for
  // the server, without waiting for it.
  it.scopedLive("answers 401 for a token past its expiry and the authenticator's minute of leeway", () =>
    Effect.gen(function*() {
      const later = { millis: 0 }
      const cluster = yield* Effect.withClock(secured, shiftedClock(later))
      yield* createServiceAccount(cluster, "runner")
      const { token } = (yield* requestToken(cluster, "runner", { spec: { expirationSeconds: 600 } })).body.status
      expect((yield* listServicesWith(cluster, token)).status).toBe(403)
      later.millis = 600_000 + 55_000
      expect((yield* listServicesWith(cluster, token)).status).toBe(403)
      later.millis = 600_000 + 62_000
      expect((yield* listServicesWith(cluster, token)).status).toBe(401)
    }))

  it.scopedLive("answers with a token on a cluster that authenticates nobody, as clients expect one", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      yield* createServiceAccount(cluster, "runner")
      const answer = yield* send(cluster.url, "POST", tokenPath("runner"), {})
      expect([answer.status, answer.body.metadata.name, typeof answer.body.status.token]).toEqual([
        201,
        "runner",
        "string"
      ])
      expect((yield* send(cluster.url, "POST", tokenPath("ghost"), {})).status).toBe(404)
    }))
})

/** The live clock `offset.millis` ahead, as the test moves it. */
const shiftedClock = (offset: { millis: number }): Clock.Clock => {
  const live = Clock.make()
  const now = () => live.unsafeCurrentTimeMillis() + offset.millis
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    currentTimeMillis: Effect.sync(now),
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
}

// -- a protobuf body, encoded by hand --------------------------------------------------

const varint = (value: number): Array<number> => {
  const out: Array<number> = []
  let rest = value
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  return [...out, rest]
}

/** One field: a number as a varint, a string or message as length-delimited bytes. */
const field = (number: number, value: number | string | Uint8Array): Array<number> => {
  if (typeof value === "number") return [...varint(number * 8), ...varint(value)]
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value
  return [...varint(number * 8 + 2), ...varint(bytes.length), ...bytes]
}

const message = (...fields: ReadonlyArray<Array<number>>): Uint8Array => Uint8Array.from(fields.flat())

/** The `k8s\0` magic and the runtime.Unknown envelope around a TokenRequest. */
const envelope = (tokenRequest: Uint8Array): Uint8Array =>
  Uint8Array.from([
    0x6b,
    0x38,
    0x73,
    0x00,
    ...message(
      field(1, message(field(1, "authentication.k8s.io/v1"), field(2, "TokenRequest"))),
      field(2, tokenRequest)
    )
  ])
