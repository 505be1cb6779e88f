/**
 * The API server process over real sockets on 127.0.0.1: paused, it accepts
 * connections and sends no byte until resumed; stopped, it refuses connections and
 * resets open ones; restarted, it listens on the same port with the same objects and
 * resourceVersions, so a kubeconfig written before still works. Faults that start
 * after N requests apply over HTTP as in memory.
 */
import { describe, expect, it } from "@effect/vitest"
import { KubeConfig, NetworkingV1Api } from "@kubernetes/client-node"
import { Effect } from "effect"
import { connect, type Socket } from "node:net"
import { Fault } from "../src/Faults.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"
import { call, lineReader, send } from "./WireFixtures.js"

const ING = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`

const cluster = () => LocalCluster.make({ namespaces: [NS] })

/** A raw connection that has sent `request` and records every byte the server sends back. */
const rawConnection = (port: number, request: string) =>
  Effect.gen(function*() {
    let received = ""
    let answer: (text: string) => void = () => undefined
    const answered = new Promise<string>((resolve) => (answer = resolve))
    const socket = yield* Effect.acquireRelease(
      Effect.async<Socket>((resume) => {
        const socket: Socket = connect(port, "127.0.0.1", () => resume(Effect.succeed(socket)))
        socket.on("error", () => undefined)
      }),
      (socket) => Effect.sync(() => socket.destroy())
    )
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      received += chunk
      answer(received)
    })
    socket.write(request)
    return { received: () => received, answered }
  })

/** How a fetch ended: its status, or the system error code under the failure. */
const attempt = (url: string, path: string) =>
  Effect.promise(() =>
    fetch(`${url}${path}`).then(
      (r) => r.text().then(() => `answered ${r.status}`),
      (e: { cause?: { code?: string } }) => `failed ${e.cause?.code ?? "without a code"}`
    )
  )

describe("a paused HTTP server", () => {
  it.scopedLive("accepts connections and sends no byte until it resumes, discovery included", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      yield* send(local.url, "POST", ING, ingress("web"))
      yield* local.faults.server.pause
      const raw = yield* rawConnection(
        Number(new URL(local.url).port),
        "GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
      )
      const list = yield* Effect.fork(call(local.url, ING))
      // Both requests are in and held: the server has them and is not answering.
      yield* local.faults.server.awaitHeld(2)
      expect(raw.received()).toBe("")
      yield* local.faults.server.resume
      expect(yield* Effect.promise(() => raw.answered)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
      const answer = yield* list
      expect([answer.status, answer.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)]).toEqual([
        200,
        ["web"]
      ])
    }))

  it.scopedLive("keeps an open watch connection silent and delivers the changes on resume", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      const from = yield* local.store.resourceVersion
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() =>
        fetch(`${local.url}${ING}?watch=true&resourceVersion=${from}`, { signal: controller.signal })
      )
      const next = lineReader(response)
      yield* local.faults.server.pause
      // Straight to the store: the changes are there, the paused server has not sent them.
      yield* local.store.create(IngressResource, NS, ingress("a"))
      yield* local.store.create(IngressResource, NS, ingress("b"))
      // The first event waits at the gate: the watch is open and silent.
      yield* local.faults.server.awaitHeld(1)
      yield* local.faults.server.resume
      const lines = [JSON.parse((yield* Effect.promise(next))!), JSON.parse((yield* Effect.promise(next))!)]
      expect(lines.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED a", "ADDED b"])
    }))
})

describe("a stopped HTTP server", () => {
  it.scopedLive("refuses connections, then serves the same objects and versions on the same port after a restart", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      // Loaded before the restart, and used after it unchanged.
      const config = new KubeConfig()
      config.loadFromString(local.kubeconfig())
      const networking = config.makeApiClient(NetworkingV1Api)
      const created = (yield* send(local.url, "POST", ING, ingress("web"))).body
      yield* local.faults.server.stop
      expect(yield* attempt(local.url, `${ING}/web`)).toBe("failed ECONNREFUSED")
      yield* local.faults.server.restart
      const read = yield* Effect.promise(() => networking.readNamespacedIngress({ namespace: NS, name: "web" }))
      expect([read.metadata?.uid, read.metadata?.resourceVersion]).toEqual([
        created.metadata.uid,
        created.metadata.resourceVersion
      ])
    }))

  it.scopedLive("resets an open watch when it dies, and a watch from an earlier version resumes after the restart", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      const from = yield* local.store.resourceVersion
      const response = yield* Effect.promise(() => fetch(`${local.url}${ING}?watch=true&resourceVersion=${from}`))
      const next = lineReader(response)
      yield* send(local.url, "POST", ING, ingress("a"))
      expect(JSON.parse((yield* Effect.promise(next))!).type).toBe("ADDED")
      yield* local.faults.server.stop
      // A cut, not the clean end of a graceful close.
      expect(yield* Effect.promise(() => next().then((line) => `ended ${line}`, () => "reset"))).toBe("reset")
      yield* local.faults.server.restart
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const resumed = yield* Effect.promise(() =>
        fetch(`${local.url}${ING}?watch=true&resourceVersion=${from}`, { signal: controller.signal })
      )
      const again = lineReader(resumed)
      yield* send(local.url, "POST", ING, ingress("b"))
      const names = [JSON.parse((yield* Effect.promise(again))!), JSON.parse((yield* Effect.promise(again))!)]
        .map((e) => `${e.type} ${e.object.metadata.name}`)
      expect(names).toEqual(["ADDED a", "ADDED b"])
    }))

  it.scopedLive("resets a request the pause was holding when it dies instead of resuming", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      yield* local.faults.server.pause
      const held = yield* Effect.fork(attempt(local.url, ING))
      yield* local.faults.server.awaitHeld(1)
      yield* local.faults.server.stop
      expect(yield* held).toMatch(/^failed /)
    }))
})

describe("HTTP faults that start later", () => {
  it.scopedLive("answers the first N matching requests, then the fault", () =>
    Effect.gen(function*() {
      const { url, faults } = yield* cluster()
      yield* faults.add({ verbs: ["list"], action: Fault.throttle(2), after: 2, times: 1 })
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) statuses.push((yield* call(url, ING)).status)
      expect(statuses).toEqual([200, 200, 429, 200])
    }))
})
