/**
 * `kubectl auth whoami` against LocalCluster with RBAC on: the admin (a client certificate
 * in `system:masters`) and a ServiceAccount with a token from `kubectl create token` each
 * read back who they are from the SelfSubjectReview the server answers. (An anonymous
 * kubectl prompts for a user name over HTTPS, so its 403 is checked over raw HTTP, in
 * SelfSubjectReview.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFile } from "node:fs/promises"
import { parse, stringify } from "yaml"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { ServiceAccountResource } from "../src/ServedResources.js"

const NS = "telo-sessions"
const CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

/** The admin kubeconfig with its user swapped for `token`. */
const withToken = (kubeconfig: string, token: string): string => {
  const config = parse(kubeconfig) as { users: Array<{ name: string; user: unknown }> }
  return stringify({ ...config, users: config.users.map((u) => ({ name: u.name, user: { token } })) })
}

const jtiOf = (token: string): string => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")).jti

describe("kubectl auth whoami against LocalCluster", () => {
  if (kubectls.length === 0) return requireKubectl()
  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    // `auth whoami` asks authentication.k8s.io/v1 from kubectl 1.28; older ones ask only
    // v1beta1 and v1alpha1, which a 1.35 server (and LocalCluster) does not serve.
    it.scopedLive.runIf(kubectl.minor >= 28)(
      "prints the admin's user, groups and certificate id",
      () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })
          const admin = yield* kubectlWorkspace(kubectl, "local-cluster-whoami-")
          yield* cluster.writeKubeconfig(admin.kubeconfig)
          const printed = yield* admin.run("auth", "whoami", "-o", "json")
          expect(printed.code, printed.stderr).toBe(0)
          const review = JSON.parse(printed.stdout)
          expect([review.apiVersion, review.kind]).toEqual(["authentication.k8s.io/v1", "SelfSubjectReview"])
          expect(review.status.userInfo).toEqual({
            username: "kubernetes-admin",
            groups: ["system:masters", "system:authenticated"],
            extra: { [CREDENTIAL_ID]: [expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/)] }
          })
          const name = yield* admin.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
          expect([name.code, name.stdout], name.stderr).toEqual([0, "kubernetes-admin"])
        }),
      60_000
    )

    it.scopedLive.runIf(kubectl.minor >= 28)(
      "prints the ServiceAccount a token from kubectl create token is, with its uid and the token's id",
      () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })
          const admin = yield* kubectlWorkspace(kubectl, "local-cluster-whoami-")
          yield* cluster.writeKubeconfig(admin.kubeconfig)
          const account = yield* admin.run("create", "serviceaccount", "runner", "-n", NS)
          expect(account.code, account.stderr).toBe(0)
          const { metadata } = yield* Effect.orDie(cluster.store.get(ServiceAccountResource, NS, "runner"))
          const created = yield* admin.run("create", "token", "runner", "-n", NS)
          expect(created.code, created.stderr).toBe(0)
          const token = created.stdout.trim()

          const runner = yield* kubectlWorkspace(kubectl, "local-cluster-whoami-")
          yield* Effect.promise(() => writeFile(runner.kubeconfig, withToken(cluster.kubeconfig(), token)))
          // The ServiceAccount has no grant: whoami needs none.
          const printed = yield* runner.run("auth", "whoami", "-o", "json")
          expect(printed.code, printed.stderr).toBe(0)
          expect(JSON.parse(printed.stdout).status.userInfo).toEqual({
            username: `system:serviceaccount:${NS}:runner`,
            uid: metadata?.uid,
            groups: ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"],
            extra: { [CREDENTIAL_ID]: [`JTI=${jtiOf(token)}`] }
          })
          const name = yield* runner.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
          expect([name.code, name.stdout], name.stderr).toEqual([0, `system:serviceaccount:${NS}:runner`])
        }),
      60_000
    )

    // kubectl posts without asking discovery, but api-resources and other clients read it there.
    it.scopedLive("lists selfsubjectreviews among api-resources, as create-only", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-whoami-")
        yield* cluster.writeKubeconfig(kubeconfig)
        const listed = yield* run("api-resources", "--api-group=authentication.k8s.io", "-o", "wide", "--no-headers")
        expect(listed.code, listed.stderr).toBe(0)
        const [name, apiVersion, namespaced, kind, verbs] = listed.stdout.trim().split(/\s+/)
        // Newer kubectls print the verbs in brackets.
        expect([name, apiVersion, namespaced, kind, verbs?.replace(/^\[(.*)\]$/, "$1")]).toEqual([
          "selfsubjectreviews",
          "authentication.k8s.io/v1",
          "false",
          "SelfSubjectReview",
          "create"
        ])
      }), 60_000)
  })
})
