/**
 * The route-health watch: after publishing, poll the routing layer on a `Schedule`
 * until each host is programmed, rejected, or out of time, and say so as a `Stream`
 * of events. It reports and never fails: a slow controller and an absent one look
 * the same for the first seconds, so the watch describes routing, it does not judge the session.
 */
import { Clock, Data, Duration, Effect, Exit, Mailbox, Option, Ref, Schedule, Stream } from "effect"
import type { PublishedRoute, RouteVerdict } from "../domain/Routes.js"
import { isPermanent, Transport } from "../services/KubeError.js"
import {
  PERMANENT_FAILURE_BACKOFF_CAP,
  pollingThroughRouter,
  RouteStatusSource
} from "../services/RouteStatusSource.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { RouteReadError, SessionRouter } from "../services/SessionRouter.js"

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

/** A host's state changed: `pending` once up front, then exactly one terminal state. */
export type RouteEvent =
  | { readonly _tag: "Route"; readonly route: PublishedRoute; readonly state: "pending" | "programmed" }
  | { readonly _tag: "Route"; readonly route: PublishedRoute; readonly state: "unprogrammed"; readonly reason: string }

/**
 * The first status read of the watch that failed, once per watch, for the runner's
 * log: a permanent failure (no RBAC grant, an unserved API) otherwise only shows up
 * in the hosts' final reasons. `reason` is the Kubernetes error's own reason.
 */
export interface ReadErrorEvent {
  readonly _tag: "ReadError"
  readonly route: PublishedRoute
  readonly reason: string
  readonly error: RouteReadError
}

/**
 * What the watch emits. Maps one to one onto the runner's wire events:
 * `Route` → `{ type: "route", port, host, state, reason? }`, `ReadError` → `{ type: "read-error", reason }`.
 */
export type RouteHealthEvent = RouteEvent | ReadErrorEvent

/** Constructors for `RouteHealthEvent`. */
export const RouteHealthEvent = {
  pending: (route: PublishedRoute): RouteHealthEvent => ({ _tag: "Route", route, state: "pending" }),
  programmed: (route: PublishedRoute): RouteHealthEvent => ({ _tag: "Route", route, state: "programmed" }),
  unprogrammed: (route: PublishedRoute, reason: string): RouteHealthEvent => ({
    _tag: "Route",
    route,
    state: "unprogrammed",
    reason
  }),
  readError: (error: RouteReadError): RouteHealthEvent => ({
    _tag: "ReadError",
    route: error.route,
    reason: error.reason,
    error
  })
} as const

// ---------------------------------------------------------------------------
// Reasons (pure)
// ---------------------------------------------------------------------------

/**
 * The reason a rejected host is reported with: the condition's reason code first,
 * unchanged, so it stays recognisable and greppable (`NotAllowedByListeners`), then
 * the controller's message when it gave one (`NotAllowedByListeners: <message>`),
 * because the message is usually what says which listener or namespace refused it.
 */
export const rejectionReason = (reason: string, message: string): string => {
  const said = message.trim()
  return said === "" ? reason : `${reason}: ${said}`
}

/**
 * The reason a host gets at the deadline when its last attempt was a failed read.
 * Deliberately not the unclaimed advice: that would send an operator to inspect the
 * controller when the runner could not read its own object.
 */
export const readFailureReason = (error: RouteReadError): string => error.message

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
 * settles, each host on its own fiber; plus a `ReadError` the first time any read
 * fails. Completes when every host is terminal. Hosts that settle at the same
 * instant come in no promised order. Interrupting the consumer stops every read at
 * once and nothing further is emitted. The hosts are observed through the
 * `RouteStatusSource` in context (one shared watch, or polls); without one, each host
 * is polled through `SessionRouter.verdictFor`. With both timings given only
 * `SessionRouter` is needed; otherwise the missing ones come from `RouterConfig`.
 */
