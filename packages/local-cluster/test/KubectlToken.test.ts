/**
 * `kubectl create token` against LocalCluster with RBAC on: the admin gets a token for a
 * ServiceAccount, a kubeconfig holding it (same server, same CA) is that ServiceAccount,
 * and the RBAC bound to it applies. kubectl reads the TokenRequest the server echoes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFile } from "node:fs/promises"
import { parse, stringify } from "yaml"
import { type Kubectl, kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { LocalCluster } from "../src/LocalCluster.js"

const NS = "telo-sessions"

/** A cluster with RBAC on, `kubectl` as its admin, and the ServiceAccount `runner` the admin made. */
const withRunner = (kubectl: Kubectl) =>
  Effect.gen(function*() {
    const cluster = yield* LocalCluster.make({ namespaces: [NS], auth: { rbac: true } })
    const admin = yield* kubectlWorkspace(kubectl, "local-cluster-token-")
    yield* cluster.writeKubeconfig(admin.kubeconfig)
    const created = yield* admin.run("create", "serviceaccount", "runner", "-n", NS)
    expect(created.code, created.stderr).toBe(0)
    return { cluster, admin }
  })

/** The admin kubeconfig with its user swapped for `token`. */
const withToken = (kubeconfig: string, token: string): string => {
  const config = parse(kubeconfig) as { users: Array<{ name: string; user: unknown }> }
  return stringify({ ...config, users: config.users.map((u) => ({ name: u.name, user: { token } })) })
}

describe("kubectl create token against LocalCluster", () => {
  if (kubectls.length === 0) return requireKubectl()
  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    // `create token` came in kubectl 1.24.
    it.scopedLive.runIf(kubectl.minor >= 24)(
      "prints a token that is the ServiceAccount, and the RBAC bound to it applies",
      () =>
        Effect.gen(function*() {
          const { admin, cluster } = yield* withRunner(kubectl)
          const created = yield* admin.run("create", "token", "runner", "-n", NS)
          expect(created.code, created.stderr).toBe(0)
          const token = created.stdout.trim()
          expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)

          const runner = yield* kubectlWorkspace(kubectl, "local-cluster-token-")
          yield* Effect.promise(() => writeFile(runner.kubeconfig, withToken(cluster.kubeconfig(), token)))
          const refused = yield* runner.run("get", "services", "-n", NS)
          // The server's 403 names who the token is; kubectl prints the Status message as it came.
          expect([refused.code, refused.stderr]).toEqual([
            1,
            expect.stringContaining(
              `User "system:serviceaccount:${NS}:runner" cannot list resource "services" in API group "" in the namespace "${NS}"`
            )
          ])
          for (
            const args of [
              ["create", "role", "reader", "-n", NS, "--verb=list", "--resource=services"],
              ["create", "rolebinding", "reader", "-n", NS, "--role=reader", `--serviceaccount=${NS}:runner`]
            ]
          ) {
            const granted = yield* admin.run(...args)
            expect(granted.code, granted.stderr).toBe(0)
          }
          const listed = yield* runner.run("get", "services", "-n", NS)
          expect(listed.code, listed.stderr).toBe(0)
          // Its own token is not its to make: that takes create on serviceaccounts/token.
          expect((yield* runner.run("create", "token", "runner", "-n", NS)).code).not.toBe(0)
        }),
      60_000
    )

    it.scopedLive.runIf(kubectl.minor >= 24)(
      "prints the TokenRequest the server echoes, and fails where the server refuses",
      () =>
        Effect.gen(function*() {
          const { admin } = yield* withRunner(kubectl)
          const printed = yield* admin.run("create", "token", "runner", "-n", NS, "--duration=20m", "-o", "json")
          expect(printed.code, printed.stderr).toBe(0)
          const request = JSON.parse(printed.stdout)
          expect([request.kind, request.metadata.name, request.metadata.namespace, request.spec]).toEqual([
            "TokenRequest",
            "runner",
            NS,
            {
              audiences: ["https://kubernetes.default.svc.cluster.local"],
              expirationSeconds: 1200,
              boundObjectRef: null
            }
          ])
          expect(
            Date.parse(request.status.expirationTimestamp) - Date.parse(request.metadata.creationTimestamp)
          ).toBe(1_200_000)
          // Under ten minutes (a 422), and a ServiceAccount that does not exist (a 404).
          expect((yield* admin.run("create", "token", "runner", "-n", NS, "--duration=5m")).code).not.toBe(0)
          expect((yield* admin.run("create", "token", "ghost", "-n", NS)).code).not.toBe(0)
        }),
      60_000
    )
  })
})
