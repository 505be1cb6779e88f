/**
 * Leader election over a `coordination.k8s.io/v1` Lease, by the rules of client-go's
 * `tools/leaderelection` with a LeaseLock: the holder runs its work only while it keeps
 * renewing, and the others wait until the Lease has stayed unchanged for its duration as
 * *their own* clock measures it, so clocks that disagree never make two leaders.
 */
import { Clock, Data, Duration, Effect, Either, Predicate, Random } from "effect"
import { durationInWords } from "../../../domain/Durations.js"
import type { LeaseCalls } from "../../../services/KubeClient.js"
import type { KubeError } from "../../../services/KubeError.js"
import {
  checkSettings,
  type Election,
  type InvalidLeaderElectionSettings,
  JITTER_FACTOR,
  type LeaderElectionSettings
} from "./ElectionSettings.js"
import { type Candidate, release, tryOnce, within } from "./LeaseWrites.js"

export {
  DEFAULT_LEASE_DURATION,
  DEFAULT_RENEW_DEADLINE,
  DEFAULT_RETRY_PERIOD,
  InvalidLeaderElectionSettings,
  JITTER_FACTOR,
  type LeaderElectionSettings
} from "./ElectionSettings.js"

/**
 * What a candidate tells of itself, for logs, metrics and readiness.
 *
 * @since 0.1.0
 * @category models
 */
export type LeadershipChange =
  /** It holds the Lease and `lead` starts. */
  | { readonly _tag: "Leading" }
  /** Waiting, it saw another holder than it last told of. */
  | { readonly _tag: "Following"; readonly holder: string }
  /** It stopped leading because the Lease was lost; `lead` has been interrupted. */
  | { readonly _tag: "Lost"; readonly error: LeadershipLost }
  /** It stopped leading (interrupted, or `lead` ended); `released`: the Lease was cleared for the next one. */
  | { readonly _tag: "SteppedDown"; readonly released: boolean }

/**
 * The holder stopped leading: no renewal succeeded within its renew deadline
 * (`RenewDeadline`, with the last failure as `cause`), or the Lease names someone else
 * (`Taken`).
 *
 * @since 0.1.0
 * @category errors
 */
export class LeadershipLost extends Data.TaggedError("LeadershipLost")<{
  readonly reason: "RenewDeadline" | "Taken"
  /** `namespace/name` of the Lease. */
  readonly lease: string
  readonly identity: string
  /** Who the Lease names instead (`Taken`), if anyone. */
  readonly holder?: string
  readonly renewDeadline: Duration.Duration
  readonly cause?: KubeError
}> {
  override get message(): string {
    const lost = `candidate "${this.identity}" lost Lease ${this.lease}`
    if (this.reason === "Taken") {
      return `${lost}: it names ${this.holder === undefined ? "no holder" : `"${this.holder}"`} now`
    }
    const last = this.cause === undefined ? "" : `; the last try: ${this.cause.message}`
    return `${lost}: no renewal succeeded within the renew deadline of ${
      durationInWords(Duration.toMillis(this.renewDeadline))
    }${last}`
  }
}

/** Whether `u` is a `LeadershipLost`. */
export const isLeadershipLost = (u: unknown): u is LeadershipLost => Predicate.isTagged(u, "LeadershipLost")

/** A candidate in the running: what it saw of the Lease, and the loss once there is one (nothing is written after). */
interface Running extends Candidate {
  lost: LeadershipLost | undefined
}

/** Someone else wrote first: the normal end of a race, not worth a warning. */
const lostRace = (error: KubeError) => error._tag === "Conflict" || error._tag === "AlreadyExists"

/** Tries until this candidate holds the Lease; answers when the winning try started. */
const acquire = (
  election: Election,
  candidate: Candidate,
  observe: (change: LeadershipChange) => Effect.Effect<void>
): Effect.Effect<number> =>
  Effect.gen(function*() {
    let told: string | undefined
    let lastFailure: string | undefined
    while (true) {
      const start = yield* Clock.currentTimeMillis
      const outcome = yield* Effect.either(within(election, election.tryMs, tryOnce(election, candidate, false)))
      if (Either.isRight(outcome)) {
        if (outcome.right.held) return start
        lastFailure = undefined
        const holder = outcome.right.holder
        if (holder !== undefined && holder !== told) {
          told = holder
          yield* observe({ _tag: "Following", holder })
        }
      } else if (!lostRace(outcome.left) && outcome.left.reason !== lastFailure) {
        // Once per kind of failure: a candidate RBAC forbids says so, without a line every try.
        lastFailure = outcome.left.reason
        yield* Effect.logWarning(`could not try to take Lease ${election.label}: ${outcome.left.reason}`)
      }
      const jitter = yield* Random.next
      yield* Effect.sleep(Duration.millis(election.retryMs * (1 + JITTER_FACTOR * jitter)))
    }
  })

