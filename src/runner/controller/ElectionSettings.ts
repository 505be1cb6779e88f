/**
 * The settings of a leader election, with client-go's defaults, and their check: the
 * rules that keep two candidates from leading at once (the holder gives up before the
 * others may take over, and a failed renewal is tried again before its deadline).
 */
import { Data, Duration, Either } from "effect"
import { durationInWords } from "../../domain/Durations.js"
import type { LeaseCalls } from "../../services/KubeClient.js"

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

/** Settings checked, in milliseconds. */
export interface Election {
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
    : [0, [`${field} ${durationInWords(ms)} must be a positive, finite duration`]]
}

/** The settings checked, every problem named at once, with the calls the election makes. */
export const checkSettings = (
  calls: LeaseCalls,
  settings: LeaderElectionSettings
): Either.Either<Election, InvalidLeaderElectionSettings> => {
  const fmt = durationInWords
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
