/**
 * SelfSubjectReview over HTTPS with RBAC on, as kube-apiserver answers it: 201 with the
 * requester as the authenticators made them (name, uid, groups with `system:authenticated`,
 * and the extra a client certificate or a ServiceAccount token carries), for a JSON body and
 * for the protobuf one kubectl sends, allowed to every authenticated user by
 * `system:basic-user` and to nobody else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, X509Certificate } from "node:crypto"
import type { Pod } from "session-routing/kubernetes"
import { parse } from "yaml"
import { Credential } from "../src/ClusterAccess.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { PodResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { bearer, bearerFor, createServiceAccount, secureCall, send } from "./WireFixtures.js"

const PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
const REVIEW = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/
const CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

/**
 * The body `kubectl auth whoami` (1.35.2) posts, as it sent it to a recording server: the
 * `k8s\0` envelope naming `authentication.k8s.io/v1` `SelfSubjectReview` around an empty review.
 */
const KUBECTL_BODY = Buffer.from(
  "6b3873000a2d0a1861757468656e7469636174696f6e2e6b38732e696f2f7631121153656c665375626a656374526576696577121a0a100a0012001a0022002a0032003800420012060a040a0012001a002200",
  "hex"
)
const PROTOBUF = "application/vnd.kubernetes.protobuf"

const secured = LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })

/** The admin kubeconfig's client certificate and key, PEM. */
const adminCertificate = (cluster: LocalCluster.Service) => {
  const config = parse(cluster.kubeconfig()) as { users: Array<{ user: Record<string, string> }> }
  const pem = (key: string) => Buffer.from(config.users[0]!.user[key]!, "base64").toString("utf8")
  return { cert: pem("client-certificate-data"), key: pem("client-key-data") }
}

/** A token for ServiceAccount `name` from the TokenRequest API, asked by the admin. */
const tokenFor = (cluster: LocalCluster.Service, name: string, body: unknown = {}) =>
  Effect.gen(function*() {
    const answer = yield* secureCall(cluster, "POST", `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`, {
      headers: yield* bearerFor(cluster, Credential.token("root", ["system:masters"])),
      body
    })
    expect(answer.status).toBe(201)
    return answer.body.status.token as string
  })

const jtiOf = (token: string): string => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")).jti

/** The 201 a review is answered with, for `userInfo`. */
const answered = (userInfo: Record<string, unknown>) => ({
  status: 201,
  body: { ...REVIEW, metadata: { creationTimestamp: expect.stringMatching(RFC3339) }, status: { userInfo } }
})

const serviceAccountGroups = ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"]