/**
 * Renews before `deadline`, a try every retryPeriod, each within what is left; answers
 * when the renewal that succeeded was sent (the server may have written it any time
 * after, so the next deadline counts from then). Fails at the deadline, or at once when
 * the Lease names someone else.
 */
const renewBefore = (
  election: Election,
  candidate: Running,
  deadline: number
): Effect.Effect<number, LeadershipLost> =>
  Effect.gen(function*() {
    const lost = (
      fields: { readonly reason: "RenewDeadline" | "Taken"; readonly holder?: string; readonly cause?: KubeError }
    ) => {
      const error = new LeadershipLost({
        ...fields,
        lease: election.label,
        identity: election.identity,
        renewDeadline: Duration.millis(election.renewMs)
      })
      candidate.lost = error
      return Effect.fail(error)
    }
    let last: KubeError | undefined
    while (true) {
      const start = yield* Clock.currentTimeMillis
      const left = deadline - start
      if (left <= 0) return yield* lost({ reason: "RenewDeadline", ...(last !== undefined ? { cause: last } : {}) })
      const outcome = yield* Effect.either(
        within(election, Math.min(left, election.tryMs), tryOnce(election, candidate, true))
      )
      if (Either.isRight(outcome)) {
        if (outcome.right.held) return start
        const holder = outcome.right.holder
        return yield* lost({ reason: "Taken", ...(holder !== undefined ? { holder } : {}) })
      }
      last = outcome.left
      yield* Effect.logWarning(`could not renew Lease ${election.label}, trying again: ${last.reason}`)
      const now = yield* Clock.currentTimeMillis
      yield* Effect.sleep(Duration.millis(Math.max(0, Math.min(start + election.retryMs, deadline) - now)))
    }
  })

const keepLeading = (
  election: Election,
  candidate: Running,
  renewedAt: number
): Effect.Effect<never, LeadershipLost> =>
  Effect.gen(function*() {
    let sent = renewedAt
    while (true) {
      yield* Effect.sleep(Duration.millis(election.retryMs))
      sent = yield* renewBefore(election, candidate, sent + election.renewMs)
    }
  })

/**
 * Runs `lead` only while this candidate holds the Lease: waits to take it, runs `lead`,
 * and renews every retryPeriod. When no renewal has succeeded within renewDeadline, or
 * the Lease names someone else, `lead` is interrupted at once, nothing more is written,
 * and the effect fails with `LeadershipLost` (retry it to stand again). When `lead` ends
 * or the effect is interrupted while leading, the Lease is released so that another
 * candidate takes over without waiting for it to expire, and `lead`'s outcome is
 * returned. Kubernetes failures are tried again, never returned. `observe` hears each
 * `LeadershipChange` in line with the election: it should not wait on anything.
 *
 * Another candidate may take over leaseDuration − renewDeadline after `lead` is
 * interrupted on a loss: its finalizers must be done by then.
 */
export const runElected = <A, E, R>(
  leases: LeaseCalls,
  settings: LeaderElectionSettings,
  lead: Effect.Effect<A, E, R>,
  observe: (change: LeadershipChange) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<A, E | LeadershipLost | InvalidLeaderElectionSettings, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const election = yield* checkSettings(leases, settings)
      const candidate: Running = { lease: undefined, record: "", changedAt: 0, lost: undefined }
      const renewedAt = yield* restore(acquire(election, candidate, observe))
      // From here the Lease names this candidate: the release is armed before anything
      // can interrupt, so a stop never leaves the others waiting for it to expire.
      return yield* restore(
        Effect.raceFirst(
          Effect.zipRight(observe({ _tag: "Leading" }), lead),
          keepLeading(election, candidate, renewedAt)
        )
      ).pipe(
        Effect.onExit(() =>
          candidate.lost !== undefined
            ? observe({ _tag: "Lost", error: candidate.lost })
            : Effect.flatMap(release(election), (released) => observe({ _tag: "SteppedDown", released }))
        )
      )
    })
  )
