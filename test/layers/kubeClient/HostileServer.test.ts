/**
 * The live client against servers that misbehave on purpose, over real sockets: a
 * watch line that never ends, a refusal with an endless body, a proxy's HTML page,
 * a server faster than its reader, credentials in the server URL, a server that
 * accepts and never answers, one that cuts its answer mid-body, garbage for JSON, a
 * 1 GiB body, a watch dribbled a byte at a time. Each ends in a specific `KubeError`
 * within the client's own time limit and with bounded memory, its connection closed,
 * never a crash, a hang or a leak.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Duration, Effect, Either, Fiber, Option, Queue, Schedule, Stream } from "effect"
import type { ServerResponse } from "node:http"
import { IngressResource } from "../../../src/domain/Resources.js"
import { MAX_BODY_BYTES } from "../../../src/layers/kubeClient/RestTransport.js"
import { MAX_WATCH_LINE_CHARS, WATCH_BUFFER_EVENTS } from "../../../src/layers/kubeClient/WatchConnection.js"
import { KubeClientLive, MAX_LIST_PAGES } from "../../../src/layers/KubeClientLive.js"
import { kubeConfigFor } from "../../support/KubeConfigs.js"
import { closedWithin, countConnections, loopbackServer, loopbackSocketServer } from "../../support/LoopbackServer.js"

const NS = "demo"
const noRetry = Schedule.stop
const MiB = 1024 * 1024
/** What a hung attempt of `limitedClient` says: its limit, and what the limit derives from. */
const ATTEMPT_LIMIT =
  "no answer within 200 ms, the time limit of one attempt (half of the 400 ms KubeClientLive's apiTimeout option allows a call)"

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

/** A client without retries whose attempts each get half of `apiTimeout` (200 ms by default). */
const limitedClient = (url: string, apiTimeout: Duration.DurationInput = "400 millis") =>
  KubeClientLive.make(kubeConfigFor(url), { retrySchedule: noRetry, apiTimeout })

const watchOnce = (url: string) =>
  Effect.gen(function*() {
    const client = yield* KubeClientLive.make(kubeConfigFor(url), { retrySchedule: noRetry })
    return yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(Stream.runDrain, Effect.either)
  })

