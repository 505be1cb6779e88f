/**
 * Leader election over a `coordination.k8s.io/v1` Lease, by the rules of client-go's
 * `tools/leaderelection` with a LeaseLock: the holder runs its work only while it keeps
 * renewing, and the others wait until the Lease has stayed unchanged for its duration as
 * *their own* monotonic clock measures it, so clocks that disagree, or a wall clock that
 * steps, never make two leaders.
 */
import { Data, Deferred, Duration, Effect, Either, Predicate, Random } from "effect"
import { durationInWords } from "../../domain/Durations.js"
import type { LeaseCalls } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import {
  checkSettings,
  type Election,
  type InvalidLeaderElectionSettings,
  JITTER_FACTOR,
  type LeaderElectionSettings
} from "./ElectionSettings.js"
import { type Candidate, expiryOf, monotonicMillis, release, tryOnce, within } from "./LeaseWrites.js"

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
  /** Waiting, it sees a live holder: another than it last told of, or one again after `NoLeader`. */
  | { readonly _tag: "Following"; readonly holder: string }
  /**
   * Waiting, it sees no live leader: the holder it followed has left the Lease unchanged
   * for its duration by this candidate's clock, and this candidate could not take it
   * (its calls fail). `Following` or `Leading` comes once it sees or becomes one.
   */
  | { readonly _tag: "NoLeader"; readonly lastHolder: string }
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
  /** `monotonicMillis` when the last renewal that succeeded (or the acquisition) was sent. */
  renewedAt: number
}

/**
 * What `lead` may ask of the election it runs under.
 *
 * @since 0.1.0
 * @category models
 */
export interface Leadership {
  /**
   * To run right before each write made on behalf of leadership: succeeds while this
   * candidate's last successful renewal was sent less than the renew deadline ago by
   * its own monotonic clock. Past it, it never succeeds, so the write is not made: this
   * candidate steps down at once (the election fails with `LeadershipLost`), and `lead`,
   * the caller with it, is interrupted. client-go's renewDeadline discipline: a leader paused
   * (SIGSTOP, a long GC, a suspended VM) past its deadline may already have a successor,
   * and a renewal sent before the pause can even be answered as a success after it.
   */
  readonly guard: Effect.Effect<void>
}

/** Someone else wrote first: the normal end of a race, not worth a warning. */
const lostRace = (error: KubeError) => error._tag === "Conflict" || error._tag === "AlreadyExists"

/** Tries until this candidate holds the Lease; answers when (on the monotonic clock) the winning try started. */
const acquire = (
  election: Election,
  candidate: Candidate,
  observe: (change: LeadershipChange) => Effect.Effect<void>
): Effect.Effect<number> =>
  Effect.gen(function*() {
    /** The live holder last told of as followed; undefined once it is told gone. */
    let told: string | undefined
    let lastFailure: string | undefined
    while (true) {
      const start = yield* monotonicMillis
      const outcome = yield* Effect.either(within(election, election.tryMs, tryOnce(election, candidate, false)))
      if (Either.isRight(outcome)) {
        if (outcome.right.held) return start
        lastFailure = undefined
        // Not held and not taken: the holder it names is live by this candidate's clock.
        const holder = outcome.right.holder
        if (holder !== undefined && holder !== told) {
          told = holder
          yield* observe({ _tag: "Following", holder })
        }
      } else {
        if (!lostRace(outcome.left) && outcome.left.reason !== lastFailure) {
          // Once per kind of failure: a candidate RBAC forbids says so, without a line every try.
          lastFailure = outcome.left.reason
          yield* Effect.logWarning(`could not try to take Lease ${election.label}: ${outcome.left.reason}`)
        }
        // A candidate that cannot read or take the Lease follows nobody once the record it
        // last saw has expired: a readiness that said "a leader is live" must stop saying so.
        // A lost race is left out: someone just wrote the Lease, and the next try sees whom.
        if (
          told !== undefined && !lostRace(outcome.left) && (yield* monotonicMillis) >= expiryOf(candidate, election)
        ) {
          const lastHolder = told
          told = undefined
          yield* observe({ _tag: "NoLeader", lastHolder })
        }
      }
      const jitter = yield* Random.next
      yield* Effect.sleep(Duration.millis(election.retryMs * (1 + JITTER_FACTOR * jitter)))
    }
  })

/** The loss, recorded on the candidate first so that nothing is written after it. */
const loseLeadership = (
  election: Election,
  candidate: Running,
  fields: { readonly reason: "RenewDeadline" | "Taken"; readonly holder?: string; readonly cause?: KubeError }
): LeadershipLost => {
  const error = new LeadershipLost({
    ...fields,
    lease: election.label,
    identity: election.identity,
    renewDeadline: Duration.millis(election.renewMs)
  })
  candidate.lost ??= error
  return candidate.lost
}

