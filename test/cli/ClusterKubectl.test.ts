/**
 * A client nobody here wrote against the shipped command: `session-routing cluster`
 * runs as its own process, and kubectl (the bundled 1.35, and Debian's 1.20 where CI put
 * it on PATH: see test/support/Kubectl.ts) works through the kubeconfig it wrote: the seeded
 * IngressClass, an Ingress created from a file and read back, the controller's
 * address (waited for with `kubectl wait` where kubectl has `--for=jsonpath`), a stale
 * replace refused with 409 Conflict, a label selector, delete. The
 * in-process counterpart is packages/local-cluster/test/Kubectl.test.ts; this one proves the command
 * serves it. Assertions read what the server did (objects read back, its Status
 * message), never kubectl's own messages, whose wording changes between releases (1.31
 * added "from <ns> namespace" to `deleted`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { kubectls, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"
import { startClusterProcess } from "./ClusterProcess.js"

const NS = "telo-sessions"

const ingressYaml = (name: string, tier: string) =>
  `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: ${NS}
  labels:
    app: kubectl-test
    tier: ${tier}
spec:
  ingressClassName: local
  rules:
  - host: ${name}.sessions.localtest.me
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: ${name}
            port:
              number: 8080
`

describe("kubectl against session-routing cluster", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.live(
      "creates an Ingress from a file, reads it back, refuses a stale replace with 409, selects by label and deletes it",
      () =>
        Effect.scoped(
          Effect.gen(function*() {
            const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "cluster-kubectl-")
            // A short delay, so the controller's address shows up within the test.
            const proc = yield* startClusterProcess(["--write-kubeconfig", kubeconfig, "--controller-delay", "100"])

            // What the command seeded is there for kubectl too.
            const classes = yield* run("get", "ingressclass", "-o", "name")
            expect([classes.code, classes.stdout.trim()], classes.stderr).toEqual([
              0,
              "ingressclass.networking.k8s.io/local"
            ])

            // `-o name` prints the object the server returned, as resource/name: a format
            // scripts rely on, unlike the "created" / "deleted" sentences.
            const created = yield* run(
              "create",
              "-o",
              "name",
              "-f",
              yield* file("web.yaml", ingressYaml("web", "front"))
            )
            expect([created.code, created.stdout.trim()], created.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
            const other = yield* run("create", "-f", yield* file("api.yaml", ingressYaml("api", "back")))
            expect(other.code, other.stderr).toBe(0)

            const got = yield* run("get", "ingress", "web", "-n", NS, "-o", "json")
            expect(got.code, got.stderr).toBe(0)
            const object = JSON.parse(got.stdout)
            expect(object.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
            expect(object.metadata.resourceVersion).toMatch(/^\d+$/)
            expect(object.metadata.generation).toBe(1)
            expect(object.spec.rules[0].host).toBe("web.sessions.localtest.me")

            // The cluster's ingress controller claims class "local" and publishes its address.
            // kubectl 1.23 and later wait for it (1.35 through a watch-list); older ones poll.
            if (kubectl.minor >= 23) {
              const waited = yield* run(
                "wait",
                "-n",
                NS,
                "--for=jsonpath={.status.loadBalancer.ingress[0].ip}=127.0.0.1",
                "ingress/web",
                "--timeout=20s"
              )
              expect(waited.code, waited.stderr).toBe(0)
            }
            const address = yield* run(
              "get",
              "ingress",
              "web",
              "-n",
              NS,
              "-o",
              "jsonpath={.status.loadBalancer.ingress[0].ip}"
            ).pipe(
              Effect.filterOrFail(
                (run) => run.stdout === "127.0.0.1",
                (run) => `no address yet: ${run.stdout}${run.stderr}`
              ),
              Effect.retry({ schedule: Schedule.spaced(Duration.millis(100)), times: 50 })
            )
            expect(address.stdout).toBe("127.0.0.1")

            // The copy read above is stale once anything else writes the object (the
            // label here; the controller's status write already did too).
            const stale = yield* file("stale.json", got.stdout)
            const labelled = yield* run("label", "ingress", "web", "-n", NS, "reviewed=yes")
            expect(labelled.code, labelled.stderr).toBe(0)
            const replaced = yield* run("replace", "-f", stale)
            expect(replaced.code).not.toBe(0)
            // The apiserver's Conflict message, from LocalCluster's Status body.
            expect(replaced.stderr).toContain(
              `Operation cannot be fulfilled on ingresses.networking.k8s.io "web": the object has been modified; please apply your changes to the latest version and try again`
            )
            // The server kept the newer object: a replace that went through would have put
            // back the stale copy, which has no `reviewed` label.
            const after = yield* run("get", "ingress", "web", "-n", NS, "-o", "json")
            expect(after.code, after.stderr).toBe(0)
            const kept = JSON.parse(after.stdout)
            expect([kept.metadata.uid, kept.metadata.labels]).toEqual([
              object.metadata.uid,
              { app: "kubectl-test", tier: "front", reviewed: "yes" }
            ])
            expect(Number(kept.metadata.resourceVersion)).toBeGreaterThan(Number(object.metadata.resourceVersion))

            const front = yield* run("get", "ingress", "-n", NS, "-l", "app=kubectl-test,tier=front", "-o", "name")
            expect([front.code, front.stdout.trim()], front.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
            const notFront = yield* run("get", "ingress", "-n", NS, "-l", "tier notin (front)", "-o", "name")
            expect([notFront.code, notFront.stdout.trim()], notFront.stderr).toEqual([
              0,
              "ingress.networking.k8s.io/api"
            ])
            const both = yield* run("get", "ingress", "-n", NS, "-l", "app=kubectl-test", "-o", "name")
            expect(both.stdout.trim().split("\n").sort()).toEqual([
              "ingress.networking.k8s.io/api",
              "ingress.networking.k8s.io/web"
            ])

            const deleted = yield* run("delete", "ingress", "web", "-n", NS, "-o", "name")
            expect([deleted.code, deleted.stdout.trim()], deleted.stderr).toEqual([0, "ingress.networking.k8s.io/web"])
            const gone = yield* run("get", "ingress", "web", "-n", NS)
            expect(gone.code).not.toBe(0)
            expect(gone.stderr).toContain(`ingresses.networking.k8s.io "web" not found`)
            const left = yield* run("get", "ingress", "-n", NS, "-o", "name")
            expect([left.code, left.stdout.trim()], left.stderr).toEqual([0, "ingress.networking.k8s.io/api"])

            proc.child.kill("SIGINT")
            expect(yield* proc.ended()).toEqual({ code: 0, signal: null })
          })
        ),
      90_000
    )
  })
})
