/**
 * The live client's requests as a server on 127.0.0.1 sees them (method, path, query,
 * content type, body) and the answers it refuses to read: a body over its bound fails
 * with a typed KubeError at once, without reading on and without a retry, and an
 * answer a proxy compressed anyway is still read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import * as zlib from "node:zlib"
import type { CoreEvent, Service } from "../../../src/domain/Objects.js"
import { EventResource, GatewayClassResource, ServiceResource } from "../../../src/domain/Resources.js"
import { MAX_CALL_SOCKETS } from "../../../src/layers/kubeClient/ConnectionPool.js"
import { MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES } from "../../../src/layers/kubeClient/RestTransport.js"
import { KubeClientLive, type KubeClientLiveOptions } from "../../../src/layers/KubeClientLive.js"
import { FIELD_MANAGER } from "../../../src/services/KubeClient.js"
import { kubeConfigFor } from "../../support/KubeConfigs.js"

const NS = "apps"

interface Seen {
  readonly method: string
  readonly url: string
  readonly contentType: string | undefined
  readonly accept: string | undefined
  readonly authorization: string | undefined
  readonly body: string
}

type Answer = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void

/** An HTTP server on 127.0.0.1 that records each request and answers it with `answer`; closed with the scope. */
const server = (answer: Answer, options: KubeClientLiveOptions = {}) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly seen: Array<Seen>; readonly closed: () => number }>(
      (resume) => {
        const seen: Array<Seen> = []
        let closed = 0
        const s = http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            const body = Buffer.concat(chunks).toString("utf8")
            seen.push({
              method: req.method ?? "",
              url: req.url ?? "",
              contentType: req.headers["content-type"],
              accept: req.headers.accept,
              authorization: req.headers.authorization,
              body
            })
            answer(req, res, body)
          })
        })
        s.on("connection", (socket: net.Socket) => socket.on("close", () => closed++))
        s.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server: s, seen, closed: () => closed })))
      }
    ),
    ({ server: s }) =>
      Effect.async<void>((resume) => {
        s.close(() => resume(Effect.void))
        s.closeAllConnections()
      })
  ).pipe(
    Effect.flatMap(({ closed, seen, server: s }) =>
      Effect.map(
        KubeClientLive.make(
          kubeConfigFor(`http://127.0.0.1:${(s.address() as net.AddressInfo).port}`, "wire-token"),
          options
        ),
        (client) => ({ client, seen, closed })
      )
    )
  )

const service: Service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: {
    name: "web",
    namespace: NS,
    // Read back from a server: an apply body must not carry them.
    managedFields: [{ manager: "someone", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: {} }]
  },
  spec: { ports: [{ port: 80 }] }
}

/** Answers every request with the JSON `value`, or echoes the body when there is one. */
const echo: Answer = (_req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" })
  res.end(body !== "" ? body : JSON.stringify({ kind: "List", metadata: { resourceVersion: "7" }, items: [{}] }))
}

