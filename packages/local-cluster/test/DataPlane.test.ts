/**
 * The data plane over real sockets on 127.0.0.1: requests through the proxy reach a
 * small backend server only for hosts whose Ingress or HTTPRoute the simulated
 * controllers programmed; everything else gets the answer a real proxy gives.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Schedule, Scope } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import {
  type EndpointSlice,
  type HttpIngressPath,
  type HttpRoute,
  type Ingress,
  type KubeObject,
  type ResourceType
} from "session-routing/kubernetes"
import * as DataPlane from "../src/DataPlane.js"
import * as EndpointSliceController from "../src/EndpointSliceController.js"
import * as GatewayController from "../src/GatewayController.js"
import * as IngressController from "../src/IngressController.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import {
  EndpointSliceResource,
  EventResource,
  GatewayResource,
  HttpRouteResource,
  IngressResource,
  NamespaceResource,
  PodResource,
  ServiceResource
} from "../src/ServedResources.js"
import type { ClusterStore } from "../src/Store.js"

const NS = "sessions"
const GROUP = "gateway.networking.k8s.io"

interface Answer {
  readonly status: number
  readonly body: string
  readonly headers: Http.IncomingHttpHeaders
}

/** A stand-in workload: answers with its name and what it was asked. */
const backend = (name: string) =>
  Effect.acquireRelease(
    Effect.async<Http.Server>((resume) => {
      const server = Http.createServer((req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(
          JSON.stringify({ name, url: req.url, host: req.headers.host, forwardedHost: req.headers["x-forwarded-host"] })
        )
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map((server) => ({ host: "127.0.0.1", port: (server.address() as AddressInfo).port })))

/** A port nothing listens on: bound, then released. */
const closedPort = Effect.scoped(backend("gone")).pipe(Effect.map((a) => a.port))

/** A request to the data plane carrying `host` in its Host header. */
const get = (plane: DataPlane.DataPlane, host: string, path = "/") =>
  Effect.tryPromise((signal) =>
    new Promise<Answer>((resolve, reject) => {
      const req = Http.request({ host: plane.host, port: plane.port, path, headers: { host }, signal }, (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end()
    })
  )

/** Polls the store until `predicate` holds: the controllers run on real time here. */
const waitFor = <A extends KubeObject>(
  store: ClusterStore,
  resource: ResourceType<A>,
  name: string,
  predicate: (a: A) => boolean
) =>
  store.get(resource, NS, name).pipe(
    Effect.filterOrFail(predicate, () => "not yet"),
    Effect.retry(Schedule.spaced(Duration.millis(10))),
    Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => `${resource.kind} ${name} never got there` })
  )

const programmed = (i: Ingress) => (i.status?.loadBalancer?.ingress ?? []).length > 0

const acceptedBy = (r: HttpRoute) =>
  (r.status?.parents ?? []).some((p) =>
    p.controllerName === GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME &&
    p.conditions?.some((c) => c.type === "Accepted") === true
  )

/** A store with the session namespace, both controllers on a zero delay, and a data plane. */
const cluster = Effect.gen(function*() {
  const store = yield* makeMemoryStore()
  yield* store.create(NamespaceResource, undefined, { metadata: { name: NS } })
  yield* IngressController.run(store, { className: "local", delay: Duration.zero })
  yield* GatewayController.run(store, { gatewayClassName: "local", delay: Duration.zero })
  const plane = yield* DataPlane.make(store)
  return { store, plane }
})

const service = (name: string, port = 8080) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { ports: [{ port, protocol: "TCP" as const }] }
})

const ingress = (
  name: string,
  host: string,
  paths: ReadonlyArray<HttpIngressPath>,
  ingressClassName = "local"
): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name },
  spec: { ingressClassName, rules: [{ host, http: { paths } }] }
})

const prefixTo = (service: string, path = "/"): HttpIngressPath => ({
  path,
  pathType: "Prefix",
  backend: { service: { name: service, port: { number: 8080 } } }
})

const gatewayWith = (hostname: string) => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Gateway",
  metadata: { name: "gw" },
  spec: { gatewayClassName: "local", listeners: [{ name: "http", port: 80, protocol: "HTTP", hostname }] }
})

const route = (name: string, hostnames: ReadonlyArray<string>, serviceName: string): HttpRoute => ({
  apiVersion: `${GROUP}/v1`,
  kind: "HTTPRoute",
  metadata: { name },
  spec: { parentRefs: [{ name: "gw" }], hostnames, rules: [{ backendRefs: [{ name: serviceName, port: 8080 }] }] }
})

