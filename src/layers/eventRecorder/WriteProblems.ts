/**
 * What a failed Event write tells a person: the failure in words about Events, the
 * kind it counts as, and the teller that says each kind once, to the caller's
 * channel when it still listens, else as a log line.
 */
import { Effect } from "effect"
import type { Occurrence } from "../../domain/KubeEvents.js"
import type { EventProblemSink } from "../../services/EventRecorder.js"
import type { KubeError } from "../../services/KubeError.js"

/** A write that got no answer in time, as its own kind of failure. */
export interface TimedOut {
  readonly _tag: "TimedOut"
  readonly message: string
}

/** Why one write did not happen: the client's error, or our own time limit. */
export type WriteFailure = KubeError | TimedOut

/**
 * What went wrong, in words about Events: what to grant, or that they are not served.
 * A KubeError's own reason is worded for routing calls and would give routing advice.
 */
export const failureText = (failure: WriteFailure, namespace: string): string => {
  switch (failure._tag) {
    case "Forbidden":
      return `the API server forbids it (${
        failure.status?.message ?? "403"
      }): grant create and patch on events in both groups (events.k8s.io and core) in namespace ${namespace}`
    case "NotServed":
      return "the API server serves neither events.k8s.io/v1 nor core/v1 Events"
    case "TimedOut":
      return failure.message
    default:
      return failure.reason
  }
}

/**
 * The kinds of problem told apart: what to grant, what is not served, and the rest,
 * which all mean the API did not take the write now. A hung write may end as our
 * time limit or as the client's own: one problem, said once.
 */
export const problemKind = (failure: WriteFailure): string =>
  failure._tag === "Forbidden" || failure._tag === "NotServed" ? failure._tag : "NoWrite"

/** Says one problem of `kind` about `occurrence`, unless that kind was already said. */
export type Tell = (
  kind: string,
  occurrence: Occurrence,
  text: string,
  sink: EventProblemSink | undefined
) => Effect.Effect<void>

/**
 * A teller that says a problem once per kind for the whole recorder: to the caller's
 * channel when it still listens, else as a log line, so it is neither lost nor repeated.
 */
export const makeTell = (): Tell => {
  const told = new Set<string>()
  return (kind, occurrence, text, sink) =>
    Effect.gen(function*() {
      if (told.has(kind)) return
      told.add(kind)
      const target = `pod ${occurrence.regarding.namespace ?? ""}/${occurrence.regarding.name ?? ""}`
      const line = `could not record Event ${occurrence.reason} on ${target}: ${text}; routing goes on without Events`
      const heard = sink === undefined ? false : yield* sink(line)
      if (!heard) yield* Effect.logWarning(line)
    })
}
