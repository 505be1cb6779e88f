/**
 * Records Kubernetes Events on the session Pod, the way client-go's broadcaster and
 * correlator do: off the caller's path (a bounded queue, written in the background),
 * similar occurrences folded into one Event's count, and a spam budget per object.
 * Recording never fails and never waits on the API.
 */
import { Context, Effect } from "effect"
import type { Occurrence } from "../domain/KubeEvents.js"

/**
 * Where the recorder tells of a problem with an occurrence: the first write of each
 * kind of failure that could not be made (a missing permission, Events not served, a
 * full queue). It answers whether anyone heard: the caller's channel may have closed
 * (a session that ended), and then the next occurrence's caller is told instead.
 */
export type EventProblemSink = (problem: string) => Effect.Effect<boolean>

/**
 * The recorder's interface.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace EventRecorder {
  export interface Service {
    /**
     * Queues `occurrence` and returns at once, whatever the API does: the write (a new
     * Event, or a counted repeat) happens in the background, bounded by the API time
     * limit. A problem the recorder has not yet told anyone of goes to `problems`.
     */
    readonly record: (occurrence: Occurrence, problems?: EventProblemSink) => Effect.Effect<void>
    /** Waits until every occurrence queued so far has been written or given up on. */
    readonly flush: Effect.Effect<void>
  }
}

/**
 * Records Kubernetes Events on a session's Pod.
 *
 * @since 0.1.0
 * @category services
 */
export class EventRecorder
  extends Context.Tag("session-routing/EventRecorder")<EventRecorder, EventRecorder.Service>()
{}

/** Records nothing: Events turned off, or a client that cannot write them. */
export const noEvents: EventRecorder.Service = { record: () => Effect.void, flush: Effect.void }