describe("SelfSubjectReview", () => {
  it.scopedLive("answers the admin's client certificate with its user, its groups and the certificate's id", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const admin = adminCertificate(cluster)
      const answer = yield* secureCall(cluster, "POST", PATH, { ...admin, body: { ...REVIEW, metadata: {} } })
      // The x509 authenticator names the credential by the SHA-256 of the certificate's DER.
      const fingerprint = createHash("sha256").update(new X509Certificate(admin.cert).raw).digest("hex")
      expect(answer).toEqual(answered({
        username: "kubernetes-admin",
        groups: ["system:masters", "system:authenticated"],
        extra: { [CREDENTIAL_ID]: [`X509SHA256=${fingerprint}`] }
      }))
    }))

  it.scopedLive("reads the protobuf review kubectl sends, and answers a ServiceAccount token with its uid and id", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const account = yield* createServiceAccount(cluster, "runner")
      const token = yield* tokenFor(cluster, "runner")
      const answer = yield* secureCall(cluster, "POST", PATH, {
        headers: { ...bearer(token), "content-type": PROTOBUF },
        body: KUBECTL_BODY
      })
      expect(answer).toEqual(answered({
        username: `system:serviceaccount:${NS}:runner`,
        uid: account.metadata?.uid,
        groups: serviceAccountGroups,
        extra: { [CREDENTIAL_ID]: [`JTI=${jtiOf(token)}`] }
      }))
    }))

  it.scopedLive("adds the Pod and its node's name for a token bound to a Pod, and no node uid without a Node", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const account = yield* createServiceAccount(cluster, "runner")
      const pod = yield* Effect.orDie(cluster.store.create<Pod>(PodResource, NS, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "worker" },
        spec: {
          containers: [{ name: "main", image: "registry.example/app:1.0" }],
          nodeName: "node-1",
          serviceAccountName: "runner"
        } as NonNullable<Pod["spec"]>
      }))
      const token = yield* tokenFor(cluster, "runner", {
        spec: { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "worker" } }
      })
      // The keys sorted, as Go writes a map. A real server adds node-uid only when the Node
      // object exists; LocalCluster stores no Nodes.
      expect(yield* secureCall(cluster, "POST", PATH, { headers: bearer(token), body: REVIEW })).toEqual(answered({
        username: `system:serviceaccount:${NS}:runner`,
        uid: account.metadata?.uid,
        groups: serviceAccountGroups,
        extra: {
          [CREDENTIAL_ID]: [`JTI=${jtiOf(token)}`],
          "authentication.kubernetes.io/node-name": ["node-1"],
          "authentication.kubernetes.io/pod-name": ["worker"],
          "authentication.kubernetes.io/pod-uid": [pod.metadata?.uid]
        }
      }))
    }))

  it.scopedLive("lets any authenticated user ask, through system:basic-user, and refuses system:anonymous", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const bob = yield* bearerFor(cluster, Credential.token("bob", ["devs"]))
      // No grant of bob's own: the bootstrap binding of system:authenticated is enough.
      expect(yield* secureCall(cluster, "POST", PATH, { headers: bob, body: REVIEW })).toEqual(answered({
        username: "bob",
        groups: ["devs", "system:authenticated"]
      }))
      expect(yield* secureCall(cluster, "POST", PATH, { body: REVIEW })).toEqual({
        status: 403,
        body: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message:
            `selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`,
          reason: "Forbidden",
          details: { group: "authentication.k8s.io", kind: "selfsubjectreviews" },
          code: 403
        }
      })
      // A read is authorized as the list it would be, then refused: the API only creates.
      const read = yield* secureCall(cluster, "GET", PATH, { headers: bob })
      expect([read.status, read.body.message]).toEqual([
        403,
        `selfsubjectreviews.authentication.k8s.io is forbidden: User "bob" cannot list resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`
      ])
      const adminRead = yield* secureCall(cluster, "GET", PATH, adminCertificate(cluster))
      expect([adminRead.status, adminRead.body.reason]).toEqual([405, "MethodNotAllowed"])
    }))

  it.scopedLive("refuses a body of another type or version, and one that cannot be read, as the decoder does", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const admin = adminCertificate(cluster)
      const refusal = (body: unknown, headers: Record<string, string> = {}) =>
        Effect.map(
          secureCall(cluster, "POST", PATH, { ...admin, headers, body }),
          (answer) => [answer.status, answer.body.message]
        )
      expect(yield* refusal({ apiVersion: "authentication.k8s.io/v1beta1", kind: "SelfSubjectReview" })).toEqual([
        400,
        "the API version in the data (authentication.k8s.io/v1beta1) does not match the expected API version (authentication.k8s.io/v1)"
      ])
      expect(yield* refusal({ apiVersion: "authentication.k8s.io/v1", kind: "WhoAmI" })).toEqual([
        400,
        `no kind "WhoAmI" is registered for version "authentication.k8s.io/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"`
      ])
      expect(yield* refusal(["SelfSubjectReview"])).toEqual([
        400,
        `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
      ])
      expect(yield* refusal(Buffer.from("{", "utf8"))).toEqual([
        400,
        expect.stringMatching(/^couldn't get version\/kind; json parse error: /)
      ])
      expect(yield* refusal(Buffer.from("not protobuf", "utf8"), { "content-type": PROTOBUF })).toEqual([
        400,
        "the protobuf body of the SelfSubjectReview could not be read"
      ])
      // The kind a protobuf envelope names counts too (a name of the same length keeps its lengths right).
      const other = Buffer.from(
        KUBECTL_BODY.toString("latin1").replace("SelfSubjectReview", "NotASubjectReview"),
        "latin1"
      )
      expect(yield* refusal(other, { "content-type": PROTOBUF })).toEqual([
        400,
        `no kind "NotASubjectReview" is registered for version "authentication.k8s.io/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"`
      ])
    }))

  it.scopedLive("answers system:anonymous on a cluster that authenticates nobody", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      expect(yield* send(cluster.url, "POST", PATH, REVIEW)).toMatchObject(answered({
        username: "system:anonymous",
        groups: ["system:unauthenticated"]
      }))
    }))
})
