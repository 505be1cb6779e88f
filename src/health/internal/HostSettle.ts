/**
 * One host until it settles: reads on the source's cadence (backed off after permanent
 * failures), each observation taken into its evidence, and at the deadline the last
 * evidence deciding its terminal event. "Still pending" and "could not read" stay
 * different errors all the way, so only they are retried.
 */
import { Clock, Data, Duration, Effect, Option, Ref, Schedule } from "effect"
import { type PublishedRoute, Unprogrammed } from "../../domain/Routes.js"
import { Transport } from "../../services/KubeError.js"
import {
  PERMANENT_FAILURE_BACKOFF_CAP,
  RouteReadError,
  type RouteStatusSource
} from "../../services/RouteStatusSource.js"
import { readFailure, RouteHealthEvent } from "../RouteHealthEvent.js"
import { absorb, cutReadIsSilence, type HostEvidence, LAST_ANSWERED_PENDING, noEvidence } from "./HostEvidence.js"

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
/** One host as route health follows it. */
export interface Host {
  readonly route: PublishedRoute
  evidence: HostEvidence
  /** The sequence number of the last observation taken: the next must be newer. */
  seen: number
  settled: boolean
}

export interface HostWatch {
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
export const settle = (
  watch: HostWatch,
  host: Host,
  evidence: Ref.Ref<HostEvidence>
): Effect.Effect<RouteHealthEvent> =>
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
 * programs it); deleted when the answer was that the object does not exist; a read
 * failure when the last read failed, or when the read the deadline cut short (the
 * one still out, if any) had gone unanswered.
 */
export const atDeadline = (
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
      // Published, yet not there: it was deleted before any read saw it (the garbage
      // collector is that quick when the owner Pod does not exist).
      : last?.absent === true
      ? Effect.succeed(RouteHealthEvent.unprogrammed(route, Unprogrammed.deleted))
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
