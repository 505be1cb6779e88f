/**
 * kubectl against LocalCluster's HTTP API, through a kubeconfig it wrote: create from
 * a file, read back, a stale replace refused with 409, server-side apply, a label
 * selector, delete. Runs once per kubectl in test/support/Kubectl.ts (the bundled 1.35,
 * and Debian's 1.20 where CI put it on PATH). Assertions read what the server did
 * (objects read back, its Status messages, its Table columns), never kubectl's own
 * messages, whose wording changes between releases (1.31 added "from <ns> namespace"
 * to `deleted`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { NS } from "./ClusterFixtures.js"

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
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive(
      "creates, reads, refuses a stale replace, applies server-side, selects by label and deletes",
      () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS] })
          const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-kubectl-")
          yield* cluster.writeKubeconfig(kubeconfig)
          const read = (name: string) =>
            run("get", "ingress", name, "-n", NS, "-o", "json").pipe(
              Effect.map((got) => ({ ...got, object: got.code === 0 ? JSON.parse(got.stdout) : undefined }))
            )

          // `-o name` prints the object the server returned, as resource/name: a format
          // scripts rely on, unlike the "created" / "deleted" sentences.
          const created = yield* run("create", "-o", "name", "-f", yield* file("ingress.yaml", INGRESS_YAML))
          expect([created.code, created.stdout.trim()], created.stderr).toEqual([0, "ingress.networking.k8s.io/web"])

          const got = yield* read("web")
          expect(got.code, got.stderr).toBe(0)
          const object = got.object
          expect(object.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
          expect(object.metadata.resourceVersion).toMatch(/^\d+$/)
          expect(object.metadata.generation).toBe(1)
          expect(object.spec.rules[0].host).toBe("web.example.test")
          const stale = yield* file("stale.json", got.stdout)

          const labelled = yield* run("label", "ingress", "web", "-n", NS, "tier=front")
          expect(labelled.code, labelled.stderr).toBe(0)
          const replaced = yield* run("replace", "-f", stale)
          expect(replaced.code).not.toBe(0)
          // The apiserver's Conflict message, from LocalCluster's Status body.
          expect(replaced.stderr).toContain(
            `Operation cannot be fulfilled on ingresses.networking.k8s.io "web": the object has been modified; please apply your changes to the latest version and try again`
          )
          const kept = yield* read("web")
          expect(kept.object.metadata.labels).toEqual({ app: "web", tier: "front" })

          const applyFile = yield* file("apply.yaml", INGRESS_YAML.replace("web.example.test", "www.example.test"))
          const applied = yield* run("apply", "--server-side", "--field-manager=kubectl-test", "-f", applyFile)
          expect(applied.code).not.toBe(0)
          expect(applied.stderr).toContain(`Apply failed with 1 conflict: conflict with "kubectl-create"`)
          expect((yield* read("web")).object.spec.rules[0].host).toBe("web.example.test")
          const forced = yield* run(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kubectl-test",
            "-o",
            "name",
            "-f",
            applyFile
          )
          expect([forced.code, forced.stdout.trim()], forced.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
          expect((yield* read("web")).object.spec.rules[0].host).toBe("www.example.test")

          const selected = yield* run("get", "ingress", "-n", NS, "-l", "app=web,tier in (front)", "-o", "name")
          expect([selected.code, selected.stdout.trim()], selected.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
          const none = yield* run("get", "ingress", "-n", NS, "-l", "app!=web", "-o", "name")
          expect([none.code, none.stdout.trim()], none.stderr).toEqual([0, ""])
          // kubectl asks the server for a Table: these column names are LocalCluster's.
          const table = yield* run("get", "ingress", "-n", NS)
          expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/)
          expect(table.stdout).toContain("www.example.test")

          const deleted = yield* run("delete", "ingress", "web", "-n", NS, "-o", "name")
          expect([deleted.code, deleted.stdout.trim()], deleted.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
          const gone = yield* read("web")
          expect(gone.code).not.toBe(0)
          expect(gone.stderr).toContain(`ingresses.networking.k8s.io "web" not found`)
          const left = yield* run("get", "ingress", "-n", NS, "-o", "name")
          expect([left.code, left.stdout.trim()], left.stderr).toEqual([0, ""])
        }),
      60_000
    )
  })
})