describe("KubeClientLive on the wire", () => {
  it.scopedLive("sends server-side apply, dry run, list, get, delete and Event writes as the API expects them", () =>
    Effect.gen(function*() {
      const { client, seen } = yield* server(echo)
      yield* client.apply(ServiceResource, service, { dryRun: true })
      yield* client.apply(ServiceResource, service, { force: false })
      const listed = yield* client.list(ServiceResource, NS, { labelSelector: "a=b,c in (d,e)" })
      yield* client.get(GatewayClassResource, "", "public")
      yield* client.delete(ServiceResource, NS, "web")
      const event = {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "web.1", namespace: NS },
        involvedObject: { kind: "Pod", name: "p", namespace: NS },
        eventTime: "2024-01-01T00:00:00.000001Z"
      } as CoreEvent
      yield* client.events!.create(EventResource, NS, event)
      yield* client.events!.patch(EventResource, NS, "web.1", { count: 2 })

      expect(seen.map((s) => [s.method, s.url, s.contentType])).toEqual([
        [
          "PATCH",
          `/api/v1/namespaces/${NS}/services/web?fieldManager=${FIELD_MANAGER}&force=true&dryRun=All`,
          "application/apply-patch+yaml"
        ],
        [
          "PATCH",
          `/api/v1/namespaces/${NS}/services/web?fieldManager=${FIELD_MANAGER}&force=false`,
          "application/apply-patch+yaml"
        ],
        ["GET", `/api/v1/namespaces/${NS}/services?limit=500&labelSelector=a%3Db%2Cc+in+%28d%2Ce%29`, undefined],
        ["GET", "/apis/gateway.networking.k8s.io/v1/gatewayclasses/public", undefined],
        ["DELETE", `/api/v1/namespaces/${NS}/services/web`, undefined],
        ["POST", `/api/v1/namespaces/${NS}/events`, "application/json"],
        ["PATCH", `/api/v1/namespaces/${NS}/events/web.1`, "application/merge-patch+json"]
      ])
      expect(seen.every((s) => s.accept === "application/json" && s.authorization === "Bearer wire-token")).toBe(true)
      // The apply body is the object as JSON (which is YAML), without managedFields.
      expect(JSON.parse(seen[0]!.body)).toEqual({ ...service, metadata: { name: "web", namespace: NS } })
      // An Event goes out as built: MicroTime keeps its six digits.
      expect(JSON.parse(seen[5]!.body)).toEqual(event)
      expect(JSON.parse(seen[6]!.body)).toEqual({ count: 2 })
      // List items read like get answers.
      expect(listed.items).toEqual([{ apiVersion: "v1", kind: "Service" }])
    }))

  it.scopedLive("fails with a typed error, without retrying, when a success declares a body over the bound", () =>
    Effect.gen(function*() {
      const { client, seen } = yield* server((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) })
        // Never sends it: the client must not wait for it.
        res.write("{")
      })
      const failure = yield* Effect.flip(client.get(ServiceResource, NS, "web"))
      expect(failure._tag).toBe("Unexpected")
      expect(failure.code).toBe(200)
      expect(failure.reason).toMatch(
        /^the API server at http:\/\/127\.0\.0\.1:\d+ answered get services "web" in namespace "apps" \(200\) with a body over 16384 KiB, which was not read$/
      )
      expect(seen.length).toBe(1)
    }))

  it.scopedLive("stops reading a success that grows past the bound, and closes its connection", () =>
    Effect.gen(function*() {
      const chunk = Buffer.alloc(1024 * 1024, " ")
      const { client, closed, seen } = yield* server((_req, res) => {
        // Chunked, no length: the bound is found only as the body arrives.
        res.writeHead(200, { "content-type": "application/json" })
        res.write("[")
        const more = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once("drain", more)
        }
        res.on("error", () => {})
        more()
      })
      const failure = yield* Effect.flip(client.list(ServiceResource, NS))
      expect(failure._tag).toBe("Unexpected")
      expect(failure.reason).toMatch(/\(200\) with a body over 16384 KiB, which was not read$/)
      expect(seen.length).toBe(1)
      // The server sees the client hang up instead of reading its endless answer.
      yield* Effect.repeat(Effect.sync(closed), { until: (n) => n === 1, schedule: Schedule.spaced("10 millis") })
    }))

  it.scopedLive("fails with a typed error carrying the status when an error answer is over its bound", () =>
    Effect.gen(function*() {
      const { client, seen } = yield* server((_req, res) => {
        res.writeHead(503, { "content-type": "text/html" })
        res.end("x".repeat(MAX_ERROR_BODY_BYTES + 1))
      })
      const failure = yield* Effect.flip(client.get(ServiceResource, NS, "web"))
      expect(failure._tag).toBe("Unexpected")
      expect(failure.code).toBe(503)
      expect(failure.reason).toMatch(/\(503\) with a body over 256 KiB, which was not read$/)
      // Not the 503 a retry may heal: the answer itself is wrong.
      expect(seen.length).toBe(1)
    }))

  it.scopedLive("reads an answer a proxy compressed although the client asked for no encoding", () =>
    Effect.gen(function*() {
      const object = { ...service, metadata: { name: "web", namespace: NS, resourceVersion: "3" } }
      const { client } = yield* server((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        res.end(zlib.gzipSync(JSON.stringify(object)))
      })
      expect(yield* client.get(ServiceResource, NS, "web")).toEqual(object)
    }))

  it.scopedLive("fails a success whose body is not JSON, and maps an error answer from its Status", () =>
    Effect.gen(function*() {
      let calls = 0
      const { client } = yield* server((_req, res) => {
        calls++
        if (calls === 1) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end("not json")
          return
        }
        res.writeHead(409, { "content-type": "application/json" })
        res.end(JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "Conflict",
          message: "the object has been modified",
          code: 409
        }))
      })
      const unreadable = yield* Effect.flip(client.get(ServiceResource, NS, "web"))
      expect(unreadable._tag).toBe("Unexpected")
      expect(unreadable.reason).toMatch(/answered get services "web" in namespace "apps" with a body that is not JSON$/)
      const conflict = yield* Effect.flip(client.apply(ServiceResource, service))
      expect(conflict._tag).toBe("Conflict")
      expect(conflict.reason).toBe("the object has been modified")
    }))
})

