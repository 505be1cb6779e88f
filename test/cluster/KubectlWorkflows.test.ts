/**
 * What a person does with kubectl against the session cluster over HTTP, per kubectl in
 * test/support/Kubectl.ts: client-side apply (twice, the second a no-op), server-side
 * apply over it (the 409 and --force-conflicts), diff, wait (for the controller's
 * address, a condition, a delete), get -w seeing a status change, and explain. The assertions
 * read what the server did (objects, resourceVersions, managedFields, its Status
 * messages), not kubectl's sentences.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type { ClusterMetrics } from "../../src/cluster/Metrics.js"
import * as SessionCluster from "../../src/cluster/SessionCluster.js"
import type { HttpRoute, Ingress, KubeObject, Pod } from "../../src/domain/Objects.js"
import {
  HttpRouteResource,
  IngressResource,
  PodResource,
  type ResourceType,
  ServiceResource
} from "../../src/domain/Resources.js"
import { type Kubectl, kubectls, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"

const NS = SessionCluster.DEFAULT_SESSION_NAMESPACE

const ingressYaml = (port: number) =>
  `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ${NS}
spec:
  ingressClassName: local
  rules:
  - host: web.sessions.localtest.me
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: ${port}
`

const routeYaml = (port: number) =>
  `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: ${NS}
spec:
  parentRefs:
  - name: sessions
  hostnames:
  - web.sessions.localtest.me
  rules:
  - backendRefs:
    - name: web
      port: ${port}
`

/** The session cluster, with controllers that answer in 300 ms unless `quiet`, and a workspace whose kubectl talks to it. */
const setUp = (kubectl: Kubectl, quiet: boolean, options: { readonly controllerManager?: boolean } = {}) =>
  Effect.gen(function*() {
    const controller = quiet ? false : { delay: Duration.millis(300) }
    const session = yield* SessionCluster.make({
      ingress: controller,
      gateway: controller,
      dataPlane: false,
      ...options
    })
    const workspace = yield* kubectlWorkspace(kubectl, "kubectl-workflows-")
    yield* session.cluster.writeKubeconfig(workspace.kubeconfig)
    const store = session.cluster.store
    const read = <A extends KubeObject>(resource: ResourceType<A>) => Effect.orDie(store.get(resource, NS, "web"))
    return { ...workspace, store, read, metrics: session.cluster.metrics }
  })

/**
 * Until the server holds kubectl's watch on Ingresses open, and a moment more for it to
 * reach the store. kubectl 1.20 reads one object with a GET and then watches from
 * version 0, whose first event it takes for what it already printed: a change made
 * before that watch starts would be lost to it, as on a real server.
 */
const watchOpen = (metrics: ClusterMetrics) =>
  metrics.waitFor((snapshot) =>
    snapshot.longRunning.some((w) => w.verb === "WATCH" && w.resource === "ingresses" && w.count > 0) ? true : undefined
  ).pipe(Effect.zipRight(Effect.sleep(Duration.millis(100))))

const serviceYaml = (targetPort: number) =>
  `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${NS}
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: ${targetPort}
  - name: admin
    port: 9000
`

const podYaml = (...names: ReadonlyArray<string>) =>
  names.map((name) =>
    `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${NS}
spec:
  containers:
  - name: main
    image: registry.example/app:1.0
`
  ).join("---\n")

/** An Ingress owned by `owner`, as the session router writes one for its Pod. */
const ownedIngress = (name: string, owner: Pod): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: {
    name,
    ownerReferences: [{
      apiVersion: "v1",
      kind: "Pod",
      name: owner.metadata!.name!,
      uid: owner.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true
    }]
  },
  spec: { rules: [{ host: `${name}.sessions.localtest.me` }] }
})

