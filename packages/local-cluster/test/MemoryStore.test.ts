/**
 * The store against kube-api-behaviour.md, one behaviour per test, on TestClock:
 * writes, versions, generations, status subresource, server-side apply, dry run,
 * lists, selectors and watch windows, with the exact Status bodies.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Queue, Stream, TestClock } from "effect"
import { type Ingress, type KubeObject, type ResourceType, type Status } from "session-routing/kubernetes"
import { makeMemoryStore } from "../src/MemoryStore.js"
import {
  GatewayResource,
  HttpRouteResource,
  IngressResource,
  NamespaceResource,
  PodResource,
  ServiceResource
} from "../src/ServedResources.js"
import type { StoreWatchEvent } from "../src/Store.js"
import { gateway, httpRoute, ingress, NS, pod, service } from "./ClusterFixtures.js"

const fresh = makeMemoryStore({ namespaces: [NS] })

const failureOf = <A>(effect: Effect.Effect<A, Status>) => Effect.flip(effect)

/** The first `n` events of a watch, as [type, name, resourceVersion]. */
const firstEvents = (stream: Stream.Stream<StoreWatchEvent, Status>, n: number) =>
  stream.pipe(
    Stream.take(n),
    Stream.runCollect,
    Effect.map((events) =>
      Chunk.toArray(events).map((
        e
      ) => [e.type, e.object.metadata?.name ?? "", String(e.object.metadata?.resourceVersion ?? "")])
    )
  )

/** Runs a watch in the background into a queue, for tests that act while it is open. */
const subscribe = (stream: Stream.Stream<StoreWatchEvent, Status>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<StoreWatchEvent>()
    yield* Effect.forkScoped(Stream.runForEach(stream, (event) => Queue.offer(queue, event)))
    return queue
  })

const anyResource = (r: ResourceType<unknown>) => r as ResourceType<KubeObject>

describe("MemoryStore writes", () => {
  it.effect("assigns uid, a seconds-precision creationTimestamp from the Clock, a resourceVersion and generation 1", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("90 seconds")
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/)
      expect(created.metadata?.creationTimestamp).toBe("1970-01-01T00:01:30Z")
      expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0)
      expect(created.metadata?.generation).toBe(1)
      expect(created.kind).toBe("Ingress")
      expect(created.apiVersion).toBe("networking.k8s.io/v1")
    }))

  it.effect("gives Services no generation", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(ServiceResource, NS, service("web"))
      expect(created.metadata?.generation).toBeUndefined()
    }))

  it.effect("hands out one cluster-wide, increasing resourceVersion across types", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const a = yield* store.create(IngressResource, NS, ingress("a"))
      const b = yield* store.create(ServiceResource, NS, service("b"))
      const c = yield* store.create(HttpRouteResource, NS, httpRoute("c"))
      expect([a, b, c].map((o) => Number(o.metadata?.resourceVersion))).toEqual([
        Number(a.metadata?.resourceVersion),
        Number(a.metadata?.resourceVersion) + 1,
        Number(a.metadata?.resourceVersion) + 2
      ])
    }))

  it.effect("drops any status sent with a create", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, {
        ...ingress("web"),
        status: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } }
      })
      expect(created.status).toEqual({ loadBalancer: {} })
    }))

  it.effect("ignores the uid, creationTimestamp and generation a client sends on create", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, {
        ...ingress("web"),
        metadata: { name: "web", uid: "mine", creationTimestamp: "2000-01-01T00:00:00Z", generation: 7 }
      })
      expect(created.metadata?.uid).not.toBe("mine")
      expect(created.metadata?.creationTimestamp).toBe("1970-01-01T00:00:00Z")
      expect(created.metadata?.generation).toBe(1)
    }))

  it.effect("answers 500 to a create that carries a resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(
        store.create(IngressResource, NS, { ...ingress("web"), metadata: { name: "web", resourceVersion: "5" } })
      )
      expect(status).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "resourceVersion should not be set on objects to be created",
        code: 500
      })
    }))

  it.effect("answers 409 AlreadyExists to a second create of one name", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      expect(yield* failureOf(store.create(IngressResource, NS, ingress("web")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `ingresses.networking.k8s.io "web" already exists`,
        reason: "AlreadyExists",
        details: { name: "web", group: "networking.k8s.io", kind: "ingresses" },
        code: 409
      })
    }))

  it.effect("answers 404 namespaces \"x\" not found to a create in a missing namespace", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      expect(yield* failureOf(store.create(IngressResource, "nowhere", ingress("web")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `namespaces "nowhere" not found`,
        reason: "NotFound",
        details: { name: "nowhere", kind: "namespaces" },
        code: 404
      })
    }))

  it.effect("answers 422 with the validator's causes to an invalid object", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(store.create(IngressResource, NS, ingress("web", { host: "Not_A_Host" })))
      expect(status.code).toBe(422)
      expect(status.reason).toBe("Invalid")
      expect(status.message).toMatch(
        /^Ingress\.networking\.k8s\.io "web" is invalid: spec\.rules\[0\]\.host: Invalid value: "Not_A_Host"/
      )
      expect(status.details?.causes?.[0]?.field).toBe("spec.rules[0].host")
    }))

  it.effect("makes a name from generateName", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, {
        ...ingress("web"),
        metadata: { generateName: "web-" }
      })
      expect(created.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
    }))

  it.effect("answers 400 when the body's namespace differs from the request's", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(
        store.create(IngressResource, NS, { ...ingress("web"), metadata: { name: "web", namespace: "other" } })
      )
      expect(status).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: "the namespace of the provided object does not match the namespace sent on the request"
      })
    }))

  it.effect("answers 400 to a body of another kind", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(store.create(IngressResource, NS, service("web") as unknown as Ingress))
      expect(status.code).toBe(400)
    }))

  it.effect("answers 400 to a built-in object whose field has the wrong JSON type", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const bad = JSON.parse(JSON.stringify(ingress("web")))
      bad.spec.rules[0].http.paths[0].backend.service.port.number = "80"
      const status = yield* failureOf(store.create(IngressResource, NS, bad))
      expect(status.code).toBe(400)
      expect(status.message).toContain("json: cannot unmarshal string into Go struct field")
      expect(status.message).toContain("of type int32")
    }))
})

