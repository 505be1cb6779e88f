/**
 * The Kubernetes Events session-routing records on a session Pod, as pure values: the
 * reasons, the object an occurrence becomes in either Events API, and the merge patch
 * that counts a repeat instead of creating another object (client-go's recorder does
 * the same, so `kubectl events` shows one line per reason with its count).
 */
import type { CoreEvent, EventV1, ObjectReference } from "./Objects.js"

/**
 * The reasons we record, and their types: a Warning is something a person should look at.
 *
 * @since 0.1.0
 * @category constructors
 */
export const EventReason = {
  RoutesPublished: "RoutesPublished",
  RouteProgrammed: "RouteProgrammed",
  RouteUnprogrammed: "RouteUnprogrammed",
  RouteStatusUnreadable: "RouteStatusUnreadable"
} as const
/**
 * The reason of an Event session routing records.
 *
 * @since 0.1.0
 * @category models
 */
export type EventReason = (typeof EventReason)[keyof typeof EventReason]

export type EventType = "Normal" | "Warning"

/** Who records: `reportingController` / `source.component`. */
export const REPORTING_CONTROLLER = "session-routing"

/** The API allows at most 1 KiB in a note; longer ones are refused, so they are cut. */
export const MAX_NOTE_LENGTH = 1024

/** One thing that happened to an object, before it is an Event. */
export interface Occurrence {
  readonly regarding: ObjectReference
  readonly type: EventType
  readonly reason: EventReason
  /** What a person reads; cut to `MAX_NOTE_LENGTH`. */
  readonly note: string
  /** What we did or saw, in CamelCase (`Publish`, `WatchRoute`). */
  readonly action: string
}

/** The session Pod as Events name it. */
export const podReference = (namespace: string, name: string, uid: string): ObjectReference => ({
  apiVersion: "v1",
  kind: "Pod",
  namespace,
  name,
  uid
})

/**
 * Repeats are counted per object and reason, whatever the note says: a session with
 * five hosts shows one `RouteProgrammed` line, seen five times, with the last host's note.
 */
export const occurrenceKey = (occurrence: Occurrence): string => `${objectKey(occurrence)}/${occurrence.reason}`

/** `<object>.<hex of a nanosecond instant>`, client-go's naming, unique per recorder. */
export const eventName = (objectName: string, nanos: bigint): string => `${objectName}.${nanos.toString(16)}`

const twoDigits = (n: number): string => String(n).padStart(2, "0")

/** RFC 3339 with seconds, as `metav1.Time` is written. */
export const formatTime = (millis: number): string =>
  new Date(Math.floor(millis / 1000) * 1000).toISOString().replace(".000Z", "Z")

/**
 * RFC 3339 with exactly six fractional digits, as `metav1.MicroTime` is parsed: the
 * API server refuses an `eventTime` with three (what `Date.toISOString` writes).
 */
export const formatMicroTime = (nanos: bigint): string => {
  const millis = Number(nanos / 1_000_000n)
  const micros = Number((nanos / 1000n) % 1_000_000n)
  const d = new Date(millis)
  return `${d.getUTCFullYear()}-${twoDigits(d.getUTCMonth() + 1)}-${twoDigits(d.getUTCDate())}T${
    twoDigits(d.getUTCHours())
  }:${twoDigits(d.getUTCMinutes())}:${twoDigits(d.getUTCSeconds())}.${String(micros).padStart(6, "0")}Z`
}

const cut = (
  note: string
): string => (note.length <= MAX_NOTE_LENGTH ? note : `${note.slice(0, MAX_NOTE_LENGTH - 3)}...`)

/** Where and when an Event is written. */
export interface EventStamp {
  readonly name: string
  /** The recorder's identity (`reportingInstance`), e.g. `session-routing-<host>`. */
  readonly instance: string
  readonly nanos: bigint
}

/**
 * A first occurrence as an `events.k8s.io/v1` Event; `count` above 1 when repeats
 * were folded in before it was written, which the API keeps as a series.
 */
export const newEventV1 = (occurrence: Occurrence, stamp: EventStamp, count = 1): EventV1 => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name: stamp.name, namespace: occurrence.regarding.namespace ?? "" },
  eventTime: formatMicroTime(stamp.nanos),
  reportingController: REPORTING_CONTROLLER,
  reportingInstance: stamp.instance,
  action: occurrence.action,
  reason: occurrence.reason,
  regarding: occurrence.regarding,
  note: cut(occurrence.note),
  type: occurrence.type,
  ...(count > 1 ? { series: { count, lastObservedTime: formatMicroTime(stamp.nanos) } } : {})
})

/** A first occurrence as a `core/v1` Event, for servers that do not serve events.k8s.io; `count` as above. */
export const newCoreEvent = (occurrence: Occurrence, stamp: EventStamp, count = 1): CoreEvent => {
  const now = formatTime(Number(stamp.nanos / 1_000_000n))
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: stamp.name, namespace: occurrence.regarding.namespace ?? "" },
    involvedObject: occurrence.regarding,
    reason: occurrence.reason,
    message: cut(occurrence.note),
    source: { component: REPORTING_CONTROLLER },
    firstTimestamp: now,
    lastTimestamp: now,
    count,
    type: occurrence.type,
    reportingComponent: REPORTING_CONTROLLER,
    reportingInstance: stamp.instance,
    action: occurrence.action
  }
}

/**
 * The merge patch that records the `count`-th occurrence on an existing Event:
 * `series` in events.k8s.io/v1 (client-go starts it at 2, the first repeat), and
 * nothing else: the API server refuses a change to any other field of such an Event
 * (`field is immutable`), so its note stays the first occurrence's, as client-go's
 * recorder leaves it; `count`, `lastTimestamp` and the latest note as the message in
 * core/v1, which allows them.
 */
export const repeatPatch = (
  api: "events.k8s.io/v1" | "v1",
  occurrence: Occurrence,
  count: number,
  nanos: bigint
): Record<string, unknown> =>
  api === "events.k8s.io/v1"
    ? { series: { count, lastObservedTime: formatMicroTime(nanos) } }
    : { count, lastTimestamp: formatTime(Number(nanos / 1_000_000n)), message: cut(occurrence.note) }

/** The object an occurrence is about, as the spam filter keys its budget. */
export const objectKey = (occurrence: Occurrence): string =>
  `${occurrence.regarding.namespace ?? ""}/${occurrence.regarding.name ?? ""}/${occurrence.regarding.uid ?? ""}`

/**
 * client-go's spam filter: each object may have 25 Events at once, then one every five
 * minutes, so a route that flaps cannot flood the namespace's Events.
 */
export const SPAM_BURST = 25
export const SPAM_REFILL_MS = 5 * 60_000

/** An object's remaining Event budget, as of `at` (epoch ms). */
export interface SpamBudget {
  readonly tokens: number
  readonly at: number
}

/**
 * The budget after one more Event at `now`, refilled for the time since the last one;
 * `undefined` when the budget has no whole token left (the Event is filtered out).
 */
export const spendBudget = (budget: SpamBudget | undefined, now: number): SpamBudget | undefined => {
  const tokens = budget === undefined
    ? SPAM_BURST
    : Math.min(SPAM_BURST, budget.tokens + Math.max(0, now - budget.at) / SPAM_REFILL_MS)
  return tokens >= 1 ? { tokens: tokens - 1, at: now } : undefined
}
