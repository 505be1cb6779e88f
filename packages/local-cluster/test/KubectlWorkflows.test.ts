/**
 * What a person does with kubectl against the session cluster over HTTP, per kubectl in
 * test/support/Kubectl.ts: client-side apply (twice, the second a no-op), server-side
 * apply over it (the 409 and --force-conflicts), diff, wait (for the controller's
 * address, a condition, a delete), get -w seeing a status change, and explain. The assertions
 * read what the server did (objects, resourceVersions, managedFields, its Status
 * messages), not kubectl's sentences. Pods, Events and the background and foreground
 * cascades are in KubectlWorkloads.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type HttpRoute } from "session-routing/kubernetes"
import { kubectls, requireKubectl } from "../../../test/support/Kubectl.js"
import { HttpRouteResource, IngressResource, PodResource, ServiceResource } from "../src/ServedResources.js"
import {
  ingressYaml,
  NS,
  ownedIngress,
  podYaml,
  portOf,
  routeYaml,
  serviceYaml,
  setUp,
  watchOpen
} from "./KubectlWorkflowFixtures.js"

describe("kubectl workflows against the session cluster", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive(
      "applies client-side, applies the same file again without a write, and takes a field over server-side only when forced",
      () =>
        Effect.gen(function*() {
          const { file, read, run } = yield* setUp(kubectl, true)
          const both = yield* file("web.yaml", `${ingressYaml(8080)}---\n${routeYaml(8080)}`)
          const created = yield* run("apply", "-f", both)
          expect(created.code, created.stderr).toBe(0)
          const ingress = yield* read(IngressResource)
          const route = yield* read(HttpRouteResource)
          expect(ingress.metadata?.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toContain(
            `"number":8080`
          )

          // The Ingress patch is empty, so kubectl sends none. The HTTPRoute's is not: the
          // server defaulted items inside its lists (parentRef group and kind, backendRef
          // weight), and a JSON merge patch replaces whole lists, so kubectl sends them again;
          // the server defaults them back and, nothing having changed, writes nothing.
          const again = yield* run("apply", "-f", both)
          expect(again.code, again.stderr).toBe(0)
          expect(yield* read(IngressResource)).toEqual(ingress)
          expect(yield* read(HttpRouteResource)).toEqual(route)

          // Server-side apply of a field the client-side applier owns.
          const moved = yield* file("moved.yaml", ingressYaml(9090))
          const refused = yield* run("apply", "--server-side", "--field-manager=ops", "-f", moved)
          expect(refused.code).not.toBe(0)
          // The server's 409 message: an Update manager is named with its version and time.
          expect(refused.stderr).toMatch(
            /Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using networking\.k8s\.io\/v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.spec\.rules/
          )
          expect(yield* read(IngressResource)).toEqual(ingress)
          const forced = yield* run("apply", "--server-side", "--force-conflicts", "--field-manager=ops", "-f", moved)
          expect(forced.code, forced.stderr).toBe(0)
          const taken = yield* read(IngressResource)
          expect([portOf(taken), taken.metadata?.generation]).toEqual([9090, 2])
          expect(taken.metadata?.managedFields?.find((m) => m.manager === "ops")).toMatchObject({ operation: "Apply" })
        }),
      90_000
    )

    it.scopedLive(
      "applies and patches one Service port as a strategic merge, keeping the other ports whole",
      () =>
        Effect.gen(function*() {
          const { file, read, run } = yield* setUp(kubectl, true)
          expect((yield* run("apply", "-f", yield* file("svc.yaml", serviceYaml(8080)))).code).toBe(0)
          const changed = yield* run("apply", "-f", yield* file("svc2.yaml", serviceYaml(8081)))
          expect(changed.code, changed.stderr).toBe(0)
          // kubectl sends only the changed port, keyed by `port`, with $setElementOrder.
          expect((yield* read(ServiceResource)).spec?.ports).toEqual([
            { name: "http", port: 80, protocol: "TCP", targetPort: 8081 },
            { name: "admin", port: 9000, protocol: "TCP", targetPort: 9000 }
          ])
          // `kubectl patch` sends a strategic merge patch by default: one item, by its key.
          const patched = yield* run(
            "patch",
            "service",
            "web",
            "-p",
            `{"spec":{"ports":[{"port":9000,"$patch":"delete"}]}}`
          )
          expect(patched.code, patched.stderr).toBe(0)
          expect((yield* read(ServiceResource)).spec?.ports).toEqual([
            { name: "http", port: 80, protocol: "TCP", targetPort: 8081 }
          ])
        }),
      90_000
    )

    // Background and foreground cascades are in KubectlWorkloads.test.ts.
    it.scopedLive(
      "deletes a Pod with --cascade=orphan and leaves what it owned, no longer owned",
      () =>
        Effect.gen(function*() {
          const { file, run, store } = yield* setUp(kubectl, true, { controllerManager: true })
          expect((yield* run("apply", "-f", yield* file("pod.yaml", podYaml("web")))).code).toBe(0)
          const owner = yield* Effect.orDie(store.get(PodResource, NS, "web"))
          yield* Effect.orDie(store.create(IngressResource, NS, ownedIngress("web", owner)))
          // The Pod carries the orphan finalizer until the collector has let go of the Ingress;
          // kubectl waits for the Pod to be gone.
          const orphaned = yield* run("delete", "pod", "web", "--cascade=orphan")
          expect(orphaned.code, orphaned.stderr).toBe(0)
          expect((yield* Effect.either(store.get(PodResource, NS, "web")))._tag).toBe("Left")
          expect((yield* Effect.orDie(store.get(IngressResource, NS, "web"))).metadata?.ownerReferences).toBeUndefined()
        }),
      90_000
    )

    // kubectl 1.20 first asks the OpenAPI v2 document whether each kind's PATCH takes dryRun.
    it.scopedLive(
      "diffs a file against the server's dry run: exit 0 when it matches, 1 with the change when not, and nothing written",
      () =>
        Effect.gen(function*() {
          const { file, read, run } = yield* setUp(kubectl, true)
          const same = yield* file("same.yaml", `${ingressYaml(8080)}---\n${routeYaml(8080)}`)
          expect((yield* run("apply", "-f", same)).code).toBe(0)
          const ingress = yield* read(IngressResource)
          const route = yield* read(HttpRouteResource)

          const unchanged = yield* run("diff", "-f", same)
          expect([unchanged.code, unchanged.stdout], unchanged.stderr).toEqual([0, ""])

          const changed = yield* run(
            "diff",
            "-f",
            yield* file("changed.yaml", `${ingressYaml(9090)}---\n${routeYaml(9090)}`)
          )
          expect(changed.code, changed.stderr).toBe(1)
          // Both objects differ by their port; the dry run also shows the generation it would bump.
          expect(changed.stdout.match(/^\+\s+(number|port): 9090$/gm)).toHaveLength(2)
          expect(changed.stdout).toMatch(/^\+\s+generation: 2$/m)
          expect(yield* read(IngressResource)).toEqual(ingress)
          expect(yield* read(HttpRouteResource)).toEqual(route)
        }),
      90_000
    )

    it.scopedLive(
      "waits for the controller's address, a Gateway condition, a route's parent condition and a delete",
      () =>
        Effect.gen(function*() {
          const { file, metrics, read, run, start, store } = yield* setUp(kubectl, false)
          const applied = yield* run(
            "apply",
            "-f",
            yield* file("web.yaml", `${ingressYaml(8080)}---\n${routeYaml(8080)}`)
          )
          expect(applied.code, applied.stderr).toBe(0)

          const programmed = yield* run("wait", "--for=condition=Programmed", "gateway/sessions", "--timeout=20s")
          expect(programmed.code, programmed.stderr).toBe(0)
          // An HTTPRoute has no status.conditions, on any server: its conditions are per
          // parent, so `--for=condition=Accepted httproute/web` never holds; a jsonpath does.
          // kubectl 1.23 brought `--for=jsonpath`.
          if (kubectl.minor >= 23) {
            const address = yield* run(
              "wait",
              "--for=jsonpath={.status.loadBalancer.ingress[0].ip}=127.0.0.1",
              "ingress/web",
              "--timeout=20s"
            )
            expect(address.code, address.stderr).toBe(0)
            expect((yield* read(IngressResource)).status?.loadBalancer?.ingress).toEqual([{ ip: "127.0.0.1" }])
            const accepted = yield* run(
              "wait",
              `--for=jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status}=True`,
              "httproute/web",
              "--timeout=20s"
            )
            expect(accepted.code, accepted.stderr).toBe(0)
            const parents = (yield* read(HttpRouteResource) as Effect.Effect<HttpRoute>).status?.parents ?? []
            expect(parents[0]?.conditions?.find((c) => c.type === "Accepted")?.status).toBe("True")
          }

          const gone = yield* start("wait", "--for=delete", "ingress/web", "--timeout=20s")
          yield* watchOpen(metrics)
          yield* Effect.orDie(store.delete(IngressResource, NS, "web"))
          const ended = yield* gone.ended
          expect(ended.code, ended.stderr).toBe(0)
        }),
      90_000
    )

    // kubectl 1.27 and later explain from OpenAPI v3; older ones read v2, which LocalCluster serves empty.
    it.scopedLive.runIf(kubectl.minor >= 27)(
      "explains Ingress and HTTPRoute fields from the server's OpenAPI v3 schemas",
      () =>
        Effect.gen(function*() {
          const { run } = yield* setUp(kubectl, true)
          const parentRefs = yield* run("explain", "httproute.spec.parentRefs")
          expect(parentRefs.code, parentRefs.stderr).toBe(0)
          // The fields and the required one are those of the CRD's schema.
          for (const field of ["group", "kind", "namespace", "port", "sectionName"]) {
            expect(parentRefs.stdout).toMatch(new RegExp(`^\\s+${field}\\s+<(string|integer)>$`, "m"))
          }
          expect(parentRefs.stdout).toMatch(/^\s+name\s+<string> -required-$/m)
          expect(parentRefs.stdout).toContain("A listener of the Gateway, by name.")
          const host = yield* run("explain", "ingress.spec.rules.host")
          expect([host.code, host.stdout], host.stderr).toEqual([0, expect.stringMatching(/^FIELD: host <string>$/m)])
          const missing = yield* run("explain", "ingress.spec.nothing")
          expect(missing.code).not.toBe(0)
        }),
      90_000
    )

    it.scopedLive("get -w prints the object again when its status changes", () =>
      Effect.gen(function*() {
        const { file, metrics, read, run, start, store } = yield* setUp(kubectl, true)
        expect((yield* run("apply", "-f", yield* file("web.yaml", ingressYaml(8080)))).code).toBe(0)
        const before = yield* read(IngressResource)
        const watching = yield* start(
          "get",
          "ingress",
          "web",
          "-w",
          `-o=jsonpath={.metadata.resourceVersion} {.status.loadBalancer.ingress[0].ip}{"\\n"}`
        )
        const lines = (stdout: string) => stdout.split("\n").filter((line) => line !== "")
        expect(lines(yield* watching.stdoutWhen((out) => lines(out).length >= 1))).toEqual([
          `${before.metadata?.resourceVersion} `
        ])
        yield* watchOpen(metrics)
        const after = yield* Effect.orDie(store.replaceStatus(IngressResource, NS, "web", {
          ...before,
          status: { loadBalancer: { ingress: [{ ip: "10.0.0.7" }] } }
        }))
        expect(lines(yield* watching.stdoutWhen((out) => lines(out).length >= 2))).toEqual([
          `${before.metadata?.resourceVersion} `,
          `${after.metadata?.resourceVersion} 10.0.0.7`
        ])
      }), 90_000)
  })
})
