/**
 * The `coordination.k8s.io/v1` Lease, described once: a lock with a holder, its times
 * (MicroTimes) and a count of hand-overs, as leader election writes it. The fields of
 * coordinated leader election are served but cleared on every write, as a server
 * without that feature gate (off by default) clears them.
 */
import type { KubeObject } from "session-routing/kubernetes"
import { isObject } from "./json.js"
import { int32, type KindDescription, microTime, object, string } from "./typeDescription.js"

/** Lease v1: who holds it, for how long, since when, and how many times it changed hands. */
export const leaseDescription: KindDescription = {
  doc: "A lock in the API: one holder at a time, kept by renewing it before its duration runs out.",
  spec: object({
    holderIdentity: string({ doc: "Who holds the lease now." }),
    leaseDurationSeconds: int32({
      doc: "How long, from renewTime, the holder keeps the lease without renewing it; others wait this long."
    }),
    acquireTime: microTime({ doc: "When the current holder took the lease." }),
    renewTime: microTime({ doc: "When the holder last renewed the lease." }),
    leaseTransitions: int32({ doc: "How many times the lease has passed from one holder to another." }),
    strategy: string({
      doc: "How a coordinated election picks the holder (needs the CoordinatedLeaderElection gate)."
    }),
    preferredHolder: string({ doc: "The holder a coordinated election would rather have (needs the same gate)." })
  }, { serverDefault: {} })
}

/** The fields of a Lease's spec that only coordinated leader election uses. */
const GATED_FIELDS = ["strategy", "preferredHolder"]

/**
 * A Lease as the server keeps it with the CoordinatedLeaderElection gate off: without
 * `strategy` and `preferredHolder`, dropped on create, and on update unless the stored
 * Lease had them (which, with the gate off from the start, it never has).
 */
export const withoutGatedFields = (object: KubeObject): KubeObject => {
  const spec = (object as { spec?: unknown }).spec
  if (!isObject(spec) || !GATED_FIELDS.some((field) => field in spec)) return object
  const kept = Object.fromEntries(Object.entries(spec).filter(([key]) => !GATED_FIELDS.includes(key)))
  return { ...object, spec: kept } as KubeObject
}
