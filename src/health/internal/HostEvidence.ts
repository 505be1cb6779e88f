/**
 * What one host's status reads have shown so far, and how each new observation
 * changes it: the last answer (which decides the reason at the deadline), how slow the
 * server has been, and how many permanent failures came in a row. Pure.
 */
import { Option } from "effect"
import { type PublishedRoute, type RouteHold, Unprogrammed } from "../../domain/Routes.js"
import { isPermanent } from "../../services/KubeError.js"
import type { Observation, RouteReadError } from "../../services/RouteStatusSource.js"
import { RouteHealthEvent } from "../RouteHealthEvent.js"

/**
 * A real answer that the host is still pending: the object, without a status that
 * programs it, and what holds it back when the object says so.
 */
export interface AnsweredPending {
  readonly _tag: "AnsweredPending"
  readonly held?: RouteHold
  /** The answer was that the object does not exist. */
  readonly absent?: boolean
}

/** The last answer a host's reads got; it decides the reason at the deadline. */
export type LastOutcome = AnsweredPending | RouteReadError

/** Shared: every pending answer without a hold is the same evidence. */
export const LAST_ANSWERED_PENDING: Option.Option<LastOutcome> = Option.some({ _tag: "AnsweredPending" })

/** Shared: every answer that the object does not exist is the same evidence. */
const LAST_ANSWERED_ABSENT: Option.Option<LastOutcome> = Option.some({ _tag: "AnsweredPending", absent: true })

/** What one host's observations have shown so far. */
export interface HostEvidence {
  readonly last: Option.Option<LastOutcome>
  /** When the read now out started; undefined while no read is out. */
  readonly readSince: number | undefined
  /** When the last read started: the next one is due an interval after it. */
  readonly lastReadAt: number | undefined
  /** The longest any read of this host took to answer. */
  readonly slowestAnswerMs: number
  /** Read failures in a row that will not heal by waiting (401, 403, API not served): the backoff exponent. */
  readonly permanentStreak: number
  /** Whether any answer showed the object: one that then shows it gone saw it deleted. */
  readonly seenPresent: boolean
}

export const noEvidence: HostEvidence = {
  last: Option.none(),
  readSince: undefined,
  lastReadAt: undefined,
  slowestAnswerMs: 0,
  permanentStreak: 0,
  seenPresent: false
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

/** What one observation did to a host. */
export interface Taken {
  readonly evidence: HostEvidence
  /** The host's terminal event, when the observation settled it. */
  readonly settled?: RouteHealthEvent
  /** Why the read failed, when it did. */
  readonly readError?: RouteReadError
}

/** Keeps what an answer showed: its outcome, and how long the server took. */
const answered = (e: HostEvidence, error: RouteReadError | undefined, now: number): HostEvidence => {
  const cause = error?.error
  // A read the client gave up on got no answer: its length says nothing of how fast the server answers.
  const silent = cause?._tag === "Transport" && cause.kind === "no-answer"
  return {
    ...e,
    last: error === undefined ? e.last : Option.some(error),
    readSince: undefined,
    slowestAnswerMs: silent || e.readSince === undefined
      ? e.slowestAnswerMs
      : Math.max(e.slowestAnswerMs, now - e.readSince),
    permanentStreak: cause !== undefined && isPermanent(cause) ? e.permanentStreak + 1 : 0
  }
}

/**
 * One observation taken into a host's evidence at `now`. A verdict of any kind
 * proves the read path works: pending replaces an earlier failure as the last word.
 * A rejection is final: the controller looked at the route and refused it. So is an
 * object seen and then gone: deleted (unpublished, or collected with its owner Pod),
 * it will not be programmed, and waiting for the deadline would only end in a
 * diagnosis of a route that no longer exists.
 */
export const absorb = (route: PublishedRoute, e: HostEvidence, observation: Observation, now: number): Taken => {
  switch (observation._tag) {
    case "Reading":
      // The watch has not answered yet: nothing known, as if a read were out since then.
      return { evidence: { ...e, readSince: observation.at } }
    case "Unreadable":
      return { evidence: answered(e, observation.error, now), readError: observation.error }
    case "Seen": {
      const evidence = { ...answered(e, undefined, now), seenPresent: e.seenPresent || observation.present }
      if (!observation.present) {
        return e.seenPresent
          ? { evidence, settled: RouteHealthEvent.unprogrammed(route, Unprogrammed.deleted) }
          : { evidence: { ...evidence, last: LAST_ANSWERED_ABSENT } }
      }
      const verdict = observation.verdict
      switch (verdict.kind) {
        case "programmed":
          return { evidence, settled: RouteHealthEvent.programmed(route) }
        case "rejected":
          return {
            evidence,
            settled: RouteHealthEvent.unprogrammed(route, Unprogrammed.rejected(verdict.reason, verdict.message))
          }
        case "pending":
          return {
            evidence: {
              ...evidence,
              last: verdict.held === undefined
                ? LAST_ANSWERED_PENDING
                : Option.some({ _tag: "AnsweredPending", held: verdict.held })
            }
          }
      }
    }
  }
}