const portOf = (ingress: Ingress) => ingress.spec?.rules?.[0]?.http?.paths[0]?.backend.service?.port?.number

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
      "applies a change to one Service port as a strategic merge, keeping the other ports whole",
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
        }),
      90_000
    )

    it.scopedLive(
      "deletes a Pod with --cascade=foreground after what it owns, background before it, orphan leaving it",
      () =>
        Effect.gen(function*() {
          const { file, run, store } = yield* setUp(kubectl, true, { controllerManager: true })
          const created = yield* run("apply", "-f", yield* file("pods.yaml", podYaml("fg", "bg", "orphan")))
          expect(created.code, created.stderr).toBe(0)
          for (const name of ["fg", "bg", "orphan"]) {
            const owner = yield* Effect.orDie(store.get(PodResource, NS, name))
            yield* Effect.orDie(store.create(IngressResource, NS, ownedIngress(name, owner)))
          }
          const exists = (resource: ResourceType<KubeObject>, name: string) =>
            Effect.map(Effect.either(store.get(resource, NS, name)), (got) => got._tag === "Right")
          const pods = PodResource as ResourceType<KubeObject>
          const ingresses = IngressResource as ResourceType<KubeObject>

          // Foreground: the Pod waits, marked for deletion, until the collector removed what
          // it owns; kubectl waits for the Pod, so both are gone when it returns.
          const foreground = yield* run("delete", "pod", "fg", "--cascade=foreground")
          expect(foreground.code, foreground.stderr).toBe(0)
          expect([yield* exists(pods, "fg"), yield* exists(ingresses, "fg")]).toEqual([false, false])

          // Background: the Pod goes at once, the Ingress once the collector gets to it.
          const background = yield* run("delete", "pod", "bg", "--cascade=background")
          expect(background.code, background.stderr).toBe(0)
          expect(yield* exists(pods, "bg")).toBe(false)
          const collected = yield* run("wait", "--for=delete", "ingress/bg", "--timeout=20s")
          // kubectl 1.20 fails the wait for an object already gone ("no matching resources").
          if (kubectl.minor > 20) expect(collected.code, collected.stderr).toBe(0)
          expect(yield* exists(ingresses, "bg")).toBe(false)

          // Orphan: the Ingress stays, no longer owned.
          const orphaned = yield* run("delete", "pod", "orphan", "--cascade=orphan")
          expect(orphaned.code, orphaned.stderr).toBe(0)
          expect(yield* exists(pods, "orphan")).toBe(false)
          expect((yield* Effect.orDie(store.get(IngressResource, NS, "orphan"))).metadata?.ownerReferences)
            .toBeUndefined()
        }),
      90_000
    )

    it.scopedLive("lists Pods, and the Events about one by the object they involve", () =>
      Effect.gen(function*() {
        const { file, run, store } = yield* setUp(kubectl, true)
        expect((yield* run("apply", "-f", yield* file("pod.yaml", podYaml("web")))).code).toBe(0)
        const pods = yield* run("get", "pods", "-o", "name")
        expect([pods.code, pods.stdout.trim()], pods.stderr).toEqual([0, "pod/web"])
        const owner = yield* Effect.orDie(store.get(PodResource, NS, "web"))
        const event = yield* file(
          "event.yaml",
          `apiVersion: v1
kind: Event
metadata:
  name: web.scheduled
  namespace: ${NS}
involvedObject:
  apiVersion: v1
  kind: Pod
  name: web
  namespace: ${NS}
  uid: ${owner.metadata?.uid}
reason: Scheduled
message: assigned to a node
type: Normal
`
        )
        expect((yield* run("create", "-f", event)).code).toBe(0)
        const selected = yield* run(
          "get",
          "events",
          "--field-selector",
          "involvedObject.kind=Pod,involvedObject.name=web",
          "-o",
          "name"
        )
        expect([selected.code, selected.stdout.trim()], selected.stderr).toEqual([0, "event/web.scheduled"])
        // `kubectl events` came in 1.26 (as `alpha events`), and became a command of its own in 1.28.
        if (kubectl.minor >= 28) {
          const about = yield* run("events", "--for", "pod/web", "-o", "json")
          expect(about.code, about.stderr).toBe(0)
          expect(JSON.parse(about.stdout).items.map((e: { reason: string }) => e.reason)).toEqual(["Scheduled"])
        }
      }), 90_000)

    // kubectl 1.20 first asks the OpenAPI v2 document whether each type's PATCH takes
    // dryRun (and, for a custom resource, the CRD API); LocalCluster's v2 document has no
    // paths, so it refuses to diff. Later kubectls dropped that check.
    it.scopedLive.runIf(kubectl.minor > 20)(
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
