/**
 * The in-memory KubeClient over a real store: applies under our field manager with
 * force, failures mapped from the server's Status as the live client maps them, the
 * resuming watch on top of the store's watch, and the controller writes (Pod patches,
 * Leases) with the same errors as over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Queue, Stream, TestClock } from "effect"
import { FIELD_MANAGER, type KubeObject, type Lease, type ResourceType } from "session-routing/kubernetes"
import * as InMemoryKubeClient from "../src/InMemoryKubeClient.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { makeMetrics } from "../src/Metrics.js"
import { HttpRouteResource, IngressResource, PodResource } from "../src/ServedResources.js"
import { httpRoute, ingress, NS, pod } from "./ClusterFixtures.js"

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
        { reason: "FieldManagerConflict", message: `conflict with "someone"`, field: ".spec.ingressClassName" }
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

const lease = (holder: string, durationSeconds = 15): Lease => ({
  metadata: { name: "leader" },
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds: durationSeconds,
    acquireTime: "2026-01-02T03:04:05.000000Z",
    renewTime: "2026-01-02T03:04:05.000000Z",
    leaseTransitions: 0
  }
})

/** The client's failure as the live client words it. */
const failure = <A>(effect: Effect.Effect<A, { readonly _tag: string; readonly reason: string }>) =>
  Effect.map(Effect.flip(effect), (error) => ({ tag: error._tag, reason: error.reason }))

describe("InMemoryKubeClient leases", () => {
  it.effect("creates a Lease, and fails a second create of it with AlreadyExists", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const created = yield* client.leases!.create(NS, lease("candidate-a"))
      expect([created.apiVersion, created.kind, created.spec?.holderIdentity]).toEqual([
        "coordination.k8s.io/v1",
        "Lease",
        "candidate-a"
      ])
      expect(yield* failure(client.leases!.create(NS, lease("candidate-b")))).toEqual({
        tag: "AlreadyExists",
        reason: `leases.coordination.k8s.io "leader" already exists`
      })
    }))

  it.effect("replaces a Lease from the version read, and fails one from an older read with Conflict", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const read = yield* client.leases!.create(NS, lease("candidate-a"))
      const renewed = yield* client.leases!.replace(NS, {
        ...read,
        spec: { ...read.spec, renewTime: "2026-01-02T03:04:15.000000Z" }
      })
      expect(renewed.spec?.renewTime).toBe("2026-01-02T03:04:15.000000Z")
      expect(yield* client.leases!.get(NS, "leader")).toEqual(renewed)
      expect(yield* failure(client.leases!.replace(NS, { ...read, spec: { ...read.spec, holderIdentity: "b" } })))
        .toEqual({
          tag: "Conflict",
          reason:
            `Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again`
        })
    }))

  it.effect("fails a Lease with a duration that is not positive with Invalid, naming the field", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const error = yield* Effect.flip(client.leases!.create(NS, lease("candidate-a", 0)))
      expect(error._tag).toBe("Invalid")
      expect(error._tag === "Invalid" && error.causes).toEqual([{
        reason: "FieldValueInvalid",
        message: "Invalid value: 0: must be greater than 0",
        field: "spec.leaseDurationSeconds"
      }])
    }))

  it.effect("fails a read of a missing Lease with NotFound", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      expect(yield* failure(client.leases!.get(NS, "leader"))).toEqual({
        tag: "NotFound",
        reason: `leases.coordination.k8s.io "leader" not found`
      })
    }))
})

describe("InMemoryKubeClient pod writes", () => {
  const GATE = "session-routing.dev/RoutesProgrammed"

  it.effect("patches one condition into the Pod's status by type, leaving the others", () =>
    Effect.gen(function*() {
      const { client, store } = yield* setup()
      const created = yield* store.create(PodResource, NS, pod("web"))
      yield* store.replaceStatus(PodResource, NS, "web", {
        ...created,
        status: { conditions: [{ type: "Ready", status: "False" }, { type: "ContainersReady", status: "True" }] }
      })
      const patched = yield* client.pods!.patchStatus(NS, "web", {
        status: { conditions: [{ type: GATE, status: "True" }] }
      })
      // As kube-apiserver merges them: a type the Pod did not have goes first, and a time never written reads as null.
      const times = { lastProbeTime: null, lastTransitionTime: null }
      expect(patched.status?.conditions).toEqual([
        { type: GATE, status: "True", ...times },
        { type: "Ready", status: "False", ...times },
        { type: "ContainersReady", status: "True", ...times }
      ])
      const flipped = yield* client.pods!.patchStatus(NS, "web", {
        status: { conditions: [{ type: GATE, status: "False", reason: "NoRoutes" }] }
      })
      expect(flipped.status?.conditions?.find((c) => c.type === GATE)).toEqual({
        type: GATE,
        status: "False",
        reason: "NoRoutes",
        ...times
      })
      expect(flipped.status?.conditions?.length).toBe(3)
    }))

  it.effect("merge-patches the Pod's annotations, null removing one", () =>
    Effect.gen(function*() {
      const { client, store } = yield* setup()
      yield* store.create(PodResource, NS, pod("web"))
      const annotated = yield* client.pods!.patch(NS, "web", {
        metadata: { annotations: { "session-routing.dev/endpoints": "{}", keep: "yes" } }
      })
      expect(annotated.metadata?.annotations).toEqual({ "session-routing.dev/endpoints": "{}", keep: "yes" })
      const removed = yield* client.pods!.patch(NS, "web", {
        metadata: { annotations: { "session-routing.dev/endpoints": null } }
      })
      expect(removed.metadata?.annotations).toEqual({ keep: "yes" })
    }))

  it.effect("fails a status patch of a missing Pod with NotFound, naming pods/status", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const error = yield* Effect.flip(client.pods!.patchStatus(NS, "web", { status: {} }))
      expect([error._tag, error.reason]).toEqual(["NotFound", `pods "web" not found`])
    }))

  it.effect("counts its calls under the verbs and subresource the HTTP face would see", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      const metrics = yield* makeMetrics
      const client = yield* InMemoryKubeClient.make(store, { metrics })
      yield* store.create(PodResource, NS, pod("web"))
      yield* client.pods!.patchStatus(NS, "web", { status: { conditions: [{ type: GATE, status: "True" }] } })
      const read = yield* client.leases!.create(NS, lease("candidate-a"))
      yield* client.leases!.replace(NS, read)
      const counted = (yield* metrics.requests).map((r) => [r.verb, r.resource, r.subresource, r.code] as const)
      expect(counted).toEqual(expect.arrayContaining([
        ["PATCH", "pods", "status", 200],
        ["POST", "leases", "", 201],
        ["PUT", "leases", "", 200]
      ]))
    }))
})
