/**
 * The controller's Lease names, which carry the shard count, and the check at start-up
 * that no replica of the same controller runs with another count: shards of different
 * counts split the sessions differently, so two leaders (shard 0 of 2 and shard 1 of 3)
 * would write the same Pods.
 */
import { Clock, DateTime, Effect, Option } from "effect"
import { durationInWords } from "../../domain/Durations.js"
import type { Lease } from "../../domain/Objects.js"
import { LeaseResource } from "../../domain/Resources.js"
import type { KubeClient } from "../../services/KubeClient.js"

/** The Lease of an unsharded controller, and the stem of every shard's. */
export const CONTROLLER_LEASE = "session-routing-controller"

/** Shard `index` of `count`; a count of 1 is no sharding at all, and shares the unsharded Lease. */
export const shardLeaseName = (count: number, index: number): string =>
  count <= 1 ? CONTROLLER_LEASE : `${CONTROLLER_LEASE}-shard-${index}-of-${count}`

const SHARD_LEASE = new RegExp(`^${CONTROLLER_LEASE}-shard-(\\d+)-of-(\\d+)$`)

/** The shard count a Lease name of the controller says (1 for the unsharded one); undefined for any other name. */
export const shardCountOf = (name: string): number | undefined => {
  if (name === CONTROLLER_LEASE) return 1
  const match = SHARD_LEASE.exec(name)
  return match === null ? undefined : Number(match[2])
}

/** A live Lease of the controller with another shard count than this replica's. */
export interface OtherShardCount {
  /** `namespace/name`. */
  readonly lease: string
  readonly count: number
  readonly holder: string
  /** When it expires by its holder's record (renewTime + leaseDurationSeconds), epoch ms. */
  readonly until: number
}

/**
 * When the Lease expires by its holder's own record, or undefined when it names no
 * holder (released, or never held) or cannot be dated: it is not live.
 */
const liveUntil = (lease: Lease): number | undefined => {
  const spec = lease.spec
  if (spec?.holderIdentity === undefined || spec.holderIdentity === "") return undefined
  const renewed = Option.getOrUndefined(DateTime.make(spec.renewTime ?? spec.acquireTime ?? ""))
  if (renewed === undefined) return undefined
  return DateTime.toEpochMillis(renewed) + (spec.leaseDurationSeconds ?? 0) * 1_000
}

/**
 * The first (by name) live Lease of the controller in `leases` whose shard count is not
 * `count`: held, and renewTime + leaseDuration not past by the holder's record against
 * `now` (wall clock, since the record is).
 */
export const otherShardCount = (
  leases: ReadonlyArray<Lease>,
  namespace: string,
  count: number,
  now: number
): OtherShardCount | undefined => {
  const found = leases
    .flatMap((lease): ReadonlyArray<OtherShardCount> => {
      const name = lease.metadata?.name ?? ""
      const theirs = shardCountOf(name)
      const until = liveUntil(lease)
      if (theirs === undefined || theirs === count || until === undefined || until <= now) return []
      return [{ lease: `${namespace}/${name}`, count: theirs, holder: lease.spec?.holderIdentity ?? "", until }]
    })
    .sort((a, b) => a.lease.localeCompare(b.lease))
  return found[0]
}

/** The one line a replica refuses to start with. */
export const otherShardCountLine = (other: OtherShardCount, count: number, now: number): string =>
  `Lease ${other.lease} of this controller with ${other.count} ${other.count === 1 ? "shard (unsharded)" : "shards"} ` +
  `is held by "${other.holder}" for ${durationInWords(other.until - now)} more, and this replica has ` +
  `${count} ${count === 1 ? "shard (unsharded)" : "shards"}: replicas of different --shards would route the same ` +
  `Pods; run every replica with the same --shards, or stop the others and start this one once their Leases expire`

/**
 * Lists the namespace's Leases and answers the live one of another shard count, if any.
 * A list that fails (the controller's Role lacking `list` on leases, for one) is said and
 * passes: the check guards against a mistake of configuration, and a replica that
 * cannot make it should still route.
 */
export const findOtherShardCount = (
  kube: KubeClient.Service,
  namespace: string,
  count: number
): Effect.Effect<{ readonly other: OtherShardCount; readonly line: string } | undefined> =>
  Effect.gen(function*() {
    const listed = yield* Effect.either(kube.list(LeaseResource, namespace))
    if (listed._tag === "Left") {
      yield* Effect.logWarning(
        `could not list the Leases of namespace "${namespace}" to check that no replica runs with another ` +
          `--shards, starting without the check: ${listed.left.reason}`
      )
      return undefined
    }
    const now = yield* Clock.currentTimeMillis
    const other = otherShardCount(listed.right.items, namespace, count, now)
    return other === undefined ? undefined : { other, line: otherShardCountLine(other, count, now) }
  })
