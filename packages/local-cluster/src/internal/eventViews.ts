/**
 * The two APIs of one Event. The server stores an Event once, in its core/v1 form,
 * and serves events.k8s.io/v1 as a conversion of it: `note` is `message`,
 * `regarding` is `involvedObject`, `reportingController` is `reportingComponent`,
 * and the core counters and timestamps come back as `deprecated*` fields.
 */
import type { KubeObject } from "session-routing/kubernetes"
import { EVENT_V1_RENAMES, eventDescription } from "./workloadDescriptions.js"

type Json = Record<string, unknown>

// Both follow the type's one description: the fields it renames, and the others named alike.
const RENAMED = EVENT_V1_RENAMES
const SHARED = [
  "metadata",
  ...Object.keys(eventDescription.fields).filter((name) => !RENAMED.some(([core]) => core === name))
]

const convert = (object: Json, pairs: ReadonlyArray<readonly [string, string]>, apiVersion: string): Json => {
  const out: Json = { apiVersion, kind: "Event" }
  for (const key of SHARED) if (object[key] !== undefined) out[key] = object[key]
  for (const [from, to] of pairs) if (object[from] !== undefined) out[to] = object[from]
  return out
}

/** The events.k8s.io/v1 form of a stored (core/v1) Event. `eventTime` is always there, null when unset. */
export const toEventV1 = (core: KubeObject): KubeObject => {
  const out = convert(core as unknown as Json, RENAMED, "events.k8s.io/v1")
  if (out.eventTime === undefined) out.eventTime = null
  return out as KubeObject
}

/** The core/v1 form of an events.k8s.io/v1 Event (or of part of one: an apply configuration, a patch). */
export const toCoreEvent = (v1: KubeObject): KubeObject => {
  const json = v1 as unknown as Json
  const out = convert(json, RENAMED.map(([core, newer]) => [newer, core] as const), "v1")
  // What the client sent as identity (apiVersion and kind) was checked by the view; the store sees core/v1.
  if (json.eventTime === null) delete out.eventTime
  return out as KubeObject
}
