import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { Fault } from "../../src/cluster/Faults.js"
import { type ClusterHandle, LocalCluster } from "../../src/cluster/LocalCluster.js"
import { EventReason, type Occurrence, podReference } from "../../src/domain/KubeEvents.js"
import type { CoreEvent, EventV1, Namespace } from "../../src/domain/Objects.js"
import { EventResource, EventV1Resource, NamespaceResource } from "../../src/domain/Resources.js"
import * as EventRecorderLive from "../../src/layers/EventRecorderLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { EventRecorder } from "../../src/services/EventRecorder.js"

const NS = "telo-sessions"

const occurrence = (reason: Occurrence["reason"], note: string): Occurrence => ({
  regarding: podReference(NS, "telo-run-s1", "uid-1"),
  type: reason === EventReason.RouteUnprogrammed || reason === EventReason.RouteStatusUnreadable ? "Warning" : "Normal",
  reason,
  note,
  action: "WatchRoute"
})

/** A recorder named `instance` over `cluster`'s in-memory client. */
const recorderOn = (cluster: ClusterHandle, instance: string, config: RouterConfigLive.RouterConfigValues = {}) =>
  EventRecorderLive.make({ instance }).pipe(
    Effect.provide(
      Layer.merge(
        LocalCluster.layerKubeClient(cluster),
        Layer.orDie(RouterConfigLive.layerFrom({ sessionNamespace: NS, ...config }))
      )
    )
  )

/** An in-memory cluster with the session namespace, and a recorder over it. */
const setUp = (config: RouterConfigLive.RouterConfigValues = {}) =>
  Effect.gen(function*() {
    const cluster = yield* LocalCluster.makeInMemory()
    yield* Effect.orDie(cluster.store.create(NamespaceResource, undefined, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS }
    } as Namespace))
    const recorder = yield* recorderOn(cluster, "test", config)
    const coreEvents = Effect.map(Effect.orDie(cluster.store.list(EventResource, NS)), (list) =>
      list.items as ReadonlyArray<CoreEvent>)
    const v1Events = Effect.map(Effect.orDie(cluster.store.list(EventV1Resource, NS)), (list) =>
      list.items as ReadonlyArray<EventV1>)
    return { cluster, recorder, coreEvents, v1Events }
  })

describe("EventRecorderLive", () => {
  it.scoped("creates one events.k8s.io Event per reason and counts repeats in its series", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp()
      expect(
        yield* recorder.record(occurrence(EventReason.RouteProgrammed, "8080-s1.example.com (port 8080) is programmed"))
      )
        .toEqual(Option.none())
      yield* TestClock.adjust(Duration.seconds(1))
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "9090-s1.example.com (port 9090) is programmed"))
      yield* recorder.record(
        occurrence(EventReason.RouteUnprogrammed, "5000-s1.example.com (port 5000) is not programmed: x")
      )
      const events = yield* v1Events
      expect(
        events.map((e) => ({
          reason: e.reason,
          type: e.type,
          note: e.note,
          series: e.series?.count,
          regarding: e.regarding?.name
        }))
      )
        .toEqual(expect.arrayContaining([
          {
            reason: "RouteProgrammed",
            type: "Normal",
            note: "9090-s1.example.com (port 9090) is programmed",
            series: 2,
            regarding: "telo-run-s1"
          },
          {
            reason: "RouteUnprogrammed",
            type: "Warning",
            note: "5000-s1.example.com (port 5000) is not programmed: x",
            series: undefined,
            regarding: "telo-run-s1"
          }
        ]))
      expect(events).toHaveLength(2)
      expect(events[0]?.eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    }))

  it.scoped("falls back to core/v1 Events when events.k8s.io is not served, with a count", () =>
    Effect.gen(function*() {
      const { cluster, recorder, coreEvents } = yield* setUp()
      yield* cluster.store.setServed(EventV1Resource as never, false)
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "published 1 host"))
      yield* recorder.record(occurrence(EventReason.RoutesPublished, "published 2 hosts"))
      const events = yield* coreEvents
      expect(events.map((e) => ({
        reason: e.reason,
        message: e.message,
        count: e.count,
        component: e.source?.component,
        involved: e.involvedObject.name
      }))).toEqual([
        {
          reason: "RoutesPublished",
          message: "published 2 hosts",
          count: 2,
          component: "session-routing",
          involved: "telo-run-s1"
        }
      ])
    }))

  it.scoped("reports a missing create permission once and never fails the caller", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp()
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.forbid() })
      const first = yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"))
      const second = yield* recorder.record(occurrence(EventReason.RouteProgrammed, "b"))
      expect(Option.getOrThrow(first)).toMatch(
        /^could not record Event RouteProgrammed on pod telo-sessions\/telo-run-s1: .*forbidden.*: grant create and patch on events \(events\.k8s\.io and core\) in namespace telo-sessions; routing goes on without Events$/
      )
      expect(second).toEqual(Option.none())
    }))

  it.scoped("gives up on a write at the API time limit", () =>
    Effect.gen(function*() {
      const { cluster, recorder } = yield* setUp({ apiTimeoutMs: 3000 })
      yield* cluster.faults.add({ verbs: ["create"], resource: EventV1Resource, action: Fault.hang })
      const fiber = yield* Effect.fork(recorder.record(occurrence(EventReason.RouteProgrammed, "a")))
      yield* TestClock.adjust(Duration.seconds(3))
      expect(yield* Fiber.join(fiber)).toEqual(
        Option.some(
          "could not record Event RouteProgrammed on pod telo-sessions/telo-run-s1: creating an Event got no answer within 3000 ms; routing goes on without Events"
        )
      )
    }))

  it.scoped("records nothing with SESSION_ROUTING_EVENTS=false", () =>
    Effect.gen(function*() {
      const { recorder, v1Events } = yield* setUp({ events: false })
      yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"))
      expect(yield* v1Events).toEqual([])
    }))

  it.effect("provides the Tag through its layers", () =>
    Effect.gen(function*() {
      const recorder = yield* EventRecorder
      expect(yield* recorder.record(occurrence(EventReason.RouteProgrammed, "a"))).toEqual(Option.none())
    }).pipe(Effect.provide(EventRecorderLive.layerNone)))
})

describe("EventRecorderLive beside another recorder", () => {
  it.scoped("takes the next name when another recorder took one at the same instant", () =>
    Effect.gen(function*() {
      const { cluster, recorder, v1Events } = yield* setUp()
      const other = yield* recorderOn(cluster, "other")
      yield* other.record(occurrence(EventReason.RoutesPublished, "from the other runner"))
      expect(yield* recorder.record(occurrence(EventReason.RoutesPublished, "from this one"))).toEqual(Option.none())
      expect((yield* v1Events).map((e) => e.note).sort()).toEqual(["from the other runner", "from this one"])
    }))
})
