/**
 * The simulated controllers' event recorder on TestClock: an Event about the object,
 * as client-go's recorder writes one, and a repeat counted on the same Event.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { makeRecorder } from "../src/ControllerEvents.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { EventResource, EventV1Resource, IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"

describe("ControllerEvents", () => {
  it.effect("writes a core/v1 Event about the object and counts a repeat on it, readable through both APIs", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      const object = yield* store.create(IngressResource, NS, ingress("web"))
      const recorder = yield* makeRecorder(store, "nginx-ingress-controller")
      const sync = {
        resource: IngressResource,
        object,
        type: "Normal",
        reason: "Sync",
        message: "Scheduled for sync"
      } as const
      yield* TestClock.adjust("5 seconds")
      yield* recorder.record(sync)
      yield* TestClock.adjust("1 minute")
      yield* recorder.record(sync)

      const [event, ...others] = (yield* store.list(EventResource, NS)).items
      expect(others).toEqual([])
      expect(event).toMatchObject({
        metadata: { name: expect.stringMatching(/^web\.[0-9a-f]+$/), namespace: NS },
        involvedObject: {
          kind: "Ingress",
          apiVersion: "networking.k8s.io/v1",
          name: "web",
          namespace: NS,
          uid: object.metadata?.uid
        },
        reason: "Sync",
        message: "Scheduled for sync",
        source: { component: "nginx-ingress-controller" },
        type: "Normal",
        count: 2,
        firstTimestamp: "1970-01-01T00:00:05Z",
        lastTimestamp: "1970-01-01T00:01:05Z"
      })
      const newer = yield* store.get(EventV1Resource, NS, event!.metadata!.name!)
      expect([newer.note, newer.deprecatedCount, newer.regarding?.name]).toEqual(["Scheduled for sync", 2, "web"])
    }))
})