describe("MemoryStore updates (PUT)", () => {
  it.effect("answers 409 Conflict with the optimistic-lock message to a stale resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      yield* store.replace(IngressResource, NS, "web", {
        ...created,
        metadata: { ...created.metadata, labels: { a: "b" } }
      })
      const status = yield* failureOf(store.replace(IngressResource, NS, "web", created))
      expect(status).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `Operation cannot be fulfilled on ingresses.networking.k8s.io "web": the object has been modified; please apply your changes to the latest version and try again`,
        reason: "Conflict",
        details: { name: "web", group: "networking.k8s.io", kind: "ingresses" },
        code: 409
      })
    }))

  it.effect("overwrites an Ingress unconditionally when the PUT has no resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      const result = yield* store.replace(IngressResource, NS, "web", ingress("web", { className: "other" }))
      expect(result.created).toBe(false)
      expect(result.object.spec?.ingressClassName).toBe("other")
    }))

  it.effect("answers 422 to a custom resource PUT without resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(HttpRouteResource, NS, httpRoute("web"))
      expect(yield* failureOf(store.replace(HttpRouteResource, NS, "web", httpRoute("web")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `httproutes.gateway.networking.k8s.io "web" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
        reason: "Invalid",
        details: {
          name: "web",
          group: "gateway.networking.k8s.io",
          kind: "httproutes",
          causes: [{
            reason: "FieldValueInvalid",
            message: "Invalid value: 0: must be specified for an update",
            field: "metadata.resourceVersion"
          }]
        },
        code: 422
      })
    }))

  it.effect("answers 404 to a PUT of a missing Ingress or HTTPRoute, and creates a missing Service", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      expect(yield* failureOf(store.replace(IngressResource, NS, "web", ingress("web")))).toMatchObject({
        code: 404,
        reason: "NotFound",
        message: `ingresses.networking.k8s.io "web" not found`,
        details: { name: "web", group: "networking.k8s.io", kind: "ingresses" }
      })
      expect(yield* failureOf(store.replace(HttpRouteResource, NS, "web", httpRoute("web")))).toMatchObject({
        code: 404,
        message: `httproutes.gateway.networking.k8s.io "web" not found`
      })
      const result = yield* store.replace(ServiceResource, NS, "web", service("web"))
      expect(result.created).toBe(true)
      expect(result.object.metadata?.uid).toBeDefined()
    }))

  it.effect("answers 400 when the body's name differs from the URL's", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      expect(yield* failureOf(store.replace(IngressResource, NS, "web", ingress("other")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "the name of the object (other) does not match the name on the URL (web)",
        reason: "BadRequest",
        code: 400
      })
    }))

  it.effect("bumps generation on a spec change only", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const relabelled = yield* store.replace(IngressResource, NS, "web", {
        ...created,
        metadata: { ...created.metadata, labels: { tier: "front" } }
      })
      expect(relabelled.object.metadata?.generation).toBe(1)
      const respecced = yield* store.replace(IngressResource, NS, "web", {
        ...relabelled.object,
        spec: { ...relabelled.object.spec, ingressClassName: "local" }
      })
      expect(respecced.object.metadata?.generation).toBe(2)
    }))

  it.effect("ignores a client-sent generation and creationTimestamp on update", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const result = yield* store.replace(IngressResource, NS, "web", {
        ...created,
        metadata: { ...created.metadata, generation: 40, creationTimestamp: "2001-01-01T00:00:00Z" }
      })
      expect(result.object.metadata?.generation).toBe(1)
      expect(result.object.metadata?.creationTimestamp).toBe(created.metadata?.creationTimestamp)
    }))

  it.effect("treats a uid in the body as a precondition", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const status = yield* failureOf(
        store.replace(IngressResource, NS, "web", {
          ...created,
          metadata: { ...created.metadata, uid: "someone-else" }
        })
      )
      expect(status.code).toBe(409)
      // kube-apiserver 1.35's words: its storage refuses the precondition, naming the etcd key.
      expect(status.message).toBe(
        `Operation cannot be fulfilled on ingresses.networking.k8s.io "web": StorageError: invalid object, Code: 4, Key: /registry/ingress/${NS}/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: someone-else, UID in object meta: ${created.metadata?.uid}`
      )
    }))

  it.effect("keeps the status on a write to the object, and changes only status through /status", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const withStatus = yield* store.replaceStatus(IngressResource, NS, "web", {
        ...created,
        spec: { ingressClassName: "ignored" },
        status: { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } }
      })
      expect(withStatus.status).toEqual({ loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } })
      expect(withStatus.spec).toEqual(created.spec)
      expect(withStatus.metadata?.generation).toBe(1)
      const rewritten = yield* store.replace(IngressResource, NS, "web", {
        ...withStatus,
        spec: { ...withStatus.spec, ingressClassName: "local" },
        status: { loadBalancer: {} }
      })
      expect(rewritten.object.status).toEqual({ loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } })
    }))

  it.effect("takes a built-in type's labels, annotations, finalizers and owners through /status, a Pod's owners and a custom resource's metadata not", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      // As kube-apiserver 1.35 answers: its status strategies reset the spec, and a Pod's its owner
      // references too; a custom resource's keeps the live metadata whole.
      const owner = { apiVersion: "v1", kind: "Pod", name: "owner", uid: "00000000-0000-4000-8000-000000000001" }
      const metadata = { labels: { a: "1" }, annotations: { b: "2" }, finalizers: ["x/y"], ownerReferences: [owner] }
      const written = <A extends KubeObject>(resource: ResourceType<A>, object: A) =>
        Effect.flatMap(
          store.create(resource, NS, object),
          (created) =>
            store.replaceStatus(resource, NS, created.metadata?.name ?? "", {
              ...created,
              metadata: { ...created.metadata, ...metadata }
            })
        )
      const what = (object: KubeObject) => {
        const { annotations, finalizers, labels, ownerReferences } = object.metadata ?? {}
        return { labels, annotations, finalizers, ownerReferences }
      }
      expect(what(yield* written(ServiceResource, service("web")))).toEqual(metadata)
      expect(what(yield* written(PodResource, pod("web")))).toEqual({ ...metadata, ownerReferences: undefined })
      expect(what(yield* written(HttpRouteResource, httpRoute("web")))).toEqual({
        labels: undefined,
        annotations: undefined,
        finalizers: undefined,
        ownerReferences: undefined
      })
    }))

  it.effect("keeps the resourceVersion and emits no event for a write that changes nothing", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const from = yield* store.resourceVersion
      const again = yield* store.replace(IngressResource, NS, "web", created)
      expect(again.object.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion)
      const reapplied = yield* store.apply(IngressResource, NS, "web", ingress("web"), { fieldManager: "me" })
      const reappliedAgain = yield* store.apply(IngressResource, NS, "web", ingress("web"), { fieldManager: "me" })
      expect(reappliedAgain.object.metadata?.resourceVersion).toBe(reapplied.object.metadata?.resourceVersion)
      yield* store.create(IngressResource, NS, ingress("sentinel"))
      // After `from`: only the first apply (a new manager is a change) and the sentinel.
      const events = yield* firstEvents(store.watch(anyResource(IngressResource), NS, { resourceVersion: from }), 2)
      expect(events.map(([type, name]) => `${type} ${name}`)).toEqual(["MODIFIED web", "ADDED sentinel"])
    }))

  it.effect("holds a delete while finalizers remain, and completes it when the last one goes", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, {
        ...ingress("web"),
        metadata: { name: "web", finalizers: ["x/y"] } as never
      })
      const pending = yield* store.delete(IngressResource, NS, "web")
      expect("object" in pending && pending.object.metadata?.deletionTimestamp).toBe("1970-01-01T00:00:00Z")
      const marked = yield* store.get(IngressResource, NS, "web")
      yield* store.replace(IngressResource, NS, "web", {
        ...marked,
        metadata: { ...marked.metadata, finalizers: [] } as never
      })
      expect((yield* failureOf(store.get(IngressResource, NS, "web"))).code).toBe(404)
    }))
})

describe("MemoryStore deletes", () => {
  it.effect("bumps generation once when a delete marks an object its finalizers hold", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      // markAsDeleting: a deletionTimestamp changes what controllers must do, so the
      // generation moves and every condition observed at the old one goes stale.
      yield* store.create(HttpRouteResource, NS, {
        ...httpRoute("web"),
        metadata: { name: "web", finalizers: ["x/y"] } as never
      })
      const pending = yield* store.delete(HttpRouteResource, NS, "web")
      expect("object" in pending && pending.object.metadata?.generation).toBe(2)
      yield* store.delete(HttpRouteResource, NS, "web")
      expect((yield* store.get(HttpRouteResource, NS, "web")).metadata?.generation).toBe(2)
    }))

  it.effect("answers a Success Status for an Ingress and a custom resource, the object for a Service", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const ing = yield* store.create(IngressResource, NS, ingress("web"))
      const route = yield* store.create(HttpRouteResource, NS, httpRoute("web"))
      const svc = yield* store.create(ServiceResource, NS, service("web"))
      expect(yield* store.delete(IngressResource, NS, "web")).toEqual({
        status: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: { name: "web", group: "networking.k8s.io", kind: "ingresses", uid: ing.metadata?.uid },
          code: 200
        }
      })
      expect(yield* store.delete(HttpRouteResource, NS, "web")).toMatchObject({
        status: {
          status: "Success",
          details: { name: "web", group: "gateway.networking.k8s.io", kind: "httproutes", uid: route.metadata?.uid }
        }
      })
      expect(yield* store.delete(ServiceResource, NS, "web")).toEqual({ object: svc })
    }))

  it.effect("answers 404 to deleting what is not there", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      expect((yield* failureOf(store.delete(IngressResource, NS, "web"))).message).toBe(
        `ingresses.networking.k8s.io "web" not found`
      )
    }))

  it.effect("checks delete preconditions", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      const status = yield* failureOf(
        store.delete(IngressResource, NS, "web", { preconditions: { resourceVersion: "1" } })
      )
      expect(status.code).toBe(409)
      expect(status.message).toMatch(
        /^Operation cannot be fulfilled on Ingress\.networking\.k8s\.io "web": the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record \(\d+\)\. The object might have been modified$/
      )
    }))

  it.effect("deletes a namespace with everything in it, and refuses to delete default", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      const deleted = yield* store.delete(NamespaceResource, undefined, NS)
      expect("object" in deleted && (deleted.object as { status?: unknown }).status).toEqual({ phase: "Terminating" })
      expect((yield* store.list(IngressResource, undefined)).items).toEqual([])
      expect((yield* failureOf(store.get(NamespaceResource, undefined, NS))).code).toBe(404)
      expect(yield* failureOf(store.delete(NamespaceResource, undefined, "default"))).toMatchObject({
        code: 403,
        reason: "Forbidden",
        message: `namespaces "default" is forbidden: this namespace may not be deleted`
      })
    }))
})

describe("MemoryStore server-side apply", () => {
  it.effect("answers 422 when the fieldManager is missing", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      expect(yield* failureOf(store.apply(IngressResource, NS, "web", ingress("web"), {}))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`,
        reason: "Invalid",
        details: {
          group: "meta.k8s.io",
          kind: "PatchOptions",
          causes: [{
            reason: "FieldValueRequired",
            message: "Required value: is required for apply patch",
            field: "fieldManager"
          }]
        },
        code: 422
      })
    }))

  it.effect("creates what is missing and records the applier's fields in FieldsV1", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const result = yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: { app: "web" } }), {
        fieldManager: "me"
      })
      expect(result.created).toBe(true)
      expect(result.object.metadata?.managedFields).toEqual([{
        manager: "me",
        operation: "Apply",
        apiVersion: "networking.k8s.io/v1",
        time: "1970-01-01T00:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": { "f:app": {} } }, "f:spec": { "f:rules": {} } }
      }])
      const second = yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: { app: "web" } }), {
        fieldManager: "me"
      })
      expect(second.created).toBe(false)
    }))

  it.effect("keys list items as the schema says: Service ports by port and protocol", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const result = yield* store.apply(ServiceResource, NS, "web", service("web"), { fieldManager: "me" })
      expect(result.object.metadata?.managedFields?.[0]?.fieldsV1).toEqual({
        "f:spec": {
          "f:ports": { "k:{\"port\":80,\"protocol\":\"TCP\"}": { ".": {}, "f:name": {}, "f:port": {} } },
          "f:selector": {}
        }
      })
    }))

  it.effect("answers 409 with FieldManagerConflict causes when another manager owns a changed field and force is off", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "a" }), { fieldManager: "first" })
      const status = yield* failureOf(
        store.apply(IngressResource, NS, "web", ingress("web", { className: "b" }), {
          fieldManager: "second",
          force: false
        })
      )
      expect(status).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `Apply failed with 1 conflict: conflict with "first": .spec.ingressClassName`,
        reason: "Conflict",
        details: {
          causes: [{
            reason: "FieldManagerConflict",
            message: `conflict with "first"`,
            field: ".spec.ingressClassName"
          }]
        },
        code: 409
      })
    }))

  it.effect("names an Update manager with its version and time in a conflict", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web", { className: "a" }), { fieldManager: "kubectl-create" })
      const status = yield* failureOf(
        store.apply(IngressResource, NS, "web", ingress("web", { className: "b" }), {
          fieldManager: "me",
          force: false
        })
      )
      expect(status.message).toBe(
        `Apply failed with 1 conflict: conflict with "kubectl-create" using networking.k8s.io/v1 at 1970-01-01T00:00:00Z: .spec.ingressClassName`
      )
    }))

  it.effect("takes ownership with force, and shares it when the value is the same", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "a" }), { fieldManager: "first" })
      const shared = yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "a" }), {
        fieldManager: "second",
        force: false
      })
      // The newcomer changed nothing, so its entry has no time, and sorts first.
      expect(shared.object.metadata?.managedFields?.map((m) => [m.manager, m.time !== undefined])).toEqual([
        ["second", false],
        ["first", true]
      ])
      const forced = yield* store.apply(IngressResource, NS, "web", ingress("web", { className: "b" }), {
        fieldManager: "second",
        force: true
      })
      expect(forced.object.spec?.ingressClassName).toBe("b")
      const first = forced.object.metadata?.managedFields?.find((m) => m.manager === "first")
      expect(first?.fieldsV1).toEqual({ "f:spec": { "f:rules": {} } })
    }))

  it.effect("removes fields the manager stopped applying, unless another manager owns them", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: { a: "1", b: "2" } }), {
        fieldManager: "me"
      })
      const dropped = yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: { a: "1" } }), {
        fieldManager: "me"
      })
      expect(dropped.object.metadata?.labels).toEqual({ a: "1" })
      yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: { a: "1" } }), { fieldManager: "other" })
      const kept = yield* store.apply(IngressResource, NS, "web", ingress("web", { labels: {} }), {
        fieldManager: "me"
      })
      expect(kept.object.metadata?.labels).toEqual({ a: "1" })
    }))

  // A reload that drops a port must drop the whole keyed item, not leave a shell
  // without its key fields (which the validator then reports as port 0).
  it.effect("removes a keyed list item the manager stopped applying, whole", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const ports = (...numbers: Array<number>) => ({
        ...service("web"),
        spec: {
          selector: { app: "web" },
          ports: numbers.map((port) => ({ name: `p${port}`, port, protocol: "TCP" as const }))
        }
      })
      yield* store.apply(ServiceResource, NS, "web", ports(80, 8080, 9090), { fieldManager: "me" })
      const reloaded = yield* store.apply(ServiceResource, NS, "web", ports(8080), { fieldManager: "me" })
      expect(reloaded.object.spec?.ports).toEqual([{ name: "p8080", port: 8080, protocol: "TCP", targetPort: 8080 }])
    }))

  it.effect("keeps a dropped item's key while another manager owns part of it", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const svc = (ports: ReadonlyArray<{ port: number; name?: string; appProtocol?: string }>) => ({
        ...service("web"),
        spec: { ports: ports.map((p) => ({ ...p, protocol: "TCP" as const })) }
      })
      yield* store.apply(ServiceResource, NS, "web", svc([{ port: 80, name: "http" }, { port: 81, name: "alt" }]), {
        fieldManager: "me"
      })
      yield* store.apply(ServiceResource, NS, "web", svc([{ port: 81, name: "alt", appProtocol: "http" }]), {
        fieldManager: "other"
      })
      const result = yield* store.apply(ServiceResource, NS, "web", svc([{ port: 80, name: "http" }]), {
        fieldManager: "me"
      })
      expect(result.object.spec?.ports).toEqual([
        { name: "http", port: 80, protocol: "TCP", targetPort: 80 },
        { name: "alt", port: 81, protocol: "TCP", targetPort: 81, appProtocol: "http" }
      ])
    }))

  it.effect("writes the HTTPRoute CRD defaults back and prunes unknown fields", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const route = httpRoute("web")
      const result = yield* store.apply(
        HttpRouteResource,
        NS,
        "web",
        { ...route, spec: { ...route.spec, unknownField: true } as never },
        { fieldManager: "me" }
      )
      expect(result.object.spec).toEqual({
        parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }],
        hostnames: ["web.example.test"],
        rules: [{
          backendRefs: [{ group: "", kind: "Service", name: "web", port: 80, weight: 1 }],
          matches: [{ path: { type: "PathPrefix", value: "/" } }]
        }]
      })
      expect(JSON.stringify(result.object.metadata?.managedFields)).not.toContain("unknownField")
    }))

  it.effect("shows the CRD's status default on a Gateway nobody reconciled", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(GatewayResource, NS, gateway("gw"))
      expect(created.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
        ["Accepted", "Unknown", "Pending", "Waiting for controller"],
        ["Programmed", "Unknown", "Pending", "Waiting for controller"]
      ])
      expect(created.spec?.listeners[0]?.allowedRoutes).toEqual({ namespaces: { from: "Same" } })
    }))

  it.effect("answers 409 to an apply whose resourceVersion is stale", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.apply(IngressResource, NS, "web", ingress("web"), { fieldManager: "me" })
      const status = yield* failureOf(
        store.apply(
          IngressResource,
          NS,
          "web",
          { ...ingress("web"), metadata: { name: "web", resourceVersion: "1" } },
          { fieldManager: "me" }
        )
      )
      expect(status.reason).toBe("Conflict")
    }))
})

