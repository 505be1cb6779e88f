import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Fault, LocalCluster, type LocalClusterOptions } from "@session-routing/local-cluster"
import {
  Chunk,
  Clock,
  ConfigProvider,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  Queue,
  Schedule,
  Stream
} from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Gateway, HttpRoute, Ingress, Service } from "../../src/domain/Objects.js"
import {
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressResource,
  ServiceResource
} from "../../src/domain/Resources.js"
import { KubeClientLive, KubeConfigError } from "../../src/layers/KubeClientLive.js"
import { FIELD_MANAGER, KubeClient, type WatchEvent, withoutTransientRetry } from "../../src/services/KubeClient.js"
import { type KubeError, TooManyRequests, Transport } from "../../src/services/KubeError.js"
import { kubeConfigFor } from "../support/KubeConfigs.js"

// ---------------------------------------------------------------------------
// Helpers

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kubeclient-live-"))

const kubeconfigYaml = (server: string, extra = "") =>
  `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
- name: plain
  cluster:
    server: http://127.0.0.1:1
users:
- name: me
  user:
    token: secret-token
contexts:
- name: local
  context:
    cluster: local
    user: me
- name: lost
  context:
    cluster: nowhere
    user: me
- name: insecure
  context:
    cluster: plain
    user: me
current-context: local
${extra}`

let files = 0
const writeFile = (content: string) => {
  const file = path.join(tmp, `config-${files++}`)
  fs.writeFileSync(file, content)
  return file
}

/** Retries quickly, so that failure tests over sockets do not wait out the real backoff. */
const quickRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

