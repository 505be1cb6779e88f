/**
 * Following a session after its watch settled: re-read its hosts on a schedule and
 * report each change (a late controller, a lost status, a deleted object) in the
 * runner's event shapes. Each read is bounded, so a hung API server shows up as a
 * `read-error` instead of a silence that looks like health.
 */
import { Duration, Effect, Either, Schedule, Stream } from "effect"
import type { RouteState } from "../domain/Routes.js"
import { rejectionReason } from "../health/RouteHealth.js"
import { withoutTransientRetry } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { SessionRouter } from "../services/SessionRouter.js"
import type { SessionEvent } from "./SessionRunner.js"

/**
 * The reason a host gets when its routing object disappeared while followed: the
 * session was unpublished, or its owner Pod was deleted and the cluster collected it.
 */
export const GONE_REASON =
  "the routing object for this host is gone: the session was unpublished, or its owner Pod was deleted"

/** One host as last reported. */
export interface FollowedHost {
  readonly port: number
  readonly host: string
  readonly state: RouteState
  readonly reason?: string
}

/** What following remembers between reads. */
export interface FollowState {
  readonly rows: ReadonlyMap<string, FollowedHost>
  /** True while reads fail, so one streak of failures is reported once. */
  readonly failing: boolean
}

/** One read's answers: the routes the cluster holds (or why not), and each one's verdict. */
export type PollResult =
  | { readonly _tag: "RoutesUnreadable"; readonly reason: string }
  | {
    readonly _tag: "Read"
    readonly hosts: ReadonlyArray<{
      readonly port: number
      readonly host: string
      readonly verdict: Either.Either<FollowedHost["state"] | { readonly rejected: string }, string>
    }>
  }

/**
 * The events one read adds to what was known, and what is known after it. Only
 * changes are reported. A failed read changes no host (the last answer stands) and is
 * reported once per streak as `read-error`. A `pending` verdict is news only for a
 * host that was programmed (it lost its status) or new: a host that already ended
 * unprogrammed stays so until a controller programs it.
 */
export const followStep = (
  state: FollowState,
  poll: PollResult
): readonly [FollowState, ReadonlyArray<SessionEvent>] => {
  const events: Array<SessionEvent> = []
  let failure: string | undefined
  const rows = new Map<string, FollowedHost>()
  if (poll._tag === "RoutesUnreadable") {
    failure = poll.reason
    for (const [host, row] of state.rows) rows.set(host, row)
  } else {
    for (const { host, port, verdict } of poll.hosts) {
      const before = state.rows.get(host)
      if (Either.isLeft(verdict)) {
        failure ??= verdict.left
        if (before !== undefined) rows.set(host, before)
        continue
      }
      const answer = verdict.right
      const next: FollowedHost = typeof answer === "object"
        ? { port, host, state: "unprogrammed", reason: answer.rejected }
        : answer === "pending" && before?.state === "unprogrammed"
        ? before
        : { port, host, state: answer }
      rows.set(host, next)
      if (before === undefined || before.state !== next.state || before.reason !== next.reason) {
        events.push({
          type: "route",
          port,
          host,
          state: next.state,
          ...(next.reason !== undefined ? { reason: next.reason } : {})
        })
      }
    }
    for (const [host, before] of state.rows) {
      if (poll.hosts.some((h) => h.host === host)) continue
      events.push({ type: "route", port: before.port, host, state: "unprogrammed", reason: GONE_REASON })
    }
  }
  // Said before the host changes of the same read, as the watch does.
  if (failure !== undefined && !state.failing) events.unshift({ type: "read-error", reason: failure })
  return [{ rows, failing: failure !== undefined }, events]
}

/**
 * Reads the session's routes and each one's verdict once, within `limitMs`. Without
 * the client's own retries: the next read is the retry, and a failure must show now.
 */
export const readSession = (sessionId: string, limitMs: number): Effect.Effect<PollResult, never, SessionRouter> =>
  Effect.gen(function*() {
    const router = yield* SessionRouter
    const routes = yield* Effect.either(router.routesOf(sessionId))
    if (Either.isLeft(routes)) return { _tag: "RoutesUnreadable", reason: routes.left.reason } as const
    const hosts = yield* Effect.forEach(
      routes.right,
      (route) =>
        router.verdictFor(sessionId, route).pipe(
          Effect.map((verdict) =>
            verdict.kind === "rejected" ? { rejected: rejectionReason(verdict.reason, verdict.message) } : verdict.kind
          ),
          Effect.mapError((error) => error.reason),
          Effect.either,
          Effect.map((verdict) => ({ port: route.port, host: route.host, verdict }))
        ),
      { concurrency: 8 }
    )
    return { _tag: "Read", hosts } as const
  }).pipe(
    withoutTransientRetry,
    Effect.timeoutTo({
      duration: Duration.millis(limitMs),
      onSuccess: (poll): PollResult => poll,
      onTimeout: (): PollResult => ({
        _tag: "RoutesUnreadable",
        reason: `the session's routes could not be read: no answer within ${limitMs} ms`
      })
    })
  )

/** How often and how long `followSession` reads; unset ones come from `RouterConfig`. */
export interface FollowOptions {
  /** Pause between reads. Default: `RouterConfig.routePollIntervalMs`. */
  readonly intervalMs?: number
  /** Most one read may take. Default: `RouterConfig.apiTimeoutMs`. */
  readonly readTimeoutMs?: number
}

/**
 * Follows a session whose hosts were last reported as `known`: re-reads them every
 * interval for as long as it is consumed and emits a `route` event whenever one
 * changes, and `read-error` once per streak of reads that fail or get no answer
 * (hosts keep their last state meanwhile). It never ends by itself. With both
 * options given only `SessionRouter` is needed.
 */
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options: Required<FollowOptions>
): Stream.Stream<SessionEvent, never, SessionRouter>
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options?: FollowOptions
): Stream.Stream<SessionEvent, never, SessionRouter | RouterConfig>
export function followSession(
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  options: FollowOptions = {}
): Stream.Stream<SessionEvent, never, SessionRouter | RouterConfig> {
  const { intervalMs, readTimeoutMs } = options
  if (intervalMs !== undefined && readTimeoutMs !== undefined) return follow(sessionId, known, intervalMs, readTimeoutMs)
  return Stream.unwrap(
    Effect.map(RouterConfig, (config) =>
      follow(sessionId, known, intervalMs ?? config.routePollIntervalMs, readTimeoutMs ?? config.apiTimeoutMs))
  )
}

const follow = (
  sessionId: string,
  known: ReadonlyArray<FollowedHost>,
  intervalMs: number,
  limitMs: number
): Stream.Stream<SessionEvent, never, SessionRouter> => {
  const initial: FollowState = { rows: new Map(known.map((row) => [row.host, row])), failing: false }
  return Stream.fromSchedule(Schedule.spaced(Duration.millis(Math.max(1, intervalMs)))).pipe(
    Stream.mapAccumEffect(initial, (state) => Effect.map(readSession(sessionId, limitMs), (poll) => followStep(state, poll))),
    Stream.flattenIterables
  )
}
