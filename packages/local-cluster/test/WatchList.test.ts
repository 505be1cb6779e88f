/**
 * Watch-list, the way client-go 1.35 lists (kubectl wait, delete, the informers):
 * `watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, answered
 * with the current objects as ADDED, a bookmark annotated `k8s.io/initial-events-end`
 * at the list's resourceVersion, then the changes after it; and the list options the
 * API server refuses, with its 422 on `ListOptions.meta.k8s.io`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { type KubeObject, type ResourceType, type Status } from "session-routing/kubernetes"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"
import { call, lineReader, send } from "./WireFixtures.js"

const ING = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`
const Ingresses = IngressResource as ResourceType<KubeObject>
const WATCH_LIST = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"

const initialEventsEnd = (resourceVersion: string) => ({
  type: "BOOKMARK",
  object: {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { resourceVersion, annotations: { "k8s.io/initial-events-end": "true" } }
  }
})

const listOptionsInvalid = (
  ...causes: ReadonlyArray<{ readonly reason: string; readonly field: string; readonly message: string }>
): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `ListOptions.meta.k8s.io "" is invalid: ${
    causes.length === 1
      ? `${causes[0]!.field}: ${causes[0]!.message}`
      : `[${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}]`
  }`,
  reason: "Invalid",
  details: { group: "meta.k8s.io", kind: "ListOptions", causes: [...causes] },
  code: 422
})
const forbidden = (message: string) => ({
  reason: "FieldValueForbidden",
  field: "resourceVersionMatch",
  message: `Forbidden: ${message}`
})

describe("MemoryStore watch-list", () => {
  it.effect("sends the current objects as ADDED, then the bookmark that ends them at the list's version, then changes", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      yield* store.create(IngressResource, NS, ingress("b"))
      yield* store.create(IngressResource, NS, ingress("a"))
      const listed = yield* store.resourceVersion
      const events = yield* store.watch(Ingresses, NS, { sendInitialEvents: true, allowWatchBookmarks: true }).pipe(
        Stream.take(4),
        Stream.tap((event) =>
          event.type === "BOOKMARK" ? store.create(IngressResource, NS, ingress("c")) : Effect.void
        ),
        Stream.runCollect,
        Effect.map(Chunk.toArray)
      )
      expect(events.map((e) => [e.type, e.object.metadata?.name])).toEqual([
        ["ADDED", "a"],
        ["ADDED", "b"],
        ["BOOKMARK", undefined],
        ["ADDED", "c"]
      ])
      expect(events[2]).toEqual(initialEventsEnd(listed))
    }))

  it.effect("sends no end-of-list bookmark to a watch-list that does not allow bookmarks", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      yield* store.create(IngressResource, NS, ingress("a"))
      const events = yield* store.watch(Ingresses, NS, { sendInitialEvents: true }).pipe(
        Stream.take(2),
        Stream.tap((event) =>
          event.object.metadata?.name === "a" ? store.create(IngressResource, NS, ingress("b")) : Effect.void
        ),
        Stream.runCollect,
        Effect.map(Chunk.toArray)
      )
      expect(events.map((e) => [e.type, e.object.metadata?.name])).toEqual([["ADDED", "a"], ["ADDED", "b"]])
    }))

  it.effect("starts at the current version with nothing replayed when initial events are declined", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      yield* store.create(IngressResource, NS, ingress("a"))
      // A watch with bookmarks from the same instant marks when both are registered.
      const events = yield* Effect.all([
        store.watch(Ingresses, NS, { sendInitialEvents: false }).pipe(Stream.take(1), Stream.runCollect),
        store.watch(Ingresses, NS, { sendInitialEvents: true, allowWatchBookmarks: true }).pipe(
          Stream.filter((e) => e.type === "BOOKMARK"),
          Stream.take(1),
          Stream.runForEach(() => store.create(IngressResource, NS, ingress("b")))
        )
      ], { concurrency: 2 })
      expect(Chunk.toArray(events[0]).map((e) => [e.type, e.object.metadata?.name])).toEqual([["ADDED", "b"]])
    }))

  it.effect("refuses a watch-list from a version the store never handed out with the cacher's 504", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      const current = Number(yield* store.resourceVersion)
      const refused = yield* Stream.runCollect(
        store.watch(Ingresses, NS, { sendInitialEvents: true, resourceVersion: String(current + 5) })
      ).pipe(
        Effect.flip
      )
      expect(refused).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        // The Timeout error's message starts with its reason (kube-apiserver 1.35, the contract's ListWatch).
        message: `Timeout: Too large resource version: ${current + 5}, current: ${current}`,
        reason: "Timeout",
        details: {
          causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
          retryAfterSeconds: 1
        },
        code: 504
      })
    }))
})

describe("HttpApi watch-list", () => {
  it.scopedLive("streams the initial events, the marked bookmark and the changes, filtered by a field selector", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      yield* send(url, "POST", ING, ingress("web"))
      yield* send(url, "POST", ING, ingress("other"))
      const listed = yield* store.resourceVersion
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      // What kubectl 1.35 `wait ingress/web` sends.
      const response = yield* Effect.promise(() =>
        fetch(
          `${url}${ING}?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dweb&${WATCH_LIST}&timeoutSeconds=60`,
          {
            signal: controller.signal
          }
        )
      )
      expect(response.status).toBe(200)
      const next = lineReader(response)
      const read = Effect.promise(async () => JSON.parse((await next())!))
      const first = yield* read
      expect([first.type, first.object.metadata.name]).toEqual(["ADDED", "web"])
      expect(yield* read).toEqual(initialEventsEnd(listed))
      yield* send(url, "DELETE", `${ING}/other`, {})
      yield* send(url, "DELETE", `${ING}/web`, {})
      const deleted = yield* read
      expect([deleted.type, deleted.object.metadata.name]).toEqual(["DELETED", "web"])
    }))

  it.scopedLive("ends the initial events of a legacy watch with the marked bookmark, as the server defaults it to a watch-list", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      yield* send(url, "POST", ING, ingress("web"))
      const listed = yield* store.resourceVersion
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() =>
        fetch(`${url}${ING}?watch=true&resourceVersion=0&allowWatchBookmarks=true`, { signal: controller.signal })
      )
      const next = lineReader(response)
      expect(JSON.parse((yield* Effect.promise(next))!).type).toBe("ADDED")
      expect(JSON.parse((yield* Effect.promise(next))!)).toEqual(initialEventsEnd(listed))
    }))

  it.scopedLive("refuses the combinations ValidateListOptions refuses, with its 422", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const rv = yield* store.resourceVersion
      const refusal = (query: string) => Effect.map(call(url, `${ING}?${query}`), (answer) => answer.body as Status)
      expect(yield* refusal("watch=true&sendInitialEvents=true")).toEqual(
        listOptionsInvalid(forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
      )
      expect(yield* refusal(`watch=true&resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)).toEqual(
        listOptionsInvalid(
          forbidden("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        )
      )
      expect(yield* refusal("watch=true&sendInitialEvents=true&resourceVersionMatch=Exact")).toEqual(
        listOptionsInvalid(
          forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
          {
            reason: "FieldValueNotSupported",
            field: "resourceVersionMatch",
            message: `Unsupported value: "Exact": supported values: "NotOlderThan"`
          }
        )
      )
      expect(yield* refusal(`${WATCH_LIST}&continue=abc`)).toEqual(
        listOptionsInvalid(forbidden("resourceVersionMatch is forbidden when continue is provided"))
      )
      expect(yield* refusal("sendInitialEvents=true")).toEqual(
        listOptionsInvalid({
          reason: "FieldValueForbidden",
          field: "sendInitialEvents",
          message: "Forbidden: sendInitialEvents is forbidden for list"
        })
      )
      expect(yield* refusal("resourceVersionMatch=NotOlderThan")).toEqual(
        listOptionsInvalid(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))
      )
      expect(yield* refusal(`resourceVersion=0&resourceVersionMatch=Exact`)).toEqual(
        listOptionsInvalid(forbidden(`resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
      )
      // A list at a version is fine with either match.
      const list = yield* call(url, `${ING}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)
      expect([list.status, list.body.kind]).toEqual([200, "IngressList"])
    }))
})
