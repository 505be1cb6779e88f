/**
 * Shards of one controller: each shard's Lease carries the shard count in its name, and a
 * replica refuses to start while a live Lease of the controller with another count
 * exists, since shard 0 of 2 and shard 1 of 3 would write the same Pods. Over HTTP
 * against LocalCluster, with the live client.
 */
import { describe, expect, it } from "@effect/vitest"
import { SessionCluster } from "@session-routing/local-cluster"
import { DateTime, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import type { Lease } from "../../src/domain/Objects.js"
import { LeaseResource } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { controllerLeaseName, runController } from "../../src/runner/Controller.js"
import { otherShardCount, shardCountOf, shardLeaseName } from "../../src/runner/controller/ShardLeases.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer } from "../support/RouterHarness.js"

const NOW = Date.parse("2026-12-04T12:00:00Z")

/** A Lease of `name` held by `holder`, renewed `ago` ms before NOW, for 15 s. */
const lease = (name: string, holder: string, ago: number): Lease => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    renewTime: DateTime.formatIso(DateTime.unsafeMake(NOW - ago)).replace(/Z$/, "000Z")
  }
})

describe("shard Leases", () => {
  it("are named for the shard and the count, the unsharded one alone", () => {
    expect(controllerLeaseName(undefined)).toBe("session-routing-controller")
    expect(controllerLeaseName({ count: 1, index: 0 })).toBe("session-routing-controller")
    expect(controllerLeaseName({ count: 3, index: 1 })).toBe("session-routing-controller-shard-1-of-3")
    expect([shardCountOf(shardLeaseName(3, 1)), shardCountOf("session-routing-controller"), shardCountOf("x")])
      .toEqual([3, 1, undefined])
  })

  it("find a live Lease of another count, and pass over expired, released and same-count ones", () => {
    const leases = [
      lease("session-routing-controller-shard-0-of-3", "c3", 1_000),
      lease("session-routing-controller-shard-1-of-4", "c4", 16_000),
      lease("session-routing-controller-shard-0-of-5", "", 1_000),
      lease("unrelated", "x", 1_000)
    ]
    expect(otherShardCount(leases, "ns", 3, NOW)).toBeUndefined()
    expect(otherShardCount([...leases, lease("session-routing-controller", "c1", 5_000)], "ns", 3, NOW))
      .toEqual({ lease: "ns/session-routing-controller", count: 1, holder: "c1", until: NOW + 10_000 })
  })
})

describe("a controller replica with another shard count than a live one", () => {
  it.scoped("refuses to start, naming the Lease, its holder and count", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const sc = yield* Effect.orDie(SessionCluster.make({ baseDomain: BASE_DOMAIN, dataPlane: false }))
      yield* Effect.orDie(
        sc.cluster.store.create(
          LeaseResource,
          sc.namespace,
          lease("session-routing-controller-shard-0-of-2", "c0", 1_000)
        )
      )
      const layer = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
        Layer.provideMerge(routerConfigLayer(sc, { mode: "ingress" }))
      )
      const fiber = yield* Effect.fork(Effect.provide(
        runController({
          shard: { count: 3, index: 1 },
          leaderElection: {
            identity: "c1",
            leaseDuration: "15 seconds",
            renewDeadline: "10 seconds",
            retryPeriod: "2 seconds"
          }
        }),
        layer
      ))
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : ""
      expect(failure).toContain(
        `Lease ${sc.namespace}/session-routing-controller-shard-0-of-2 of this controller with 2 shards is held by \\"c0\\" for 14 s more, and this replica has 3 shards`
      )
      // It took no Lease of its own.
      const leases = yield* Effect.orDie(sc.cluster.store.list(LeaseResource, sc.namespace))
      expect(leases.items.map((l) => l.metadata?.name)).toEqual(["session-routing-controller-shard-0-of-2"])
    }))
})
