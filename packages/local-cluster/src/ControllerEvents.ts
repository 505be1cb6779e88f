/**
 * Events as LocalCluster's simulated controllers record them, the way client-go's
 * event recorder does for real ones: a core/v1 Event about the object, named
 * `<object>.<hex time>`, and a repeat of the same report counted on that Event
 * (count and lastTimestamp) instead of written again. Recording never fails a reconcile.
 */
import { Clock, Effect, Ref } from "effect"
import { apiVersionOf, type CoreEvent, type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { kubeTime } from "./GatewayStatus.js"
import { EventResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** One report about an object. */
export interface ControllerEvent {
  readonly resource: ResourceType<KubeObject>
  readonly object: KubeObject
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly message: string
}

/** Records a controller's Events under its component name. */
export interface EventRecorder {
  readonly record: (event: ControllerEvent) => Effect.Effect<void>
}

/** A recorder writing through `store` as `component` (the Event's `source.component` and reporting controller). */
export const makeRecorder = (store: ClusterStore, component: string): Effect.Effect<EventRecorder> =>
  Effect.gen(function*() {
    // What was reported, by its identity, to the Event that holds it: client-go's correlator, without its rate limit.
    const seen = yield* Ref.make(new Map<string, string>())
    // Names are unique per recorder even for two reports in the same millisecond.
    const sequence = yield* Ref.make(0)

    const record = (event: ControllerEvent): Effect.Effect<void> =>
      Effect.gen(function*() {
        const meta = event.object.metadata ?? {}
        const namespace = meta.namespace ?? "default"
        const millis = yield* Clock.currentTimeMillis
        const now = kubeTime(millis)
        const key = JSON.stringify([meta.uid, event.type, event.reason, event.message])
        const existing = (yield* Ref.get(seen)).get(key)
        if (existing !== undefined) {
          const repeated = yield* Effect.either(store.get(EventResource, namespace, existing))
          if (repeated._tag === "Right") {
            const previous = repeated.right
            yield* store.replace(EventResource, namespace, existing, {
              ...previous,
              count: (previous.count ?? 1) + 1,
              lastTimestamp: now
            })
            return
          }
        }
        const n = yield* Ref.getAndUpdate(sequence, (i) => (i + 1) % 1_000_000)
        const name = `${meta.name ?? ""}.${(BigInt(millis) * 1_000_000n + BigInt(n)).toString(16)}`
        const body: CoreEvent = {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name, namespace },
          involvedObject: {
            kind: event.resource.kind,
            namespace,
            name: meta.name ?? "",
            uid: meta.uid ?? "",
            apiVersion: apiVersionOf(event.resource),
            resourceVersion: meta.resourceVersion ?? ""
          },
          reason: event.reason,
          message: event.message,
          source: { component },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          type: event.type,
          reportingComponent: component,
          reportingInstance: ""
        }
        yield* store.create(EventResource, namespace, body, { fieldManager: component })
        yield* Ref.update(seen, (m) => new Map(m).set(key, name))
      }).pipe(
        Effect.catchAll((status) =>
          Effect.logDebug(`${component}: could not record ${event.reason}: ${status.message ?? status.code}`)
        )
      )

    return { record }
  })
