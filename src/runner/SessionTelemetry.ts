/**
 * The runner's account of a session: a span per host from publish to its verdict
 * (one event per state change), the hosts-by-state gauge, the time from publish to
 * programmed, publish durations and read errors. It reads the session's events as
 * the runner emits them, so route health itself stays free of it.
 */
import { Clock, Effect, Exit, Metric, type Scope, type Tracer } from "effect"
import type { PublishedRoute, RouteState, RoutingMode } from "../domain/Routes.js"
import {
  hosts,
  publishDuration,
  publishToProgrammed,
  readErrors,
  SpanAttribute,
  SpanName
} from "../services/Telemetry.js"
import type { SessionEvent } from "./SessionRunner.js"

/** Sees each of a session's events as it is emitted. */
export interface HostTracker {
  readonly observe: (event: SessionEvent) => Effect.Effect<void>
  /**
   * The hosts leave the gauge and open spans end; later calls do nothing. The scope
   * does it too, but a stream run into an outer scope (`Mailbox.fromStream`) releases
   * its own resources only when that scope closes, so a stream that ends calls it.
   */
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

const hostsIn = (mode: RoutingMode, state: RouteState) =>
  hosts.pipe(Metric.tagged("mode", mode), Metric.tagged("state", state))

/**
 * Tracks a session's hosts until `release` or the end of the scope: then they leave
 * the gauge, and a host span still open (the watch was stopped before a verdict) ends
 * with its last state.
 */
export const trackHosts = (input: TrackHostsInput): Effect.Effect<HostTracker, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { mode } = input
    const states = new Map<string, RouteState>()
    const spans = new Map<string, Tracer.Span>()

    const move = (host: string, next: RouteState) =>
      Effect.suspend(() => {
        const previous = states.get(host)
        if (previous === next) return Effect.void
        states.set(host, next)
        return Effect.zipRight(
          previous !== undefined ? Metric.modify(hostsIn(mode, previous), -1) : Effect.void,
          Metric.modify(hostsIn(mode, next), 1)
        )
      })

    const end = (host: string, exit: Exit.Exit<unknown, string>) =>
      Effect.flatMap(Clock.currentTimeNanos, (now) =>
        Effect.sync(() => {
          const span = spans.get(host)
          if (span === undefined) return
          spans.delete(host)
          span.attribute(SpanAttribute.state, states.get(host) ?? "pending")
          span.end(now, exit)
        }))

    const release = Effect.gen(function*() {
      for (const host of [...spans.keys()]) yield* end(host, Exit.void)
      const left = [...states.values()]
      states.clear()
      for (const state of left) yield* Metric.modify(hostsIn(mode, state), -1)
    })
    yield* Effect.addFinalizer(() => release)

    for (const row of input.known ?? []) yield* move(row.host, row.state)
    for (const route of input.publish?.routes ?? []) {
      const span = yield* Effect.makeSpan(SpanName.host, {
        attributes: {
          [SpanAttribute.sessionId]: input.sessionId,
          [SpanAttribute.mode]: mode,
          [SpanAttribute.host]: route.host,
          [SpanAttribute.port]: route.port
        }
      })
      spans.set(route.host, span)
    }

    const onRoute = (event: Extract<SessionEvent, { readonly type: "route" }>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeNanos
        // Only a host whose span is still open gets its first verdict now.
        const first = spans.has(event.host)
        spans.get(event.host)?.event(event.state, now, event.reason !== undefined ? { [SpanAttribute.reason]: event.reason } : {})
        yield* move(event.host, event.state)
        if (event.state === "pending" || !first) return
        if (event.state === "programmed" && input.publish !== undefined) {
          const seconds = (Number(now / 1_000_000n) - input.publish.publishedAt) / 1000
          yield* Metric.update(Metric.tagged(publishToProgrammed, "mode", mode), seconds)
        }
        if (event.reason !== undefined) spans.get(event.host)?.attribute(SpanAttribute.reason, event.reason)
        yield* end(event.host, event.state === "unprogrammed" ? Exit.fail(event.reason ?? "unprogrammed") : Exit.void)
      })

    const observe = (event: SessionEvent): Effect.Effect<void> => {
      switch (event.type) {
        case "route":
          return onRoute(event)
        case "read-error":
          return Effect.flatMap(Clock.currentTimeNanos, (now) =>
            Effect.zipRight(
              Effect.sync(() => {
                for (const span of spans.values()) span.event("read-error", now, { [SpanAttribute.reason]: event.reason })
              }),
              Metric.increment(Metric.tagged(readErrors, "mode", mode))
            ))
        default:
          // `published` and the other kinds say nothing about a host's state.
          return Effect.void
      }
    }
    return { observe, release }
  })

/** Runs `publish`, recording how long it took by mode and result. */
export const timedPublish = <A, E, R>(mode: RoutingMode, publish: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) =>
    Effect.onExit(publish, (exit) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Metric.update(
          publishDuration.pipe(Metric.tagged("mode", mode), Metric.tagged("result", Exit.isSuccess(exit) ? "ok" : "error")),
          (now - start) / 1000
        ))))
