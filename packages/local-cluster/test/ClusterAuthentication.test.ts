/**
 * LocalCluster with authentication and RBAC on, as a real API server runs them: the
 * live client proves who it is by client certificate, bearer token and exec plugin over
 * HTTPS; unknown credentials get the 401 Status, ungranted requests the authorizer's
 * 403, and the self-reviews answer from the same RBAC rules.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeClient } from "session-routing/kubernetes"
import { defaultClientAs, grant } from "../../../test/support/SecuredCluster.js"
import { Credential } from "../src/ClusterAccess.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeCertificateAuthority } from "../src/Pki.js"
import { IngressResource, NamespaceResource, ServiceResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { secureCall } from "./WireFixtures.js"

const secured = LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })

const listIngresses = Effect.flatMap(KubeClient, (kube) => kube.list(IngressResource, NS))
const listServices = Effect.flatMap(KubeClient, (kube) => kube.list(ServiceResource, NS))

describe("LocalCluster authentication", () => {
  for (
    const [way, credential] of [
      ["a client certificate", Credential.clientCertificate("alice", ["devs"])],
      ["a bearer token", Credential.token("alice", ["devs"])],
      ["an exec credential plugin", Credential.execPlugin("alice", ["devs"])]
    ] as const
  ) {
    it.scopedLive(`authenticates the live client by ${way} over HTTPS, and authorizes it by RBAC`, () =>
      Effect.gen(function*() {
        const cluster = yield* secured
        expect(cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
        yield* grant(cluster, NS, "ingress-reader", { user: "alice" }, [
          { verbs: ["list"], apiGroups: ["networking.k8s.io"], resources: ["ingresses"] }
        ])
        const client = defaultClientAs(cluster, credential)
        const listed = yield* Effect.provide(listIngresses, client)
        expect(listed.items).toEqual([])
        const refused = yield* Effect.flip(Effect.provide(listServices, client))
        expect([refused._tag, refused.reason]).toEqual([
          "Forbidden",
          expect.stringContaining(
            `services is forbidden: User "alice" cannot list resource "services" in API group "" in the namespace "${NS}"`
          )
        ])
      }))
  }

  it.scopedLive("answers unknown credentials with the 401 Status, and no credentials as system:anonymous", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const unauthorized = {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401
      }
      const path = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`
      expect(yield* secureCall(cluster, "GET", path, { headers: { authorization: "Bearer not-a-token" } })).toEqual({
        status: 401,
        body: unauthorized
      })
      // A certificate from another CA proves nothing.
      const stranger = yield* Effect.flatMap(
        makeCertificateAuthority("elsewhere"),
        (ca) => ca.client("alice", ["system:masters"])
      )
      expect(yield* secureCall(cluster, "GET", path, stranger)).toEqual({ status: 401, body: unauthorized })
      expect(yield* secureCall(cluster, "GET", path)).toEqual({
        status: 403,
        body: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message:
            `ingresses.networking.k8s.io is forbidden: User "system:anonymous" cannot list resource "ingresses" in API group "networking.k8s.io" in the namespace "${NS}"`,
          reason: "Forbidden",
          details: { group: "networking.k8s.io", kind: "ingresses" },
          code: 403
        }
      })
      // Health and version stay public; discovery needs an authenticated user.
      expect((yield* secureCall(cluster, "GET", "/version")).status).toBe(200)
      expect(yield* secureCall(cluster, "GET", "/apis")).toEqual({
        status: 403,
        body: expect.objectContaining({
          message: "forbidden: User \"system:anonymous\" cannot get path \"/apis\"",
          details: {}
        })
      })
    }))

  it.scopedLive("lets the admin kubeconfig (system:masters) do anything, and words the cluster-scope refusal", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const admin = yield* Effect.provide(
        Effect.flatMap(KubeClient, (kube) => kube.get(NamespaceResource, "", NS)),
        defaultClientAs(cluster, Credential.clientCertificate("root", ["system:masters"]))
      )
      expect(admin.metadata?.name).toBe(NS)
      const bob = defaultClientAs(cluster, Credential.token("bob"))
      const refused = yield* Effect.flip(
        Effect.provide(Effect.flatMap(KubeClient, (kube) => kube.get(NamespaceResource, "", "default")), bob)
      )
      expect(refused.reason).toContain(
        `namespaces "default" is forbidden: User "bob" cannot get resource "namespaces" in API group "" in the namespace "default"`
      )
    }))

  it.scopedLive("answers the self-reviews from RBAC: who allowed it, and the rules in a namespace", () =>
    Effect.gen(function*() {
      const cluster = yield* secured
      const rules = [{
        verbs: ["get", "patch"],
        apiGroups: ["networking.k8s.io"],
        resources: ["ingresses", "ingresses/status"]
      }]
      yield* grant(cluster, NS, "ingress-writer", { serviceAccount: "runner" }, rules)
      const token = (yield* cluster.kubeconfigAs(Credential.serviceAccount(NS, "runner"))).match(/token: (\S+)/)![1]!
      const ask = (resourceAttributes: Record<string, string>) =>
        secureCall(cluster, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
          headers: { authorization: `Bearer ${token}` },
          body: { kind: "SelfSubjectAccessReview", apiVersion: "authorization.k8s.io/v1", spec: { resourceAttributes } }
        })
      expect(
        (yield* ask({
          namespace: NS,
          verb: "patch",
          group: "networking.k8s.io",
          resource: "ingresses",
          subresource: "status"
        })).body.status
      ).toEqual({
        allowed: true,
        reason:
          `RBAC: allowed by RoleBinding "ingress-writer/${NS}" of Role "ingress-writer" to ServiceAccount "runner/${NS}"`
      })
      expect(
        (yield* ask({ namespace: NS, verb: "delete", group: "networking.k8s.io", resource: "ingresses" })).body.status
      ).toEqual({ allowed: false })
      expect(
        (yield* ask({ namespace: "default", verb: "get", group: "networking.k8s.io", resource: "ingresses" })).body
          .status
      ).toEqual({ allowed: false })
      const review = yield* secureCall(cluster, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
        headers: { authorization: `Bearer ${token}` },
        body: { kind: "SelfSubjectRulesReview", apiVersion: "authorization.k8s.io/v1", spec: { namespace: NS } }
      })
      expect(review.body.status.resourceRules).toEqual(expect.arrayContaining(rules))
      expect(review.body.status.resourceRules).toContainEqual(
        {
          verbs: ["create"],
          apiGroups: ["authorization.k8s.io"],
          resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
        }
      )
    }))
})