export function watchRouteHealth(
  input: WatchRouteHealthInput & Timing
): Stream.Stream<RouteHealthEvent, never, SessionRouter>
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, SessionRouter | RouterConfig>
export function watchRouteHealth(
  input: WatchRouteHealthInput
): Stream.Stream<RouteHealthEvent, never, SessionRouter | RouterConfig> {
  // Nothing published: finish at once, without reading configuration or the clock.
  if (input.routes.length === 0) return Stream.empty
  const { intervalMs, timeoutMs } = input
  if (timeoutMs !== undefined && intervalMs !== undefined) {
    return watch(input, { timeoutMs, intervalMs })
  }
  return Stream.unwrap(
    Effect.map(RouterConfig, (config) =>
      watch(input, {
        timeoutMs: timeoutMs ?? config.routeReadyTimeoutMs,
        intervalMs: intervalMs ?? config.routePollIntervalMs
      }))
  )
}

const watch = (input: WatchRouteHealthInput, timing: Timing): Stream.Stream<RouteHealthEvent, never, SessionRouter> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const router = yield* SessionRouter
      const source = Option.getOrElse(yield* Effect.serviceOption(RouteStatusSource), () => pollingThroughRouter(router))
      // Absolute: every host's deadline is counted from here, whatever its reads cost.
      const deadline = (yield* Clock.currentTimeMillis) + timing.timeoutMs
      const mailbox = yield* Mailbox.make<RouteHealthEvent>()
      const readErrorReported = yield* Ref.make(false)

      const reportReadError = (error: RouteReadError) =>
        Ref.getAndSet(readErrorReported, true).pipe(
          Effect.flatMap((already) => already ? Effect.void : mailbox.offer(RouteHealthEvent.readError(error)))
        )

      const host: HostWatch = {
        router,
        source,
        sessionId: input.sessionId,
        deadline,
        timeoutMs: timing.timeoutMs,
        intervalMs: timing.intervalMs,
        reportReadError
      }

      yield* mailbox.offerAll(input.routes.map(RouteHealthEvent.pending))
      const hosts = yield* Effect.forEach(input.routes, (route) =>
        Effect.map(Ref.make(noEvidence), (evidence) => ({ route, evidence, settled: false })))
      // One fiber per host: a host that settles late never holds back another's event.
      // One timer for all of them: at the deadline every host still out is interrupted
      // (and the read it has out with it) and judged on its evidence. The fibers live in
      // the stream's scope, so interrupting the consumer interrupts them before anything
      // else can be offered.
      const settling = Effect.forEach(
        hosts,
        (entry) =>
          settle(host, entry.route, entry.evidence).pipe(
            Effect.flatMap((event) => Effect.sync(() => (entry.settled = true)).pipe(Effect.zipRight(mailbox.offer(event))))
          ),
        { concurrency: "unbounded", discard: true }
      )
      const remaining = Math.max(0, deadline - (yield* Clock.currentTimeMillis))
      yield* settling.pipe(
        Effect.timeoutTo({
          duration: Duration.millis(remaining),
          onSuccess: () => Effect.void,
          onTimeout: () =>
            Effect.forEach(
              hosts.filter((entry) => !entry.settled),
              (entry) =>
                Ref.get(entry.evidence).pipe(
                  Effect.flatMap((seen) => atDeadline(host, entry.route, seen.readSince !== undefined, seen)),
                  Effect.flatMap((event) => mailbox.offer(event))
                ),
              { discard: true }
            )
        }),
        Effect.flatten,
        Effect.onExit((exit) => mailbox.done(Exit.asVoid(exit))),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )

interface HostWatch {
  readonly router: SessionRouter.Service
  readonly source: RouteStatusSource.Service
  readonly sessionId: string
  /** Epoch ms at which every host still pending is reported. */
  readonly deadline: number
  readonly timeoutMs: number
  readonly intervalMs: number
  readonly reportReadError: (error: RouteReadError) => Effect.Effect<void>
}

