/**
 * The route-health watch: after publishing, follow each host through the route-status
 * source (changes of one shared watch, or reads on a `Schedule`) until it is
 * programmed, rejected, or out of time, and say so as events (a `Stream`, or a
 * callback on the caller's fiber). It reports and never fails: a slow controller and an absent one look
 * the same for the first seconds, so the watch describes routing, it does not judge the session.
 */
import { Clock, Data, Duration, Effect, Exit, Mailbox, Option, Ref, Schedule, Stream } from "effect"
import { atDeadline as unprogrammedAtDeadline, type RoutingPath } from "../domain/Diagnosis.js"
import { type PublishedRoute, Unprogrammed } from "../domain/Routes.js"
import { pollingThroughRouter } from "../layers/RouteStatusSource.js"
import { Transport } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { type ChangeFeed, PERMANENT_FAILURE_BACKOFF_CAP, RouteStatusSource } from "../services/RouteStatusSource.js"
import { RouteReadError, SessionRouter } from "../services/SessionRouter.js"
import {
  absorb,
  cutReadIsSilence,
  type HostEvidence,
  LAST_ANSWERED_PENDING,
  noEvidence
} from "./internal/HostEvidence.js"
import { readFailure, RouteHealthEvent } from "./RouteHealthEvent.js"

export { type ReadErrorEvent, readFailure, type RouteEvent, RouteHealthEvent } from "./RouteHealthEvent.js"

// ---------------------------------------------------------------------------
// Typed outcomes of one attempt
// ---------------------------------------------------------------------------

/**
 * The routing layer answered, and the answer is "not yet". Kept apart from
 * `RouteReadError`: "still pending" is a verdict about the route, a failed read is none.
 */
export class RoutePending extends Data.TaggedError("RoutePending")<{
  readonly route: PublishedRoute
  /** Set while a read is out and its answer not yet seen: not a verdict, only "ask again at once". */
  readonly reading?: boolean
}> {}

/**
 * The host's next read would start at the deadline itself, between reads: it is
 * judged on what it saw. (A host still reading at the deadline is interrupted by the
 * watch's deadline timer and judged there.)
 */
export class RouteDeadlineReached extends Data.TaggedError("RouteDeadlineReached")<{
  readonly route: PublishedRoute
}> {}
// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

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
 * shared watch, or polls); without one, each host is polled through
 * `SessionRouter.verdictFor`. With both timings given only `SessionRouter` is
 * needed; otherwise the missing ones come from `RouterConfig`.
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
): Stream.Stream<RouteHealthEvent, never, SessionRouter>
/**
 * The same, with the timing from `RouterConfig` wherever the options leave it unset.
 *
 * @since 0.1.0
 * @category programs
 */
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, SessionRouter | RouterConfig>
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, SessionRouter | RouterConfig> {
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
): Effect.Effect<void, never, SessionRouter>
/**
 * The same, with the timing from `RouterConfig` wherever the options leave it unset.
 *
 * @since 0.1.0
 * @category programs
 */
