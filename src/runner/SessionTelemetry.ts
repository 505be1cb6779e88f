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

/**
 * Tracks a session's hosts until `release` or the end of the scope: while any tracker
 * holds a host it counts in the gauge under its last reported state, and a host span
 * still open at the end (stopped before a verdict) ends with that state.
 */
export const trackHosts = (input: TrackHostsInput): Effect.Effect<HostTracker, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { mode } = input
    const keyOf = (host: string) => `${mode}\u0000${input.sessionId}\u0000${host}`
    const mine = new Set<string>()
    const spans = new Map<string, Tracer.Span>()
    /** The published hosts that have had no verdict yet. */
    const awaiting = new Set<string>()
    // Read once: every event is then accounted for in one synchronous step.
    const clock = yield* Effect.clock

    const gauge = (state: RouteState, by: number) => unsafeModifySeries(hosts, [["mode", mode], ["state", state]], by)

    /** Holds `host` (once per tracker) and sets its state. */
    const move = (host: string, next: RouteState) => {
      const key = keyOf(host)
      const entry = held.get(key)
      const firstHold = !mine.has(key)
      mine.add(key)
      if (entry === undefined) {
        held.set(key, { state: next, holders: 1 })
        return gauge(next, 1)
      }
      if (firstHold) entry.holders += 1
      if (entry.state === next) return
      gauge(entry.state, -1)
      entry.state = next
      gauge(next, 1)
    }

    const stateOf = (host: string): RouteState => held.get(keyOf(host))?.state ?? "pending"

    const end = (host: string, exit: Exit.Exit<unknown, string>, now: bigint) => {
      const span = spans.get(host)
      if (span === undefined) return
      spans.delete(host)
      span.attribute(SpanAttribute.state, stateOf(host))
      span.end(now, exit)
    }

    const release = Effect.sync(() => {
      const now = clock.unsafeCurrentTimeNanos()
      for (const host of [...spans.keys()]) end(host, Exit.void, now)
      for (const key of mine) {
        const entry = held.get(key)
        if (entry === undefined || --entry.holders > 0) continue
        held.delete(key)
        gauge(entry.state, -1)
      }
      mine.clear()
    })
    yield* Effect.addFinalizer(() => release)

    for (const row of input.known ?? []) move(row.host, row.state)
    for (const route of input.publish?.routes ?? []) {
      move(route.host, "pending")
      awaiting.add(route.host)
    }
    // Spans only when they go somewhere: Effect's own tracer keeps them nowhere.
    yield* whenTraced(() =>
      Effect.forEach(input.publish?.routes ?? [], (route) =>
        Effect.map(
          Effect.makeSpan(SpanName.host, {
            // Its call site is always this module: a stack trace says nothing, and costs a source-mapped stack per host.
            captureStackTrace: false,
            attributes: {
              [SpanAttribute.sessionId]: input.sessionId,
              [SpanAttribute.mode]: mode,
              [SpanAttribute.host]: route.host,
              [SpanAttribute.port]: route.port
            }
          }),
          (span) => spans.set(route.host, span)
        ), { discard: true }), () => Effect.void)

    const onRoute = (event: Extract<SessionEvent, { readonly type: "route" }>) => {
      const now = clock.unsafeCurrentTimeNanos()
      // Only a host still awaiting its first verdict gets it now.
      const first = event.state !== "pending" && awaiting.delete(event.host)
      spans.get(event.host)?.event(
        event.state,
        now,
        event.reason !== undefined ? { [SpanAttribute.reason]: event.reason } : {}
      )
      move(event.host, event.state)
      if (!first) return
      if (event.state === "programmed" && input.publish !== undefined) {
        const seconds = (Number(now / 1_000_000n) - input.publish.publishedAt) / 1000
        unsafeUpdateSeries(publishToProgrammed, [["mode", mode]], seconds)
      }
      if (event.reason !== undefined) spans.get(event.host)?.attribute(SpanAttribute.reason, event.reason)
      end(event.host, event.state === "unprogrammed" ? Exit.fail(event.reason ?? "unprogrammed") : Exit.void, now)
    }

    const onReadError = (reason: string) => {
      const now = clock.unsafeCurrentTimeNanos()
      for (const span of spans.values()) span.event("read-error", now, { [SpanAttribute.reason]: reason })
      unsafeUpdateSeries(readErrors, [["mode", mode]], 1)
    }

    const observe = (event: SessionEvent): Effect.Effect<void> => {
      switch (event.type) {
        case "route":
          return Effect.sync(() => onRoute(event))
        case "read-error":
          return Effect.sync(() => onReadError(event.reason))
        default:
          // `published` and the other kinds say nothing about a host's state.
          return Effect.void
      }
    }
    return { observe, release }
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