/** A server answering 200 with each body in turn, twice (a get, then a list), over and over. */
const answeringInTurn = (bodies: ReadonlyArray<string>) => {
  let sent = 0
  return loopbackServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(bodies[Math.floor(sent++ / 2) % bodies.length])
  })
}

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

  it.scopedLive("takes the request's token and password out of a refusal that echoes them", () =>
    Effect.gen(function*() {
      const token = "ECHOED-BEARER-TOKEN-4f1a"
      const password = "ECHOED-PASSWORD-8c2e"
      const { port } = yield* loopbackServer((request, res) => {
        // A proxy's debugging page: every request header, quoted back.
        res.writeHead(503, { "content-type": "text/plain" })
        res.end(`denied: ${JSON.stringify(request.headers)} for ${password}`)
      })
      const client = yield* KubeClientLive.make(kubeConfigFor(`http://admin:${password}@127.0.0.1:${port}`, token), {
        retrySchedule: noRetry
      })
      const read = yield* Effect.flip(client.get(IngressResource, NS, "a"))
      const watched = yield* Effect.flip(
        client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(Stream.runDrain)
      )
      for (const failure of [read, watched]) {
        expect(failure.reason).toContain("denied:")
        expect(failure.reason).toContain("[redacted]")
        expect(failure.reason).not.toContain(token)
        expect(failure.reason).not.toContain(password)
      }
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

  it.scopedLive("fails a get and a list that are never answered at the attempt's time limit, naming it, and hangs up", () =>
    Effect.gen(function*() {
      // A stopped API server process: the kernel accepts, the request is read, nothing answers.
      const hung = yield* loopbackSocketServer(() => {})
      const client = yield* limitedClient(hung.url)
      const started = yield* Clock.currentTimeMillis
      const read = yield* Effect.flip(client.get(IngressResource, NS, "a"))
      const listed = yield* Effect.flip(client.list(IngressResource, NS))
      expect([read._tag, read._tag === "Transport" && read.kind]).toEqual(["Transport", "no-answer"])
      expect(read.reason).toBe(
        `could not get ingresses.networking.k8s.io "a" in namespace "${NS}" at ${hung.url}: ${ATTEMPT_LIMIT}`
      )
      expect(listed.reason).toBe(
        `could not list ingresses.networking.k8s.io in namespace "${NS}" at ${hung.url}: ${ATTEMPT_LIMIT}`
      )
      // Two attempts of 200 ms each, one after the other, and no retry.
      expect((yield* Clock.currentTimeMillis) - started).toBeLessThan(1_500)
      expect(hung.accepted()).toBe(2)
      yield* closedWithin(hung, "500 millis", 2)
    }))

  it.scopedLive("fails a call whose answer is cut mid-body, by a reset or by a close, with a Transport error saying so", () =>
    Effect.gen(function*() {
      const half = `{"kind":"Ingress","apiVersion":"networking.k8s.io/v1","metadata":{"name":"a","annot`
      let answered = 0
      const cut = yield* loopbackSocketServer((socket) =>
        socket.once("data", () => {
          answered++
          // First a fixed length, then chunked: either way the body stops short of its end.
          socket.write(
            answered === 1
              ? `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n${half}`
              : `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${
                half.length.toString(16)
              }\r\n${half}\r\n`,
            () => setTimeout(() => (answered === 1 ? socket.resetAndDestroy() : socket.end()), 20)
          )
        })
      )
      const client = yield* limitedClient(cut.url)
      const reset = yield* Effect.flip(client.get(IngressResource, NS, "a"))
      const closed = yield* Effect.flip(client.get(IngressResource, NS, "a"))
      for (const failure of [reset, closed]) {
        expect([failure._tag, failure._tag === "Transport" && failure.kind]).toEqual(["Transport", "other"])
        expect(failure.reason).toBe(
          `could not get ingresses.networking.k8s.io "a" in namespace "${NS}" at ${cut.url}: the connection was reset before the answer was complete (ECONNRESET)`
        )
      }
      yield* closedWithin(cut, "500 millis", 2)
    }))

  it.scopedLive("fails a get and a list answered 200 with a body that is not JSON with an Unexpected error naming the call", () =>
    Effect.gen(function*() {
      // A login page a proxy put in front of the API server, and an answer cut short but ended.
      const bodies = ["<html>login required</html>", "{\"kind\":\"IngressList\",\"items\":["]
      const { url } = yield* answeringInTurn(bodies)
      const client = yield* limitedClient(url)
      for (const _ of bodies) {
        const read = yield* Effect.flip(client.get(IngressResource, NS, "a"))
        const listed = yield* Effect.flip(client.list(IngressResource, NS))
        expect([read._tag, listed._tag]).toEqual(["Unexpected", "Unexpected"])
        expect(read.reason).toBe(
          `the API server at ${url} answered get ingresses.networking.k8s.io "a" in namespace "${NS}" with a body that is not JSON`
        )
        expect(listed.reason).toBe(
          `the API server at ${url} answered list ingresses.networking.k8s.io in namespace "${NS}" with a body that is not JSON`
        )
      }
    }))

  // JSON of the wrong shape once ended a list in a TypeError (a defect, not a
  // KubeError), read as an empty list, or reached a get's caller as the object.
  it.scopedLive("fails a get and a list answered 200 with JSON that is not an object of their kind with an Unexpected error", () =>
    Effect.gen(function*() {
      const bodies = ["null", "\"a string\"", "[1, 2]", "{\"items\": 3}", "{\"items\": {}}"]
      const { url } = yield* answeringInTurn(bodies)
      const client = yield* limitedClient(url)
      for (const _ of bodies) {
        const read = yield* Effect.either(client.get(IngressResource, NS, "a"))
        const listed = yield* Effect.either(Effect.sandbox(client.list(IngressResource, NS)))
        expect(Either.isLeft(read) && read.left._tag).toBe("Unexpected")
        expect(Either.isLeft(read) && read.left.reason).toMatch(
          /with (JSON that is not an object|an object without metadata)$/
        )
        expect(Either.isLeft(listed) && listed.left._tag === "Fail" && listed.left.error._tag).toBe("Unexpected")
        expect(Either.isLeft(listed) && listed.left._tag === "Fail" && listed.left.error.reason).toMatch(
          /with (JSON that is not an object|a list without an items array)$/
        )
      }
    }))

  // Each page is bounded by the attempt's limit; the list as a whole by its page count,
  // so a server that answers every page with another continue token is not followed forever.
  it.scopedLive("fails a list whose pages never end after its most pages, saying so", () =>
    Effect.gen(function*() {
      let pages = 0
      const { url } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ kind: "IngressList", metadata: { continue: `page-${++pages}` }, items: [] }))
      })
      const client = yield* limitedClient(url)
      const outcome = yield* client.list(IngressResource, NS).pipe(Effect.timeout("5 seconds"), Effect.either)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("Unexpected")
      expect(Either.isLeft(outcome) && outcome.left.message).toContain(`with more than ${MAX_LIST_PAGES} pages`)
      expect(pages).toBe(MAX_LIST_PAGES)
    }))

  it.scopedLive("reads none of a 1 GiB answer, declared or streamed, past its bound, and closes its connection", () =>
    Effect.gen(function*() {
      const declared = { bytes: 0, closed: false }
      const streamed = { bytes: 0, closed: false }
      let calls = 0
      const { server, url } = yield* loopbackServer((_, res) => {
        calls++
        res.on("error", () => {})
        if (calls === 1) {
          res.writeHead(200, { "content-type": "application/json", "content-length": String(1024 * MiB) })
          writeForever(res, Buffer.alloc(MiB, " "), declared)
        } else {
          // Chunked: the bound is met only as the body arrives.
          res.writeHead(200, { "content-type": "application/json" })
          writeForever(res, Buffer.alloc(MiB, " "), streamed)
        }
      })
      const connections = countConnections(server)
      const client = yield* limitedClient(url, "5 seconds")
      const failures = [
        yield* Effect.flip(client.get(IngressResource, NS, "a")),
        yield* Effect.flip(client.get(IngressResource, NS, "a"))
      ]
      for (const failure of failures) {
        expect([failure._tag, failure.code]).toEqual(["Unexpected", 200])
        expect(failure.reason).toBe(
          `the API server at ${url} answered get ingresses.networking.k8s.io "a" in namespace "${NS}" (200) with a body over ${
            MAX_BODY_BYTES / 1024
          } KiB, which was not read`
        )
      }
      yield* closedWithin(connections, "1 second", 2)
      expect([declared.closed, streamed.closed]).toEqual([true, true])
      // The bound, and what the sockets' buffers held on the way: far from 1 GiB.
      expect(declared.bytes).toBeLessThan(64 * MiB)
      expect(streamed.bytes).toBeLessThan(MAX_BODY_BYTES + 64 * MiB)
    }))
})