/** The last answer a host's reads got; it decides the reason at the deadline. */
type LastOutcome = RoutePending | RouteReadError

/** What one host's observations have shown so far. */
interface HostEvidence {
  readonly last: Option.Option<LastOutcome>
  /** When the read now out started; undefined while no read is out. */
  readonly readSince: number | undefined
  /** When the last read started: the next one is due an interval after it. */
  readonly lastReadAt: number | undefined
  /** The longest any read of this host took to answer. */
  readonly slowestAnswerMs: number
  /** Read failures in a row that will not heal by waiting (401, 403, API not served): the backoff exponent. */
  readonly permanentStreak: number
}

const noEvidence: HostEvidence = {
  last: Option.none(),
  readSince: undefined,
  lastReadAt: undefined,
  slowestAnswerMs: 0,
  permanentStreak: 0
}

/**
 * Whether a read the deadline cut short is itself evidence that the status could not
 * be read: it had been out at least a poll interval (at most a second), and more than
 * twice as long as this host's slowest answer. A server that answers every read in
 * 300 ms is slow, not silent, when the deadline cuts a read at 200 ms; one that
 * answered in milliseconds and then said nothing for seconds has stopped answering.
 */
export const cutReadIsSilence = (outForMs: number, slowestAnswerMs: number, intervalMs: number): boolean =>
  outForMs >= Math.min(Math.max(1, intervalMs), 1_000) && outForMs > 2 * slowestAnswerMs

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
        const pause = permanentStreak === 0
          ? delay
          : Duration.min(
            Duration.times(delay, 2 ** Math.min(permanentStreak, 16)),
            Duration.max(delay, PERMANENT_FAILURE_BACKOFF_CAP)
          )
        if (lastReadAt === undefined) return pause
        const now = yield* Clock.currentTimeMillis
        return Duration.millis(Math.max(0, lastReadAt + Duration.toMillis(pause) - now))
      }))

/** Observes one host until it settles; always ends in that host's terminal event. */
const settle = (watch: HostWatch, route: PublishedRoute, evidence: Ref.Ref<HostEvidence>): Effect.Effect<RouteHealthEvent> =>
  Effect.gen(function*() {
    // The last observation taken: the next call asks for a newer one.
    const seen = yield* Ref.make(0)

    /** Keeps what an answer showed: its outcome, and how long the server took. */
    const answered = (outcome: Option.Option<RouteReadError>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.update(evidence, (e) => {
          const error = Option.getOrUndefined(outcome)?.error
          // A read the client gave up on got no answer: its length says nothing of how fast the server answers.
          const silent = error?._tag === "Transport" && error.kind === "no-answer"
          return {
            ...e,
            last: Option.orElse(outcome as Option.Option<LastOutcome>, () => e.last),
            readSince: undefined,
            slowestAnswerMs: silent || e.readSince === undefined
              ? e.slowestAnswerMs
              : Math.max(e.slowestAnswerMs, now - e.readSince),
            permanentStreak: error !== undefined && isPermanent(error) ? e.permanentStreak + 1 : 0
          }
        }))

    const attempt: Effect.Effect<RouteHealthEvent, RoutePending | RouteReadError | RouteDeadlineReached> = Effect
      .gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const remaining = watch.deadline - now
        // A pause that ends at the deadline itself reads nothing: no time is left for it.
        if (remaining <= 0) return yield* new RouteDeadlineReached({ route })
        // A polling source reads on each call: that read is out from now. (Asked each
        // time: a watching source that fell back to polling starts reading.)
        if (watch.source.kind === "poll") yield* Ref.update(evidence, (e) => ({ ...e, readSince: now, lastReadAt: now }))
        // No bound of its own: the watch's one deadline timer interrupts a read that
        // hangs (and its request with it) and judges the host on what it saw.
        const { observation, seq } = yield* watch.source.next(watch.sessionId, route, yield* Ref.get(seen))
        yield* Ref.set(seen, seq)
        switch (observation._tag) {
          case "Reading":
            // The watch has not answered yet: nothing known, and nothing to wait out before asking again.
            yield* Ref.update(evidence, (e) => ({ ...e, readSince: observation.at }))
            return yield* new RoutePending({ route, reading: true })
          case "Unreadable":
            yield* answered(Option.some(observation.error))
            yield* watch.reportReadError(observation.error)
            return yield* observation.error
          case "Seen":
            yield* answered(Option.none())
            // A verdict of any kind proves the read path works: pending replaces an earlier failure.
            return yield* judge(route, observation.verdict).pipe(
              Effect.tapError((pending) => Ref.update(evidence, (e) => ({ ...e, last: Option.some<LastOutcome>(pending) })))
            )
        }
      })

    return yield* attempt.pipe(
      // "Not answered yet" is no pause point: the next call waits for the answer itself.
      Effect.retry({ while: (error) => error._tag === "RoutePending" && error.reading === true }),
      // Explicit predicate: only "not yet" and "could not read" are worth another read.
      Effect.retry({
        schedule: hostSchedule(watch, evidence),
        while: (error) => error._tag === "RoutePending" || error._tag === "RouteReadError"
      }),
      Effect.catchAll((error) =>
        error._tag === "RouteDeadlineReached"
          ? Ref.get(evidence).pipe(Effect.flatMap((last) => atDeadline(watch, route, false, last)))
          // Unreachable while the schedule runs to the deadline; were it ever to stop
          // first, its last answer is what the host is reported with.
          : atDeadline(watch, route, false, { ...noEvidence, last: Option.some(error) })
      )
    )
  })

