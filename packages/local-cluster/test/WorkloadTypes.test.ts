/**
 * Pods, Events and EndpointSlices in the store, on TestClock: what create fills in
 * and refuses, the status subresource, the field selectors each type supports, and
 * the two Event APIs as two views of the same stored objects.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { type CoreEvent, type EndpointSlice, type EventV1, type KubeObject, type Pod } from "session-routing/kubernetes"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { EndpointSliceResource, EventResource, EventV1Resource, PodResource } from "../src/ServedResources.js"
import { coreEvent, NS, pod } from "./ClusterFixtures.js"

const fresh = makeMemoryStore({ namespaces: [NS] })
const names = (items: ReadonlyArray<KubeObject>) => items.map((o) => o.metadata?.name)

const eventV1 = (name: string, overrides: Partial<EventV1> = {}): EventV1 => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2024-01-01T00:00:00.000000Z",
  reportingController: "example.com/kubelet",
  reportingInstance: "node-1",
  action: "Starting",
  reason: "Started",
  regarding: { apiVersion: "v1", kind: "Pod", namespace: NS, name: "web" },
  note: "Started container main",
  type: "Normal",
  ...overrides
})

describe("Pods", () => {
  it.effect("fills in the server's defaults and starts Pending, dropping a status sent on create", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(PodResource, NS, {
        ...pod("web", { ports: [{ name: "http", containerPort: 8080 }] }),
        status: { phase: "Running" }
      })
      const json = created as unknown as { spec: Record<string, unknown>; status: Record<string, unknown> }
      expect(json.spec).toMatchObject({
        restartPolicy: "Always",
        dnsPolicy: "ClusterFirst",
        schedulerName: "default-scheduler",
        serviceAccountName: "default",
        terminationGracePeriodSeconds: 30,
        containers: [{
          name: "main",
          imagePullPolicy: "IfNotPresent",
          terminationMessagePath: "/dev/termination-log",
          ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }]
        }]
      })
      expect(json.status).toEqual({ phase: "Pending", qosClass: "BestEffort" })
      expect(created.metadata?.generation).toBeUndefined()
    }))

  it.effect("refuses a Pod without containers, a container without an image, and a bad port, as the server words it", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const empty = yield* Effect.flip(store.create(PodResource, NS, { ...pod("a"), spec: { containers: [] } }))
      expect([empty.code, empty.message]).toEqual([422, `Pod "a" is invalid: spec.containers: Required value`])
      const bad = yield* Effect.flip(store.create(PodResource, NS, {
        ...pod("b"),
        spec: { containers: [{ name: "main", ports: [{ name: "http", containerPort: 70000 }] }] }
      } as Pod))
      expect(bad.details?.causes?.map((c) => c.field)).toEqual([
        "spec.containers[0].image",
        "spec.containers[0].ports[0].containerPort"
      ])
      expect(bad.message).toContain("Invalid value: 70000: must be between 1 and 65535, inclusive")
    }))

  it.effect("refuses a readiness gate whose condition type is not a qualified name", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const gated = (conditionType: string): Pod => ({
        ...pod("a"),
        spec: { ...pod("a").spec!, readinessGates: [{ conditionType }] }
      })
      yield* store.create(PodResource, NS, gated("session-routing.dev/RoutesProgrammed"))
      const bad = yield* Effect.flip(
        store.create(PodResource, NS, { ...gated("routes programmed"), metadata: { name: "b" } })
      )
      expect(bad.details?.causes?.map((c) => [c.field, c.message])).toEqual([[
        "spec.readinessGates[0].conditionType",
        expect.stringMatching(/^Invalid value: "routes programmed": name part must consist of alphanumeric characters/)
      ]])
    }))

  it.effect("changes status only through the status subresource", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(PodResource, NS, pod("web"))
      const ready = {
        phase: "Running" as const,
        conditions: [{ type: "Ready", status: "True" as const }],
        podIP: "10.0.0.7"
      }
      const replaced = yield* store.replace(PodResource, NS, "web", { ...created, status: ready })
      expect(replaced.object.status?.phase).toBe("Pending")
      const written = yield* store.replaceStatus(PodResource, NS, "web", { ...created, status: ready })
      expect(written.status).toMatchObject(ready)
    }))

  it.effect("lets an update change a container's image but nothing else of the spec", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(PodResource, NS, pod("web"))
      const spec = created.spec!
      const image = yield* store.replace(PodResource, NS, "web", {
        ...created,
        spec: { ...spec, containers: [{ ...spec.containers[0]!, image: "registry.example/app:2.0" }] }
      })
      expect(image.object.spec?.containers[0]?.image).toBe("registry.example/app:2.0")
      const refused = yield* Effect.flip(
        store.replace(PodResource, NS, "web", {
          ...image.object,
          spec: { ...image.object.spec!, restartPolicy: "Never" }
        })
      )
      expect([refused.code, refused.details?.causes?.[0]?.field]).toEqual([422, "spec"])
      expect(refused.message).toContain("pod updates may not change fields other than `spec.containers[*].image`")
    }))

  it.effect("applies a Pod server-side, merging containers by name, and answers its delete with the Pod", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const first = yield* store.apply(PodResource, NS, "web", pod("web"), { fieldManager: "runner" })
      expect(first.created).toBe(true)
      const again = yield* store.apply(PodResource, NS, "web", {
        ...pod("web"),
        spec: { containers: [{ name: "main", image: "registry.example/app:2.0" }] }
      }, { fieldManager: "runner" })
      expect([again.created, again.object.spec?.containers.map((c) => [c.name, c.image])]).toEqual([
        false,
        [["main", "registry.example/app:2.0"]]
      ])
      const deleted = yield* store.delete(PodResource, NS, "web")
      expect("object" in deleted && deleted.object.metadata?.uid).toBe(first.object.metadata?.uid)
    }))

  it.effect("selects Pods by status.phase and spec.nodeName, and refuses other fields as a built-in type does", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const a = yield* store.create(PodResource, NS, pod("a"))
      yield* store.create(PodResource, NS, { ...pod("b"), spec: { ...pod("b").spec!, nodeName: "node-1" } })
      yield* store.replaceStatus(PodResource, NS, "a", { ...a, status: { phase: "Running" } })
      const running = yield* store.list(PodResource, NS, { fieldSelector: "status.phase=Running" })
      expect(names(running.items)).toEqual(["a"])
      const onNode = yield* store.list(PodResource, NS, { fieldSelector: "spec.nodeName=node-1,metadata.name!=a" })
      expect(names(onNode.items)).toEqual(["b"])
      const refused = yield* Effect.flip(store.list(PodResource, NS, { fieldSelector: "spec.host=x" }))
      expect([refused.code, refused.message]).toEqual([400, "field label not supported: spec.host"])
    }))
})

describe("Events", () => {
  it.effect("serves one stored Event through both APIs, with the same uid and resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(
        EventResource,
        NS,
        coreEvent("web.1", { kind: "Pod", name: "web", uid: "u-1" })
      )
      const seen = yield* store.get(EventV1Resource, NS, "web.1")
      expect(seen).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { uid: created.metadata?.uid, resourceVersion: created.metadata?.resourceVersion },
        eventTime: null,
        regarding: { kind: "Pod", name: "web", uid: "u-1", namespace: NS },
        note: "Scheduled for sync",
        reason: "Sync",
        deprecatedSource: { component: "test-controller" },
        deprecatedCount: 1,
        deprecatedFirstTimestamp: "2024-01-01T00:00:00Z"
      })

      const newer = yield* store.create(EventV1Resource, NS, eventV1("web.2"))
      const asCore = yield* store.get(EventResource, NS, "web.2")
      expect(asCore).toMatchObject({
        apiVersion: "v1",
        involvedObject: { kind: "Pod", name: "web" },
        message: "Started container main",
        reportingComponent: "example.com/kubelet",
        eventTime: "2024-01-01T00:00:00.000000Z"
      })
      expect(asCore.metadata?.uid).toBe(newer.metadata?.uid)
      const listed = yield* store.list(EventV1Resource, NS)
      expect([listed.kind, listed.apiVersion, names(listed.items)]).toEqual(["EventList", "events.k8s.io/v1", [
        "web.1",
        "web.2"
      ]])
    }))

  it.effect("applies an events.k8s.io Event server-side and patches it through core/v1", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const applied = yield* store.apply(EventV1Resource, NS, "web.3", eventV1("web.3"), { fieldManager: "kubelet" })
      expect([applied.created, applied.object.note, applied.object.apiVersion]).toEqual([
        true,
        "Started container main",
        "events.k8s.io/v1"
      ])
      const core = yield* store.get(EventResource, NS, "web.3")
      const updated = yield* store.replace(EventResource, NS, "web.3", {
        ...core,
        series: { count: 2, lastObservedTime: "2024-01-01T00:01:00.000000Z" }
      })
      const seen = yield* store.get(EventV1Resource, NS, "web.3")
      expect([seen.series, seen.metadata?.resourceVersion]).toEqual([
        { count: 2, lastObservedTime: "2024-01-01T00:01:00.000000Z" },
        updated.object.metadata?.resourceVersion
      ])
    }))

  it.effect("selects Events by the involved object, reason, type and source, in either API", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(EventResource, NS, coreEvent("a", { kind: "Pod", name: "web" }))
      yield* store.create(
        EventResource,
        NS,
        coreEvent("b", { kind: "Ingress", name: "web" }, { reason: "Failed", type: "Warning" })
      )
      yield* store.create(EventV1Resource, NS, eventV1("c"))
      const pick = (fieldSelector: string) =>
        Effect.all([
          store.list(EventResource, NS, { fieldSelector }),
          store.list(EventV1Resource, NS, { fieldSelector })
        ]).pipe(
          Effect.map(([core, newer]) => [names(core.items), names(newer.items)])
        )
      expect(yield* pick("involvedObject.kind=Pod,involvedObject.name=web")).toEqual([["a", "c"], ["a", "c"]])
      expect(yield* pick("type=Warning")).toEqual([["b"], ["b"]])
      expect(yield* pick("reason!=Sync")).toEqual([["b", "c"], ["b", "c"]])
      // `source` is the source component, or else the reporting controller.
      expect(yield* pick("source=example.com/kubelet")).toEqual([["c"], ["c"]])
    }))

  it.effect("watches the same changes through both APIs", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(EventResource, NS, coreEvent("a", { kind: "Pod", name: "web" }))
      const events = yield* store.watch(EventV1Resource, NS, { fieldSelector: "involvedObject.name=web" }).pipe(
        Stream.take(1),
        Stream.runCollect
      )
      expect(Chunk.toReadonlyArray(events).map((e) => [e.type, (e.object as EventV1).note, e.object.apiVersion]))
        .toEqual([
          ["ADDED", "Scheduled for sync", "events.k8s.io/v1"]
        ])
    }))

  it.effect("holds an events.k8s.io create to the newer API's rules, and a core one to the legacy rules", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const strict = yield* Effect.flip(store.create(EventV1Resource, NS, {
        ...eventV1("x"),
        eventTime: null,
        action: "",
        type: "Info",
        deprecatedCount: 3
      } as unknown as EventV1))
      expect(strict.code).toBe(422)
      // Named, as kube-apiserver names it, as the core Event it is stored as.
      expect(strict.message).toMatch(/^Event "x" is invalid: /)
      expect(strict.details?.causes?.map((c) => c.field)).toEqual(["eventTime", "type", "count"])
      // The core API accepts an Event with no eventTime, but not one about another namespace's object.
      const elsewhere = yield* Effect.flip(store.create(EventResource, NS, {
        ...coreEvent("y", { kind: "Pod", name: "web" }),
        involvedObject: { kind: "Pod", name: "web", namespace: "other" }
      } as CoreEvent))
      expect(elsewhere.message).toBe(
        `Event "y" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`
      )
      // A body of another kind is a decode error, before any validation.
      const wrongKind = yield* Effect.flip(
        store.create(EventV1Resource, NS, { ...eventV1("z"), kind: "Pod", eventTime: null })
      )
      expect([wrongKind.code, wrongKind.reason]).toEqual([400, "BadRequest"])
      const missing = yield* Effect.flip(store.get(EventV1Resource, NS, "nope"))
      expect(missing.message).toBe(`events.events.k8s.io "nope" not found`)
    }))
})

describe("EndpointSlices", () => {
  const slice = (overrides: Partial<EndpointSlice>): EndpointSlice => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-abc12", labels: { "kubernetes.io/service-name": "web" } },
    addressType: "IPv4",
    endpoints: [{ addresses: ["10.0.0.7"], conditions: { ready: true } }],
    ports: [{ name: "http", port: 8080 }],
    ...overrides
  })

  it.effect("defaults port protocols, counts generations, and refuses a bad address type or address", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(EndpointSliceResource, NS, slice({}))
      expect([created.metadata?.generation, created.ports]).toEqual([1, [{
        name: "http",
        port: 8080,
        protocol: "TCP"
      }]])
      const updated = yield* store.replace(EndpointSliceResource, NS, "web-abc12", { ...created, endpoints: [] })
      expect(updated.object.metadata?.generation).toBe(2)
      const noType = yield* Effect.flip(
        store.create(EndpointSliceResource, NS, slice({ metadata: { name: "a" }, addressType: "" as "IPv4" }))
      )
      expect(noType.message).toBe(`EndpointSlice.discovery.k8s.io "a" is invalid: addressType: Required value`)
      const v6 = yield* Effect.flip(
        store.create(
          EndpointSliceResource,
          NS,
          slice({ metadata: { name: "b" }, endpoints: [{ addresses: ["fd00::1"] }] })
        )
      )
      expect(v6.details?.causes?.map((c) => [c.field, c.message])).toEqual([
        ["endpoints[0].addresses[0]", `Invalid value: "fd00::1": must be a valid IPv4 address`]
      ])
    }))
})
