/**
 * The live probe request against workloads that misbehave on purpose, over real
 * sockets on 127.0.0.1: one that accepts and never answers, one that cuts its status
 * line short, one that speaks something other than HTTP (TLS among them), one that
 * sends 1 GiB without a line end. Each is a specific probe answer within the probe's
 * deadline, the connection closed and at most a few KiB read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect } from "effect"
import type * as net from "node:net"
import { judgeAnswer, type ProbeTarget } from "../../../src/domain/RouteProbe.js"
import { httpProbe } from "../../../src/layers/routeProbe/HttpProbe.js"
import { closedWithin, loopbackSocketServer } from "../../support/LoopbackServer.js"

const host = "8080-s1.sessions.localtest.me"
const deadline = Duration.millis(300)
const MiB = 1024 * 1024

const target = (port: number): ProbeTarget => ({ scheme: "http", host, address: "127.0.0.1", port })

/** Writes `chunk` until the probe hangs up, honouring backpressure; counts what it wrote. */
const writeForever = (socket: net.Socket, chunk: Buffer, written: { bytes: number; closed: boolean }) => {
  socket.on("close", () => (written.closed = true))
  const pump = () => {
    while (!written.closed && !socket.destroyed) {
      written.bytes += chunk.length
      if (!socket.write(chunk)) return void socket.once("drain", pump)
    }
  }
  pump()
}

/** One probe of a workload on `port`, and how long it took. */
const timedProbe = (port: number) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const answer = yield* httpProbe(target(port), deadline)
    return { answer, took: (yield* Clock.currentTimeMillis) - started }
  })

describe("the live probe request against a hostile workload", () => {
  it.scopedLive("times out on a workload that accepts and never answers, at its deadline, and closes the connection", () =>
    Effect.gen(function*() {
      const hung = yield* loopbackSocketServer(() => {})
      const { answer, took } = yield* timedProbe(hung.port)
      expect(answer).toEqual({ _tag: "TimedOut", afterMs: 300 })
      expect(judgeAnswer(target(hung.port), answer).reason).toBe(
        `http://${host} via 127.0.0.1:${hung.port}: no answer within 300 ms`
      )
      expect(took).toBeGreaterThanOrEqual(290)
      expect(took).toBeLessThan(1_000)
      yield* closedWithin(hung, "500 millis")
    }))

  it.scopedLive("says the connection was reset when a workload resets it in the middle of its status line", () =>
    Effect.gen(function*() {
      const reset = yield* loopbackSocketServer((socket) =>
        socket.once("data", () => socket.write("HTTP/1.1 2", () => setTimeout(() => socket.resetAndDestroy(), 20)))
      )
      const { answer, took } = yield* timedProbe(reset.port)
      expect(answer).toEqual({
        _tag: "Failed",
        message: "the connection was reset before the status line was complete (ECONNRESET)"
      })
      expect(took).toBeLessThan(300)
    }))

  it.scopedLive("says the connection closed when a workload closes it in the middle of its status line", () =>
    Effect.gen(function*() {
      const closing = yield* loopbackSocketServer((socket) => socket.once("data", () => socket.end("HTTP/1.1 2")))
      const { answer, took } = yield* timedProbe(closing.port)
      expect(answer).toEqual({ _tag: "Failed", message: "the connection closed before the status line was complete" })
      expect(took).toBeLessThan(300)
    }))

  it.scopedLive("fails at once on an answer that is not HTTP, though the workload holds the connection open", () =>
    Effect.gen(function*() {
      const other = "the answer is not HTTP: it does not begin with \"HTTP/\" (does the port serve something else?)"
      // An SSH server's banner has a line end; a database's greeting need not.
      const answers: ReadonlyArray<readonly [string, string]> = [
        ["SSH-2.0-OpenSSH_9.6\r\n", other],
        ["\u0000\u0000\u0000\u0004hello", other],
        ["HTTP/1.1 OK\r\n", "the answer's status line has no status code"]
      ]
      let connection = 0
      const garbage = yield* loopbackSocketServer((socket) => socket.write(answers[connection++]![0]))
      for (const [, message] of answers) {
        const { answer, took } = yield* timedProbe(garbage.port)
        expect(answer).toEqual({ _tag: "Failed", message })
        expect(took).toBeLessThan(300)
      }
      yield* closedWithin(garbage, "500 millis", answers.length)
    }))

  it.scopedLive("says the port serves TLS when a plain-HTTP probe is answered with a TLS alert", () =>
    Effect.gen(function*() {
      // What a TLS server sends a client whose first bytes are no ClientHello: an alert record.
      const alert = Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])
      const tls = yield* loopbackSocketServer((socket) => socket.once("data", () => socket.write(alert)))
      const { answer } = yield* timedProbe(tls.port)
      expect(answer).toEqual({
        _tag: "Failed",
        message: "the answer is TLS, not HTTP: the port serves https (set SESSION_ROUTE_PROBE=https)"
      })
      yield* closedWithin(tls, "500 millis")
    }))

  it.scopedLive("reads at most a few KiB of a 1 GiB answer without a line end, and closes the connection", () =>
    Effect.gen(function*() {
      const written = { bytes: 0, closed: false }
      const endless = yield* loopbackSocketServer((socket) =>
        socket.once("data", () => {
          socket.write("HTTP/1.1 ")
          writeForever(socket, Buffer.alloc(MiB, "x"), written)
        })
      )
      const { answer, took } = yield* timedProbe(endless.port)
      expect(answer).toEqual({ _tag: "Failed", message: "the answer has no status line within its first 4 KiB" })
      expect(took).toBeLessThan(300)
      yield* closedWithin(endless, "500 millis")
      expect(written.closed).toBe(true)
      // The socket buffers on both sides, nothing like 1 GiB.
      expect(written.bytes).toBeLessThan(64 * MiB)
    }))
})
