/**
 * The in-memory KubeClient over a real store: applies under our field manager with
 * force, failures mapped from the server's Status as the live client maps them, and
 * the resuming watch on top of the store's watch.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Queue, Stream, TestClock } from "effect"
import { FIELD_MANAGER, type KubeObject, type ResourceType } from "session-routing/kubernetes"
import * as InMemoryKubeClient from "../src/InMemoryKubeClient.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { HttpRouteResource, IngressResource } from "../src/ServedResources.js"
import { httpRoute, ingress, NS } from "./ClusterFixtures.js"

const setup = (options: Parameters<typeof makeMemoryStore>[0] = {}) =>
  Effect.gen(function*() {
    const store = yield* makeMemoryStore({ namespaces: [NS], ...options })
    const client = yield* InMemoryKubeClient.make(store)
    return { store, client }
  })

const inNs = <A extends KubeObject>(object: A): A => ({ ...object, metadata: { ...object.metadata, namespace: NS } })

describe("InMemoryKubeClient", () => {
  it.effect("applies under the session-routing field manager and creates what is missing", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const applied = yield* client.apply(IngressResource, inNs(ingress("web")))
      expect(applied.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([[FIELD_MANAGER, "Apply"]])
    }))

  it.effect("forces by default, taking fields another manager owns", () =>
    Effect.gen(function*() {
      const { store, client } = yield* setup()
      yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "theirs" }), {
        fieldManager: "someone"
      })
      const applied = yield* client.apply(IngressResource, inNs(ingress("web", { className: "ours" })))
      expect(applied.spec?.ingressClassName).toBe("ours")
    }))

  it.effect("fails with Conflict and the FieldManagerConflict causes when force is off", () =>
    Effect.gen(function*() {
      const { store, client } = yield* setup()
      yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "theirs" }), {
        fieldManager: "someone"
      })
      const error = yield* Effect.flip(
        client.apply(IngressResource, inNs(ingress("web", { className: "ours" })), { force: false })
      )
      expect(error._tag).toBe("Conflict")
      expect(error._tag === "Conflict" && error.causes).toEqual([
        { type: "FieldManagerConflict", message: `conflict with "someone"`, field: ".spec.ingressClassName" }
      ])
    }))

  it.effect("stores nothing on a dry run", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.apply(IngressResource, inNs(ingress("web")), { dryRun: true })
      expect((yield* Effect.flip(client.get(IngressResource, NS, "web")))._tag).toBe("NotFound")
    }))

  it.effect("maps a missing object to NotFound carrying the server's message and Status", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const error = yield* Effect.flip(client.delete(IngressResource, NS, "web"))
      expect(error).toMatchObject({
        _tag: "NotFound",
        reason: `ingresses.networking.k8s.io "web" not found`,
        code: 404,
        status: { reason: "NotFound" }
      })
    }))

  it.effect("maps an unserved type to NotServed, as the plain-text 404 over HTTP is", () =>
    Effect.gen(function*() {
      const { client } = yield* setup({ unserved: [HttpRouteResource as ResourceType<KubeObject>] })
      const error = yield* Effect.flip(client.apply(HttpRouteResource, inNs(httpRoute("web"))))
      expect(error._tag).toBe("NotServed")
      expect(error.code).toBe(404)
    }))

  it.effect("lists with a label selector and maps a bad one to BadRequest", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.apply(IngressResource, inNs(ingress("a", { labels: { app: "web" } })))
      yield* client.apply(IngressResource, inNs(ingress("b")))
      const list = yield* client.list(IngressResource, NS, { labelSelector: "app=web" })
      expect(list.items.map((i) => i.metadata?.name)).toEqual(["a"])
      expect((yield* Effect.flip(client.list(IngressResource, NS, { labelSelector: "app in (" })))._tag).toBe(
        "BadRequest"
      )
    }))

  it.scoped("follows changes through the resuming watch", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.apply(IngressResource, inNs(ingress("a")))
      const events = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(
        Stream.runForEach(client.watch(IngressResource, NS), (e) =>
          Queue.offer(events, `${e.type} ${e.object.metadata?.name}`))
      )
      // The first event is the initial state: once it is here, later changes are news.
      expect(yield* Queue.take(events)).toBe("ADDED a")
      yield* client.apply(IngressResource, inNs(ingress("a", { className: "x" })))
      yield* client.delete(IngressResource, NS, "a")
      expect([yield* Queue.take(events), yield* Queue.take(events)]).toEqual(["MODIFIED a", "DELETED a"])
    }))

  it.effect("passes bookmarks through watchFrom as resourceVersions", () =>
    Effect.gen(function*() {
      const { store, client } = yield* setup()
      const from = yield* store.resourceVersion
      const fiber = yield* Effect.fork(
        client.watchFrom(IngressResource, NS, { resourceVersion: from }).pipe(Stream.take(1), Stream.runCollect)
      )
      yield* TestClock.adjust("1 minute")
      expect(Chunk.toArray(yield* Fiber.join(fiber))).toEqual([{ type: "BOOKMARK", resourceVersion: from }])
    }))
})