/**
 * Renews before `deadline` (monotonic), a try every retryPeriod, each within what is
 * left; answers when the renewal that succeeded was sent (the server may have written it
 * any time after, so the next deadline counts from then). Fails at the deadline, or at
 * once when the Lease names someone else.
 */
const renewBefore = (
  election: Election,
  candidate: Running,
  deadline: number
): Effect.Effect<number, LeadershipLost> =>
  Effect.gen(function*() {
    const lost = (
      fields: { readonly reason: "RenewDeadline" | "Taken"; readonly holder?: string; readonly cause?: KubeError }
    ) => Effect.fail(loseLeadership(election, candidate, fields))
    let last: KubeError | undefined
    while (true) {
      const start = yield* monotonicMillis
      const left = deadline - start
      if (left <= 0) return yield* lost({ reason: "RenewDeadline", ...(last !== undefined ? { cause: last } : {}) })
      const outcome = yield* Effect.either(
        within(election, Math.min(left, election.tryMs), tryOnce(election, candidate, true))
      )
      if (Either.isRight(outcome)) {
        if (outcome.right.held) {
          // Answered as a success after a whole renew deadline: the process was paused with
          // the renewal on the wire. The server wrote it at some unknown time since, and a
          // successor may lead by now: counting it would lead on a renewal nobody can date.
          if ((yield* monotonicMillis) - start >= election.renewMs) return yield* lost({ reason: "RenewDeadline" })
          return start
        }
        const holder = outcome.right.holder
        return yield* lost({ reason: "Taken", ...(holder !== undefined ? { holder } : {}) })
      }
      last = outcome.left
      yield* Effect.logWarning(`could not renew Lease ${election.label}, trying again: ${last.reason}`)
      const now = yield* monotonicMillis
      yield* Effect.sleep(Duration.millis(Math.max(0, Math.min(start + election.retryMs, deadline) - now)))
    }
  })

const keepLeading = (election: Election, candidate: Running): Effect.Effect<never, LeadershipLost> =>
  Effect.gen(function*() {
    while (true) {
      yield* Effect.sleep(Duration.millis(election.retryMs))
      candidate.renewedAt = yield* renewBefore(election, candidate, candidate.renewedAt + election.renewMs)
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
 * `lead` given as a function gets the `Leadership`, whose `guard` its writes run first:
 * the renew loop alone notices a passed deadline only when it next wakes, and a write
 * woken first (after a pause) would be made by a leader that may have a successor. Every
 * deadline is measured on the monotonic clock (`Clock.currentTimeNanos`).
 *
 * Another candidate may take over leaseDuration − renewDeadline after `lead` is
 * interrupted on a loss: its finalizers must be done by then.
 */
export const runElected = <A, E, R>(
  leases: LeaseCalls,
  settings: LeaderElectionSettings,
  lead: Effect.Effect<A, E, R> | ((leadership: Leadership) => Effect.Effect<A, E, R>),
  observe: (change: LeadershipChange) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<A, E | LeadershipLost | InvalidLeaderElectionSettings, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const election = yield* checkSettings(leases, settings)
      const candidate: Running = { lease: undefined, record: "", changedAt: 0, lost: undefined, renewedAt: 0 }
      /** Completed by a guard that found the deadline passed: ends the renew loop with the loss. */
      const guardTripped = yield* Deferred.make<LeadershipLost>()
      const leadership: Leadership = {
        // Past the deadline the caller waits for the interruption of `lead`, which the loss
        // brings at once: failing or interrupting it instead could end `lead` itself (a
        // write made on its main fiber) as if it had ended of its own.
        guard: Effect.suspend(() => {
          if (candidate.lost !== undefined) return Effect.never
          return Effect.flatMap(monotonicMillis, (now) =>
            now - candidate.renewedAt < election.renewMs
              ? Effect.void
              : Effect.zipRight(
                Deferred.succeed(guardTripped, loseLeadership(election, candidate, { reason: "RenewDeadline" })),
                Effect.never
              ))
        })
      }
      candidate.renewedAt = yield* restore(acquire(election, candidate, observe))
      // From here the Lease names this candidate: the release is armed before anything
      // can interrupt, so a stop never leaves the others waiting for it to expire.
      return yield* restore(
        Effect.raceFirst(
          Effect.zipRight(observe({ _tag: "Leading" }), Effect.isEffect(lead) ? lead : lead(leadership)),
          Effect.raceFirst(keepLeading(election, candidate), Effect.flatMap(Deferred.await(guardTripped), Effect.fail))
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
