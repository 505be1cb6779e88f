/**
 * kubectl against LocalCluster's authorization: `auth can-i` answered by
 * SelfSubjectAccessReview (yes on an open cluster, as AlwaysAllow), deploy/rbac.yaml
 * applied by the admin over HTTPS, and the runner's own answers under RBAC.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { Credential } from "../src/ClusterAccess.js"
import { LocalCluster } from "../src/LocalCluster.js"

const NS = "telo-sessions"
const manifest = readFileSync(fileURLToPath(new URL("../../../deploy/rbac.yaml", import.meta.url)), "utf8")

describe("kubectl auth against LocalCluster", () => {
  if (kubectls.length === 0) return requireKubectl()
  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive("answers can-i yes for anything on an open cluster", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-auth-")
        yield* cluster.writeKubeconfig(kubeconfig)
        const answer = yield* run("auth", "can-i", "delete", "clusterroles")
        expect([answer.code, answer.stdout.trim()], answer.stderr).toEqual([0, "yes"])
      }), 60_000)

    // kubectl finds a group's resources only through `/apis`: a group missing there is
    // invisible to api-resources, however well its own discovery answers.
    it.scopedLive("lists the review types among api-resources, as create-only", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-auth-")
        yield* cluster.writeKubeconfig(kubeconfig)
        const listed = yield* run("api-resources", "--api-group=authorization.k8s.io", "-o", "wide", "--no-headers")
        expect(listed.code, listed.stderr).toBe(0)
        const rows = listed.stdout.trim().split("\n").map((line) => {
          const [name, apiVersion, namespaced, kind, verbs] = line.trim().split(/\s+/)
          // Newer kubectls print the verbs in brackets.
          return [name, apiVersion, namespaced, kind, verbs?.replace(/^\[(.*)\]$/, "$1")]
        })
        expect(rows).toEqual([
          ["selfsubjectaccessreviews", "authorization.k8s.io/v1", "false", "SelfSubjectAccessReview", "create"],
          ["selfsubjectrulesreviews", "authorization.k8s.io/v1", "false", "SelfSubjectRulesReview", "create"]
        ])
      }), 60_000)

    it.scopedLive(
      "applies deploy/rbac.yaml as the admin, then answers the runner's can-i from it",
      () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })
          const admin = yield* kubectlWorkspace(kubectl, "local-cluster-auth-")
          yield* cluster.writeKubeconfig(admin.kubeconfig)
          const applied = yield* admin.run(
            "apply",
            "--server-side",
            "--validate=false",
            "-f",
            yield* admin.file("rbac.yaml", manifest)
          )
          expect(applied.code, applied.stderr).toBe(0)

          const runner = yield* kubectlWorkspace(kubectl, "local-cluster-auth-")
          const text = yield* cluster.kubeconfigAs(Credential.serviceAccount(NS, "session-routing"))
          yield* Effect.promise(() => writeFile(runner.kubeconfig, text))
          const canI = (...args: ReadonlyArray<string>) =>
            Effect.map(runner.run("auth", "can-i", ...args), (r) => r.stdout.trim())
          expect(yield* canI("patch", "ingresses.networking.k8s.io", "-n", NS)).toBe("yes")
          expect(yield* canI("create", "events.events.k8s.io", "-n", NS)).toBe("yes")
          expect(yield* canI("list", "ingressclasses.networking.k8s.io")).toBe("yes")
          expect(yield* canI("get", "namespaces/" + NS, "-n", NS)).toBe("yes")
          expect(yield* canI("update", "ingresses.networking.k8s.io", "-n", NS)).toBe("no")
          expect(yield* canI("list", "ingresses.networking.k8s.io", "-n", "default")).toBe("no")
          expect(yield* canI("get", "services", "-n", NS)).toBe("yes")
          expect(yield* canI("update", "services", "-n", NS)).toBe("no")
        }),
      60_000
    )
  })
})
