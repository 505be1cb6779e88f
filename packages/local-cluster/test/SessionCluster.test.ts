/**
 * SessionCluster's `endpointSlices`: the EndpointSlice controller without the garbage
 * collector, as `session-routing cluster` runs it, so a session Pod with a workload takes
 * its Service's traffic while objects owned by a Pod that does not exist stay.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import type { EndpointSlice, Service } from "session-routing/kubernetes"
import { EndpointSliceResource, ServiceResource } from "../src/ServedResources.js"
import * as SessionCluster from "../src/SessionCluster.js"
import { createSessionPod } from "../src/SessionPods.js"

/** A session Service selecting `telo.run/session-id=<session>`, owned by a Pod of `uid`. */
const sessionService = (session: string, uid: string): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: {
    name: `telo-run-${session}`,
    ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: `telo-run-${session}`, uid }]
  },
  spec: {
    selector: { "telo.run/session-id": session },
    ports: [{ name: "p8080", port: 8080, targetPort: 8080, protocol: "TCP" }]
  }
})

describe("SessionCluster with endpointSlices", () => {
  it.scopedLive("lists a session Pod in its Service's EndpointSlice, and collects nothing", () =>
    Effect.gen(function*() {
      const sc = yield* SessionCluster.make({ endpointSlices: true })
      const store = sc.cluster.store
      const pod = yield* createSessionPod(store, { namespace: sc.namespace, sessionId: "s1", ports: [8080] })
      // Its workload's address (the stand-in kubelet gives the Pod an IP and makes it Ready).
      yield* sc.dataPlane!.registerPod(pod, { host: "127.0.0.1", port: 1 })
      yield* store.create(ServiceResource, sc.namespace, sessionService("s1", pod.uid))
      // Owned by a uid no Pod has: a garbage collector would delete it at once.
      yield* store.create(ServiceResource, sc.namespace, sessionService("orphan", "no-such-uid"))

      const slice = yield* store.list(EndpointSliceResource, sc.namespace, {
        labelSelector: "kubernetes.io/service-name=telo-run-s1"
      }).pipe(
        Effect.map((list) => list.items[0]),
        Effect.filterOrFail(
          (s): s is EndpointSlice => s !== undefined && (s.endpoints ?? []).length > 0,
          () => "no endpoint yet"
        ),
        Effect.retry({ schedule: Schedule.spaced(Duration.millis(20)), times: 100 })
      )
      expect(slice.endpoints?.map((e) => [e.targetRef?.name, e.conditions?.ready])).toEqual([["telo-run-s1", true]])

      yield* Effect.sleep(Duration.millis(300))
      expect((yield* store.get(ServiceResource, sc.namespace, "telo-run-orphan")).metadata?.name).toBe(
        "telo-run-orphan"
      )
    }))
})
