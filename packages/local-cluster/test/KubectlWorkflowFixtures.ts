/**
 * The objects and the cluster set-up of the kubectl workflow tests: manifests as a person
 * writes them, the session cluster with a kubectl workspace on it, and the wait for
 * kubectl's watch to be open on the server.
 */
import { Duration, Effect } from "effect"
import type { Ingress, KubeObject, Pod, ResourceType } from "session-routing/kubernetes"
import { type Kubectl, kubectlWorkspace } from "../../../test/support/Kubectl.js"
import type { ClusterMetrics } from "../src/Metrics.js"
import * as SessionCluster from "../src/SessionCluster.js"

export const NS = SessionCluster.DEFAULT_SESSION_NAMESPACE

export const ingressYaml = (port: number) =>
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

export const routeYaml = (port: number) =>
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
export const setUp = (kubectl: Kubectl, quiet: boolean, options: { readonly controllerManager?: boolean } = {}) =>
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
export const watchOpen = (metrics: ClusterMetrics) =>
  metrics.waitFor((snapshot) =>
    snapshot.longRunning.some((w) => w.verb === "WATCH" && w.resource === "ingresses" && w.count > 0) ? true : undefined
  ).pipe(Effect.zipRight(Effect.sleep(Duration.millis(100))))

export const serviceYaml = (targetPort: number) =>
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

export const podYaml = (...names: ReadonlyArray<string>) =>
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
export const ownedIngress = (name: string, owner: Pod): Ingress => ({
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

export const portOf = (ingress: Ingress) => ingress.spec?.rules?.[0]?.http?.paths[0]?.backend.service?.port?.number