describe("MemoryStore dry run", () => {
  it.effect("validates fully, stores nothing and emits nothing", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const from = yield* store.resourceVersion
      const invalid = yield* failureOf(
        store.create(IngressResource, NS, ingress("web", { host: "1.2.3.4" }), { dryRun: true })
      )
      expect(invalid.code).toBe(422)
      const created = yield* store.create(IngressResource, NS, ingress("web"), { dryRun: true })
      expect(created.metadata?.uid).toBeDefined()
      expect(created.metadata?.resourceVersion).toBeUndefined()
      const applied = yield* store.apply(IngressResource, NS, "web", ingress("web"), {
        fieldManager: "me",
        dryRun: true
      })
      expect(applied.created).toBe(true)
      expect((yield* failureOf(store.get(IngressResource, NS, "web"))).code).toBe(404)
      expect(yield* store.resourceVersion).toBe(from)
    }))
})

describe("MemoryStore lists", () => {
  it.effect("answers <Kind>List with the resourceVersion, built-in items without kind and apiVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("web"))
      const list = yield* store.list(IngressResource, NS)
      expect(list.kind).toBe("IngressList")
      expect(list.apiVersion).toBe("networking.k8s.io/v1")
      expect(list.metadata.resourceVersion).toBe(yield* store.resourceVersion)
      expect(list.items[0]?.kind).toBeUndefined()
      expect(list.items[0]?.apiVersion).toBeUndefined()
      expect(list.items[0]?.metadata?.name).toBe("web")
    }))

  it.effect("keeps kind and apiVersion on custom resource items", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(HttpRouteResource, NS, httpRoute("web"))
      const list = yield* store.list(HttpRouteResource, NS)
      expect(list.kind).toBe("HTTPRouteList")
      expect([list.items[0]?.apiVersion, list.items[0]?.kind]).toEqual(["gateway.networking.k8s.io/v1", "HTTPRoute"])
    }))

  it.effect("pages with limit and continue over a consistent snapshot", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      for (const name of ["a", "b", "c", "d", "e"]) yield* store.create(IngressResource, NS, ingress(name))
      const first = yield* store.list(IngressResource, NS, { limit: 2 })
      expect(first.items.map((i) => i.metadata?.name)).toEqual(["a", "b"])
      expect(first.metadata).toMatchObject({ remainingItemCount: 3 })
      // Changes after the first page do not show in later pages of the same list.
      yield* store.delete(IngressResource, NS, "c")
      yield* store.create(IngressResource, NS, ingress("bb"))
      const second = yield* store.list(IngressResource, NS, { limit: 2, continue: first.metadata.continue! })
      expect(second.items.map((i) => i.metadata?.name)).toEqual(["c", "d"])
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion)
      const third = yield* store.list(IngressResource, NS, { limit: 2, continue: second.metadata.continue! })
      expect(third.items.map((i) => i.metadata?.name)).toEqual(["e"])
      expect(third.metadata.continue).toBeUndefined()
    }))

  it.effect("answers 410 to a continue token older than the history window", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      for (const name of ["a", "b", "c"]) yield* store.create(IngressResource, NS, ingress(name))
      const first = yield* store.list(IngressResource, NS, { limit: 1 })
      yield* store.create(IngressResource, NS, ingress("d"))
      yield* store.compact
      const status = yield* failureOf(store.list(IngressResource, NS, { limit: 1, continue: first.metadata.continue! }))
      expect(status.code).toBe(410)
      expect(status.reason).toBe("Expired")
      expect(status.message).toMatch(/^The provided continue parameter is too old/)
      // The Status carries a token that goes on after "a" at the latest version.
      const rest = yield* store.list(IngressResource, NS, { continue: String(status.metadata.continue) })
      expect(rest.items.map((i) => i.metadata?.name)).toEqual(["b", "c", "d"])
      expect(rest.metadata.resourceVersion).toBe(yield* store.resourceVersion)
    }))

  it.effect("refuses a continue token that does not decode, and one sent with a resourceVersion, with 400", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      for (const name of ["a", "b"]) yield* store.create(IngressResource, NS, ingress(name))
      const token = (yield* store.list(IngressResource, NS, { limit: 1 })).metadata.continue!
      const refusal = (options: { continue: string; resourceVersion?: string }) =>
        Effect.map(failureOf(store.list(IngressResource, NS, { limit: 1, ...options })), (s) => [s.code, s.message])
      const encoded = (body: object) => Buffer.from(JSON.stringify(body)).toString("base64url")
      expect(yield* refusal({ continue: "not+base64" })).toEqual([
        400,
        "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"
      ])
      expect(yield* refusal({ continue: encoded({ v: "meta.k8s.io/v0", rv: 1, start: "a" }) })).toEqual([
        400,
        "invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v0"
      ])
      expect(yield* refusal({ continue: encoded({ v: "meta.k8s.io/v1", start: "a" }) })).toEqual([
        400,
        "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
      ])
      expect(yield* refusal({ continue: encoded({ v: "meta.k8s.io/v1", rv: 1 }) })).toEqual([
        400,
        "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
      ])
      expect(yield* refusal({ continue: token, resourceVersion: "1" })).toEqual([
        400,
        "specifying resource version is not allowed when using continue"
      ])
      const withZero = yield* store.list(IngressResource, NS, { limit: 1, continue: token, resourceVersion: "0" })
      expect(withZero.items.map((i) => i.metadata?.name)).toEqual(["b"])
    }))

  it.effect("lists at a resourceVersion: Exact or with a limit the state then, otherwise the latest", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const first = yield* store.create(IngressResource, NS, ingress("a", { labels: { v: "1" } }))
      yield* store.replace(IngressResource, NS, "a", ingress("a", { labels: { v: "2" } }))
      yield* store.create(IngressResource, NS, ingress("b"))
      const at = first.metadata!.resourceVersion!
      const state = (options: { resourceVersion: string; resourceVersionMatch?: string; limit?: number }) =>
        Effect.map(store.list(IngressResource, NS, options), (l) => [
          l.metadata.resourceVersion,
          l.items.map((i) => [i.metadata?.name, i.metadata?.labels?.v])
        ])
      const latest = yield* store.resourceVersion
      expect(yield* state({ resourceVersion: at, resourceVersionMatch: "Exact" })).toEqual([at, [["a", "1"]]])
      expect(yield* state({ resourceVersion: at, limit: 5 })).toEqual([at, [["a", "1"]]])
      for (
        const options of [{ resourceVersion: at, resourceVersionMatch: "NotOlderThan" }, { resourceVersion: at }, {
          resourceVersion: "0",
          limit: 5
        }]
      ) {
        expect(yield* state(options)).toEqual([latest, [["a", "2"], ["b", undefined]]])
      }
      yield* store.compact
      expect(yield* failureOf(store.list(IngressResource, NS, { resourceVersion: at, resourceVersionMatch: "Exact" })))
        .toMatchObject({
          code: 410,
          reason: "Expired",
          message: "The resourceVersion for the provided list is too old."
        })
    }))

  it.effect("answers a list at a version not reached with 504 Timeout, and one that is no number with 400", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const ahead = String(Number(yield* store.resourceVersion) + 10)
      for (const resourceVersionMatch of ["Exact", "NotOlderThan"]) {
        expect(yield* failureOf(store.list(IngressResource, NS, { resourceVersion: ahead, resourceVersionMatch })))
          .toEqual({
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message: `Timeout: Too large resource version: ${ahead}, current: ${yield* store.resourceVersion}`,
            reason: "Timeout",
            details: {
              causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
              retryAfterSeconds: 1
            },
            code: 504
          })
      }
      expect(yield* failureOf(store.list(IngressResource, NS, { resourceVersion: "x" }))).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message:
          `invalid resource version: resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid syntax`
      })
    }))

  it.effect("filters by label selector, and answers 400 to one that does not parse", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("a", { labels: { app: "web", tier: "front" } }))
      yield* store.create(IngressResource, NS, ingress("b", { labels: { app: "api" } }))
      yield* store.create(IngressResource, NS, ingress("c"))
      const names = (selector: string) =>
        Effect.map(store.list(IngressResource, NS, { labelSelector: selector }), (l) =>
          l.items.map((i) => i.metadata?.name))
      expect(yield* names("app=web")).toEqual(["a"])
      expect(yield* names("app!=web")).toEqual(["b", "c"])
      expect(yield* names("app in (web,api)")).toEqual(["a", "b"])
      expect(yield* names("app notin (web)")).toEqual(["b", "c"])
      expect(yield* names("!app")).toEqual(["c"])
      expect(yield* names("tier")).toEqual(["a"])
      expect(yield* failureOf(store.list(IngressResource, NS, { labelSelector: "app in (" }))).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: "unable to parse requirement: found '', expected: ',', ')' or identifier"
      })
    }))

  it.effect("lists across namespaces when none is given, and lists nothing in a missing one", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS, "other"] })
      yield* store.create(IngressResource, NS, ingress("a"))
      yield* store.create(IngressResource, "other", ingress("b"))
      expect(
        (yield* store.list(IngressResource, undefined)).items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`)
      ).toEqual([
        "demo/a",
        "other/b"
      ])
      expect((yield* store.list(IngressResource, "missing")).items).toEqual([])
    }))
})

describe("MemoryStore watch", () => {
  it.scoped("starts with synthetic ADDED events when no resourceVersion is given, then follows changes", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("a"))
      yield* store.create(IngressResource, NS, ingress("b"))
      const events = yield* subscribe(store.watch(anyResource(IngressResource), NS, {}))
      // The synthetic events arriving prove the watch is subscribed.
      expect([yield* Queue.take(events), yield* Queue.take(events)].map((e) => `${e.type} ${e.object.metadata?.name}`))
        .toEqual([
          "ADDED a",
          "ADDED b"
        ])
      yield* store.delete(IngressResource, NS, "a")
      const deleted = yield* Queue.take(events)
      expect(`${deleted.type} ${deleted.object.metadata?.name}`).toBe("DELETED a")
    }))

  it.effect("treats resourceVersion \"0\" as none: synthetic ADDED for what exists", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("a"))
      const events = yield* firstEvents(store.watch(anyResource(IngressResource), NS, { resourceVersion: "0" }), 1)
      expect(events.map(([type, name]) => `${type} ${name}`)).toEqual(["ADDED a"])
    }))

  it.effect("resumes after a resourceVersion with exactly the later changes", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(IngressResource, NS, ingress("a"))
      const from = yield* store.resourceVersion
      const b = yield* store.create(IngressResource, NS, ingress("b"))
      const events = yield* firstEvents(store.watch(anyResource(IngressResource), NS, { resourceVersion: from }), 1)
      expect(events).toEqual([["ADDED", "b", b.metadata?.resourceVersion]])
    }))

  it.effect("reports an object leaving the selector as DELETED with its last state, and one entering as ADDED", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const from = yield* store.resourceVersion
      const created = yield* store.create(IngressResource, NS, ingress("a", { labels: { app: "web" } }))
      const left = yield* store.replace(IngressResource, NS, "a", {
        ...created,
        metadata: { ...created.metadata, labels: { app: "other" } }
      })
      yield* store.replace(IngressResource, NS, "a", {
        ...left.object,
        metadata: { ...left.object.metadata, labels: { app: "web" } }
      })
      const events = yield* store.watch(anyResource(IngressResource), NS, {
        resourceVersion: from,
        labelSelector: "app=web"
      }).pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.map(Chunk.toArray)
      )
      expect(events.map((e) => e.type)).toEqual(["ADDED", "DELETED", "ADDED"])
      // The delete shows what the watcher last could see, at the version of the change.
      expect(events[1]?.object.metadata?.labels).toEqual({ app: "web" })
      expect(events[1]?.object.metadata?.resourceVersion).toBe(left.object.metadata?.resourceVersion)
    }))

  it.effect("sends bookmarks when allowed, at the interval, on the TestClock", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS], bookmarkInterval: "1 minute" })
      const from = yield* store.resourceVersion
      const fiber = yield* Effect.fork(
        store.watch(anyResource(IngressResource), NS, { resourceVersion: from, allowWatchBookmarks: true }).pipe(
          Stream.take(1),
          Stream.runCollect
        )
      )
      yield* TestClock.adjust("1 minute")
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      expect(events).toEqual([{
        type: "BOOKMARK",
        object: { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { resourceVersion: from } }
      }])
    }))

  it.effect("sends a bookmark two seconds before a watch's timeout, besides those at the interval", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS], bookmarkInterval: "1 minute" })
      const from = yield* store.resourceVersion
      const fiber = yield* Effect.fork(
        store.watch(anyResource(IngressResource), NS, {
          resourceVersion: from,
          allowWatchBookmarks: true,
          timeoutSeconds: 5
        }).pipe(Stream.take(1), Stream.runCollect)
      )
      yield* TestClock.adjust("2999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      expect(Chunk.toArray(yield* Fiber.join(fiber)).map((e) => e.type)).toEqual(["BOOKMARK"])
    }))

  it.effect("answers a watch from a resourceVersion that is no number with a 500 without a reason", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      expect(yield* failureOf(Stream.runDrain(store.watch(anyResource(IngressResource), NS, { resourceVersion: "x" }))))
        .toEqual({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid syntax`,
          code: 500
        })
    }))

  it.effect("answers a too-old resourceVersion with one ERROR event (410 Expired) and ends", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS], watchHistory: 2 })
      yield* store.create(IngressResource, NS, ingress("a"))
      const old = yield* store.resourceVersion
      for (const name of ["b", "c", "d"]) yield* store.create(IngressResource, NS, ingress(name))
      const events = Chunk.toArray(
        yield* Stream.runCollect(store.watch(anyResource(IngressResource), NS, { resourceVersion: old }))
      )
      const current = Number(yield* store.resourceVersion)
      expect(events).toEqual([{
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${old} (${current - 2})`,
          reason: "Expired",
          code: 410
        }
      }])
    }))

  it.effect("expires every older version after a compaction", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const old = yield* store.resourceVersion
      yield* store.create(IngressResource, NS, ingress("a"))
      yield* store.compact
      const events = Chunk.toArray(
        yield* Stream.runCollect(store.watch(anyResource(IngressResource), NS, { resourceVersion: old }))
      )
      expect(events[0]?.type).toBe("ERROR")
    }))
})

describe("MemoryStore served types", () => {
  it.effect("answers 404 for a type it does not serve, and serves it again when told", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS], unserved: [anyResource(HttpRouteResource)] })
      expect(yield* store.isServed(anyResource(HttpRouteResource))).toBe(false)
      expect((yield* failureOf(store.create(HttpRouteResource, NS, httpRoute("web")))).code).toBe(404)
      yield* store.setServed(anyResource(HttpRouteResource), true)
      expect(Either.isRight(yield* Effect.either(store.create(HttpRouteResource, NS, httpRoute("web"))))).toBe(true)
    }))
})

describe("MemoryStore Services", () => {
  // LocalCluster allocates no cluster IPs or node ports (nothing routes by them: the data
  // plane goes by Host to the Pods behind a Service); its README lists the difference.
  it.effect("stores a Service without a cluster IP or node port, as it was sent", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(ServiceResource, NS, {
        ...service("a"),
        spec: { type: "NodePort", selector: { app: "a" }, ports: [{ name: "http", port: 80 }] }
      })
      expect([created.spec?.clusterIP, created.spec?.ports?.[0]]).toEqual([
        undefined,
        { name: "http", port: 80, protocol: "TCP", targetPort: 80 }
      ])
    }))
})
