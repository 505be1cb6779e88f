/**
 * Leader election over a `coordination.k8s.io/v1` Lease, by the rules of client-go's
 * `tools/leaderelection` with a LeaseLock: the holder runs its work only while it keeps
 * renewing, and the others wait until the Lease has stayed unchanged for its duration as
 * *their own* clock measures it, so clocks that disagree never make two leaders.
 */
import { Clock, Data, DateTime, Duration, Effect, Either, Predicate, Random } from "effect"
import type { Lease } from "../../../domain/Objects.js"
import type { LeaseCalls } from "../../../services/KubeClient.js"
import { type KubeError, Transport } from "../../../services/KubeError.js"

/** The defaults of client-go's examples and controller-runtime. */
export const DEFAULT_LEASE_DURATION = Duration.seconds(15)
export const DEFAULT_RENEW_DEADLINE = Duration.seconds(10)
export const DEFAULT_RETRY_PERIOD = Duration.seconds(2)

/**
 * client-go's JitterFactor: a waiting candidate tries again after retryPeriod × (1 + up to
 * 1.2), so candidates started together do not keep colliding.
 */
export const JITTER_FACTOR = 1.2

/**
 * Who competes for which Lease, and how fast.
 *
 * @since 0.1.0
 * @category models
 */
export interface LeaderElectionSettings {
  /** The namespace of the Lease. */
  readonly namespace: string
  /** The Lease's name: every candidate for the same work names the same Lease. */
  readonly name: string
  /** This candidate, unique among them (a Pod name with a random suffix). */
  readonly identity: string
  /**
   * How long the others wait, once the Lease stops changing, before taking it; written on
   * the Lease in whole seconds, rounded up. Default 15 s.
   */
  readonly leaseDuration?: Duration.DurationInput
  /** How long after its last renewal (as sent) the holder stops leading if none succeeds since. Default 10 s. */
  readonly renewDeadline?: Duration.DurationInput
  /** The pause between tries (jittered while waiting). Default 2 s. */
  readonly retryPeriod?: Duration.DurationInput
}

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
 * The settings cannot elect safely; `problems` names each bad value and what to do.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidLeaderElectionSettings extends Data.TaggedError("InvalidLeaderElectionSettings")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `invalid leader election settings: ${this.problems.join("; ")}`
  }
}

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
    return `${lost}: no renewal succeeded within the renew deadline of ${Duration.format(this.renewDeadline)}${last}`
  }
}

/** Whether `u` is a `LeadershipLost`. */
export const isLeadershipLost = (u: unknown): u is LeadershipLost => Predicate.isTagged(u, "LeadershipLost")

/** Settings checked, in milliseconds. */
interface Election {
  readonly calls: LeaseCalls
  readonly namespace: string
  readonly name: string
  readonly identity: string
  readonly label: string
  readonly leaseMs: number
  readonly renewMs: number
  readonly retryMs: number
  /**
   * The limit of one try (a read and a write): half the renew deadline, so that a hung
   * call still leaves the holder time for another try, as the live client's attempts do.
   */
  readonly tryMs: number
}

const durationProblem = (field: string, input: Duration.DurationInput): [number, Array<string>] => {
  const duration = Duration.decode(input)
  const ms = Duration.toMillis(duration)
  return Duration.isFinite(duration) && ms > 0
    ? [ms, []]
    : [0, [`${field} ${Duration.format(duration)} must be a positive, finite duration`]]
}

