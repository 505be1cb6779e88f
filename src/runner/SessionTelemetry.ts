/**
 * The runner's account of a session: a span per host from publish to its verdict
 * (one event per state change), the hosts-by-state gauge, the time from publish to
 * programmed, publish durations and read errors. It reads the session's events as
 * the runner emits them, so route health itself stays free of it.
 */
import { Clock, Effect, Exit, type Scope, type Tracer } from "effect"
import { globalValue } from "effect/GlobalValue"
import type { PublishedRoute, RouteState, RoutingMode } from "../domain/Routes.js"
import {
  hosts,
  publishDuration,
  publishToProgrammed,
  readErrors,
  SpanAttribute,
  SpanName,
  unsafeModifySeries,
  unsafeUpdateSeries,
  updateSeries,
  whenTraced
} from "../services/Telemetry.js"
import type { SessionEvent } from "./SessionRunner.js"

/** Sees each of a session's events as it is emitted. */
export interface HostTracker {
  readonly observe: (event: SessionEvent) => Effect.Effect<void>
  /** Lets go of the hosts and ends the spans still open, as closing the scope does; later calls do nothing. */
  readonly release: Effect.Effect<void>
}

export interface TrackHostsInput {
  readonly mode: RoutingMode
  readonly sessionId: string
  /** Hosts already reported, with their state (following a settled session). */
  readonly known?: ReadonlyArray<{ readonly host: string; readonly state: RouteState }>
  /**
   * A span per host, from now to its first terminal state, and the time from
   * `publishedAt` (epoch ms, from `Clock`) to `programmed` in the histogram.
   */
  readonly publish?: { readonly routes: ReadonlyArray<PublishedRoute>; readonly publishedAt: number }
}

/**
 * Every host a tracker holds, by mode, session and host: its last reported state and
 * how many trackers hold it. A session's publish and the follow after it both hold its
 * hosts, and the gauge counts each host once however many trackers hold it.
 */
const held = globalValue(
  Symbol.for("session-routing/SessionTelemetry/held"),
  () => new Map<string, { state: RouteState; holders: number }>()
)

/** One tracker's own state: the hosts it holds, its open spans, and the clock it reads. */
interface Tracking {
  readonly input: TrackHostsInput
  /** Read once: every event is then accounted for in one synchronous step. */
  readonly clock: Clock.Clock
  /** Keys in `held` this tracker holds. */
  readonly mine: Set<string>
  readonly spans: Map<string, Tracer.Span>
  /** The published hosts that have had no verdict yet. */
  readonly awaiting: Set<string>
}

const keyOf = (t: Tracking, host: string) => `${t.input.mode}\u0000${t.input.sessionId}\u0000${host}`

const gauge = (mode: RoutingMode, state: RouteState, by: number) =>
  unsafeModifySeries(hosts, [["mode", mode], ["state", state]], by)

/** Holds `host` (once per tracker) and sets its state. */
const move = (t: Tracking, host: string, next: RouteState) => {
  const key = keyOf(t, host)
  const entry = held.get(key)
  const firstHold = !t.mine.has(key)
  t.mine.add(key)
  if (entry === undefined) {
    held.set(key, { state: next, holders: 1 })
    return gauge(t.input.mode, next, 1)
  }
  if (firstHold) entry.holders += 1
  if (entry.state === next) return
  gauge(t.input.mode, entry.state, -1)
  entry.state = next
  gauge(t.input.mode, next, 1)
}

/** Ends `host`'s span, if still open, with the host's last reported state. */
const end = (t: Tracking, host: string, exit: Exit.Exit<unknown, string>, now: bigint) => {
  const span = t.spans.get(host)
  if (span === undefined) return
  t.spans.delete(host)
  span.attribute(SpanAttribute.state, held.get(keyOf(t, host))?.state ?? "pending")
  span.end(now, exit)
}

