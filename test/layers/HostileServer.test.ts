/**
 * The live client against servers that misbehave on purpose, over real sockets: a
 * watch line that never ends, a refusal with an endless body, a proxy's HTML page,
 * a server faster than its reader, credentials in the server URL. Each ends in a
 * specific `KubeError` with bounded memory, never a crash or a leak.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schedule, Stream } from "effect"
import type { ServerResponse } from "node:http"
import { IngressResource } from "../../src/domain/Resources.js"
import { MAX_WATCH_LINE_CHARS, WATCH_BUFFER_EVENTS } from "../../src/layers/internal/WatchConnection.js"
import { KubeClientLive } from "../../src/layers/KubeClientLive.js"
import { kubeConfigFor } from "../support/KubeConfigs.js"
import { loopbackServer } from "../support/LoopbackServer.js"

const NS = "demo"
const noRetry = Schedule.stop
const MiB = 1024 * 1024

/** Writes `chunk` until the client goes away, honouring backpressure; counts what it wrote. */
const writeForever = (res: ServerResponse, chunk: Buffer | string, written: { bytes: number; closed: boolean }) => {
  res.on("close", () => (written.closed = true))
  const pump = () => {
    while (!written.closed) {
      written.bytes += Buffer.byteLength(chunk)
      if (!res.write(chunk)) return void res.once("drain", pump)
    }
  }
  pump()
}

const watchOnce = (url: string) =>
  Effect.gen(function*() {
    const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: noRetry })
    return yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(Stream.runDrain, Effect.either)
  })

describe("the live client against a hostile server", () => {
  it.scopedLive("fails a watch whose line never ends with a Transport error, holding at most one bounded line", () =>
    Effect.gen(function*() {
      const written = { bytes: 0, closed: false }
      const { url } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        writeForever(res, Buffer.alloc(MiB, "x"), written)
      })
      const outcome = yield* watchOnce(url)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("Transport")
      expect(Either.isLeft(outcome) && outcome.left.reason).toContain("without a newline")
      // Read up to the bound, then the connection is closed: not a byte more than the
      // bound and what the socket buffers held on the way.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      expect(written.closed).toBe(true)
      expect(written.bytes).toBeLessThan(MAX_WATCH_LINE_CHARS + 64 * MiB)
    }))

  it.scopedLive("reads a refused watch's endless body only up to its bound, and says what the server said", () =>
    Effect.gen(function*() {
      const written = { bytes: 0, closed: false }
      const { url } = yield* loopbackServer((_, res) => {
        res.writeHead(503, { "content-type": "text/plain" })
        res.write("etcd leader unavailable ")
        writeForever(res, Buffer.alloc(64 * 1024, "y"), written)
      })
      const outcome = yield* watchOnce(url)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("Unavailable")
      const reason = Either.isLeft(outcome) ? outcome.left.reason : ""
      expect(reason).toContain("etcd leader unavailable")
      expect(reason.length).toBeLessThan(1_024)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      expect(written.closed).toBe(true)
      expect(written.bytes).toBeLessThan(64 * MiB)
    }))

  it.scopedLive("keeps a proxy's HTML error page to its words: no tags, no newlines, bounded", () =>
    Effect.gen(function*() {
      const page = `<html><head><style>body{color:red}</style><title>502</title></head>\n<body><h1>Bad Gateway</h1>\n${
        "<p>upstream went away</p>\n".repeat(5_000)
      }</body></html>`
      const { url } = yield* loopbackServer((_, res) => {
        res.writeHead(502, { "content-type": "text/html" })
        res.end(page)
      })
      const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: noRetry })
      const outcome = yield* Effect.either(client.get(IngressResource, NS, "a"))
      const reason = Either.isLeft(outcome) ? outcome.left.reason : ""
      expect(reason).toContain("Bad Gateway upstream went away")
      expect(reason).not.toMatch(/[<>\n]|color:red/)
      expect(reason.length).toBeLessThan(1_024)
    }))

  it.scopedLive("pauses the socket of a watch whose reader is slower than its server, losing nothing", () =>
    Effect.gen(function*() {
      const total = 40 * WATCH_BUFFER_EVENTS
      const event = (i: number) =>
        `${
          JSON.stringify({
            type: "MODIFIED",
            object: { metadata: { name: `i-${i}`, resourceVersion: String(i) }, padding: "p".repeat(1_000) }
          })
        }\n`
      let sent = 0
      const { url } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        const pump = () => {
          while (sent < total) {
            if (!res.write(event(sent++))) return void res.once("drain", pump)
          }
          res.end()
        }
        pump()
      })
      const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: noRetry })
      let taken = 0
      let sentWhenFirstTaken = 0
      yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(
        Stream.tap(() =>
          Effect.gen(function*() {
            taken += 1
            if (taken === 1) {
              // A reader that stalls: the server must be held back, not read into the heap.
              yield* Effect.sleep("300 millis")
              sentWhenFirstTaken = sent
            }
          })
        ),
        Stream.runDrain
      )
      expect(sentWhenFirstTaken).toBeLessThan(total / 2)
      expect(taken).toBe(total)
    }))

  it.scopedLive("never names the user and password a server URL carries", () =>
    Effect.gen(function*() {
      const { port } = yield* loopbackServer((_, res) => {
        res.writeHead(503, { "content-type": "text/plain" })
        res.end("unavailable")
      })
      const secret = "S3CRET-PASS"
      const client = yield* KubeClientLive.make(kubeConfigFor(`http://admin:${secret}@127.0.0.1:${port}`), {
        retrySchedule: noRetry
      })
      const read = yield* Effect.either(client.get(IngressResource, NS, "a"))
      const watched = yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(
        Stream.runDrain,
        Effect.either
      )
      const refused = yield* KubeClientLive.make(kubeConfigFor(`http://admin:${secret}@127.0.0.1:1`), {
        retrySchedule: noRetry
      }).pipe(Effect.flatMap((c) => Effect.either(c.get(IngressResource, NS, "a"))))
      const reasonOf = (r: Either.Either<unknown, { readonly reason: string }>) =>
        Either.isLeft(r) ? r.left.reason : "no failure"
      const reasons = [reasonOf(read), reasonOf(watched), reasonOf(refused)]
      expect(reasons.every((r) => r !== "no failure")).toBe(true)
      expect(reasons[2]).toContain("http://127.0.0.1:1")
      for (const r of reasons) expect(r).not.toContain(secret)
      expect(client.cluster?.server).toBe(`http://127.0.0.1:${port}`)
    }))
})
