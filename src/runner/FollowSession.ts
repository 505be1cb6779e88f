/**
 * Following a session after its watch settled: observe its hosts through the
 * route-status source and report each change (a late controller, a lost status, a
 * rejection on a new generation, a deleted object) in the runner's event shapes. On
 * the shared watch this costs no request at all; on the polling source each host is
 * read once per interval. A read left unanswered is a `read-error` instead of a
 * silence that looks like health.
 */
import { Duration, Effect, Option, Ref, Schedule, Stream } from "effect"
import { type PublishedRoute, reportOf, type RouteState, Unprogrammed, UnprogrammedCode } from "../domain/Routes.js"
import { Transport } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { Observation, RouteReadError, RouteStatusSource } from "../services/RouteStatusSource.js"
import { SessionRouter } from "../services/SessionRouter.js"
import type { SessionEvent } from "./SessionRunner.js"
import { trackHosts } from "./SessionTelemetry.js"

export { GONE_REASON } from "../domain/Routes.js"

/**
 * One host as last reported.
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowedHost {
  readonly port: number
  readonly host: string
  readonly state: RouteState
  readonly reason?: string
  readonly code?: string
}

/** What following remembers between observations. */
export interface FollowState {
  readonly rows: ReadonlyMap<string, FollowedHost>
  /** True while reads fail, so one streak of failures is reported once. */
  readonly failing: boolean
}

/** What one observation of `host` adds to what was known: the events to report, and the state after. */
export const followStep = (
  state: FollowState,
  route: PublishedRoute,
  observation: Observation
): readonly [FollowState, ReadonlyArray<SessionEvent>] => {
  switch (observation._tag) {
    case "Reading":
      return [state, []]
    case "Unreadable":
      // The last answer stands; a streak of failures, on any host, is said once.
      return state.failing
        ? [state, []]
        : [{ ...state, failing: true }, [{ type: "read-error", reason: observation.error.reason }]]
    case "Seen": {
      const before = state.rows.get(route.host)
      const { present, verdict } = observation
      const next: FollowedHost = !present
        ? { port: route.port, host: route.host, state: "unprogrammed", ...Unprogrammed.deleted }
        // Still unclaimed after the deadline is not news: the host stays unprogrammed
        // until a controller programs it. A programmed host that lost its status is.
        : verdict.kind === "pending" && before?.state === "unprogrammed" && before.code !== UnprogrammedCode.deleted
        ? before
        : { port: route.port, host: route.host, ...reportOf(verdict) }
      const rows = new Map(state.rows).set(route.host, next)
      const changed = before === undefined || before.state !== next.state || before.reason !== next.reason
      const events: ReadonlyArray<SessionEvent> = changed
        ? [{
          type: "route",
          port: next.port,
          host: next.host,
          state: next.state,
          ...(next.reason !== undefined ? { reason: next.reason } : {}),
          ...(next.code !== undefined ? { code: next.code } : {})
        }]
        : []
      return [{ rows, failing: false }, events]
    }
  }
}

/**
 * How often and how long `followSession` reads; unset ones come from `RouterConfig`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowOptions {
  /** Pause between reads, when the source polls. Default: `RouterConfig.routePollIntervalMs`. */
  readonly intervalMs?: number
  /** Most one read may go unanswered before it is a `read-error`. Default: `RouterConfig.apiTimeoutMs`. */
  readonly readTimeoutMs?: number
}

/**
 * Follows a session whose hosts were last reported as `known`, through
 * `RouteStatusSource`, for as long as it is consumed: a `route` event whenever a host
 * changes, and `read-error` once per streak of reads that fail or go unanswered for
 * `readTimeoutMs` (hosts keep their last state meanwhile). It never ends by itself.
 * With both options given, `RouterConfig` is not needed.
 *
 * @since 0.1.0
 * @category programs
 */
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options: Required<FollowOptions>
): Stream.Stream<SessionEvent, never, SessionRouter | RouteStatusSource>
/**
 * The same, with the timing from `RouterConfig` wherever the options leave it unset.
 *
 * @since 0.1.0
 * @category programs
 */
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options?: FollowOptions
): Stream.Stream<SessionEvent, never, SessionRouter | RouteStatusSource | RouterConfig>
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options: FollowOptions = {}
): Stream.Stream<SessionEvent, never, SessionRouter | RouteStatusSource | RouterConfig> {
  const { intervalMs, readTimeoutMs } = options
  if (intervalMs !== undefined && readTimeoutMs !== undefined) {
    return follow(sessionId, known, intervalMs, readTimeoutMs)
  }
  return Stream.unwrap(
    Effect.map(
      RouterConfig,
      (config) =>
        follow(sessionId, known, intervalMs ?? config.routePollIntervalMs, readTimeoutMs ?? config.apiTimeoutMs)
    )
  )
}

const follow = (
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  intervalMs: number,
  limitMs: number
): Stream.Stream<SessionEvent, never, SessionRouter | RouteStatusSource> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const router = yield* SessionRouter
      const source = yield* RouteStatusSource
      const state = yield* Ref.make<FollowState>({ rows: new Map(known.map((row) => [row.host, row])), failing: false })
      const apply = (route: PublishedRoute, observation: Observation) =>
        Ref.modify(state, (now) => {
          const [next, events] = followStep(now, route, observation)
          return [events, next] as const
        })
      const perHost = known.map((row) =>
        followHost(source, sessionId, { host: row.host, port: row.port }, intervalMs, limitMs, apply)
      )
      const tracker = yield* trackHosts({ mode: router.layer, sessionId, known })
      return Stream.mergeAll(perHost, { concurrency: "unbounded" }).pipe(Stream.tap(tracker.observe))
    })
  )

/**
 * One host's observations, each turned into the events it adds, paced by the source's
 * cadence (a polling source reads on each call; a watching one answers with the next
 * change). A read that goes unanswered for `limitMs` is interrupted and reported as
 * unreadable; the next one starts clean.
 */
const followHost = (
  source: RouteStatusSource.Service,
  sessionId: string,
  route: PublishedRoute,
  intervalMs: number,
  limitMs: number,
  apply: (route: PublishedRoute, observation: Observation) => Effect.Effect<ReadonlyArray<SessionEvent>>
): Stream.Stream<SessionEvent> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const driver = yield* Schedule.driver(source.cadence(intervalMs))
      let seen = 0
      // The first observation of the follow is the host's state now: no pause before it.
      let first = true
      const step = Effect.gen(function*() {
        if (!first) yield* driver.next(undefined).pipe(Effect.orElse(() => Effect.void))
        first = false
        const call = source.next(sessionId, route, seen)
        // Only a read is bounded: a quiet watch is not a silent server.
        const answer = source.kind === "poll"
          ? yield* Effect.timeout(call, Duration.millis(limitMs)).pipe(Effect.option)
          : Option.some(yield* call)
        if (Option.isNone(answer)) return yield* apply(route, silence(route, limitMs))
        seen = answer.value.seq
        return yield* apply(route, answer.value.observation)
      })
      return Stream.repeatEffect(step).pipe(Stream.flattenIterables)
    })
  )

/** A read that got no answer within `limitMs`, as an observation. */
const silence = (route: PublishedRoute, limitMs: number): Observation =>
  Observation.unreadable(
    new RouteReadError({
      route,
      error: new Transport({ reason: `the status read got no answer within ${limitMs} ms`, kind: "no-answer" })
    })
  )