describe("the live client's watch against a hostile server", () => {
  it.scopedLive("fails a watch whose server accepts and never sends headers at the attempt's time limit, and hangs up", () =>
    Effect.gen(function*() {
      const hung = yield* loopbackSocketServer(() => {})
      const client = yield* limitedClient(hung.url)
      const failure = yield* Effect.flip(
        Stream.runDrain(client.watchFrom(IngressResource, NS, { resourceVersion: "1" }))
      )
      expect([failure._tag, failure._tag === "Transport" && failure.kind]).toEqual(["Transport", "no-answer"])
      expect(failure.reason).toBe(
        `could not watch ingresses.networking.k8s.io in namespace "${NS}" at ${hung.url}: ${ATTEMPT_LIMIT}`
      )
      yield* closedWithin(hung, "500 millis")
    }))

  it.scopedLive("keeps a watch that sent its headers and then nothing open past the time limit, until the caller interrupts it", () =>
    Effect.gen(function*() {
      // An idle watch is a quiet namespace, not a failure: the server ends it at its own
      // timeout (30 to 60 minutes without timeoutSeconds), the status source's liveness
      // list notices a server gone silent, and TCP keep-alive a dead path. What the
      // client must do is let go of the connection the moment its caller does.
      const silent = yield* loopbackSocketServer((socket) =>
        socket.once(
          "data",
          () => socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        )
      )
      const client = yield* limitedClient(silent.url)
      const fiber = yield* Effect.fork(Stream.runDrain(client.watchFrom(IngressResource, NS, { resourceVersion: "1" })))
      yield* Effect.sleep("600 millis")
      expect(yield* Fiber.poll(fiber)).toEqual(Option.none())
      expect(silent.closed()).toBe(0)
      yield* Fiber.interrupt(fiber)
      yield* closedWithin(silent, "500 millis")
    }))

  it.scopedLive("fails a watch cut mid-event, by a reset or by a close, with a Transport error and no partial event", () =>
    Effect.gen(function*() {
      const whole = `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a", resourceVersion: "2" } } })}\n`
      const half = JSON.stringify({ type: "ADDED", object: { metadata: { name: "b", resourceVersion: "3" } } })
        .slice(0, 30)
      let opened = 0
      const cut = yield* loopbackSocketServer((socket) =>
        socket.once("data", () => {
          opened++
          const body = whole + half
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${
              Buffer.byteLength(body).toString(16)
            }\r\n${body}\r\n`,
            () => setTimeout(() => (opened === 1 ? socket.resetAndDestroy() : socket.end()), 20)
          )
        })
      )
      const client = yield* limitedClient(cut.url)
      for (const _ of ["reset", "close"]) {
        const seen: Array<string | undefined> = []
        const failure = yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(
          Stream.runForEach((event) =>
            Effect.sync(() => seen.push(event.type === "ADDED" ? event.object.metadata?.name : event.type))
          ),
          Effect.flip
        )
        expect(seen).toEqual(["a"])
        expect([failure._tag, failure._tag === "Transport" && failure.kind]).toEqual(["Transport", "other"])
        expect(failure.reason).toBe(
          `could not watch ingresses.networking.k8s.io in namespace "${NS}" at ${cut.url}: the connection was reset before the answer was complete (ECONNRESET)`
        )
      }
      yield* closedWithin(cut, "500 millis", 2)
    }))

  it.scopedLive("fails a watch at a line of garbage with a Transport error naming the watch, and hangs up", () =>
    Effect.gen(function*() {
      const { server, url } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        // What follows the garbage is never read, and the server is left holding the connection.
        res.write("\u0000\u00ff<html>oops</html>\n{\"type\":\"ADDED\",\"object\":{}}\n")
      })
      const connections = countConnections(server)
      const client = yield* limitedClient(url)
      const failure = yield* Effect.flip(
        Stream.runDrain(client.watchFrom(IngressResource, NS, { resourceVersion: "1" }))
      )
      expect(failure._tag).toBe("Transport")
      expect(failure.reason).toBe(
        `the watch from ${url} (watch ingresses.networking.k8s.io in namespace "${NS}") sent a line that is not JSON`
      )
      yield* closedWithin(connections, "500 millis")
    }))

  it.scopedLive("delivers an event dribbled a byte every 50 ms once its line is complete, and lets go of the connection when interrupted", () =>
    Effect.gen(function*() {
      // The line reader holds only the unfinished line, bounded by MAX_WATCH_LINE_CHARS
      // (the endless line above); a slow server costs a timer, not memory, so it needs no
      // bound of its own beyond the caller's interrupt.
      const line = `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "slow" } } })}\n`
      const sent = { bytes: 0, closed: false }
      const { server, url } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.on("close", () => (sent.closed = true))
        // The event, then the start of the next one, a byte at a time, for as long as the client listens.
        const text = line + line
        const drip = setInterval(() => {
          if (sent.closed || sent.bytes >= text.length) return clearInterval(drip)
          res.write(text[sent.bytes++]!)
        }, 50)
      })
      const connections = countConnections(server)
      const client = yield* limitedClient(url)
      const events = yield* Queue.unbounded<{ readonly name: string | undefined; readonly sentBytes: number }>()
      const fiber = yield* client.watchFrom(IngressResource, NS, { resourceVersion: "1" }).pipe(
        Stream.runForEach((event) =>
          Queue.offer(events, {
            name: event.type === "ADDED" ? event.object.metadata?.name : event.type,
            sentBytes: sent.bytes
          })
        ),
        Effect.fork
      )
      const first = yield* Queue.take(events).pipe(Effect.timeout("10 seconds"))
      // Not a byte before its newline: no partial event.
      expect(first).toEqual({ name: "slow", sentBytes: line.length })
      // Half-way into the next line, with the attempt's time limit long gone.
      yield* Effect.sleep("300 millis")
      expect(yield* Fiber.poll(fiber)).toEqual(Option.none())
      yield* Fiber.interrupt(fiber)
      yield* closedWithin(connections, "500 millis")
      expect(sent.closed).toBe(true)
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(events))).toEqual([])
    }))
})
