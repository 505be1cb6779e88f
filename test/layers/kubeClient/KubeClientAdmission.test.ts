/**
 * The live client's admission over a real socket: at most `MAX_CALL_SOCKETS` calls in
 * flight, the rest sent in turn, and every permit back however a call ends: answered,
 * interrupted while it waits, interrupted in flight, or interrupted in the pause
 * before a retry (a first attempt that failed keeps its permit through that pause).
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Schedule } from "effect"
import type * as http from "node:http"
import { IngressResource } from "../../../src/domain/Resources.js"
import { MAX_CALL_SOCKETS } from "../../../src/layers/kubeClient/ConnectionPool.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { kubeConfigFor } from "../../support/KubeConfigs.js"
import { loopbackServer } from "../../support/LoopbackServer.js"

/**
 * A server that answers the first `failing` requests 503 at once and holds every other
 * one until `answerAll` (from then on it answers at once, until `hold`); it counts
 * arrivals and the most it ever held at once.
 */
const holdingServer = (failing: number) =>
  Effect.gen(function*() {
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
    const { url } = yield* loopbackServer((_req, res) => {
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
    return {
      url,
      arrivals: () => arrivals,
      mostInFlight: () => most,
      /** Waits until `n` requests have arrived in all. */
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
    }
  })

type HoldingServer = Effect.Effect.Success<ReturnType<typeof holdingServer>>

/**
 * Every permit came back: with the server holding again, a full set of new calls is in
 * flight at once (a permit lost would leave `arrived` waiting forever).
 */
const fullSetInFlight = (
  server: HoldingServer,
  get: (i: number) => Effect.Effect<Fiber.RuntimeFiber<unknown>>
) =>
  Effect.gen(function*() {
    const before = server.arrivals()
    server.hold()
    const again = yield* Effect.forEach(Array.from({ length: MAX_CALL_SOCKETS }, (_, i) => i), get)
    yield* server.arrived(before + MAX_CALL_SOCKETS)
    server.answerAll()
    yield* Fiber.joinAll(again)
    expect(server.mostInFlight()).toBe(MAX_CALL_SOCKETS)
  })

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

      yield* fullSetInFlight(server, get)
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

      yield* fullSetInFlight(server, get)
    }).pipe(Effect.scoped))
})