describe("DataPlane", () => {
  it.scopedLive("forwards a programmed Ingress's host to the backend registered for its Service", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      const web = yield* backend("web")
      yield* plane.registerBackend({ namespace: NS, service: "web", port: 8080 }, web)
      yield* store.create(ServiceResource, NS, service("web"))
      yield* store.create(IngressResource, NS, ingress("a", "8080-abc.example.test", [prefixTo("web")]))
      yield* waitFor(store, IngressResource, "a", programmed)

      const answer = yield* get(plane, "8080-abc.example.test", "/hello?x=1")
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual({
        name: "web",
        url: "/hello?x=1",
        host: "8080-abc.example.test",
        forwardedHost: "8080-abc.example.test"
      })
      expect(answer.headers[DataPlane.ROUTED_BY_HEADER]).toBe(`Ingress/${NS}/a`)

      // A client configured to use the data plane as its HTTP proxy sends the absolute form.
      const proxied = yield* get(plane, "8080-abc.example.test", "http://8080-abc.example.test/via-proxy?y=2")
      expect((JSON.parse(proxied.body) as { url: string }).url).toBe("/via-proxy?y=2")
    }))

  it.scopedLive("answers 404 for an unknown host and for an Ingress no controller programmed", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* plane.registerBackend({ namespace: NS, service: "web", port: 8080 }, yield* backend("web"))
      yield* store.create(ServiceResource, NS, service("web"))
      // Class nginx has no controller here: the silent-404 cluster.
      yield* store.create(
        IngressResource,
        NS,
        ingress("unclaimed", "8080-abc.example.test", [prefixTo("web")], "nginx")
      )

      const unclaimed = yield* get(plane, "8080-abc.example.test")
      expect(unclaimed.status).toBe(404)
      expect(unclaimed.body).toContain(
        `no programmed Ingress or accepted HTTPRoute routes host "8080-abc.example.test"`
      )
      expect(unclaimed.headers[DataPlane.ROUTED_BY_HEADER]).toBe("default-backend")

      expect((yield* get(plane, "nobody.example.test")).status).toBe(404)
    }))

  it.scopedLive("routes Exact and Prefix paths as the Ingress API defines them", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* plane.registerBackend({ namespace: NS, service: "exact", port: 8080 }, yield* backend("exact"))
      yield* plane.registerBackend({ namespace: NS, service: "app", port: 8080 }, yield* backend("app"))
      yield* store.create(ServiceResource, NS, service("exact"))
      yield* store.create(ServiceResource, NS, service("app"))
      yield* store.create(
        IngressResource,
        NS,
        ingress("paths", "paths.example.test", [
          { path: "/status", pathType: "Exact", backend: { service: { name: "exact", port: { number: 8080 } } } },
          prefixTo("app", "/app")
        ])
      )
      yield* waitFor(store, IngressResource, "paths", programmed)

      const nameAt = (path: string) =>
        get(plane, "paths.example.test", path).pipe(
          Effect.map((a) => (a.status === 200 ? (JSON.parse(a.body) as { name: string }).name : a.status))
        )
      expect(yield* nameAt("/status")).toBe("exact")
      expect(yield* nameAt("/status/")).toBe(404)
      expect(yield* nameAt("/app")).toBe("app")
      expect(yield* nameAt("/app/")).toBe("app")
      expect(yield* nameAt("/app/x/y")).toBe("app")
      expect(yield* nameAt("/apple")).toBe(404)
    }))

  it.scopedLive("forwards an accepted HTTPRoute's host to its backend", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* plane.registerBackend({ namespace: NS, service: "web", port: 8080 }, yield* backend("web"))
      yield* store.create(GatewayResource, NS, gatewayWith("*.example.test"))
      yield* store.create(ServiceResource, NS, service("web"))
      yield* store.create(HttpRouteResource, NS, route("web", ["8080-abc.example.test"], "web"))
      yield* waitFor(store, HttpRouteResource, "web", acceptedBy)

      const answer = yield* get(plane, "8080-abc.example.test:80", "/")
      expect(answer.status).toBe(200)
      expect((JSON.parse(answer.body) as { name: string }).name).toBe("web")
      expect(answer.headers[DataPlane.ROUTED_BY_HEADER]).toBe(`HTTPRoute/${NS}/web`)
    }))

  it.scopedLive("answers 404 for a route its Gateway rejected and 500 for one whose backend is missing", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* store.create(GatewayResource, NS, gatewayWith("*.example.test"))
      // Rejected with NoMatchingListenerHostname: nothing serves it.
      yield* store.create(HttpRouteResource, NS, route("rejected", ["elsewhere.test"], "web"))
      // Accepted, but ResolvedRefs=False (BackendNotFound): the data plane answers 500.
      yield* store.create(HttpRouteResource, NS, route("unresolved", ["8081-abc.example.test"], "missing"))
      yield* waitFor(store, HttpRouteResource, "rejected", acceptedBy)
      yield* waitFor(store, HttpRouteResource, "unresolved", acceptedBy)

      expect((yield* get(plane, "elsewhere.test")).status).toBe(404)
      const unresolved = yield* get(plane, "8081-abc.example.test")
      expect(unresolved.status).toBe(500)
      expect(unresolved.body).toContain("BackendNotFound")
    }))

  it.scopedLive("answers 502 when the registered backend is unreachable and 503 when none is registered", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* plane.registerBackend({ namespace: NS, service: "down", port: 8080 }, {
        host: "127.0.0.1",
        port: yield* closedPort
      })
      yield* store.create(ServiceResource, NS, service("down"))
      yield* store.create(ServiceResource, NS, service("unregistered"))
      yield* store.create(IngressResource, NS, ingress("down", "down.example.test", [prefixTo("down")]))
      yield* store.create(
        IngressResource,
        NS,
        ingress("unregistered", "unregistered.example.test", [prefixTo("unregistered")])
      )
      yield* waitFor(store, IngressResource, "down", programmed)
      yield* waitFor(store, IngressResource, "unregistered", programmed)

      const down = yield* get(plane, "down.example.test")
      expect(down.status).toBe(502)
      expect(down.body).toContain(`backend ${NS}/down:8080`)
      expect((yield* get(plane, "unregistered.example.test")).status).toBe(503)
    }))

  it.live("stops listening when its scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { plane } = yield* Scope.extend(cluster, scope)
      expect((yield* get(plane, "nobody.example.test")).status).toBe(404)
      yield* Scope.close(scope, Exit.void)

      const after = yield* Effect.either(get(plane, "nobody.example.test"))
      expect(after._tag).toBe("Left")
    }))

  it.scopedLive("forwards only to ready endpoints once a Pod stands behind the Service: 503 until the Pod turns Ready", () =>
    Effect.gen(function*() {
      const { plane, store } = yield* cluster
      yield* EndpointSliceController.run(store)
      const web = yield* backend("web")
      yield* store.create(ServiceResource, NS, {
        ...service("web"),
        spec: {
          selector: { app: "web" },
          ports: [{ name: "http", port: 8080, targetPort: "http", protocol: "TCP" as const }]
        }
      })
      yield* store.create(IngressResource, NS, ingress("a", "web.example.test", [prefixTo("web")]))
      yield* store.create(PodResource, NS, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-0", labels: { app: "web" } },
        spec: { containers: [{ name: "main", image: "app:1", ports: [{ name: "http", containerPort: web.port }] }] }
      })
      yield* waitFor(store, IngressResource, "a", programmed)
      // A Service port's registered backend no longer decides: the Pod behind it is not ready.
      yield* plane.registerBackend({ namespace: NS, service: "web", port: 8080 }, web)

      // The 503 says why, naming the Pod: LocalCluster runs no containers, so nothing serves it yet.
      const unready = yield* get(plane, "web.example.test")
      expect([unready.status, unready.body.trim()]).toEqual([
        503,
        `503 Service Unavailable: no ready endpoints for Service ${NS}/web port 8080: Pod ${NS}/web-0 selected, but LocalCluster runs no containers and no workload is registered for it (DataPlane.registerPod serves a Pod at an address and makes it Ready)`
      ])

      yield* plane.registerPod({ namespace: NS, name: "web-0" }, web)
      const slice = yield* sliceOf(store, "web", (s) => s.endpoints?.[0]?.conditions?.ready === true)
      expect([slice.endpoints, slice.ports]).toEqual([
        [{
          addresses: ["127.0.0.1"],
          conditions: { ready: true, serving: true, terminating: false },
          targetRef: { kind: "Pod", namespace: NS, name: "web-0", uid: expect.any(String) }
        }],
        [{ name: "http", port: web.port, protocol: "TCP" }]
      ])
      const ready = yield* get(plane, "web.example.test")
      expect([ready.status, (JSON.parse(ready.body) as { name: string }).name]).toEqual([200, "web"])
      const started = yield* store.list(EventResource, NS, {
        fieldSelector: "involvedObject.kind=Pod,involvedObject.name=web-0"
      })
      expect(started.items.map((e) => [e.type, e.reason, e.message, e.source?.component])).toEqual([
        ["Normal", "Started", "Started container main", "kubelet"]
      ])

      yield* plane.unregisterPod({ namespace: NS, name: "web-0" })
      yield* sliceOf(store, "web", (s) => s.endpoints?.[0]?.conditions?.ready === false)
      expect((yield* get(plane, "web.example.test")).status).toBe(503)
    }))
})

/** The Service's EndpointSlice, once `predicate` holds of it. */
const sliceOf = (store: ClusterStore, service: string, predicate: (slice: EndpointSlice) => boolean) =>
  store.list(EndpointSliceResource, NS, { labelSelector: `kubernetes.io/service-name=${service}` }).pipe(
    Effect.map((list) => list.items[0]),
    Effect.filterOrFail((slice): slice is EndpointSlice => slice !== undefined && predicate(slice), () => "not yet"),
    Effect.retry(Schedule.spaced(Duration.millis(10))),
    Effect.timeoutFail({
      duration: Duration.seconds(5),
      onTimeout: () => `the EndpointSlice of ${service} never got there`
    })
  )