const checkSettings = (
  calls: LeaseCalls,
  settings: LeaderElectionSettings
): Either.Either<Election, InvalidLeaderElectionSettings> => {
  const fmt = (ms: number) => Duration.format(Duration.millis(ms))
  const [leaseMs, leaseProblems] = durationProblem("leaseDuration", settings.leaseDuration ?? DEFAULT_LEASE_DURATION)
  const [renewMs, renewProblems] = durationProblem("renewDeadline", settings.renewDeadline ?? DEFAULT_RENEW_DEADLINE)
  const [retryMs, retryProblems] = durationProblem("retryPeriod", settings.retryPeriod ?? DEFAULT_RETRY_PERIOD)
  const problems = [
    ...(settings.namespace === "" ? ["namespace is empty: name the namespace the Lease lives in"] : []),
    ...(settings.name === "" ? ["name is empty: name the Lease every candidate competes for"] : []),
    ...(settings.identity === "" ? ["identity is empty: give each candidate its own, such as its Pod name"] : []),
    ...leaseProblems,
    ...renewProblems,
    ...retryProblems
  ]
  // The holder stops renewDeadline after its last renewal and the others take over
  // leaseDuration after they saw it: the first must come before the second.
  if (leaseMs > 0 && renewMs > 0 && leaseMs <= renewMs) {
    problems.push(
      `leaseDuration ${fmt(leaseMs)} must be longer than renewDeadline ${fmt(renewMs)}, or another candidate ` +
        `may take the Lease while the holder still leads: lengthen leaseDuration or shorten renewDeadline`
    )
  }
  // A failed renewal must leave time for at least one more try before the deadline.
  if (renewMs > 0 && retryMs > 0 && renewMs <= JITTER_FACTOR * retryMs) {
    problems.push(
      `renewDeadline ${fmt(renewMs)} must be longer than ${JITTER_FACTOR} × retryPeriod ${fmt(retryMs)} ` +
        `(${fmt(JITTER_FACTOR * retryMs)}), or a failed renewal is not tried again before the deadline: ` +
        `lengthen renewDeadline or shorten retryPeriod`
    )
  }
  if (problems.length > 0) return Either.left(new InvalidLeaderElectionSettings({ problems }))
  return Either.right({
    calls,
    namespace: settings.namespace,
    name: settings.name,
    identity: settings.identity,
    label: `${settings.namespace}/${settings.name}`,
    leaseMs,
    renewMs,
    retryMs,
    tryMs: renewMs / 2
  })
}

/** MicroTime, as the API writes a Lease's times: `2006-01-02T15:04:05.000000Z`. */
const microTime = (millis: number): string => DateTime.formatIso(DateTime.unsafeMake(millis)).replace(/Z$/, "000Z")

const holderOf = (lease: Lease): string | undefined => {
  const holder = lease.spec?.holderIdentity
  return holder === undefined || holder === "" ? undefined : holder
}

/** The record as client-go compares it: a change to any of it counts, whatever the holder's clock says. */
const recordOf = (lease: Lease): string => {
  const spec = lease.spec ?? {}
  return JSON.stringify([
    spec.holderIdentity ?? "",
    spec.leaseDurationSeconds ?? null,
    spec.acquireTime ?? null,
    spec.renewTime ?? null,
    spec.leaseTransitions ?? null
  ])
}

/** What this candidate last saw of the Lease, and when (on its own clock) it last saw it change. */
interface Candidate {
  /** As last read or written: its resourceVersion goes with the next write. */
  lease: Lease | undefined
  record: string
  changedAt: number
  /** Set once leadership is lost: nothing is written after. */
  lost: LeadershipLost | undefined
}

const see = (candidate: Candidate, lease: Lease, now: number): void => {
  candidate.lease = lease
  const record = recordOf(lease)
  if (record !== candidate.record) {
    candidate.record = record
    candidate.changedAt = now
  }
}

type Try = { readonly held: true } | { readonly held: false; readonly holder: string | undefined }

const HELD: Try = { held: true }

/**
 * One `tryAcquireOrRenew`: renew from the Lease as last written (leading), else read it
 * and create it, renew it (it names this candidate), take it (no holder, or unchanged
 * for its duration) or leave it. A Conflict or AlreadyExists fails the try: another
 * candidate wrote first.
 */
