/**
 * The route-health watch: after publishing, poll the routing layer on a `Schedule`
 * until each host is programmed, rejected, or out of time, and say so as a `Stream`
 * of events. It reports and never fails: a slow controller and an absent one look
 * the same for the first seconds, so the watch describes routing, it does not judge the session.
 */
import { Clock, Data, Duration, Effect, Exit, Mailbox, Option, Ref, Schedule, Stream } from "effect"
import type { PublishedRoute, RouteVerdict } from "../domain/Routes.js"
import { Transport } from "../services/KubeError.js"
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
}> {}

/**
 * The watch's deadline came before this host settled. `readCutOff` is true when a
 * status read was still out at that moment (and was interrupted).
 */
export class RouteDeadlineReached extends Data.TaggedError("RouteDeadlineReached")<{
  readonly route: PublishedRoute
  readonly readCutOff: boolean
}> {}

// ---------------------------------------------------------------------------
// Schedule
// ---------------------------------------------------------------------------

/**
 * The poll cadence: one read, then `intervalMs` of quiet after it answers, so a slow
 * API server is never asked again before it answered. Not jittered: one watch polls
 * a handful of hosts, and the exact cadence is what the deadline tests rely on.
 * Floored at 1 ms: a zero interval would spin at one instant (forever, under TestClock)
 * and hammer the API server for the whole deadline.
 */
export const pollSchedule = (intervalMs: number): Schedule.Schedule<number> =>
  Schedule.spaced(Duration.millis(Math.max(1, intervalMs)))

/**
 * `schedule`, with every pause cut short at `deadlineMillis` (epoch ms). The attempt
 * that follows a cut pause finds no time left and ends the host, so the deadline
 * verdict lands at the deadline exactly, not up to one interval after it.
 */
const untilDeadline = <Out, In>(schedule: Schedule.Schedule<Out, In>, deadlineMillis: number) =>
  Schedule.modifyDelayEffect(schedule, (_, delay) =>
    Clock.currentTimeMillis.pipe(
      Effect.map((now) => Duration.min(delay, Duration.millis(Math.max(0, deadlineMillis - now))))
    ))

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
  /** Pause between reads of one host. Default: `RouterConfig.routePollIntervalMs`. */
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
 * once and nothing further is emitted. With both timings given only
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
        sessionId: input.sessionId,
        deadline,
        timeoutMs: timing.timeoutMs,
        schedule: untilDeadline(pollSchedule(timing.intervalMs), deadline),
        reportReadError
      }

      yield* mailbox.offerAll(input.routes.map(RouteHealthEvent.pending))
      // One fiber per host: a host that settles late never holds back another's event.
      // The fibers live in the stream's scope, so interrupting the consumer interrupts
      // them (and the reads they have out) before anything else can be offered.
      yield* Effect.forEach(
        input.routes,
        (route) => settle(host, route).pipe(Effect.flatMap((event) => mailbox.offer(event))),
        { concurrency: "unbounded", discard: true }
      ).pipe(
        Effect.onExit((exit) => mailbox.done(Exit.asVoid(exit))),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )

interface HostWatch {
  readonly router: SessionRouter.Service
  readonly sessionId: string
  /** Epoch ms at which every host still pending is reported. */
  readonly deadline: number
  readonly timeoutMs: number
  readonly schedule: Schedule.Schedule<number>
  readonly reportReadError: (error: RouteReadError) => Effect.Effect<void>
}

/** The last answer a host's polling got; it decides the reason at the deadline. */
type LastOutcome = RoutePending | RouteReadError

/** Polls one host until it settles; always ends in that host's terminal event. */
const settle = (watch: HostWatch, route: PublishedRoute): Effect.Effect<RouteHealthEvent> =>
  Effect.gen(function*() {
    const last = yield* Ref.make(Option.none<LastOutcome>())

    const attempt: Effect.Effect<RouteHealthEvent, RoutePending | RouteReadError | RouteDeadlineReached> = Effect
      .gen(function*() {
        const remaining = watch.deadline - (yield* Clock.currentTimeMillis)
        if (remaining <= 0) return yield* new RouteDeadlineReached({ route, readCutOff: false })
        // Bounded by what is left of the deadline, so a read that hangs cannot carry
        // the host past it; the timeout interrupts the read, and with it the request.
        const verdict = yield* watch.router.verdictFor(watch.sessionId, route).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(remaining),
            onTimeout: () => new RouteDeadlineReached({ route, readCutOff: true })
          })
        )
        return yield* judge(route, verdict)
      })
      .pipe(
        Effect.tapError((error) => {
          switch (error._tag) {
            case "RoutePending":
              // A verdict of any kind proves the read path works: it clears an earlier failure.
              return Ref.set(last, Option.some<LastOutcome>(error))
            case "RouteReadError":
              return Ref.set(last, Option.some<LastOutcome>(error)).pipe(Effect.zipRight(watch.reportReadError(error)))
            case "RouteDeadlineReached":
              return Effect.void
          }
        })
      )

    return yield* attempt.pipe(
      // Explicit predicate: only "not yet" and "could not read" are worth another read.
      Effect.retry({
        schedule: watch.schedule,
        while: (error) => error._tag === "RoutePending" || error._tag === "RouteReadError"
      }),
      Effect.catchAll((error) =>
        error._tag === "RouteDeadlineReached"
          ? Ref.get(last).pipe(Effect.flatMap((outcome) => atDeadline(watch, route, error.readCutOff, outcome)))
          // Unreachable while the schedule runs to the deadline; were it ever to stop
          // first, its last answer is what the host is reported with.
          : atDeadline(watch, route, false, Option.some(error))
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

/** The terminal event of a host still unsettled at the deadline. */
const atDeadline = (
  watch: HostWatch,
  route: PublishedRoute,
  readCutOff: boolean,
  last: Option.Option<LastOutcome>
): Effect.Effect<RouteHealthEvent> => {
  if (Option.isSome(last)) {
    // A read the deadline cut short decides nothing by itself: the last answer stands.
    return Effect.succeed(
      RouteHealthEvent.unprogrammed(
        route,
        last.value._tag === "RouteReadError" ? readFailureReason(last.value) : watch.router.unclaimedReason(route)
      )
    )
  }
  if (!readCutOff) {
    return Effect.succeed(RouteHealthEvent.unprogrammed(route, watch.router.unclaimedReason(route)))
  }
  // Not one read answered before the deadline: the status could not be read, and
  // the unclaimed advice would blame a controller nobody was able to ask about.
  const hung = new RouteReadError({
    route,
    error: new Transport({
      reason: `the status read got no answer within the ${watch.timeoutMs} ms route deadline`
    })
  })
  return watch.reportReadError(hung).pipe(Effect.as(RouteHealthEvent.unprogrammed(route, readFailureReason(hung))))
}
