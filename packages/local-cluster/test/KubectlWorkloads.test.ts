/**
 * kubectl against LocalCluster's Pods, Events and garbage collector: `get pods` with the
 * server's columns, a controller's Event in `kubectl events` and `describe`, an
 * events.k8s.io Event about a Pod in `describe pod`, and `delete pod` with background
 * and foreground cascading taking the objects the Pod owns. Runs with every kubectl in
 * test/support/Kubectl.ts; assertions read what the server did and its table columns.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { eventually } from "../../../test/support/RouterHarness.js"
import * as IngressController from "../src/IngressController.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { EventResource, IngressResource, PodResource, ServiceResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { send } from "./WireFixtures.js"

const podYaml = (name: string) =>
  `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${NS}
  labels:
    app: ${name}
spec:
  containers:
  - name: main
    image: registry.example/app:1.0
    ports:
    - name: http
      containerPort: 8080
`

/** A Service and an Ingress owned by the Pod `name` (uid `uid`), as session-routing publishes them. */
const ownedYaml = (name: string, uid: string) => {
  const owner = `  ownerReferences:
  - apiVersion: v1
    kind: Pod
    name: ${name}
    uid: ${uid}
    controller: true
    blockOwnerDeletion: true`
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${NS}
${owner}
spec:
  selector:
    app: ${name}
  ports:
  - name: http
    port: 80
    targetPort: http
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: ${NS}
${owner}
spec:
  ingressClassName: local
  rules:
  - host: ${name}.example.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: ${name}
            port:
              number: 80
`
}

// What a kubelet reports when it starts a container, through the newer Events API.
const startedYaml = (uid: string) =>
  `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.started
  namespace: ${NS}
eventTime: "2024-01-01T00:00:00.000000Z"
reportingController: kubelet
reportingInstance: node-1
action: Started
reason: Started
note: Started container main
type: Normal
regarding:
  apiVersion: v1
  kind: Pod
  name: web
  namespace: ${NS}
  uid: ${uid}
`

/** kubectl learned `events` in 1.26 (alpha) and made it stable in 1.28. */
const hasEventsCommand = (name: string): boolean => {
  const minor = /v1\.(\d+)/.exec(name)?.[1]
  return minor !== undefined && Number(minor) >= 28
}

describe("kubectl on Pods, Events and garbage collection", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive(
      "lists Pods, shows a controller's Event and a Pod's, and deletes Pods cascading in the background and the foreground",
      () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({
            namespaces: [NS],
            controllerManager: true,
            controllers: [({ store }) => IngressController.run(store, { className: "local", delay: Duration.zero })]
          })
          const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-kubectl-pods-")
          yield* cluster.writeKubeconfig(kubeconfig)
          const names = (resource: ResourceType<KubeObject>) =>
            Effect.map(
              Effect.orDie(cluster.store.list(resource, NS)),
              (list) => list.items.map((o) => o.metadata?.name)
            )
          const createPod = (name: string) =>
            Effect.gen(function*() {
              const created = yield* run(
                "create",
                "-f",
                yield* file(`${name}.yaml`, podYaml(name)),
                "-o",
                "jsonpath={.metadata.uid}"
              )
              expect(created.code, created.stderr).toBe(0)
              const owned = yield* run(
                "create",
                "-f",
                yield* file(`${name}-owned.yaml`, ownedYaml(name, created.stdout.trim()))
              )
              expect(owned.code, owned.stderr).toBe(0)
              return created.stdout.trim()
            })

          const uid = yield* createPod("web")
          // kubectl asks the server for a Table: these column names and cells are LocalCluster's.
          const table = yield* run("get", "pods", "-n", NS)
          expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/)
          expect(table.stdout.split("\n")[1]).toMatch(/^web\s+0\/1\s+Pending\s+0\s+\S+$/)

          // Readiness as a kubelet writes it, through the status subresource; the Pod's slice follows.
          const ready = yield* send(cluster.url, "PATCH", `/api/v1/namespaces/${NS}/pods/web/status`, {
            status: {
              phase: "Running",
              podIP: "10.1.0.7",
              podIPs: [{ ip: "10.1.0.7" }],
              conditions: [{ type: "Ready", status: "True" }]
            }
          }, "application/merge-patch+json")
          expect(ready.status, ready.text).toBe(200)
          yield* eventually(
            run("get", "endpointslices", "-n", NS, "-l", "kubernetes.io/service-name=web"),
            (got) => got.stdout.includes("10.1.0.7")
          )
          const slices = yield* run("get", "endpointslices", "-n", NS, "-l", "kubernetes.io/service-name=web")
          expect(slices.stdout.split("\n")[0]).toMatch(/^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/)
          expect(slices.stdout.split("\n")[1]).toMatch(/^web-\w{5}\s+IPv4\s+8080\s+10\.1\.0\.7\s+\S+$/)
          expect((yield* run("get", "pods", "-n", NS)).stdout.split("\n")[1]).toMatch(/^web\s+1\/1\s+Running\s+/)

          // The ingress controller tells what it did as an Event about the Ingress.
          yield* eventually(names(EventResource), (events) => events.length > 0)
          const described = yield* run("describe", "ingress", "web", "-n", NS)
          expect(described.stdout).toMatch(/Normal\s+Sync\s+.*nginx-ingress-controller\s+Scheduled for sync/)
          const selected = yield* run(
            "get",
            "events",
            "-n",
            NS,
            "--field-selector",
            "involvedObject.kind=Ingress,involvedObject.name=web",
            "-o",
            "jsonpath={.items[*].reason}"
          )
          expect([selected.code, selected.stdout], selected.stderr).toEqual([0, "Sync"])

          const started = yield* run("create", "-f", yield* file("started.yaml", startedYaml(uid)))
          expect(started.code, started.stderr).toBe(0)
          const pod = yield* run("describe", "pod", "web", "-n", NS)
          expect(pod.stdout).toMatch(/Normal\s+Started\s+.*kubelet\s+Started container main/)
          if (hasEventsCommand(kubectl.name)) {
            // `kubectl events --for` lists core/v1 Events by involvedObject.kind and .name.
            const forPod = yield* run("events", "--for", "pod/web", "-n", NS)
            expect(forPod.code, forPod.stderr).toBe(0)
            expect(forPod.stdout).toContain("Started container main")
            expect(forPod.stdout).not.toContain("Scheduled for sync")
          }

          const background = yield* run("delete", "pod", "web", "-n", NS, "--cascade=background")
          expect(background.code, background.stderr).toBe(0)
          yield* eventually(
            Effect.all([names(ServiceResource), names(IngressResource)]),
            ([s, i]) => s.length + i.length === 0
          )

          yield* createPod("api")
          // kubectl waits for the Pod to be gone: the collector first deletes what blocks it.
          const foreground = yield* run("delete", "pod", "api", "-n", NS, "--cascade=foreground", "--timeout=20s")
          expect(foreground.code, foreground.stderr).toBe(0)
          expect(yield* Effect.all([names(PodResource), names(ServiceResource), names(IngressResource)])).toEqual([
            [],
            [],
            []
          ])
        }),
      60_000
    )
  })
})