/** A port nothing listens on: bound, then released. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(port))
      })
    })
)

const configFailure = (effect: Effect.Effect<unknown, KubeConfigError>) =>
  Effect.flip(effect).pipe(
    Effect.map((error) => ({ tag: error._tag, reason: error.reason, path: error.path, context: error.context }))
  )

// ---------------------------------------------------------------------------

describe("KubeClientLive kubeconfig", () => {
  it.effect("loads an explicit kubeconfig and its current context", () =>
    Effect.gen(function*() {
      const file = writeFile(kubeconfigYaml("http://127.0.0.1:6443"))
      const kc = yield* KubeClientLive.loadKubeConfig({ kubeconfigPath: file })
      expect(kc.getCurrentContext()).toBe("local")
      expect(kc.getCurrentCluster()?.server).toBe("http://127.0.0.1:6443")
    }))

  it.effect("fails naming the path when the kubeconfig does not exist", () =>
    Effect.gen(function*() {
      const file = path.join(tmp, "missing")
      expect(yield* configFailure(KubeClientLive.loadKubeConfig({ kubeconfigPath: file }))).toEqual({
        tag: "KubeConfigError",
        reason: `could not load the kubeconfig ${file}: the file does not exist`,
        path: file,
        context: undefined
      })
    }))

  it.effect("fails naming the path when the kubeconfig is not YAML a kubeconfig reader accepts", () =>
    Effect.gen(function*() {
      const file = writeFile("clusters: [\n  - {name: x, cluster: {}}\n")
      const failure = yield* configFailure(KubeClientLive.loadKubeConfig({ kubeconfigPath: file }))
      expect(failure.path).toBe(file)
      expect(failure.reason).toMatch(new RegExp(`^could not load the kubeconfig ${file}: it is not a valid kubeconfig`))
    }))

  it.effect("switches to the requested context, and names it with the ones available when it is missing", () =>
    Effect.gen(function*() {
      const file = writeFile(kubeconfigYaml("http://127.0.0.1:6443"))
      const missing = yield* configFailure(KubeClientLive.loadKubeConfig({ kubeconfigPath: file, context: "prod" }))
      expect(missing).toEqual({
        tag: "KubeConfigError",
        reason: `the kubeconfig ${file} has no context "prod" (it has: local, lost, insecure)`,
        path: file,
        context: "prod"
      })
      const lost = yield* configFailure(KubeClientLive.loadKubeConfig({ kubeconfigPath: file, context: "lost" }))
      expect(lost.reason).toBe(
        `context "lost" in the kubeconfig ${file} refers to cluster "nowhere", which it does not define`
      )
      expect(lost.context).toBe("lost")
    }))

  it.effect("accepts a plain-HTTP server without TLS settings, as kubectl does", () =>
    Effect.gen(function*() {
      const file = writeFile(kubeconfigYaml("http://127.0.0.1:6443"))
      const kc = yield* KubeClientLive.loadKubeConfig({ kubeconfigPath: file, context: "insecure" })
      expect(kc.getCurrentCluster()?.server).toBe("http://127.0.0.1:1")
    }))

  it.effect("reads KUBECONFIG, skipping entries that do not exist as kubectl does", () =>
    Effect.gen(function*() {
      const file = writeFile(kubeconfigYaml("http://127.0.0.1:7443"))
      const value = [path.join(tmp, "nope"), file].join(path.delimiter)
      const kc = yield* KubeClientLive.loadKubeConfig().pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["KUBECONFIG", value]])))
      )
      expect(kc.getCurrentCluster()?.server).toBe("http://127.0.0.1:7443")
    }))

  it.effect("fails naming KUBECONFIG when none of its files exists", () =>
    Effect.gen(function*() {
      const value = [path.join(tmp, "a"), path.join(tmp, "b")].join(path.delimiter)
      const failure = yield* configFailure(
        KubeClientLive.loadKubeConfig().pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["KUBECONFIG", value]])))
        )
      )
      expect(failure.reason).toBe(
        `KUBECONFIG names ${path.join(tmp, "a")}, ${path.join(tmp, "b")}, and none of them exists`
      )
    }))

  it.effect("fails the layer's construction with the KubeConfigError", () =>
    Effect.gen(function*() {
      const file = path.join(tmp, "absent")
      const exit = yield* Effect.exit(Layer.build(KubeClientLive.layer({ kubeconfigPath: file })).pipe(Effect.scoped))
      expect(exit).toEqual(
        Exit.fail(
          new KubeConfigError({ reason: `could not load the kubeconfig ${file}: the file does not exist`, path: file })
        )
      )
    }))
})

describe("KubeClientLive transport", () => {
  it.live("reports a refused connection as Transport naming the server, after retrying", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const server = `http://127.0.0.1:${port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(server), { retrySchedule: quickRetry })
      expect(yield* Effect.flip(client.get(IngressResource, "ns", "x"))).toEqual(
        new Transport({
          reason:
            `could not get ingresses.networking.k8s.io "x" in namespace "ns" at ${server}: the connection was refused (is the API server running, and is the kubeconfig's server address right?) (ECONNREFUSED)`,
          kind: "refused"
        })
      )
      const watchFailure = yield* Effect.flip(
        Stream.runDrain(client.watchFrom(IngressResource, "ns", { resourceVersion: "1" }))
      )
      expect(watchFailure._tag).toBe("Transport")
      expect(watchFailure.reason).toContain(server)
    }))

  it.live("reports a connection the server resets as Transport", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(
          () =>
            new Promise<net.Server>((resolve) => {
              // Reads the request, then drops the connection without a byte of answer.
              const s = net.createServer((socket) => socket.once("data", () => socket.resetAndDestroy()))
              s.listen(0, "127.0.0.1", () => resolve(s))
            })
        ),
        (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
      )
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: quickRetry })
      const failure = yield* Effect.flip(client.get(IngressResource, "ns", "x"))
      expect(failure).toEqual(
        new Transport({
          reason:
            `could not get ingresses.networking.k8s.io "x" in namespace "ns" at ${url}: the connection was reset before the answer was complete (ECONNRESET)`,
          kind: "other"
        })
      )
    }).pipe(Effect.scoped))

  /** A TCP server on 127.0.0.1 that counts connections and does `onConnection` with each. */
  const rawServer = (onConnection: (socket: net.Socket) => void) =>
    Effect.acquireRelease(
      Effect.promise(
        () =>
          new Promise<{ readonly server: net.Server; readonly connections: () => number }>((resolve) => {
            let connections = 0
            const sockets = new Set<net.Socket>()
            const server = net.createServer((socket) => {
              connections++
              sockets.add(socket)
              socket.on("close", () => sockets.delete(socket))
              socket.on("error", () => {})
              onConnection(socket)
            })
            server.listen(0, "127.0.0.1", () => resolve({ server, connections: () => connections }))
            server.on("close", () => sockets.forEach((socket) => socket.destroy()))
          })
      ),
      ({ server }) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            server.emit("close")
          })
        )
    ).pipe(Effect.map(({ connections, server }) => ({ port: (server.address() as net.AddressInfo).port, connections })))

  it.live("gives up on a server that accepts and never answers within the API time limit, naming the call", () =>
    Effect.gen(function*() {
      // A stopped API server process: the kernel accepts the connection, nothing answers.
      const { port } = yield* rawServer(() => {})
      const server = `http://127.0.0.1:${port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(server), { apiTimeout: "400 millis" })
      const started = yield* Clock.currentTimeMillis
      const failure = yield* Effect.flip(client.get(IngressResource, "ns", "web"))
      const took = (yield* Clock.currentTimeMillis) - started
      expect(failure._tag === "Transport" && failure.kind).toBe("no-answer")
      // Real time: the budget is 400 ms and the timer fires a few ms late, yet the message
      // says the limit as set, and what set it; the jittered pause decides whether a
      // second attempt was out when it ran out.
      expect(failure.reason).toMatch(
        new RegExp(
          `^could not get ingresses\\.networking\\.k8s\\.io "web" in namespace "ns" at ${server}: no answer within 400 ms, the time limit of one call \\(KubeClientLive's apiTimeout option\\)(; 2 attempts)?$`
        )
      )
      // Bounded by the budget: a hung server once cost 36 s per request.
      expect(took).toBeLessThan(2_000)
    }).pipe(Effect.scoped))

  it.live("fails a TLS handshake at once, without retrying: the kubeconfig is wrong, not the server busy", () =>
    Effect.gen(function*() {
      // Answers the ClientHello with plain text, as a plain-HTTP port does.
      const { connections, port } = yield* rawServer((socket) =>
        socket.once("data", () => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n"))
      )
      const server = `https://127.0.0.1:${port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(server))
      const failure = yield* Effect.flip(client.get(IngressResource, "ns", "web"))
      expect(failure._tag).toBe("Transport")
      expect(failure._tag === "Transport" && failure.kind).toBe("tls")
      expect(failure.reason).toMatch(/the TLS handshake failed \(EPROTO|ERR_SSL_/)
      expect(connections()).toBe(1)
    }).pipe(Effect.scoped))

  it.live("makes exactly one attempt per call in a fiber that turned the client's retries off", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup({ retrySchedule: quickRetry })
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.respond(503), times: 1 })
      // With retries on, the one 503 is ridden out.
      expect((yield* Effect.flip(client.get(IngressResource, NS, "absent")))._tag).toBe("NotFound")
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.respond(503), times: 1 })
      const failure = yield* Effect.flip(withoutTransientRetry(client.get(IngressResource, NS, "absent")))
      expect(failure._tag).toBe("Unavailable")
      expect(failure.code).toBe(503)
    }).pipe(Effect.scoped))

  it.effect("provides the service through the layer", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient
      expect(typeof client.watch).toBe("function")
    }).pipe(Effect.provide(KubeClientLive.layerFromKubeConfig(kubeConfigFor("http://127.0.0.1:1")))))
})

// ---------------------------------------------------------------------------
// Over HTTP against LocalCluster

const NS = "apps"

const service = (name: string, labels: Record<string, string> = {}, port = 80): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: NS, labels },
  spec: { selector: { app: name }, ports: [{ name: "http", port }] }
})

const ingress = (name: string, host = `${name}.example.test`, labels: Record<string, string> = {}): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: NS, labels },
  spec: {
    rules: [{
      host,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] }
    }]
  }
})

const route = (name: string, hostnames: ReadonlyArray<string> = [`${name}.example.test`]): HttpRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: NS },
  spec: { parentRefs: [{ name: "gw" }], hostnames, rules: [{ backendRefs: [{ name: "web", port: 80 }] }] }
})

const gateway: Gateway = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name: "gw", namespace: NS },
  spec: { gatewayClassName: "local", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }
}

/** A fresh LocalCluster and the live client on its kubeconfig, for the life of the test's scope. */
const setup = (
  options: { readonly retrySchedule?: Schedule.Schedule<unknown, KubeError>; readonly cluster?: LocalClusterOptions } =
    {}
) =>
  Effect.gen(function*() {
    const cluster = yield* LocalCluster.make({ namespaces: [NS], ...options.cluster })
    const kc = new k8s.KubeConfig()
    kc.loadFromString(cluster.kubeconfig())
    const client = yield* KubeClientLive.make(
      kc,
      options.retrySchedule !== undefined ? { retrySchedule: options.retrySchedule } : {}
    )
    return { cluster, client }
  })

const failureOf = <A>(effect: Effect.Effect<A, KubeError>) =>
  Effect.flip(effect).pipe(Effect.map((error) => ({ tag: error._tag, code: error.code, reason: error.reason })))

/** Remaining uses of the one active fault. */
const remainingUses = (cluster: LocalCluster.Service) =>
  Effect.map(cluster.faults.active, (faults) => faults.map((f) => f.times))

describe("KubeClientLive over HTTP", () => {
  it.scopedLive("loads the layer from a kubeconfig file LocalCluster wrote", () =>
    Effect.gen(function*() {
      const { cluster } = yield* setup()
      const file = path.join(tmp, "local-cluster.yaml")
      yield* cluster.writeKubeconfig(file)
      const listed = yield* Effect.flatMap(KubeClient, (client) => client.list(ServiceResource, NS)).pipe(
        Effect.provide(KubeClientLive.layer({ kubeconfigPath: file }))
      )
      expect(listed.items).toEqual([])
    }))

  it.scopedLive("applies each writable type server-side and answers the server's own JSON", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const svc = yield* client.apply(ServiceResource, service("web", { app: "web" }))
      const ing = yield* client.apply(IngressResource, ingress("web"))
      const rt = yield* client.apply(HttpRouteResource, route("web"))
      for (const [object, kind] of [[svc, "Service"], [ing, "Ingress"], [rt, "HTTPRoute"]] as const) {
        expect(object.kind).toBe(kind)
        expect(object.metadata?.uid).toBeDefined()
        // Plain JSON, not client-node models: timestamps stay strings.
        expect(typeof object.metadata?.creationTimestamp).toBe("string")
        expect(typeof object.metadata?.managedFields?.[0]?.time).toBe("string")
        expect(object.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([[FIELD_MANAGER, "Apply"]])
      }
      expect(svc.spec?.ports).toEqual([{ name: "http", port: 80, protocol: "TCP", targetPort: 80 }])
      // The server's defaults come back on custom resources too.
      expect(rt.spec?.parentRefs).toEqual([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }])
      expect(ing.metadata?.generation).toBe(1)
    }))

  it.scopedLive("updates on a second apply, and stores nothing on a dry run", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const first = yield* client.apply(IngressResource, ingress("web"))
      const second = yield* client.apply(IngressResource, ingress("web", "other.example.test"))
      expect(second.metadata?.generation).toBe(2)
      expect(second.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion)
      expect(second.spec?.rules?.[0]?.host).toBe("other.example.test")

      const dry = yield* client.apply(ServiceResource, service("dry"), { dryRun: true })
      expect(dry.metadata?.name).toBe("dry")
      expect((yield* failureOf(client.get(ServiceResource, NS, "dry"))).tag).toBe("NotFound")
    }))

  it.scopedLive("gets each readable type, Gateways included", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup()
      yield* cluster.store.create(GatewayResource, NS, gateway)
      yield* client.apply(ServiceResource, service("web"))
      yield* client.apply(IngressResource, ingress("web"))
      yield* client.apply(HttpRouteResource, route("web"))
      // The server defaults allowedRoutes; what we sent is all there.
      expect((yield* client.get(GatewayResource, NS, "gw")).spec).toMatchObject(gateway.spec!)
      expect((yield* client.get(ServiceResource, NS, "web")).metadata?.name).toBe("web")
      expect((yield* client.get(IngressResource, NS, "web")).spec?.rules?.[0]?.host).toBe("web.example.test")
      expect((yield* client.get(HttpRouteResource, NS, "web")).spec?.hostnames).toEqual(["web.example.test"])
    }))

  it.scopedLive("deletes each writable type, and a second delete is NotFound", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.apply(ServiceResource, service("web"))
      yield* client.apply(IngressResource, ingress("web"))
      yield* client.apply(HttpRouteResource, route("web"))
      yield* client.delete(ServiceResource, NS, "web")
      yield* client.delete(IngressResource, NS, "web")
      yield* client.delete(HttpRouteResource, NS, "web")
      expect(yield* failureOf(client.delete(IngressResource, NS, "web"))).toEqual({
        tag: "NotFound",
        code: 404,
        reason: `ingresses.networking.k8s.io "web" not found`
      })
      expect((yield* client.list(ServiceResource, NS)).items).toEqual([])
    }))

  it.scopedLive("lists by label selector, items carrying kind and apiVersion like a get", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.apply(ServiceResource, service("a", { team: "x" }))
      yield* client.apply(ServiceResource, service("b", { team: "y" }))
      yield* client.apply(ServiceResource, service("c"))
      yield* client.apply(HttpRouteResource, route("r"))
      const listed = yield* client.list(ServiceResource, NS, { labelSelector: "team!=y" })
      expect(listed.kind).toBe("ServiceList")
      expect(listed.metadata.resourceVersion).toBeDefined()
      expect(listed.items.map((s) => [s.kind, s.apiVersion, s.metadata?.name])).toEqual([
        ["Service", "v1", "a"],
        ["Service", "v1", "c"]
      ])
      expect((yield* client.list(ServiceResource, NS, { labelSelector: "team in (x,y)" })).items.length).toBe(2)
      const routes = yield* client.list(HttpRouteResource, NS)
      expect(routes.items.map((r) => r.metadata?.name)).toEqual(["r"])
    }))

  it.scopedLive("watches: ADDED per existing object, then changes, bookmarks hidden", () =>
    Effect.gen(function*() {
      const { client } = yield* setup({ cluster: { bookmarkInterval: "50 millis" } })
      yield* client.apply(IngressResource, ingress("a"))
      const seen = yield* Queue.unbounded<WatchEvent<Ingress>>()
      yield* client.watch(IngressResource, NS).pipe(Stream.runForEach((e) => Queue.offer(seen, e)), Effect.forkScoped)
      const next = Effect.map(
        Queue.take(seen),
        (e) => [e.type, e.object.metadata?.name, e.object.spec?.rules?.[0]?.host]
      )
      expect(yield* next).toEqual(["ADDED", "a", "a.example.test"])
      yield* client.apply(IngressResource, ingress("b"))
      expect(yield* next).toEqual(["ADDED", "b", "b.example.test"])
      yield* client.apply(IngressResource, ingress("a", "changed.example.test"))
      expect(yield* next).toEqual(["MODIFIED", "a", "changed.example.test"])
      yield* client.delete(IngressResource, NS, "b")
      expect(yield* next).toEqual(["DELETED", "b", "b.example.test"])
      // Several bookmarks go by; none reaches the consumer.
      yield* Effect.sleep("300 millis")
      expect(yield* Queue.size(seen)).toBe(0)
    }))

  it.scopedLive("raw watchFrom follows changes after a resourceVersion and ends when the server closes", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup()
      const from = (yield* client.list(ServiceResource, NS)).metadata.resourceVersion!
      yield* client.apply(ServiceResource, service("a"))
      yield* cluster.faults.add({ resource: ServiceResource, verbs: ["watch"], action: Fault.cutWatch(1), times: 1 })
      const events = yield* Stream.runCollect(client.watchFrom(ServiceResource, NS, { resourceVersion: from }))
      expect(Chunk.toReadonlyArray(events).map((e) => e.type === "ADDED" ? [e.type, e.object.metadata?.name] : e.type))
        .toEqual([
          ["ADDED", "a"]
        ])
    }))

  it.scopedLive("raw watchFrom asks for bookmarks and passes them on with their resourceVersion", () =>
    Effect.gen(function*() {
      const { client } = yield* setup({ cluster: { bookmarkInterval: "50 millis" } })
      const applied = yield* client.apply(ServiceResource, service("a"))
      const events = yield* client.watchFrom(ServiceResource, NS, {
        resourceVersion: applied.metadata!.resourceVersion!
      }).pipe(
        Stream.takeUntil((e) => e.type === "BOOKMARK"),
        Stream.runCollect
      )
      expect(Chunk.toReadonlyArray(events)).toEqual([
        { type: "BOOKMARK", resourceVersion: applied.metadata!.resourceVersion! }
      ])
    }))

  it.live("raw watchFrom reads events split across chunks, a character split between them, and fails at a garbled line after delivering what came before", () =>
    Effect.gen(function*() {
      const event = (name: string, note: string) =>
        `${
          JSON.stringify({ type: "ADDED", object: { metadata: { name, resourceVersion: "7", annotations: { note } } } })
        }\n`
      const body = Buffer.from(event("a", "café") + event("b", "ok") + "{\"type\":\"ADD\n" + event("c", "never"))
      // "é" is two bytes: the second write starts in its middle.
      const split = body.indexOf(Buffer.from("é")) + 1
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<http.Server>((resolve) => {
            const s = http.createServer((_request, response) => {
              response.writeHead(200, { "content-type": "application/json" })
              response.write(body.subarray(0, split))
              setImmediate(() => response.end(body.subarray(split)))
            })
            s.listen(0, "127.0.0.1", () => resolve(s))
          })
        ),
        (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
      )
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: quickRetry })
      const seen: Array<unknown> = []
      const failure = yield* client.watchFrom(ServiceResource, "ns", { resourceVersion: "1" }).pipe(
        Stream.runForEach((e) =>
          Effect.sync(() =>
            seen.push(e.type === "ADDED" ? [e.object.metadata?.name, e.object.metadata?.annotations] : e)
          )
        ),
        Effect.flip
      )
      expect(seen).toEqual([["a", { note: "café" }], ["b", { note: "ok" }]])
      expect(failure._tag).toBe("Transport")
      expect(failure.message).toContain("sent a line that is not JSON")
    }).pipe(Effect.scoped))

  describe("failures", () => {
    it.scopedLive("NotFound for a missing object and for a missing namespace", () =>
      Effect.gen(function*() {
        const { client } = yield* setup()
        expect(yield* failureOf(client.get(HttpRouteResource, NS, "nope"))).toEqual({
          tag: "NotFound",
          code: 404,
          reason: `httproutes.gateway.networking.k8s.io "nope" not found`
        })
        const elsewhere = { ...service("web"), metadata: { name: "web", namespace: "absent" } }
        expect(yield* failureOf(client.apply(ServiceResource, elsewhere))).toEqual({
          tag: "NotFound",
          code: 404,
          reason: `namespaces "absent" not found`
        })
      }))

    it.scopedLive("Conflict naming the field another manager owns when force is off, and taking it over when on", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* cluster.store.apply(IngressResource, NS, "web", ingress("web"), { fieldManager: "kubectl", force: true })
        const failure = yield* Effect.flip(
          client.apply(IngressResource, ingress("web", "mine.example.test"), { force: false })
        )
        expect(failure._tag).toBe("Conflict")
        expect(failure.code).toBe(409)
        expect(failure._tag === "Conflict" ? failure.causes.map((c) => c.reason) : []).toContain("FieldManagerConflict")
        expect(failure.reason).toMatch(/^Apply failed with \d+ conflicts?: conflicts? with "kubectl"/)
        const forced = yield* client.apply(IngressResource, ingress("web", "mine.example.test"))
        expect(forced.spec?.rules?.[0]?.host).toBe("mine.example.test")
      }))

    it.scopedLive("Conflict from a 409 Status, not retried", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* cluster.faults.add({ resource: ServiceResource, action: Fault.respond(409), times: 2 })
        expect(yield* failureOf(client.get(ServiceResource, NS, "web"))).toEqual({
          tag: "Conflict",
          code: 409,
          reason:
            `Operation cannot be fulfilled on services "web": the object has been modified; please apply your changes to the latest version and try again`
        })
        expect(yield* remainingUses(cluster)).toEqual([1])
      }))

    it.scopedLive("Invalid with the server's field causes", () =>
      Effect.gen(function*() {
        const { client } = yield* setup()
        const failure = yield* Effect.flip(client.apply(IngressResource, ingress("web", "10.0.0.1")))
        expect(failure._tag).toBe("Invalid")
        expect(failure.code).toBe(422)
        expect(failure.reason).toMatch(/^Ingress\.networking\.k8s\.io "web" is invalid: spec\.rules\[0\]\.host/)
        expect(failure._tag === "Invalid" ? failure.causes.map((c) => c.field) : []).toEqual(["spec.rules[0].host"])
      }))

    it.scopedLive("Invalid before sending when the object has no name", () =>
      Effect.gen(function*() {
        const { client } = yield* setup()
        const nameless = { ...service("x"), metadata: { namespace: NS } }
        expect(yield* failureOf(client.apply(ServiceResource, nameless))).toEqual({
          tag: "Invalid",
          code: undefined,
          reason: `cannot apply services in namespace "apps": metadata.name is required`
        })
      }))

    it.scopedLive("BadRequest for a label selector that does not parse", () =>
      Effect.gen(function*() {
        const { client } = yield* setup()
        const failure = yield* failureOf(client.list(ServiceResource, NS, { labelSelector: "a in (" }))
        expect(failure.tag).toBe("BadRequest")
        expect(failure.code).toBe(400)
        expect(failure.reason).toMatch(/^bad request to list services in namespace "apps": /)
      }))

    it.scopedLive("Unauthorized on a 401, not retried", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* cluster.faults.add({ action: Fault.respond(401), times: 2 })
        expect(yield* failureOf(client.get(ServiceResource, NS, "web"))).toEqual({
          tag: "Unauthorized",
          code: 401,
          reason:
            `the API server refused the credentials (401) for get services "web" in namespace "apps": check the kubeconfig user or token`
        })
        expect(yield* remainingUses(cluster)).toEqual([1])
      }))

    it.scopedLive("Forbidden with the authorizer's words and the verb to grant", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* cluster.faults.add({
          resource: IngressResource,
          action: Fault.forbid("system:serviceaccount:apps:router")
        })
        expect(yield* failureOf(client.list(IngressResource, NS))).toEqual({
          tag: "Forbidden",
          code: 403,
          reason:
            `ingresses.networking.k8s.io is forbidden: User "system:serviceaccount:apps:router" cannot list resource "ingresses" in API group "networking.k8s.io" in the namespace "apps" (grant the verb "list" on ingresses.networking.k8s.io to this identity in a Role)`
        })
      }))

    it.scopedLive("a cluster-scoped read names no namespace, and its grant is a ClusterRole", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        expect(yield* failureOf(client.get(GatewayClassResource, "", "missing"))).toMatchObject({
          tag: "NotFound",
          reason: `gatewayclasses.gateway.networking.k8s.io "missing" not found`
        })
        yield* cluster.faults.add({ resource: GatewayClassResource, action: Fault.respond(401), times: 1 })
        expect((yield* failureOf(client.get(GatewayClassResource, "", "public"))).reason).toBe(
          `the API server refused the credentials (401) for get gatewayclasses.gateway.networking.k8s.io "public": check the kubeconfig user or token`
        )
        yield* cluster.faults.add({ resource: GatewayClassResource, action: Fault.forbid() })
        expect((yield* failureOf(client.get(GatewayClassResource, "", "public"))).reason).toMatch(
          /\(grant the verb "get" on gatewayclasses\.gateway\.networking\.k8s\.io to this identity in a ClusterRole\)$/
        )
      }))

    it.scopedLive("a namespace given for a cluster-scoped kind is refused before any request", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        const served = () => cluster.metrics.count()
        const before = yield* served()
        const refused = `it is cluster-scoped, so its namespace must be "" (was "apps")`
        expect(yield* failureOf(client.get(GatewayClassResource, NS, "public"))).toEqual({
          tag: "BadRequest",
          code: undefined,
          reason: `cannot get gatewayclasses.gateway.networking.k8s.io "public": ${refused}`
        })
        expect((yield* failureOf(client.list(GatewayClassResource, NS))).reason).toBe(
          `cannot list gatewayclasses.gateway.networking.k8s.io: ${refused}`
        )
        const watched = yield* Effect.flip(Stream.runDrain(client.watch(GatewayClassResource, NS)))
        expect(watched.reason).toBe(`cannot watch gatewayclasses.gateway.networking.k8s.io: ${refused}`)
        expect(yield* served()).toBe(before)
      }))

    it.scopedLive("NotServed when the Gateway API is not installed (a plain-text 404)", () =>
      Effect.gen(function*() {
        const { client } = yield* setup({ cluster: { unserved: [HttpRouteResource, GatewayResource] } })
        const failure = yield* Effect.flip(client.list(HttpRouteResource, NS))
        expect(failure._tag).toBe("NotServed")
        expect(failure.code).toBe(404)
        expect(failure.reason).toBe(
          `the API server does not serve httproutes.gateway.networking.k8s.io (list httproutes.gateway.networking.k8s.io in namespace "apps" answered 404 "404 page not found"): install the API (for Gateway API: its CRDs) or pick another routing mode`
        )
        expect((yield* Effect.flip(client.get(GatewayResource, NS, "gw")))._tag).toBe("NotServed")
      }))

    it.scopedLive("TooManyRequests waits out Retry-After, then succeeds", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* client.apply(ServiceResource, service("web"))
        yield* cluster.faults.add({ resource: ServiceResource, action: Fault.throttle(1), times: 1 })
        const started = yield* Clock.currentTimeMillis
        const got = yield* client.get(ServiceResource, NS, "web")
        const elapsed = (yield* Clock.currentTimeMillis) - started
        expect(got.metadata?.name).toBe("web")
        expect(elapsed).toBeGreaterThanOrEqual(1000)
        expect(yield* remainingUses(cluster)).toEqual([])
      }))

    it.scopedLive("TooManyRequests carries the Retry-After when throttling outlasts the retries", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup({ retrySchedule: quickRetry })
        yield* cluster.faults.add({ resource: ServiceResource, action: Fault.throttle(2) })
        const failure = yield* Effect.flip(client.list(ServiceResource, NS))
        expect(failure).toEqual(
          new TooManyRequests({
            reason:
              `the API server is throttling requests (429) for list services in namespace "apps"; it asked to retry after 2s`,
            code: 429,
            retryAfterSeconds: 2
          })
        )
      }))

    it.scopedLive("Unavailable 503 is retried until the server answers", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup()
        yield* client.apply(IngressResource, ingress("web"))
        yield* cluster.faults.add({ resource: IngressResource, action: Fault.respond(503), times: 2 })
        expect((yield* client.get(IngressResource, NS, "web")).metadata?.name).toBe("web")
        expect(yield* remainingUses(cluster)).toEqual([])
      }))

    it.scopedLive("Unavailable 500 fails once the retries are spent", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup({ retrySchedule: quickRetry })
        yield* cluster.faults.add({ resource: IngressResource, action: Fault.respond(500), times: 10 })
        expect(yield* failureOf(client.get(IngressResource, NS, "web"))).toEqual({
          tag: "Unavailable",
          code: 500,
          reason:
            `the API server could not answer get ingresses.networking.k8s.io "web" in namespace "apps" (500: Internal error occurred: injected fault)`
        })
        // One attempt and the two retries quickRetry allows.
        expect(yield* remainingUses(cluster)).toEqual([7])
      }))

    it.scopedLive("Transport when the server drops the connection, retried until it answers", () =>
      Effect.gen(function*() {
        const { client, cluster } = yield* setup({ retrySchedule: quickRetry })
        yield* client.apply(ServiceResource, service("web"))
        yield* cluster.faults.add({ resource: ServiceResource, verbs: ["get"], action: Fault.reset, times: 2 })
        expect((yield* client.get(ServiceResource, NS, "web")).metadata?.name).toBe("web")
        yield* cluster.faults.add({ resource: ServiceResource, verbs: ["get"], action: Fault.reset })
        const failure = yield* failureOf(client.get(ServiceResource, NS, "web"))
        expect(failure.tag).toBe("Transport")
        expect(failure.reason).toMatch(
          new RegExp(`^could not get services "web" in namespace "apps" at ${cluster.url}: .*\\(ECONNRESET\\)$`)
        )
      }))

    it.scopedLive("Transport when nothing listens at the server address", () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const kc = new k8s.KubeConfig()
        kc.loadFromString(LocalCluster.kubeconfigFor(`http://127.0.0.1:${port}`))
        const client = yield* KubeClientLive.make(kc, { retrySchedule: quickRetry })
        const failure = yield* failureOf(client.apply(ServiceResource, service("web")))
        expect(failure.tag).toBe("Transport")
        expect(failure.reason).toContain(`at http://127.0.0.1:${port}: the connection was refused`)
      }))
  })

  it.scopedLive("interrupting the fiber closes the in-flight request on the server", () =>
    Effect.gen(function*() {
      const { cluster } = yield* setup()
      // A TCP relay in front of the cluster shows when the client's connection closes.
      const upstreamPort = Number(new URL(cluster.url).port)
      const closed = yield* Deferred.make<void>()
      const opened = yield* Deferred.make<void>()
      const relay = yield* Effect.acquireRelease(
        Effect.async<net.Server>((resume) => {
          const server = net.createServer((downstream) => {
            const upstream = net.connect(upstreamPort, "127.0.0.1")
            downstream.pipe(upstream)
            upstream.pipe(downstream)
            Deferred.unsafeDone(opened, Exit.void)
            downstream.on("close", () => {
              upstream.destroy()
              Deferred.unsafeDone(closed, Exit.void)
            })
            upstream.on("error", () => downstream.destroy())
            downstream.on("error", () => upstream.destroy())
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const kc = new k8s.KubeConfig()
      kc.loadFromString(LocalCluster.kubeconfigFor(`http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`))
      const client = yield* KubeClientLive.make(kc)
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.hang })

      const fiber = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      yield* Deferred.await(opened)
      // The server holds the request: nothing closes it until the fiber is interrupted.
      expect(yield* Effect.timeout(Deferred.await(closed), "300 millis").pipe(Effect.option)).toEqual(Option.none())
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(closed).pipe(Effect.timeout("2 seconds"))
    }))

  it.scopedLive("a watch survives a cut stream and a 410 without losing or repeating an event", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup()
      yield* client.apply(IngressResource, ingress("a"))
      // The first connection ends cleanly after one event; the second answers 410
      // after one event. The third is left alone.
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.cutWatch(1), times: 1 })
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.expireWatch(1), times: 1 })

      const seen = yield* Queue.unbounded<WatchEvent<Ingress>>()
      yield* client.watch(IngressResource, NS).pipe(Stream.runForEach((e) => Queue.offer(seen, e)), Effect.forkScoped)
      const next = Effect.map(
        Queue.take(seen).pipe(Effect.timeout("5 seconds")),
        (e) => [e.type, e.object.metadata?.name, e.object.spec?.rules?.[0]?.host]
      )

      // Each change waits for its event, so the expected sequence is exact.
      expect(yield* next).toEqual(["ADDED", "a", "a.example.test"])
      yield* client.apply(IngressResource, ingress("b"))
      expect(yield* next).toEqual(["ADDED", "b", "b.example.test"]) // then the cut
      yield* client.apply(IngressResource, ingress("a", "a2.example.test"))
      expect(yield* next).toEqual(["MODIFIED", "a", "a2.example.test"]) // then the 410
      yield* client.delete(IngressResource, NS, "b")
      expect(yield* next).toEqual(["DELETED", "b", "b.example.test"])
      yield* client.apply(IngressResource, ingress("c"))
      expect(yield* next).toEqual(["ADDED", "c", "c.example.test"])

      expect(yield* remainingUses(cluster)).toEqual([])
      // Nothing repeated after the relist.
      yield* Effect.sleep("200 millis")
      expect(yield* Queue.size(seen)).toBe(0)
    }))

  it.scopedLive("a watch relisting after a 410 reports what changed while it was away as the difference", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup()
      yield* client.apply(IngressResource, ingress("stay"))
      yield* client.apply(IngressResource, ingress("change"))
      yield* client.apply(IngressResource, ingress("go"))
      // The watch connection after the initial list is held for a while: the stream is
      // away while things change and the history is compacted, so resuming from the
      // list's version answers 410 and the watch must relist.
      yield* cluster.faults.add({
        resource: IngressResource,
        verbs: ["watch"],
        action: Fault.latency("1500 millis"),
        times: 1
      })
      const seen = yield* Queue.unbounded<WatchEvent<Ingress>>()
      yield* client.watch(IngressResource, NS).pipe(Stream.runForEach((e) => Queue.offer(seen, e)), Effect.forkScoped)
      const take = (n: number) =>
        Effect.forEach(Array.from({ length: n }), () => Queue.take(seen).pipe(Effect.timeout("5 seconds"))).pipe(
          Effect.map((events) =>
            events.map((e) => `${e.type} ${e.object.metadata?.name} ${e.object.spec?.rules?.[0]?.host}`).sort()
          )
        )
      expect(yield* take(3)).toEqual([
        "ADDED change change.example.test",
        "ADDED go go.example.test",
        "ADDED stay stay.example.test"
      ])
      // Two changes to one object, and an object that comes and goes: a watch would
      // report each, a relist only the net difference.
      yield* client.apply(IngressResource, ingress("change", "first.example.test"))
      yield* client.apply(IngressResource, ingress("change", "changed.example.test"))
      yield* client.apply(IngressResource, ingress("temp"))
      yield* client.delete(IngressResource, NS, "temp")
      yield* client.delete(IngressResource, NS, "go")
      yield* client.apply(IngressResource, ingress("new"))
      yield* cluster.store.compact
      // "stay" did not change and is not repeated; "temp" never shows.
      expect(yield* take(3)).toEqual([
        "ADDED new new.example.test",
        "DELETED go go.example.test",
        "MODIFIED change changed.example.test"
      ])
      yield* client.apply(IngressResource, ingress("after"))
      expect(yield* take(1)).toEqual(["ADDED after after.example.test"])
      yield* Effect.sleep("200 millis")
      expect(yield* Queue.size(seen)).toBe(0)
    }))
})
