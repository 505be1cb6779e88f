/**
 * Leader election over HTTP: two candidates, each with its own live client, against
 * LocalCluster on 127.0.0.1, on short durations. One leads; when its scope closes it
 * releases the Lease and the other takes over without waiting for expiry; a holder gone
 * without releasing is replaced once its Lease has stood unchanged for its duration.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { LocalCluster } from "@session-routing/local-cluster"
import { Clock, Effect, Exit, Layer, Scope } from "effect"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import type { LeaderElectionSettings, LeadershipChange } from "../../../src/runner/controller/LeaderElection.js"
import { runElected } from "../../../src/runner/controller/LeaderElection.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { makeTimeline, type Timeline } from "../../support/LeadershipTimeline.js"
import { eventually } from "../../support/RouterHarness.js"

const NS = "controllers"
const NAME = "session-routing-controller"

/** leaseDuration 1.5 s goes on the Lease as 2 s (whole seconds, rounded up). */
const settings = (identity: string): LeaderElectionSettings => ({
  namespace: NS,
  name: NAME,
  identity,
  leaseDuration: "1500 millis",
  renewDeadline: "1 second",
  retryPeriod: "250 millis"
})

/** A live client of its own on `cluster`, as each replica of a controller has. */
const liveClient = (cluster: LocalCluster.Service) => {
  const kc = new k8s.KubeConfig()
  kc.loadFromString(cluster.kubeconfig())
  return Layer.orDie(KubeClientLive.layerFromKubeConfig(kc))
}

const candidate = (
  cluster: LocalCluster.Service,
  who: string,
  timeline: Timeline,
  changes: Array<LeadershipChange> = []
) =>
  Effect.gen(function*() {
    const kube = yield* KubeClient
    return yield* runElected(
      kube.leases!,
      settings(who),
      timeline.lead(who),
      (change) => Effect.sync(() => changes.push(change))
    )
  }).pipe(Effect.provide(liveClient(cluster)))

const readLease = (cluster: LocalCluster.Service) =>
  Effect.flatMap(KubeClient, (kube) => kube.leases!.get(NS, NAME)).pipe(Effect.provide(liveClient(cluster)))

describe("leader election over HTTP with the live client", () => {
  it.scopedLive("hands over when the leader's scope closes: it releases the Lease and the other leads before it would expire", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      const timeline = makeTimeline()
      const leaderScope = yield* Scope.make()
      const aChanges: Array<LeadershipChange> = []
      const bChanges: Array<LeadershipChange> = []
      yield* Effect.forkIn(candidate(cluster, "a", timeline, aChanges), leaderScope)
      yield* eventually(timeline.leaders, (leaders) => leaders.includes("a"))
      yield* Effect.forkScoped(candidate(cluster, "b", timeline, bChanges))
      // Longer than the Lease's duration: a keeps renewing, so b only follows.
      yield* Effect.sleep("2500 millis")
      expect(yield* timeline.leaders).toEqual(["a"])
      expect(bChanges).toEqual([{ _tag: "Following", holder: "a" }])

      const closedAt = yield* Clock.currentTimeMillis
      yield* Scope.close(leaderScope, Exit.void)
      expect(aChanges).toEqual([{ _tag: "Leading" }, { _tag: "SteppedDown", released: true }])
      yield* eventually(timeline.leaders, (leaders) => leaders.includes("b"))
      // Expiry would take 2 s; a release is seen at b's next try, at most 2.2 × 250 ms later.
      expect(timeline.starts("b").at(-1)! - closedAt).toBeLessThan(1_500)
      expect(timeline.overlaps()).toBe(0)
      const lease = yield* readLease(cluster)
      expect([lease.spec?.holderIdentity, lease.spec?.leaseDurationSeconds, lease.spec?.leaseTransitions]).toEqual([
        "b",
        2,
        1
      ])
    }))

  it.scopedLive("takes a Lease whose holder is gone without releasing only once it has stood unchanged for its duration", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      // What a holder that crashed leaves: its name, renewed a moment ago by its own clock.
      const renewed = new Date(yield* Clock.currentTimeMillis).toISOString().replace("Z", "000Z")
      yield* Effect.flatMap(KubeClient, (kube) =>
        kube.leases!.create(NS, {
          metadata: { name: NAME },
          spec: {
            holderIdentity: "crashed",
            leaseDurationSeconds: 2,
            acquireTime: renewed,
            renewTime: renewed,
            leaseTransitions: 4
          }
        })).pipe(Effect.provide(liveClient(cluster)))
      const timeline = makeTimeline()
      const startedAt = yield* Clock.currentTimeMillis
      yield* Effect.forkScoped(candidate(cluster, "b", timeline))
      yield* Effect.sleep("1800 millis")
      expect(yield* timeline.leaders).toEqual([])
      yield* eventually(timeline.leaders, (leaders) => leaders.includes("b"))
      const waited = timeline.starts("b").at(-1)! - startedAt
      expect(waited).toBeGreaterThanOrEqual(2_000)
      expect(waited).toBeLessThan(4_000)
      const lease = yield* readLease(cluster)
      expect([lease.spec?.holderIdentity, lease.spec?.leaseTransitions]).toEqual(["b", 5])
    }))
})
