/**
 * kubectl against LocalCluster's HTTP API, through a kubeconfig it wrote: create from
 * a file, read back, a stale replace refused with 409, server-side apply, a label
 * selector, delete. Runs the kubectl in $KUBECTL or on PATH (Debian's
 * `kubernetes-client`, kubectl 1.20). Without one it fails, naming the install step:
 * a skipped wire test would hide exactly the missing step it exists to catch.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LocalCluster } from "../../src/cluster/LocalCluster.js"
import { NS } from "./ClusterFixtures.js"
import { kubectlAvailable, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"

const INGRESS_YAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ${NS}
  labels:
    app: web
spec:
  rules:
  - host: web.example.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`

describe("kubectl against LocalCluster", () => {
  if (!kubectlAvailable) return requireKubectl()

  it.scopedLive(
    "creates, reads, refuses a stale replace, applies server-side, selects by label and deletes",
    () =>
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: [NS] })
        const { file, kubeconfig, run } = yield* kubectlWorkspace("local-cluster-kubectl-")
        yield* cluster.writeKubeconfig(kubeconfig)

        const created = yield* run("create", "-f", yield* file("ingress.yaml", INGRESS_YAML))
        expect([created.code, created.stdout.trim()], created.stderr).toEqual([0, "ingress.networking.k8s.io/web created"])

        const got = yield* run("get", "ingress", "web", "-n", NS, "-o", "json")
        expect(got.code, got.stderr).toBe(0)
        const object = JSON.parse(got.stdout)
        expect(object.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
        expect(object.metadata.resourceVersion).toMatch(/^\d+$/)
        expect(object.metadata.generation).toBe(1)
        const stale = yield* file("stale.json", got.stdout)

        const labelled = yield* run("label", "ingress", "web", "-n", NS, "tier=front")
        expect(labelled.code, labelled.stderr).toBe(0)
        const replaced = yield* run("replace", "-f", stale)
        expect(replaced.code).not.toBe(0)
        expect(replaced.stderr).toContain(
          `Error from server (Conflict): error when replacing "${stale}": Operation cannot be fulfilled on ingresses.networking.k8s.io "web": the object has been modified; please apply your changes to the latest version and try again`
        )

        const applyFile = yield* file("apply.yaml", INGRESS_YAML.replace("web.example.test", "www.example.test"))
        const applied = yield* run("apply", "--server-side", "--field-manager=kubectl-test", "-f", applyFile)
        expect(applied.code).not.toBe(0)
        expect(applied.stderr).toContain(`Apply failed with 1 conflict: conflict with "kubectl-create"`)
        const forced = yield* run("apply", "--server-side", "--force-conflicts", "--field-manager=kubectl-test", "-f", applyFile)
        expect([forced.code, forced.stdout.trim()], forced.stderr).toEqual([0, "ingress.networking.k8s.io/web serverside-applied"])

        const selected = yield* run("get", "ingress", "-n", NS, "-l", "app=web,tier in (front)", "-o", "name")
        expect([selected.code, selected.stdout.trim()], selected.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
        const none = yield* run("get", "ingress", "-n", NS, "-l", "app!=web", "-o", "name")
        expect([none.code, none.stdout.trim()], none.stderr).toEqual([0, ""])
        const table = yield* run("get", "ingress", "-n", NS)
        expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/)
        expect(table.stdout).toContain("www.example.test")

        const deleted = yield* run("delete", "ingress", "web", "-n", NS)
        expect([deleted.code, deleted.stdout.trim()], deleted.stderr).toEqual([0, `ingress.networking.k8s.io "web" deleted`])
        const gone = yield* run("get", "ingress", "web", "-n", NS)
        expect(gone.stderr.trim()).toBe(`Error from server (NotFound): ingresses.networking.k8s.io "web" not found`)
      }),
    60_000
  )
})
