/**
 * Fault injection through the in-memory face, on TestClock: each fault answers as
 * the real server would, latency and hangs follow the clock, counts run out, faults
 * start after N requests or at an instant, and cut or expired watches are survived
 * by the resuming watch.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, DateTime, Effect, Fiber, Option, Queue, Stream, TestClock } from "effect"
import { Fault, forbiddenStatus, makeFaults } from "../src/Faults.js"
import * as InMemoryKubeClient from "../src/InMemoryKubeClient.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"

const setup = Effect.gen(function*() {
  const store = yield* makeMemoryStore({ namespaces: [NS] })
  const faults = yield* makeFaults
  const client = yield* InMemoryKubeClient.make(store, { faults })
  yield* store.create(IngressResource, NS, ingress("web"))
  return { store, faults, client }
})

describe("Faults", () => {
  it.effect("throttles with 429 and the Retry-After it was given, for the next N requests only", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.throttle(3), times: 2 })
      const first = yield* Effect.flip(client.get(IngressResource, NS, "web"))
      expect(first).toMatchObject({ _tag: "TooManyRequests", code: 429, retryAfterSeconds: 3 })
      expect((yield* Effect.flip(client.get(IngressResource, NS, "web")))._tag).toBe("TooManyRequests")
      expect((yield* client.get(IngressResource, NS, "web")).metadata?.name).toBe("web")
      expect(yield* faults.active).toEqual([])
    }))

  it.effect("forbids with the authorizer's message", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ resource: "ingresses", action: Fault.forbid("system:serviceaccount:demo:runner") })
      const error = yield* Effect.flip(client.get(IngressResource, NS, "web"))
      expect(error._tag).toBe("Forbidden")
      expect(error.status).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `ingresses.networking.k8s.io "web" is forbidden: User "system:serviceaccount:demo:runner" cannot get resource "ingresses" in API group "networking.k8s.io" in the namespace "demo"`,
        reason: "Forbidden",
        details: { name: "web", group: "networking.k8s.io", kind: "ingresses" },
        code: 403
      })
    }))

  it("words a forbidden list and a cluster-scoped request as the authorizer does", () => {
    expect(forbiddenStatus({ verb: "list", resource: IngressResource, namespace: "demo" }, "u").message).toBe(
      `ingresses.networking.k8s.io is forbidden: User "u" cannot list resource "ingresses" in API group "networking.k8s.io" in the namespace "demo"`
    )
    expect(forbiddenStatus({ verb: "watch", resource: IngressResource }, "u").message).toBe(
      `ingresses.networking.k8s.io is forbidden: User "u" cannot watch resource "ingresses" in API group "networking.k8s.io" at the cluster scope`
    )
  })

  it.effect("answers a 5xx as a Status the client maps to Unavailable", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ verbs: ["patch"], action: Fault.respond(503), times: 1 })
      const error = yield* Effect.flip(
        client.apply(IngressResource, { ...ingress("web"), metadata: { name: "web", namespace: NS } })
      )
      expect(error).toMatchObject({ _tag: "Unavailable", code: 503 })
      expect(error.status?.reason).toBe("ServiceUnavailable")
    }))

  it.effect("delays by the latency on the clock, then answers", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ verbs: ["get"], action: Fault.latency("2 seconds") })
      const fiber = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      yield* TestClock.adjust("1999 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect((yield* Fiber.join(fiber)).metadata?.name).toBe("web")
    }))

  it.effect("adds latency to another fault that matches", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ action: Fault.latency("1 second") })
      yield* faults.add({ action: Fault.respond(500) })
      const fiber = yield* Effect.fork(Effect.flip(client.get(IngressResource, NS, "web")))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber))._tag).toBe("Unavailable")
    }))

  it.effect("hangs until interrupted", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ action: Fault.hang })
      const fiber = yield* Effect.fork(client.get(IngressResource, NS, "web"))
      yield* TestClock.adjust("1 hour")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("turns a reset connection into a Transport failure", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ action: Fault.reset, times: 1 })
      expect((yield* Effect.flip(client.get(IngressResource, NS, "web")))._tag).toBe("Transport")
    }))

  it.effect("matches by namespace and name, and can be removed and cleared", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      const id = yield* faults.add({ namespace: NS, name: "other", action: Fault.respond(500) })
      expect((yield* client.get(IngressResource, NS, "web")).metadata?.name).toBe("web")
      yield* faults.remove(id)
      yield* faults.add({ action: Fault.respond(500) })
      yield* faults.clear
      expect((yield* client.get(IngressResource, NS, "web")).metadata?.name).toBe("web")
    }))

  it.effect("cuts a watch after N events", () =>
    Effect.gen(function*() {
      const { store, faults, client } = yield* setup
      yield* faults.add({ verbs: ["watch"], action: Fault.cutWatch(1), times: 1 })
      yield* store.create(IngressResource, NS, ingress("a"))
      yield* store.create(IngressResource, NS, ingress("b"))
      const events = yield* Stream.runCollect(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }))
      expect(Chunk.size(events)).toBe(1)
    }))

  it.effect("expires a watch with a 410 ERROR event after N events", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ verbs: ["watch"], action: Fault.expireWatch(1), times: 1 })
      const events = Chunk.toArray(
        yield* Stream.runCollect(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }))
      )
      expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"])
      const error = events[1]?.type === "ERROR" ? events[1].error : undefined
      expect(error?._tag).toBe("Expired")
      expect(error?.reason).toMatch(/^too old resource version: \d+ \(\d+\)$/)
    }))

  it.scoped("lets the resuming watch relist through an expired watch without losing or repeating a change", () =>
    Effect.gen(function*() {
      const { store, faults, client } = yield* setup
      const events = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(
        Stream.runForEach(
          client.watch(IngressResource, NS),
          (e) => Queue.offer(events, `${e.type} ${e.object.metadata?.name}`)
        )
      )
      expect(yield* Queue.take(events)).toBe("ADDED web")
      // The next connection is told its version expired; the open one is closed under it.
      yield* faults.add({ verbs: ["watch"], action: Fault.expireWatch(0), times: 1 })
      yield* faults.closeWatches
      yield* store.create(IngressResource, NS, ingress("b"))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Queue.take(events)).toBe("ADDED b")
      expect(yield* faults.active).toEqual([])
      yield* store.delete(IngressResource, NS, "web")
      yield* TestClock.adjust("10 seconds")
      expect(yield* Queue.take(events)).toBe("DELETED web")
      expect(yield* Queue.size(events)).toBe(0)
    }))

  it.effect("passes the first N matching requests untouched, then applies for its times", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      yield* faults.add({ verbs: ["get"], action: Fault.respond(503), after: 2, times: 2 })
      // A request the fault does not match does not count towards `after`.
      yield* client.list(IngressResource, NS)
      const outcomes: Array<string> = []
      for (let i = 0; i < 5; i++) {
        outcomes.push(
          yield* client.get(IngressResource, NS, "web").pipe(Effect.match({
            onFailure: (e) => e._tag,
            onSuccess: () => "ok"
          }))
        )
      }
      expect(outcomes).toEqual(["ok", "ok", "Unavailable", "Unavailable", "ok"])
      expect(yield* faults.active).toEqual([])
    }))

  it.effect("counts down what is left before it starts", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      const id = yield* faults.add({ verbs: ["get"], action: Fault.respond(500), after: 3 })
      yield* client.get(IngressResource, NS, "web")
      expect(yield* faults.active).toEqual([{ id, verbs: ["get"], action: Fault.respond(500), after: 2 }])
    }))

  it.effect("applies from an instant on the clock until another", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      const now = yield* Clock.currentTimeMillis
      yield* faults.add({
        verbs: ["get"],
        action: Fault.respond(503),
        from: now + 10_000,
        until: DateTime.unsafeMake(now + 20_000)
      })
      const get = client.get(IngressResource, NS, "web").pipe(
        Effect.match({ onFailure: (e) => e._tag, onSuccess: () => "ok" })
      )
      expect(yield* get).toBe("ok")
      yield* TestClock.adjust("9999 millis")
      expect(yield* get).toBe("ok")
      yield* TestClock.adjust("1 millis")
      expect([yield* get, yield* get]).toEqual(["Unavailable", "Unavailable"])
      yield* TestClock.adjust("10 seconds")
      expect(yield* get).toBe("ok")
      expect(yield* faults.active).toEqual([])
    }))

  it.effect("counts the requests before it starts only from its instant on", () =>
    Effect.gen(function*() {
      const { faults, client } = yield* setup
      const now = yield* Clock.currentTimeMillis
      yield* faults.add({ verbs: ["get"], action: Fault.reset, from: now + 5_000, after: 1, times: 1 })
      const get = client.get(IngressResource, NS, "web").pipe(
        Effect.match({ onFailure: (e) => e._tag, onSuccess: () => "ok" })
      )
      expect([yield* get, yield* get]).toEqual(["ok", "ok"])
      yield* TestClock.adjust("5 seconds")
      expect([yield* get, yield* get, yield* get]).toEqual(["ok", "Transport", "ok"])
    }))

  it.scoped("cuts a watch that started before the fault did, on its next connection only", () =>
    Effect.gen(function*() {
      const { store, faults, client } = yield* setup
      // The first watch connection works; the second is the one told it expired.
      yield* faults.add({ verbs: ["watch"], action: Fault.expireWatch(0), after: 1, times: 1 })
      const first = yield* Stream.runCollect(
        Stream.take(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }), 1)
      )
      expect(Chunk.toArray(first).map((e) => e.type)).toEqual(["ADDED"])
      yield* store.create(IngressResource, NS, ingress("b"))
      const second = yield* Stream.runCollect(client.watchFrom(IngressResource, NS, { resourceVersion: "0" }))
      expect(Chunk.toArray(second).map((e) => e.type)).toEqual(["ERROR"])
    }))
})