/** A verdict as an attempt's outcome: settled hosts succeed, a pending one fails with `RoutePending`. */
const judge = (route: PublishedRoute, verdict: RouteVerdict): Effect.Effect<RouteHealthEvent, RoutePending> => {
  switch (verdict.kind) {
    case "programmed":
      return Effect.succeed(RouteHealthEvent.programmed(route))
    case "rejected":
      // A rejection is final: the controller looked at the route and refused it.
      return Effect.succeed(RouteHealthEvent.unprogrammed(route, rejectionReason(verdict.reason, verdict.message)))
    case "pending":
      return Effect.fail(new RoutePending({ route }))
  }
}

/**
 * The terminal event of a host still unsettled at the deadline: the last evidence
 * decides. The unclaimed advice only when the last thing the cluster said was a real
 * answer (the object, without a status that programs it); a read failure when the
 * last read failed, or when the read the deadline cut short had gone unanswered.
 */
const atDeadline = (
  watch: HostWatch,
  route: PublishedRoute,
  readCutOff: boolean,
  seen: HostEvidence
): Effect.Effect<RouteHealthEvent> => {
  const outFor = seen.readSince === undefined ? 0 : watch.deadline - seen.readSince
  const silent = readCutOff && (Option.isNone(seen.last) || cutReadIsSilence(outFor, seen.slowestAnswerMs, watch.intervalMs))
  if (!silent) {
    const last = Option.getOrUndefined(seen.last)
    return Effect.succeed(
      RouteHealthEvent.unprogrammed(
        route,
        last?._tag === "RouteReadError" ? readFailureReason(last) : watch.router.unclaimedReason(route)
      )
    )
  }
  // The server stopped answering: the unclaimed advice would blame a controller
  // nobody was able to ask about.
  const hung = new RouteReadError({
    route,
    error: new Transport({
      reason: `the status read got no answer within ${outFor} ms (cut off by the ${watch.timeoutMs} ms route deadline)`,
      kind: "no-answer"
    })
  })
  return watch.reportReadError(hung).pipe(Effect.as(RouteHealthEvent.unprogrammed(route, readFailureReason(hung))))
}
