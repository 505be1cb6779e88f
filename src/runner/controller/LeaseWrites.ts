/**
 * What a candidate writes on the Lease, and how it judges what it reads: one try as
 * client-go's `tryAcquireOrRenew` (renew, create, take or leave it), the release, and
 * the time limit of each call. A holder's duration is counted from when this candidate
 * saw the Lease's record change, on its own monotonic clock.
 */
import { Clock, DateTime, Duration, Effect, Either } from "effect"
import { durationInWords } from "../../domain/Durations.js"
import type { Lease } from "../../domain/Objects.js"
import { withoutTransientRetry } from "../../services/KubeClient.js"
import { type KubeError, Transport } from "../../services/KubeError.js"
import type { Election } from "./ElectionSettings.js"

/**
 * This process's monotonic clock in milliseconds (Effect's `currentTimeNanos`: hrtime in
 * the default clock). Every deadline of the election is measured on it, so a step of the
 * wall clock (NTP) neither shortens nor lengthens a lease or a renew deadline; only the
 * times written on the Lease are wall-clock time, as client-go writes them.
 */
export const monotonicMillis: Effect.Effect<number> = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos) / 1e6)

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

/** What this candidate last saw of the Lease, and when (on its own monotonic clock) it last saw it change. */
export interface Candidate {
  /** As last read or written: its resourceVersion goes with the next write. */
  lease: Lease | undefined
  record: string
  /** `monotonicMillis` when the record last changed as this candidate saw it. */
  changedAt: number
}

/** When, on this candidate's monotonic clock, the record it last saw expires unless it changes. */
export const expiryOf = (candidate: Candidate, election: Election): number =>
  candidate.changedAt +
  (candidate.lease?.spec?.leaseDurationSeconds ?? Math.ceil(election.leaseMs / 1_000)) * 1_000

const see = (candidate: Candidate, lease: Lease, now: number): void => {
  candidate.lease = lease
  const record = recordOf(lease)
  if (record !== candidate.record) {
    candidate.record = record
    candidate.changedAt = now
  }
}

export type Try = { readonly held: true } | { readonly held: false; readonly holder: string | undefined }

const HELD: Try = { held: true }

/**
 * One `tryAcquireOrRenew`: renew from the Lease as last written (leading), else read it
 * and create it, renew it (it names this candidate), take it (no holder, or unchanged
 * for its duration) or leave it. A Conflict or AlreadyExists fails the try: another
 * candidate wrote first.
 *
 * Each call is one attempt, as client-go's are: the election tries again every
 * retryPeriod. The client's own retries would run on inside the try's time limit, and
 * when it cut them short the try said "no answer" for a server that had refused the
 * connection every time.
 */
export const tryOnce = (election: Election, candidate: Candidate, leading: boolean): Effect.Effect<Try, KubeError> =>
  withoutTransientRetry(tryOnceAsked(election, candidate, leading))

const tryOnceAsked = (election: Election, candidate: Candidate, leading: boolean): Effect.Effect<Try, KubeError> =>
  Effect.gen(function*() {
    const { calls, identity, namespace } = election
    const leaseSeconds = Math.ceil(election.leaseMs / 1_000)
    /** Writes `lease` naming this candidate, renewed at `now` (wall clock), with `spec` (acquireTime, transitions) over its own. */
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
        Effect.flatMap((written) => Effect.map(monotonicMillis, (at) => see(candidate, written, at))),
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
    const seenAt = yield* monotonicMillis
    if (Either.isLeft(read)) {
      if (read.left._tag !== "NotFound") return yield* read.left
      const fresh: Lease = { metadata: { name: election.name, namespace } }
      return yield* write(fresh, now, { acquireTime: microTime(now), leaseTransitions: 0 }, true)
    }
    const current = read.right
    see(candidate, current, seenAt)
    const holder = holderOf(current)
    if (holder === identity) return yield* write(current, now)
    // A holder's own duration counts from when this candidate saw its record change, on
    // this candidate's monotonic clock: never from the renewTime it wrote by its own
    // clock, and never on a wall clock that NTP may step.
    if (leading || (holder !== undefined && seenAt < expiryOf(candidate, election))) {
      return { held: false, holder }
    }
    return yield* write(current, now, {
      acquireTime: microTime(now),
      leaseTransitions: (current.spec?.leaseTransitions ?? 0) + 1
    })
  })

/**
 * `self` within `ms`, else a `Transport` no-answer naming the limit (one try's, the
 * renew deadline, or what was left of it). Interruptible even inside a finalizer, where
 * the release runs: an uninterruptible call would outlast its limit.
 */
export const within = <A>(
  election: Election,
  ms: number,
  self: Effect.Effect<A, KubeError>
): Effect.Effect<A, KubeError> =>
  Effect.interruptible(self).pipe(Effect.timeoutFail({
    duration: Duration.millis(ms),
    onTimeout: () =>
      new Transport({
        reason: `no answer about Lease ${election.label} within ${durationInWords(ms)}, ${
          ms === election.tryMs
            ? "the time limit of one try (half the renew deadline)"
            : ms === election.renewMs
            ? "the renew deadline"
            : "what was left of the renew deadline"
        }`,
        kind: "no-answer"
      })
  }))

/**
 * Clears the Lease if it still names this candidate (holderIdentity empty, 1 s), read
 * again first for its latest resourceVersion, within the renew deadline as client-go's
 * release. Answers whether it was cleared.
 */
export const release = (election: Election): Effect.Effect<boolean> =>
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