/** Ends the spans still open and lets go of every host; a second call finds nothing left. */
const release = (t: Tracking) =>
  Effect.sync(() => {
    const now = t.clock.unsafeCurrentTimeNanos()
    for (const host of [...t.spans.keys()]) end(t, host, Exit.void, now)
    for (const key of t.mine) {
      const entry = held.get(key)
      if (entry === undefined || --entry.holders > 0) continue
      held.delete(key)
      gauge(t.input.mode, entry.state, -1)
    }
    t.mine.clear()
  })

/** A span per published host. Only when spans go somewhere: Effect's own tracer keeps them nowhere. */
const openSpans = (t: Tracking) =>
  whenTraced(() =>
    Effect.forEach(t.input.publish?.routes ?? [], (route) =>
      Effect.map(
        Effect.makeSpan(SpanName.host, {
          // Its call site is always this module: a stack trace says nothing, and costs a source-mapped stack per host.
          captureStackTrace: false,
          attributes: {
            [SpanAttribute.sessionId]: t.input.sessionId,
            [SpanAttribute.mode]: t.input.mode,
            [SpanAttribute.host]: route.host,
            [SpanAttribute.port]: route.port
          }
        }),
        (span) => t.spans.set(route.host, span)
      ), { discard: true }), () => Effect.void)

const onRoute = (t: Tracking, event: Extract<SessionEvent, { readonly type: "route" }>) => {
  const { mode, publish } = t.input
  const now = t.clock.unsafeCurrentTimeNanos()
  // Only a host still awaiting its first verdict gets it now.
  const first = event.state !== "pending" && t.awaiting.delete(event.host)
  t.spans.get(event.host)?.event(
    event.state,
    now,
    event.reason !== undefined ? { [SpanAttribute.reason]: event.reason } : {}
  )
  move(t, event.host, event.state)
  if (!first) return
  if (event.state === "programmed" && publish !== undefined) {
    const seconds = (Number(now / 1_000_000n) - publish.publishedAt) / 1000
    unsafeUpdateSeries(publishToProgrammed, [["mode", mode]], seconds)
  }
  if (event.reason !== undefined) t.spans.get(event.host)?.attribute(SpanAttribute.reason, event.reason)
  end(t, event.host, event.state === "unprogrammed" ? Exit.fail(event.reason ?? "unprogrammed") : Exit.void, now)
}

const onReadError = (t: Tracking, reason: string) => {
  const now = t.clock.unsafeCurrentTimeNanos()
  for (const span of t.spans.values()) span.event("read-error", now, { [SpanAttribute.reason]: reason })
  unsafeUpdateSeries(readErrors, [["mode", t.input.mode]], 1)
}

const observe = (t: Tracking, event: SessionEvent): Effect.Effect<void> => {
  switch (event.type) {
    case "route":
      return Effect.sync(() => onRoute(t, event))
    case "read-error":
      return Effect.sync(() => onReadError(t, event.reason))
    default:
      // `published` and the other kinds say nothing about a host's state.
      return Effect.void
  }
}

/**
 * Tracks a session's hosts until `release` or the end of the scope: while any tracker
 * holds a host it counts in the gauge under its last reported state, and a host span
 * still open at the end (stopped before a verdict) ends with that state.
 */
export const trackHosts = (input: TrackHostsInput): Effect.Effect<HostTracker, never, Scope.Scope> =>
  Effect.gen(function*() {
    const t: Tracking = {
      input,
      clock: yield* Effect.clock,
      mine: new Set(),
      spans: new Map(),
      awaiting: new Set()
    }
    const released = release(t)
    yield* Effect.addFinalizer(() => released)
    for (const row of input.known ?? []) move(t, row.host, row.state)
    for (const route of input.publish?.routes ?? []) {
      move(t, route.host, "pending")
      t.awaiting.add(route.host)
    }
    yield* openSpans(t)
    return { observe: (event) => observe(t, event), release: released }
  })

/** Runs `publish`, recording how long it took by mode and result. */
export const timedPublish = <A, E, R>(mode: RoutingMode, publish: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (start) =>
      Effect.onExit(publish, (exit) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          updateSeries(
            publishDuration,
            [["mode", mode], ["result", Exit.isSuccess(exit) ? "ok" : "error"]],
            (now - start) / 1000
          )))
  )