export function reportRouteHealth(
  input: WatchRouteHealthInput,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, SessionRouter | RouterConfig>
export function reportRouteHealth(
  input: WatchRouteHealthInput,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, SessionRouter | RouterConfig> {
  if (input.routes.length === 0) return Effect.void
  const { intervalMs, timeoutMs } = input
  if (timeoutMs !== undefined && intervalMs !== undefined) return run(input, { timeoutMs, intervalMs }, report)
  return Effect.flatMap(RouterConfig, (config) =>
    run(input, {
      timeoutMs: timeoutMs ?? config.routeReadyTimeoutMs,
      intervalMs: intervalMs ?? config.routePollIntervalMs
    }, report))
}

/** One host as route health follows it. */
interface Host {
  readonly route: PublishedRoute
  evidence: HostEvidence
  /** The sequence number of the last observation taken: the next must be newer. */
  seen: number
  settled: boolean
}

const run = (
  input: WatchRouteHealthInput,
  timing: Timing,
  report: (event: RouteHealthEvent) => Effect.Effect<void>
): Effect.Effect<void, never, SessionRouter> =>
  Effect.gen(function*() {
    const router = yield* SessionRouter
    const source = Option.getOrElse(yield* Effect.serviceOption(RouteStatusSource), () => pollingThroughRouter(router))
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
    const diagnose = router.diagnose
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
          ? Effect.succeed(Unprogrammed.unclaimed(router.unclaimedReason(route)))
          : Effect.map(diagnosed, (pathOf) => unprogrammedAtDeadline(pathOf(route), router.unclaimedReason(route))),
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
      for (const host of hosts) {
        if (host.settled || watch.source.changes === undefined) continue
        if (feed.seqOf(watch.sessionId, host.route) <= host.seen) continue
        // Newer than what the host saw: answered at once, from the cache.
        const { observation, seq } = yield* watch.source.next(watch.sessionId, host.route, host.seen)
        host.seen = seq
        const now = yield* Clock.currentTimeMillis
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
      if ((yield* Clock.currentTimeMillis) >= watch.deadline) {
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

interface HostWatch {
  readonly source: RouteStatusSource.Service
  readonly sessionId: string
  /** Epoch ms at which every host still pending is reported. */
  readonly deadline: number
  readonly timeoutMs: number
  readonly intervalMs: number
  /** Why a host the cluster answered for is still pending: the first broken link, else the generic advice. */
  readonly unclaimed: (route: PublishedRoute) => Effect.Effect<Unprogrammed>
  readonly reportReadError: (error: RouteReadError) => Effect.Effect<void>
}

/**
 * The source's cadence, measured from the start of the last read (a slow answer does
 * not stretch the period), doubled for each permanent failure in a row (up to
 * `PERMANENT_FAILURE_BACKOFF_CAP`). A pause that runs past the deadline is cut by
 * the watch's deadline timer.
 */
const hostSchedule = (watch: HostWatch, evidence: Ref.Ref<HostEvidence>) =>
  Schedule.modifyDelayEffect(watch.source.cadence(watch.intervalMs), (_, delay) =>
    Effect.gen(function*() {
      const { lastReadAt, permanentStreak } = yield* Ref.get(evidence)
      // With no permanent failure in a row, 2 ** 0: the cadence's own delay.
      const pause = Duration.min(
        Duration.times(delay, 2 ** Math.min(permanentStreak, 16)),
        Duration.max(delay, PERMANENT_FAILURE_BACKOFF_CAP)
      )
      if (lastReadAt === undefined) return pause
      const now = yield* Clock.currentTimeMillis
      return Duration.millis(Math.max(0, lastReadAt + Duration.toMillis(pause) - now))
    }))

/** Observes one host until it settles; always ends in that host's terminal event. */
const settle = (watch: HostWatch, host: Host, evidence: Ref.Ref<HostEvidence>): Effect.Effect<RouteHealthEvent> =>
  Effect.gen(function*() {
    const route = host.route
    // The last observation taken: the next call asks for a newer one.
    let seen = host.seen

    const attempt: Effect.Effect<RouteHealthEvent, RoutePending | RouteReadError | RouteDeadlineReached> = Effect
      .gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // A pause that ends at the deadline itself reads nothing: no time is left for it.
        if (watch.deadline - now <= 0) return yield* new RouteDeadlineReached({ route })
        // A polling source reads on each call: that read is out from now. (Asked each
        // time: a watching source that fell back to polling starts reading.)
        if (watch.source.kind === "poll") {
          yield* Ref.update(evidence, (e) => ({ ...e, readSince: now, lastReadAt: now }))
        }
        // No bound of its own: the watch's one deadline timer interrupts a read that
        // hangs (and its request with it) and judges the host on what it saw.
        const { observation, seq } = yield* watch.source.next(watch.sessionId, route, seen)
        seen = seq
        const answeredAt = yield* Clock.currentTimeMillis
        const taken = yield* Ref.modify(evidence, (e) => {
          const t = absorb(route, e, observation, answeredAt)
          return [t, t.evidence] as const
        })
        if (taken.readError !== undefined) {
          yield* watch.reportReadError(taken.readError)
          return yield* taken.readError
        }
        if (taken.settled !== undefined) return taken.settled
        // "Not answered yet" is no pause point: the next call waits for the answer itself.
        return yield* new RoutePending({ route, reading: observation._tag === "Reading" })
      })

    return yield* attempt.pipe(
      Effect.retry({ while: (error) => error._tag === "RoutePending" && error.reading === true }),
      // Explicit predicate: only "not yet" and "could not read" are worth another read.
      Effect.retry({
        schedule: hostSchedule(watch, evidence),
        while: (error) => error._tag === "RoutePending" || error._tag === "RouteReadError"
      }),
      Effect.catchAll((error) =>
        error._tag === "RouteDeadlineReached"
          ? Ref.get(evidence).pipe(Effect.flatMap((last) => atDeadline(watch, route, last)))
          // Unreachable while the schedule runs to the deadline; were it ever to stop
          // first, its last answer is what the host is reported with.
          : atDeadline(watch, route, {
            ...noEvidence,
            last: error._tag === "RoutePending" ? LAST_ANSWERED_PENDING : Option.some(error)
          })
      )
    )
  })

/**
 * The terminal event of a host still unsettled at the deadline: the last evidence
 * decides. The diagnosis (the first broken link of its routing) only when the last
 * thing the cluster said was a real answer (the object, without a status that
 * programs it); a read failure when the last read failed, or when the read the
 * deadline cut short (the one still out, if any) had gone unanswered.
 */
const atDeadline = (
  watch: HostWatch,
  route: PublishedRoute,
  seen: HostEvidence
): Effect.Effect<RouteHealthEvent> => {
  // With no read out, nothing was cut short: 0 ms out is never silence.
  const outFor = seen.readSince === undefined ? 0 : watch.deadline - seen.readSince
  // Nothing ever answered (a deadline shorter than the first read, or a source that
  // never answered): no controller can be blamed for a status nobody read.
  const silent = Option.isNone(seen.last) || cutReadIsSilence(outFor, seen.slowestAnswerMs, watch.intervalMs)
  if (!silent) {
    const last = Option.getOrUndefined(seen.last)
    return last?._tag === "RouteReadError"
      ? Effect.succeed(RouteHealthEvent.unprogrammed(route, readFailure(last)))
      : last?.held !== undefined
      ? Effect.succeed(RouteHealthEvent.unprogrammed(route, Unprogrammed.held(last.held)))
      : Effect.map(watch.unclaimed(route), (why) => RouteHealthEvent.unprogrammed(route, why))
  }
  // The server stopped answering: the unclaimed advice would blame a controller
  // nobody was able to ask about.
  const hung = new RouteReadError({
    route,
    error: new Transport({
      reason: seen.readSince === undefined
        ? `no read of the status was answered within the ${watch.timeoutMs} ms route deadline`
        : `the status read got no answer within ${outFor} ms (cut off by the ${watch.timeoutMs} ms route deadline)`,
      kind: "no-answer"
    })
  })
  return watch.reportReadError(hung).pipe(Effect.as(RouteHealthEvent.unprogrammed(route, readFailure(hung))))
}