describe("KubeClientLive lists in pages", () => {
  it.scopedLive("follows continue tokens and answers one list of the first page's resourceVersion", () =>
    Effect.gen(function*() {
      const { client, seen } = yield* server((req, res) => {
        const token = new URL(req.url ?? "", "http://x").searchParams.get("continue")
        const page = token === null ? 0 : Number(token)
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({
          kind: "ServiceList",
          apiVersion: "v1",
          metadata: { resourceVersion: "41", ...(page < 2 ? { continue: String(page + 1) } : {}) },
          items: [{ metadata: { name: `web-${page}` } }]
        }))
      })
      const listed = yield* client.list(ServiceResource, NS)
      expect(seen.map((s) => s.url)).toEqual([
        `/api/v1/namespaces/${NS}/services?limit=500`,
        `/api/v1/namespaces/${NS}/services?limit=500&continue=1`,
        `/api/v1/namespaces/${NS}/services?limit=500&continue=2`
      ])
      expect(listed.metadata).toEqual({ resourceVersion: "41" })
      expect(listed.items.map((item) => [item.kind, item.metadata?.name])).toEqual([
        ["Service", "web-0"],
        ["Service", "web-1"],
        ["Service", "web-2"]
      ])
    }))
})

describe("KubeClientLive under a burst", () => {
  it.scopedLive("starts a call's time limit when it is sent, not while it waits behind the calls in flight", () =>
    Effect.gen(function*() {
      // Each answer takes 150 ms; a call may take 1 s, each attempt half of it. Eight times
      // the calls that fit in flight: the last wait 1,050 ms for their turn, which a limit
      // counting the wait spends before they are even sent.
      let inFlight = 0
      let most = 0
      const { client, seen } = yield* server((_req, res) => {
        most = Math.max(most, ++inFlight)
        setTimeout(() => {
          inFlight--
          echo(_req, res, "")
        }, 150)
      }, { apiTimeout: "1 second" })
      const calls = 8 * MAX_CALL_SOCKETS
      const answers = yield* Effect.forEach(
        Array.from({ length: calls }, (_, i) => `web-${i}`),
        (name) => Effect.either(client.get(ServiceResource, NS, name)),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((a) => a._tag === "Left").map((a) => a._tag === "Left" && a.left.reason)).toEqual([])
      expect(seen).toHaveLength(calls)
      expect(most).toBe(MAX_CALL_SOCKETS)
    }))
})
