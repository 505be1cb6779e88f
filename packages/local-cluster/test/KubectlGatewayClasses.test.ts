/**
 * `kubectl get gatewayclasses` against LocalCluster prints the columns of the Gateway API
 * CRD's additionalPrinterColumns: NAME, CONTROLLER, ACCEPTED and AGE, and DESCRIPTION
 * (priority 1) with `-o wide`. Runs with every kubectl in test/support/Kubectl.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { NS } from "./ClusterFixtures.js"

const gatewayClassesYaml = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: described
spec:
  controllerName: example.com/gateway
  description: Routes session hosts
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: plain
spec:
  controllerName: example.com/gateway
`

/** A table's lines. */
const lines = (stdout: string) => stdout.replace(/\n$/, "").split("\n")

describe("kubectl get gatewayclasses", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive("prints the CRD's columns, the description only with -o wide", () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-kubectl-gatewayclasses-")
        yield* cluster.writeKubeconfig(kubeconfig)
        const created = yield* run("create", "-f", yield* file("classes.yaml", gatewayClassesYaml))
        expect(created.code, created.stderr).toBe(0)

        // No controller has accepted either class: the CRD's default condition is Unknown.
        const table = yield* run("get", "gatewayclasses")
        expect(table.code, table.stderr).toBe(0)
        expect(lines(table.stdout)).toEqual([
          expect.stringMatching(/^NAME\s+CONTROLLER\s+ACCEPTED\s+AGE$/),
          expect.stringMatching(/^described\s+example\.com\/gateway\s+Unknown\s+\d+s$/),
          expect.stringMatching(/^plain\s+example\.com\/gateway\s+Unknown\s+\d+s$/)
        ])

        // A description the class does not have is a null cell, blank as from a real server.
        const wide = yield* run("get", "gatewayclasses", "-o", "wide")
        expect(wide.code, wide.stderr).toBe(0)
        expect(lines(wide.stdout)).toEqual([
          expect.stringMatching(/^NAME\s+CONTROLLER\s+ACCEPTED\s+AGE\s+DESCRIPTION$/),
          expect.stringMatching(/^described\s+example\.com\/gateway\s+Unknown\s+\d+s\s+Routes session hosts$/),
          expect.stringMatching(/^plain\s+example\.com\/gateway\s+Unknown\s+\d+s\s*$/)
        ])
      }))
  })
})
