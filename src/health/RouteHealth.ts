/**
 * The route-health watch: after publishing, follow each host through the route-status
 * source (changes of one shared watch, or reads on a `Schedule`) until it is
 * programmed, rejected, or out of time, and say so as events (a `Stream`, or a
 * callback on the caller's fiber). It reports and never fails: a slow controller and an absent one look
 * the same for the first seconds, so the watch describes routing, it does not judge the session.
 */
import { Clock, Duration, Effect, Exit, Mailbox, Ref, Stream } from "effect"
import { atDeadline as unprogrammedAtDeadline, type RoutingPath } from "../domain/Diagnosis.js"
import { type PublishedRoute, Unprogrammed } from "../domain/Routes.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { type ChangeFeed, RouteStatusSource } from "../services/RouteStatusSource.js"
import { absorb, noEvidence } from "./internal/HostEvidence.js"
import { atDeadline, type Host, type HostWatch, settle } from "./internal/HostSettle.js"
import { RouteHealthEvent } from "./RouteHealthEvent.js"

export { RouteDeadlineReached, RoutePending } from "./internal/HostSettle.js"
export { type ReadErrorEvent, readFailure, type RouteEvent, RouteHealthEvent } from "./RouteHealthEvent.js"

/** What to watch. */
export interface WatchRouteHealthInput {
  readonly sessionId: string
  /** The hosts `publish` returned. Empty: nothing to watch, the stream is empty. */
  readonly routes: ReadonlyArray<PublishedRoute>
  /** How long a host may stay pending, from the start of the watch. Default: `RouterConfig.routeReadyTimeoutMs`. */
  readonly timeoutMs?: number
  /** Pause between reads of one host, when the source polls. Default: `RouterConfig.routePollIntervalMs`. */
  readonly intervalMs?: number
}

interface Timing {
  readonly timeoutMs: number
  readonly intervalMs: number
}

/**
 * Watches whether the routing layer programmed each published host.
 *
 * Emits `pending` for every host at once, then one terminal event per host as it
 * settles; plus a `ReadError` the first time any read fails. Completes when every
 * host is terminal. Hosts that settle at the same instant come in no promised
 * order. Interrupting the consumer stops every read at once and nothing further is
 * emitted. The hosts are observed through the `RouteStatusSource` in context (one
 * shared watch, or polls; every `SessionRouter` layer provides one), which also says
 * why a host is still pending at its deadline. With both timings given only
 * `RouteStatusSource` is needed; otherwise the missing ones come from `RouterConfig`.
 *
 * A runner that follows hundreds of sessions at once can use `reportRouteHealth`
 * instead: the same events, handed to a callback on the caller's fiber, without
 * the stream's own machinery per session.
 *
 * @since 0.1.0
 * @category programs
 */
