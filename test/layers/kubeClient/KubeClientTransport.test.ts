/**
 * The live client's connections, counted by the server: calls and watches reuse
 * keep-alive connections from bounded pools (client-node alone opens one per request),
 * an interrupted call still closes its own, credentials that cannot change are applied
 * once, and over TLS the CA, the client certificate and a token refreshed for every
 * request all keep applying.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Fault, LocalCluster } from "@session-routing/local-cluster"
import { Effect, Fiber, Schedule, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import type * as http from "node:http"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import type * as tls from "node:tls"
import type { Ingress } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { credentialsMayChange } from "../../../src/layers/kubeClient/RestTransport.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"

const NS = "demo"

const ingress = (name: string): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: NS },
  spec: {
    rules: [{
      host: `${name}.example.test`,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] }
    }]
  }
})

const setup = Effect.gen(function*() {
  const cluster = yield* LocalCluster.make({ namespaces: [NS] })
  const kc = new k8s.KubeConfig()
  kc.loadFromString(cluster.kubeconfig())
  const client = yield* KubeClientLive.make(kc)
  yield* client.apply(IngressResource, ingress("web"))
  return { cluster, client }
})

const accepted = (cluster: LocalCluster.Service) => Effect.map(cluster.metrics.connections, (c) => c.accepted)

describe("KubeClientLive connections", () => {
  it.scopedLive("fifty sequential gets share one connection", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      for (let i = 0; i < 50; i++) yield* client.get(IngressResource, NS, "web")
      expect(yield* cluster.metrics.count({ verb: "GET", resource: "ingresses", code: 200 })).toBe(50)
      // The apply and the gets went over one connection (client-node alone opened 51).
      expect(yield* accepted(cluster)).toBe(1)
    }))

  it.scopedLive("a watch holds a connection of its own while calls share another, and a resumed watch does not starve them", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      yield* client.watch(IngressResource, NS).pipe(Stream.runDrain, Effect.forkScoped)
      yield* cluster.metrics.waitFor((s) => s.longRunning.find((r) => r.verb === "WATCH" && r.count === 1))
      for (let i = 0; i < 50; i++) yield* client.get(IngressResource, NS, "web")
      expect(yield* accepted(cluster)).toBe(2)

      // The server ends the watch; the client resumes it, over the connection the
      // ended watch left or a new one, never one a call needs.
      yield* cluster.faults.closeWatches
      yield* cluster.metrics.waitFor((s) =>
        s.requests.some((r) => r.verb === "WATCH" && r.code === 200) &&
          s.longRunning.some((r) => r.verb === "WATCH" && r.count === 1)
          ? true
          : undefined
      )
      for (let i = 0; i < 50; i++) yield* client.get(IngressResource, NS, "web")
      expect(yield* accepted(cluster)).toBeLessThanOrEqual(3)
      expect(yield* cluster.metrics.count({ verb: "GET", code: 200 })).toBe(100)
    }))

  it.scopedLive("concurrent calls open no more connections than the pool's bound", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      // Slow answers, so that the calls overlap and the pool runs out of free connections.
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.latency("50 millis") })
      yield* Effect.forEach(Array.from({ length: 80 }), () => client.get(IngressResource, NS, "web"), {
        concurrency: "unbounded",
        discard: true
      })
      expect(yield* cluster.metrics.count({ verb: "GET", code: 200 })).toBe(80)
      expect(yield* accepted(cluster)).toBeLessThanOrEqual(32)
    }))

  it.scopedLive("an interrupted call closes its own connection, and the next call opens a fresh one", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.hang, times: 1 })
      const fiber = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      // The server has the request once the one-shot fault is used up.
      yield* Effect.repeat(cluster.faults.active, {
        until: (active) => active.length === 0,
        schedule: Schedule.spaced("5 millis")
      })
      yield* Fiber.interrupt(fiber)
      // The server sees the client leave: the request ends with no answer.
      yield* cluster.metrics.waitFor((s) => s.requests.find((r) => r.verb === "GET" && r.code === 0))
      yield* client.get(IngressResource, NS, "web")
      // The aborted connection went back to no pool: the apply's connection carried
      // the hung get, so the next get needed a new one.
      expect(yield* accepted(cluster)).toBe(2)
      expect(yield* cluster.metrics.waitFor((s) => (s.connections.open === 1 ? s.connections : undefined))).toEqual({
        accepted: 2,
        open: 1
      })
    }))
})

describe("KubeClientLive credentials", () => {
  /** `kc` with every `applyToHTTPSOptions` counted. */
  const counting = (kc: k8s.KubeConfig) => {
    const calls = { count: 0 }
    const own = kc.applyToHTTPSOptions.bind(kc)
    kc.applyToHTTPSOptions = (opts) => {
      calls.count++
      return own(opts)
    }
    return calls
  }

  it.scopedLive("a kubeconfig whose credentials are all inline has them applied once, and every call still carries them", () =>
    Effect.gen(function*() {
      // HTTPS with authentication: a call without the kubeconfig's credentials is refused.
      const cluster = yield* LocalCluster.make({ namespaces: [NS], auth: {} })
      const kc = new k8s.KubeConfig()
      kc.loadFromString(cluster.kubeconfig())
      expect(cluster.url).toMatch(/^https:/)
      expect(kc.getCurrentCluster()?.caData).toBeDefined()
      const applied = counting(kc)
      const client = yield* KubeClientLive.make(kc)
      yield* client.apply(IngressResource, ingress("web"))
      yield* Effect.forEach(Array.from({ length: 20 }), () => client.get(IngressResource, NS, "web"), {
        concurrency: 4,
        discard: true
      })
      expect(applied.count).toBe(1)
      // The server authenticated each one: none was refused.
      expect(yield* cluster.metrics.count({ verb: "GET", code: 200 })).toBe(20)
    }))

  it.scopedLive("credentials an authenticator may refresh are applied for every call", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      const kc = new k8s.KubeConfig()
      kc.loadFromString(cluster.kubeconfig())
      const token = kc.getCurrentUser()!.token!
      let asked = 0
      kc.addAuthenticator({
        isAuthProvider: () => true,
        applyAuthentication: (_user, opts) => {
          asked++
          opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` }
          return Promise.resolve()
        }
      })
      const client = yield* KubeClientLive.make(kc)
      for (let i = 0; i < 10; i++) yield* client.apply(IngressResource, ingress("web"))
      expect(asked).toBe(10)
      // The first created the object, the rest found it: each one authenticated.
      expect(yield* cluster.metrics.count({ verb: "APPLY", code: 201 })).toBe(1)
      expect(yield* cluster.metrics.count({ verb: "APPLY", code: 200 })).toBe(9)
    }))

  it("only a kubeconfig with nothing read again or refreshed counts as fixed", () => {
    const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) => {
      const kc = new k8s.KubeConfig()
      kc.loadFromOptions({
        clusters: [{ name: "c", server: "https://127.0.0.1:6443", skipTLSVerify: false, ...cluster }],
        users: [{ name: "u", ...user }],
        contexts: [{ name: "x", cluster: "c", user: "u" }],
        currentContext: "x"
      })
      return kc
    }
    expect(credentialsMayChange(kubeconfig({ token: "t" }, { caData: "Y2E=" }))).toBe(false)
    expect(credentialsMayChange(kubeconfig({ certData: "Y2VydA==", keyData: "a2V5" }))).toBe(false)
    expect(credentialsMayChange(kubeconfig({ username: "a", password: "b" }))).toBe(false)
    expect(credentialsMayChange(kubeconfig({ exec: { command: "x" } }))).toBe(true)
    expect(credentialsMayChange(kubeconfig({ authProvider: { name: "oidc", config: {} } }))).toBe(true)
    expect(credentialsMayChange(kubeconfig({ certFile: "/c.crt", keyData: "a2V5" }))).toBe(true)
    expect(credentialsMayChange(kubeconfig({ certData: "Y2VydA==", keyFile: "/c.key" }))).toBe(true)
    expect(credentialsMayChange(kubeconfig({ token: "t" }, { caFile: "/ca.crt" }))).toBe(true)
    const added = kubeconfig({ token: "t" })
    added.addAuthenticator({ isAuthProvider: () => false, applyAuthentication: () => Promise.resolve() })
    expect(credentialsMayChange(added)).toBe(true)
  })
})

// ---------------------------------------------------------------------------
// TLS: a server that demands a client certificate, reached with the kubeconfig's CA,
// and an exec credential plugin that hands out a new token for every request.

const openssl = (dir: string, ...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })

/** A CA, a server certificate for 127.0.0.1 and two client certificates, made with openssl. */
const certificates = (dir: string) => {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  openssl(dir, "req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test-ca")
  const signed = (name: string, subject: string, extensions: string) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`), extensions)
    openssl(dir, "req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject)
    openssl(
      dir,
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "1",
      "-extfile",
      `${name}.ext`
    )
  }
  signed("server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1\n")
  signed("client-a", "/CN=client-a", "extendedKeyUsage=clientAuth\n")
  signed("client-b", "/CN=client-b", "extendedKeyUsage=clientAuth\n")
  const read = (file: string) => fs.readFileSync(path.join(dir, file), "utf8")
  return { read }
}

interface Seen {
  readonly connection: number
  readonly commonName: string
  readonly authorization: string | undefined
  readonly watch: boolean
}

describe("KubeClientLive connections over TLS", () => {
  it.scopedLive("keeps the CA, the client certificate and per-request tokens while reusing connections, and pools a rotated certificate apart", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-transport-"))
      const { read } = certificates(dir)
      const seen: Array<Seen> = []
      const connections = new WeakMap<tls.TLSSocket, number>()
      let opened = 0
      const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
        const socket = req.socket as tls.TLSSocket
        const watch = new URL(req.url ?? "/", "https://x").searchParams.get("watch") === "true"
        seen.push({
          connection: connections.get(socket) ?? -1,
          commonName: String(socket.getPeerCertificate().subject.CN),
          authorization: req.headers.authorization,
          watch
        })
        const object = { ...ingress("web"), metadata: { ...ingress("web").metadata, resourceVersion: "1" } }
        res.writeHead(200, { "content-type": "application/json" })
        // A watch that sends one event and ends, as a server closing a watch does.
        res.end(watch ? `${JSON.stringify({ type: "ADDED", object })}\n` : JSON.stringify(object))
      }
      const server = https.createServer(
        {
          key: read("server.key"),
          cert: read("server.crt"),
          ca: read("ca.crt"),
          requestCert: true,
          rejectUnauthorized: true
        },
        handler
      )
      server.on("secureConnection", (socket) => connections.set(socket, ++opened))
      const port = yield* Effect.acquireRelease(
        Effect.async<number>((resume) => {
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as { port: number }).port)))
        }),
        () =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
            server.closeAllConnections()
          })
      )

      // The plugin answers with the client certificate named in `which`, and a token
      // that has already expired, so client-node runs it again for every request.
      for (const name of ["client-a", "client-b"]) {
        fs.writeFileSync(
          path.join(dir, `${name}.json`),
          JSON.stringify({
            apiVersion: "client.authentication.k8s.io/v1",
            kind: "ExecCredential",
            status: {
              token: "TOKEN",
              expirationTimestamp: "2000-01-01T00:00:00Z",
              clientCertificateData: read(`${name}.crt`),
              clientKeyData: read(`${name}.key`)
            }
          })
        )
      }
      fs.writeFileSync(path.join(dir, "which"), "client-a")
      fs.writeFileSync(
        path.join(dir, "credential.sh"),
        `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\nsed "s/TOKEN/token-$n/" "$(cat which).json"\n`
      )
      const kc = new k8s.KubeConfig()
      kc.loadFromOptions({
        clusters: [{
          name: "tls",
          server: `https://127.0.0.1:${port}`,
          caData: Buffer.from(read("ca.crt")).toString("base64"),
          skipTLSVerify: false
        }],
        users: [{
          name: "plugin",
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "/bin/sh",
            args: ["-c", `cd '${dir}' && sh credential.sh`]
          }
        }],
        contexts: [{ name: "tls", cluster: "tls", user: "plugin" }],
        currentContext: "tls"
      })
      const client = yield* KubeClientLive.make(kc)

      for (let i = 0; i < 10; i++) yield* client.get(IngressResource, NS, "web")
      const watched = yield* Stream.runCollect(
        Stream.take(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }), 1)
      )
      expect(watched.length).toBe(1)
      fs.writeFileSync(path.join(dir, "which"), "client-b")
      for (let i = 0; i < 10; i++) yield* client.get(IngressResource, NS, "web")

      const calls = seen.filter((s) => !s.watch)
      expect(calls.map((s) => s.commonName)).toEqual([...Array(10).fill("client-a"), ...Array(10).fill("client-b")])
      // Every request carried a token of its own: the headers are still client-node's, per request.
      const tokens = seen.map((s) => s.authorization)
      expect(new Set(tokens).size).toBe(seen.length)
      expect(tokens.every((t) => t !== undefined && /^Bearer token-\d+$/.test(t))).toBe(true)
      // One connection per certificate for the calls, one for the watch.
      expect(new Set(calls.slice(0, 10).map((s) => s.connection)).size).toBe(1)
      expect(new Set(calls.slice(10).map((s) => s.connection)).size).toBe(1)
      expect(seen.find((s) => s.watch)?.commonName).toBe("client-a")
      expect(opened).toBe(3)
    }))
})
