/**
 * The live client's admission over a real socket: at most `MAX_CALL_SOCKETS` calls in
 * flight, the rest sent in turn, and every permit back however a call ends: answered,
 * interrupted while it waits, interrupted in flight, or interrupted in the pause
 * before a retry (a first attempt that failed keeps its permit through that pause).
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Deferred, Effect, Exit, Fiber, Schedule } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import { IngressResource } from "../../src/domain/Resources.js"
import { MAX_CALL_SOCKETS } from "../../src/layers/internal/ConnectionPool.js"
import { KubeClientLive } from "../../src/layers/KubeClientLive.js"

const kubeConfigFor = (server: string): k8s.KubeConfig => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc
}

/**
 * A server that answers the first `failing` requests 503 at once and holds every other
 * one until `answerAll`; it counts arrivals and the most it ever held at once.
 */
const holdingServer = (failing: number) =>
  Effect.acquireRelease(
    Effect.async<{
      readonly url: string
      readonly arrivals: () => number
      readonly mostInFlight: () => number
      readonly arrived: (n: number) => Effect.Effect<void>
      readonly answerAll: () => void
      readonly hold: () => void
    }>((resume) => {
      let arrivals = 0
      let inFlight = 0
      let most = 0
      let answering = false
      const held: Array<http.ServerResponse> = []
      const waiting: Array<{ readonly n: number; readonly done: Deferred.Deferred<void> }> = []
      const answer = (res: http.ServerResponse) => {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 }))
      }
      const server = http.createServer((_req, res) => {
        arrivals++
        for (const w of waiting) if (arrivals >= w.n) Deferred.unsafeDone(w.done, Exit.void)
        if (arrivals <= failing) {
          res.writeHead(503, { "content-type": "application/json" })
          res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 503 }))
          return
        }
        inFlight++
        most = Math.max(most, inFlight)
        res.on("close", () => inFlight--)
        if (answering) answer(res)
        else held.push(res)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
          arrivals: () => arrivals,
          mostInFlight: () => most,
          arrived: (n: number) =>
            Effect.suspend(() => {
              if (arrivals >= n) return Effect.void
              const done = Deferred.unsafeMake<void>(undefined as never)
              waiting.push({ n, done })
              return Deferred.await(done)
            }),
          answerAll: () => {
            answering = true
            for (const res of held.splice(0)) answer(res)
          },
          hold: () => {
            answering = false
          }
        })))
    }),
    (s) =>
      Effect.async<void>((resume) => {
        const server = (s as unknown as { server: http.Server }).server
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

describe("KubeClientLive admission", () => {
  it.live("sends at most its sockets' worth of calls at once, and a call interrupted waiting or in flight gives its turn on", () =>
    Effect.gen(function*() {
      const server = yield* holdingServer(0)
      const client = yield* KubeClientLive.make(kubeConfigFor(server.url), { apiTimeout: "1 hour" })
      const get = (i: number) => Effect.fork(Effect.either(client.get(IngressResource, "ns", `web-${i}`)))
      const calls = yield* Effect.forEach(Array.from({ length: MAX_CALL_SOCKETS + 8 }, (_, i) => i), get)
      yield* server.arrived(MAX_CALL_SOCKETS)

      // Five in flight are interrupted: five of the waiting are sent in their place.
      yield* Fiber.interruptAll(calls.slice(0, 5))
      yield* server.arrived(MAX_CALL_SOCKETS + 5)
      // The three still waiting leave the queue.
      yield* Fiber.interruptAll(calls.slice(MAX_CALL_SOCKETS + 5))
      server.answerAll()
      const answered = yield* Fiber.joinAll(calls.slice(5, MAX_CALL_SOCKETS + 5))
      expect(answered.every((a) => a._tag === "Left" && a.left._tag === "NotFound")).toBe(true)
      expect(server.arrivals()).toBe(MAX_CALL_SOCKETS + 5)

      // Every permit came back: a full set of calls is in flight at once again.
      server.hold()
      const again = yield* Effect.forEach(Array.from({ length: MAX_CALL_SOCKETS }, (_, i) => i), get)
      yield* server.arrived(2 * MAX_CALL_SOCKETS + 5)
      server.answerAll()
      yield* Fiber.joinAll(again)
      expect(server.mostInFlight()).toBe(MAX_CALL_SOCKETS)
    }).pipe(Effect.scoped))

  it.live("keeps a failed call's permit through its pause before the retry, and gives it back when interrupted there", () =>
    Effect.gen(function*() {
      // Every socket's call fails once with a 503, then waits an hour for its retry.
      const server = yield* holdingServer(MAX_CALL_SOCKETS)
      const client = yield* KubeClientLive.make(kubeConfigFor(server.url), {
        apiTimeout: "2 hours",
        retrySchedule: Schedule.spaced("1 hour")
      })
      const get = (i: number) => Effect.fork(Effect.either(client.get(IngressResource, "ns", `web-${i}`)))
      const pausing = yield* Effect.forEach(Array.from({ length: MAX_CALL_SOCKETS }, (_, i) => i), get)
      yield* server.arrived(MAX_CALL_SOCKETS)
      const next = yield* get(MAX_CALL_SOCKETS)
      // That nothing is sent can only be seen by giving it time to be: on a loopback
      // socket a request that went out arrives well within this.
      yield* Effect.sleep("100 millis")
      expect(server.arrivals()).toBe(MAX_CALL_SOCKETS)

      // The pausing calls hold every permit; interrupting one lets the next call out.
      yield* Fiber.interrupt(pausing[0]!)
      yield* server.arrived(MAX_CALL_SOCKETS + 1)
      yield* Fiber.interruptAll(pausing.slice(1))
      server.answerAll()
      expect(yield* Fiber.join(next)).toMatchObject({ _tag: "Left", left: { _tag: "NotFound" } })

      // Every permit came back: a full set of calls is in flight at once again.
      server.hold()
      const again = yield* Effect.forEach(Array.from({ length: MAX_CALL_SOCKETS }, (_, i) => i), get)
      yield* server.arrived(2 * MAX_CALL_SOCKETS + 1)
      server.answerAll()
      yield* Fiber.joinAll(again)
      expect(server.mostInFlight()).toBe(MAX_CALL_SOCKETS)
    }).pipe(Effect.scoped))
})