export function watchRouteHealth(
  input: WatchRouteHealthInput & Timing
): Stream.Stream<RouteHealthEvent, never, RouteStatusSource>
/**
 * The same, with the timing from `RouterConfig` wherever the options leave it unset.
 *
 * @since 0.1.0
 * @category programs
 */
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, RouteStatusSource | RouterConfig>
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, RouteStatusSource | RouterConfig> {
  return Stream.unwrapScoped(
    Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<RouteHealthEvent>()
      // The run lives in the stream's scope: interrupting the consumer interrupts it
      // before anything else can be offered.
      yield* reportRouteHealth(input, (event) => mailbox.offer(event)).pipe(
        Effect.onExit((exit) => mailbox.done(Exit.asVoid(exit))),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )
}

/**
 * The route-health watch of `watchRouteHealth`, run on the caller's fiber: each
 * event goes to `report` as it happens (one at a time, in the order the stream
 * would emit them), and the effect completes when every host is terminal.
 *
 * From a watching source the whole session waits on one fiber, the caller's, at the
 * cost of a few small objects per host; from a polling source (or one that fell
 * back to polling) each host reads on its own fiber, so that a hung read of one host
 * never holds back another.
 *
 * @since 0.1.0
 * @category programs
 */
export function reportRouteHealth(
  input: WatchRouteHealthInput & Timing,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, RouteStatusSource>
/**
 * The same, with the timing from `RouterConfig` wherever the options leave it unset.
 *
 * @since 0.1.0
 * @category programs
 */
export function reportRouteHealth(
  input: WatchRouteHealthInput,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, RouteStatusSource | RouterConfig>
export function reportRouteHealth(
  input: WatchRouteHealthInput,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, RouteStatusSource | RouterConfig> {
  if (input.routes.length === 0) return Effect.void
  const { intervalMs, timeoutMs } = input
  if (timeoutMs !== undefined && intervalMs !== undefined) return run(input, { timeoutMs, intervalMs }, report)
  return Effect.flatMap(RouterConfig, (config) =>
    run(input, {
      timeoutMs: timeoutMs ?? config.routeReadyTimeoutMs,
      intervalMs: intervalMs ?? config.routePollIntervalMs
    }, report))
}

const run = (
  input: WatchRouteHealthInput,
  timing: Timing,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, RouteStatusSource> =>
  Effect.gen(function*() {
    const source = yield* RouteStatusSource
    // Absolute: every host's deadline is counted from here, whatever its reads cost.
    const deadline = (yield* Clock.currentTimeMillis) + timing.timeoutMs
    // One report at a time, whichever host's fiber has something to say (made only
    // when hosts settle on fibers of their own).
    let lock: Effect.Semaphore | undefined
    const emit = (event: RouteHealthEvent) => lock === undefined ? report(event) : lock.withPermits(1)(report(event))
    let readErrorReported = false
    // One diagnosis per session, read only if a host the cluster answered for is still
    // pending at the deadline, and its cache made only then: most sessions never need it,
    // and a watched route must cost a few hundred bytes, not a cache of its own.
    const diagnose = source.diagnose
    let diagnosis: Effect.Effect<(route: PublishedRoute) => RoutingPath> | undefined
    const diagnosed = diagnose === undefined
      ? undefined
      : Effect.suspend(() =>
        diagnosis !== undefined
          ? diagnosis
          : Effect.flatMap(Effect.cached(diagnose(input.sessionId)), (once) => (diagnosis = once))
      ).pipe(
        // A host whose next read falls on the deadline starts the diagnosis on its own
        // fiber, which the deadline timer may interrupt at once: the cache would keep that
        // interruption as every other host's diagnosis, so it is dropped and read again.
        Effect.onInterrupt(() => Effect.sync(() => (diagnosis = undefined)))
      )
    const watch: HostWatch = {
      source,
      sessionId: input.sessionId,
      deadline,
      timeoutMs: timing.timeoutMs,
      intervalMs: timing.intervalMs,
      unclaimed: (route) =>
        diagnosed === undefined
          ? Effect.succeed(Unprogrammed.unclaimed(source.unclaimedReason(route)))
          : Effect.map(diagnosed, (pathOf) => unprogrammedAtDeadline(pathOf(route), source.unclaimedReason(route))),
      reportReadError: (error) =>
        Effect.suspend(() => {
          if (readErrorReported) return Effect.void
          readErrorReported = true
          return emit(RouteHealthEvent.readError(error))
        })
    }
    for (const route of input.routes) yield* emit(RouteHealthEvent.pending(route))
    const hosts = input.routes.map((route): Host => ({ route, evidence: noEvidence, seen: 0, settled: false }))
    const feed = source.changes
    const left = feed === undefined ? hosts : yield* followChanges(watch, feed, hosts, emit)
    if (left.length > 0) {
      lock = yield* Effect.makeSemaphore(1)
      yield* settleEach(watch, left, emit)
    }
  })

/**
 * Follows every host of the session on this one fiber while the source watches:
 * takes each newer observation as it comes, and sleeps (no fiber, no timer of its
 * own) until one of the hosts changes or the deadline comes. Returns the hosts
 * still open when the source stops watching (it fell back to polling): they go on
 * on their own fibers, with the evidence gathered so far.
 */
const followChanges = (
  watch: HostWatch,
  feed: ChangeFeed,
  hosts: ReadonlyArray<Host>,
  emit: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<ReadonlyArray<Host>> =>
  Effect.gen(function*() {
    while (true) {
      // One instant for the pass: what the cache holds is answered at once.
      const now = yield* Clock.currentTimeMillis
      for (const host of hosts) {
        if (host.settled || watch.source.changes === undefined) continue
        if (feed.seqOf(watch.sessionId, host.route) <= host.seen) continue
        // Newer than what the host saw: answered at once, from the cache.
        const { observation, seq } = yield* watch.source.next(watch.sessionId, host.route, host.seen)
        host.seen = seq
        const taken = absorb(host.route, host.evidence, observation, now)
        host.evidence = taken.evidence
        if (taken.readError !== undefined) yield* watch.reportReadError(taken.readError)
        if (taken.settled !== undefined) {
          host.settled = true
          yield* emit(taken.settled)
        }
      }
      const open = hosts.filter((host) => !host.settled)
      if (open.length === 0 || watch.source.changes === undefined) return open
      if (now >= watch.deadline) {
        // A host whose watch never answered was, in effect, a read the deadline cut short.
        for (const host of open) yield* emit(yield* atDeadline(watch, host.route, host.evidence))
        return []
      }
      yield* feed.awaitAny(watch.sessionId, open, watch.deadline)
    }
  })

/**
 * Settles each host on a fiber of its own, for a source that reads: a host that
 * settles late never holds back another's event. One timer for all of them: at the
 * deadline every host still out is interrupted (and the read it has out with it)
 * and judged on its evidence.
 */
const settleEach = (
  watch: HostWatch,
  hosts: ReadonlyArray<Host>,
  emit: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const entries = yield* Effect.forEach(hosts, (host) =>
      Effect.map(Ref.make(host.evidence), (evidence) => ({ host, evidence, settled: false })))
    // A host's terminal event is emitted once, by whichever path claims it first: its
    // own fiber, or the deadline judging it (both can be under way at a zero deadline).
    const claim = (entry: { settled: boolean }): boolean => {
      if (entry.settled) {
        return false
      }
      entry.settled = true
      return true
    }
    const settling = Effect.forEach(
      entries,
      (entry) =>
        settle(watch, entry.host, entry.evidence).pipe(
          Effect.flatMap((event) =>
            Effect.suspend(() => claim(entry) ? emit(event) : Effect.void)
          )
        ),
      { concurrency: "unbounded", discard: true }
    )
    const remaining = Math.max(0, watch.deadline - (yield* Clock.currentTimeMillis))
    yield* settling.pipe(
      Effect.timeoutTo({
        duration: Duration.millis(remaining),
        onSuccess: () => Effect.void,
        onTimeout: () =>
          Effect.forEach(
            entries.filter(claim),
            (entry) =>
              Ref.get(entry.evidence).pipe(
                Effect.flatMap((seen) => atDeadline(watch, entry.host.route, seen)),
                Effect.flatMap(emit)
              ),
            { discard: true }
          )
      }),
      Effect.flatten
    )
  })
