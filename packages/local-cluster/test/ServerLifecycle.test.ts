/**
 * The API server process through the in-memory face, on TestClock: a paused server
 * holds every request and watch event and answers on resume; a stopped one refuses,
 * resets open watches and comes back with the same store; the simulated controllers
 * wait for it like any other client.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Queue, Schedule, Stream, TestClock } from "effect"
import { Fault, makeFaults } from "../src/Faults.js"
import * as InMemoryKubeClient from "../src/InMemoryKubeClient.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"

const setup = Effect.gen(function*() {
  const store = yield* makeMemoryStore({ namespaces: [NS] })
  const faults = yield* makeFaults
  // Fixed reconnect delays, so a test can step the clock past them.
  const client = yield* InMemoryKubeClient.make(store, { faults, reconnectSchedule: Schedule.spaced("1 second") })
  yield* store.create(IngressResource, NS, ingress("web"))
  return { store, faults, client, server: faults.server }
})

const outcome = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.match(effect, { onFailure: (e) => e._tag, onSuccess: () => "ok" })

describe("a paused server", () => {
  it.effect("holds every request, however long, and answers it on resume", () =>
    Effect.gen(function*() {
      const { client, server } = yield* setup
      yield* server.pause
      expect(yield* server.state).toBe("paused")
      const get = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      const list = yield* Effect.fork(client.list(IngressResource, NS))
      yield* server.awaitHeld(2)
      yield* TestClock.adjust("1 hour")
      expect(Option.isNone(yield* Fiber.poll(get))).toBe(true)
      yield* server.resume
      expect((yield* Fiber.join(get)).metadata?.name).toBe("web")
      expect((yield* Fiber.join(list)).items.map((i) => i.metadata?.name)).toEqual(["web"])
      expect([yield* server.state, yield* server.held]).toEqual(["running", 0])
    }))

  it.scoped("keeps an open watch silent and delivers every change made meanwhile on resume", () =>
    Effect.gen(function*() {
      const { store, client, server } = yield* setup
      const events = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(
        Stream.runForEach(
          client.watch(IngressResource, NS),
          (e) => Queue.offer(events, `${e.type} ${e.object.metadata?.name}`)
        )
      )
      expect(yield* Queue.take(events)).toBe("ADDED web")
      yield* server.pause
      // Straight to the store: the change is there, the paused server has not sent it.
      yield* store.create(IngressResource, NS, ingress("b"))
      yield* store.delete(IngressResource, NS, "web")
      yield* server.awaitHeld(1)
      yield* TestClock.adjust("1 hour")
      expect(yield* Queue.size(events)).toBe(0)
      yield* server.resume
      expect([yield* Queue.take(events), yield* Queue.take(events)]).toEqual(["ADDED b", "DELETED web"])
    }))

  it.effect("holds a request that a latency fault was delaying when the pause began", () =>
    Effect.gen(function*() {
      const { faults, client, server } = yield* setup
      yield* faults.add({ action: Fault.latency("1 second") })
      const get = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      yield* TestClock.adjust("500 millis")
      yield* server.pause
      yield* TestClock.adjust("1 minute")
      expect(Option.isNone(yield* Fiber.poll(get))).toBe(true)
      yield* server.resume
      expect((yield* Fiber.join(get)).metadata?.name).toBe("web")
    }))

  it.effect("resets the requests it held when it is stopped instead of resumed", () =>
    Effect.gen(function*() {
      const { client, server } = yield* setup
      yield* server.pause
      const get = yield* Effect.fork(Effect.flip(client.get(IngressResource, NS, "web")))
      yield* server.awaitHeld(1)
      yield* server.stop
      const error = yield* Fiber.join(get)
      expect([error._tag, error._tag === "Transport" ? error.kind : undefined]).toEqual(["Transport", undefined])
      expect(error.reason).toMatch(/reset/)
    }))
})

describe("a stopped server", () => {
  it.effect("refuses every request, then answers from the same store after a restart", () =>
    Effect.gen(function*() {
      const { client, server } = yield* setup
      const before = yield* client.get(IngressResource, NS, "web")
      yield* server.stop
      const refused = yield* Effect.flip(client.get(IngressResource, NS, "web"))
      expect(refused).toMatchObject({ _tag: "Transport", kind: "refused" })
      expect(yield* outcome(client.list(IngressResource, NS))).toBe("Transport")
      yield* server.restart
      expect(yield* client.get(IngressResource, NS, "web")).toEqual(before)
    }))

  it.effect("consumes no fault while it refuses connections", () =>
    Effect.gen(function*() {
      const { faults, client, server } = yield* setup
      yield* faults.add({ action: Fault.respond(500), after: 1, times: 1 })
      yield* server.stop
      yield* Effect.flip(client.get(IngressResource, NS, "web"))
      yield* server.restart
      expect([
        yield* outcome(client.get(IngressResource, NS, "web")),
        yield* outcome(client.get(IngressResource, NS, "web"))
      ])
        .toEqual(["ok", "Unavailable"])
    }))

  it.effect("resets an open watch connection when it dies", () =>
    Effect.gen(function*() {
      const { client, server } = yield* setup
      const events = yield* Queue.unbounded<string>()
      const watch = yield* Effect.fork(
        Stream.runForEach(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }), (e) =>
          Queue.offer(events, e.type))
      )
      expect(yield* Queue.take(events)).toBe("ADDED")
      yield* server.stop
      expect(yield* Effect.flip(Fiber.join(watch))).toMatchObject({ _tag: "Transport" })
    }))

  it.scoped("lets the resuming watch carry on after a restart without losing or repeating a change", () =>
    Effect.gen(function*() {
      const { client, server } = yield* setup
      const events = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(
        Stream.runForEach(
          client.watch(IngressResource, NS),
          (e) => Queue.offer(events, `${e.type} ${e.object.metadata?.name}`)
        )
      )
      expect(yield* Queue.take(events)).toBe("ADDED web")
      yield* server.stop
      // Reconnects meet refusals while it is down; the backoff outlasts a short outage.
      yield* TestClock.adjust("3 seconds")
      yield* server.restart
      yield* client.apply(IngressResource, { ...ingress("b"), metadata: { name: "b", namespace: NS } })
      yield* TestClock.adjust("5 seconds")
      expect(yield* Queue.take(events)).toBe("ADDED b")
      expect(yield* Queue.size(events)).toBe(0)
    }))

  it.effect("does not pause or resume while it is down", () =>
    Effect.gen(function*() {
      const { server } = yield* setup
      yield* server.stop
      yield* server.pause
      yield* server.resume
      expect(yield* server.state).toBe("stopped")
      yield* server.restart
      expect(yield* server.state).toBe("running")
    }))
})

describe("the simulated controllers", () => {
  it.scoped("wait while the server is paused or down, as clients of it", () =>
    Effect.gen(function*() {
      const go = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      const cluster = yield* LocalCluster.makeInMemory({
        namespaces: [NS],
        controllers: [({ store }) =>
          Deferred.await(go).pipe(
            Effect.zipRight(store.create(IngressResource, NS, ingress("from-controller"))),
            Effect.zipRight(Deferred.succeed(done, undefined)),
            Effect.orDie
          )]
      })
      yield* cluster.faults.server.stop
      yield* Deferred.succeed(go, undefined)
      yield* TestClock.adjust("1 minute")
      expect(yield* Deferred.isDone(done)).toBe(false)
      yield* cluster.faults.server.restart
      yield* Deferred.await(done)
      expect((yield* cluster.store.get(IngressResource, NS, "from-controller")).metadata?.name).toBe("from-controller")
    }))
})
