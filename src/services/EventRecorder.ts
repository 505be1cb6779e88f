/**
 * Records Kubernetes Events on the session Pod, the way client-go's event recorder
 * does: one Event per object and reason, counted on repeats. Recording is a side
 * channel: it never fails the caller, and what it could not write comes back once
 * per kind of failure, for the caller to show.
 */
import { Context, Effect, Option } from "effect"
import type { Occurrence } from "../domain/KubeEvents.js"

export declare namespace EventRecorder {
  export interface Service {
    /**
     * Writes `occurrence` as a new Event or a counted repeat, bounded by the API time
     * limit. Never fails: a write that could not be made returns what went wrong the
     * first time that kind of failure happens (a missing `create` permission on events,
     * an API that serves no Events), and nothing after.
     */
    readonly record: (occurrence: Occurrence) => Effect.Effect<Option.Option<string>>
  }
}

export class EventRecorder
  extends Context.Tag("session-routing/EventRecorder")<EventRecorder, EventRecorder.Service>()
{}

/** Records nothing: Events turned off, or a client that cannot write them. */
export const noEvents: EventRecorder.Service = { record: () => Effect.succeed(Option.none()) }