const tryOnce = (election: Election, candidate: Candidate, leading: boolean): Effect.Effect<Try, KubeError> =>
  Effect.gen(function*() {
    const { calls, identity, namespace } = election
    const leaseSeconds = Math.ceil(election.leaseMs / 1_000)
    /** Writes `lease` naming this candidate, renewed at `now`, with `spec` (acquireTime, transitions) over its own. */
    const write = (lease: Lease, now: number, spec: NonNullable<Lease["spec"]> = {}, create = false) => {
      const next: Lease = {
        ...lease,
        spec: {
          ...lease.spec,
          ...spec,
          holderIdentity: identity,
          leaseDurationSeconds: leaseSeconds,
          renewTime: microTime(now)
        }
      }
      return (create ? calls.create(namespace, next) : calls.replace(namespace, next)).pipe(
        Effect.flatMap((written) => Effect.map(Clock.currentTimeMillis, (at) => see(candidate, written, at))),
        Effect.as(HELD)
      )
    }

    if (leading && candidate.lease !== undefined) {
      // The fast path: a stale resourceVersion fails with Conflict, and the read below settles it.
      const renewed = yield* Effect.either(write(candidate.lease, yield* Clock.currentTimeMillis))
      if (Either.isRight(renewed)) return HELD
    }
    const read = yield* Effect.either(calls.get(namespace, election.name))
    const now = yield* Clock.currentTimeMillis
    if (Either.isLeft(read)) {
      if (read.left._tag !== "NotFound") return yield* read.left
      const fresh: Lease = { metadata: { name: election.name, namespace } }
      return yield* write(fresh, now, { acquireTime: microTime(now), leaseTransitions: 0 }, true)
    }
    const current = read.right
    see(candidate, current, now)
    const holder = holderOf(current)
    if (holder === identity) return yield* write(current, now)
    // A holder's own duration counts from when this candidate saw its record change,
    // never from the renewTime it wrote by its own clock.
    const durationMs = (current.spec?.leaseDurationSeconds ?? leaseSeconds) * 1_000
    if (leading || (holder !== undefined && now < candidate.changedAt + durationMs)) return { held: false, holder }
    return yield* write(current, now, {
      acquireTime: microTime(now),
      leaseTransitions: (current.spec?.leaseTransitions ?? 0) + 1
    })
  })

/**
 * `self` within `ms`, else a `Transport` no-answer. Interruptible even inside a
 * finalizer, where the release runs: an uninterruptible call would outlast its limit.
 */
const within = <A>(election: Election, ms: number, self: Effect.Effect<A, KubeError>): Effect.Effect<A, KubeError> =>
  Effect.interruptible(self).pipe(Effect.timeoutFail({
    duration: Duration.millis(ms),
    onTimeout: () =>
      new Transport({
        reason: `no answer about Lease ${election.label} within ${Duration.format(Duration.millis(ms))}`,
        kind: "no-answer"
      })
  }))

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
  candidate: Candidate,
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
  candidate: Candidate,
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
 * Clears the Lease if it still names this candidate (holderIdentity empty, 1 s), read
 * again first for its latest resourceVersion, within the renew deadline as client-go's
 * release. Answers whether it was cleared.
 */
const release = (election: Election): Effect.Effect<boolean> =>
  within(
    election,
    election.renewMs,
    Effect.gen(function*() {
      const current = yield* election.calls.get(election.namespace, election.name)
      if (holderOf(current) !== election.identity) return false
      const stamp = microTime(yield* Clock.currentTimeMillis)
      yield* election.calls.replace(election.namespace, {
        ...current,
        spec: { ...current.spec, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp }
      })
      return true
    })
  ).pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning(
          `could not release Lease ${election.label}, the next leader waits for it to expire: ${error.reason}`
        ),
        false
      )
    )
  )

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
      const candidate: Candidate = { lease: undefined, record: "", changedAt: 0, lost: undefined }
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
