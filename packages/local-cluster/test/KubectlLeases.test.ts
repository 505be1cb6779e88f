/**
 * kubectl against what controller mode writes: `get leases` with the server's NAME,
 * HOLDER and AGE columns, a `replace` from a stale copy refused, and `get pods -o wide`
 * counting a Pod's readiness gates whose condition is True as another writer patches
 * it. Runs with every kubectl in test/support/Kubectl.ts; assertions read what the
 * server did and its table columns.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { eventually } from "../../../test/support/RouterHarness.js"
import * as DataPlane from "../src/DataPlane.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { LeaseResource, PodResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { send } from "./WireFixtures.js"

const GATE = "session-routing.dev/RoutesProgrammed"

const leaseYaml = (holder: string, resourceVersion?: string) =>
  `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: session-routing-controller
  namespace: ${NS}
${resourceVersion !== undefined ? `  resourceVersion: "${resourceVersion}"\n` : ""}spec:
  holderIdentity: ${holder}
  leaseDurationSeconds: 15
  acquireTime: "2026-01-02T03:04:05.000000Z"
  renewTime: "2026-01-02T03:04:05.000000+01:00"
  leaseTransitions: 0
`

const gatedPodYaml = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${NS}
spec:
  readinessGates:
  - conditionType: ${GATE}
  containers:
  - name: main
    image: registry.example/app:1.0
`

describe("kubectl on Leases and readiness gates", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive("lists a Lease with its holder, and refuses a replace from a copy older than the Lease", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-kubectl-leases-")
        yield* cluster.writeKubeconfig(kubeconfig)

        const created = yield* run("create", "-f", yield* file("lease.yaml", leaseYaml("controller-0")))
        expect(created.code, created.stderr).toBe(0)
        const version = (yield* cluster.store.get(LeaseResource, NS, "session-routing-controller")).metadata
          ?.resourceVersion
        const table = yield* run("get", "leases", "-n", NS)
        expect(table.code, table.stderr).toBe(0)
        expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+HOLDER\s+AGE$/)
        expect(table.stdout.split("\n")[1]).toMatch(/^session-routing-controller\s+controller-0\s+\S+$/)
        // The MicroTime comes back in UTC, its microseconds kept.
        const renewed = yield* run(
          "get",
          "lease",
          "session-routing-controller",
          "-n",
          NS,
          "-o",
          "jsonpath={.spec.renewTime}"
        )
        expect(renewed.stdout).toBe("2026-01-02T02:04:05.000000Z")

        const taken = yield* run("replace", "-f", yield* file("taken.yaml", leaseYaml("controller-1", version)))
        expect(taken.code, taken.stderr).toBe(0)
        // A second candidate still holding the first copy loses.
        const stale = yield* run("replace", "-f", yield* file("stale.yaml", leaseYaml("controller-2", version)))
        expect(stale.code).not.toBe(0)
        expect(yield* cluster.metrics.count({ verb: "PUT", resource: "leases", code: 409 })).toBe(1)
        const holder = (yield* cluster.store.get(LeaseResource, NS, "session-routing-controller")).spec?.holderIdentity
        expect(holder).toBe("controller-1")
      }))

    it.scopedLive("shows READINESS GATES 0/1 in the wide columns until the gate's condition is True, then 1/1", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const plane = yield* DataPlane.make(cluster.store)
        const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-kubectl-gates-")
        yield* cluster.writeKubeconfig(kubeconfig)
        const created = yield* run("create", "-f", yield* file("pod.yaml", gatedPodYaml))
        expect(created.code, created.stderr).toBe(0)
        yield* plane.registerPod({ namespace: NS, name: "web" }, { host: "127.0.0.1", port: 8080 })

        const wide = run("get", "pods", "-n", NS, "-o", "wide")
        const before = yield* wide
        expect(before.stdout.split("\n")[0]).toMatch(
          /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/
        )
        expect(before.stdout.split("\n")[1]).toMatch(/^web\s+1\/1\s+Running\s+0\s+\S+\s+127\.0\.0\.1\s+.*\s0\/1$/)
        // Without -o wide the gates are not shown.
        expect((yield* run("get", "pods", "-n", NS)).stdout.split("\n")[0]).toMatch(
          /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/
        )

        const patched = yield* send(cluster.url, "PATCH", `/api/v1/namespaces/${NS}/pods/web/status`, {
          status: { conditions: [{ type: GATE, status: "True" }] }
        }, "application/strategic-merge-patch+json")
        expect(patched.status, patched.text).toBe(200)
        yield* eventually(
          Effect.orDie(cluster.store.get(PodResource, NS, "web")),
          (pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
        )
        expect((yield* wide).stdout.split("\n")[1]).toMatch(/\s1\/1$/)
      }))
  })
})
