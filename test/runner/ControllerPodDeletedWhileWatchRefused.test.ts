/**
 * Controller mode over HTTP against LocalCluster: a Pod deleted while the Pod watch was
 * refused (403) is seen to go once the watch is started again, so the session id it held
 * is free for the next Pod, without a restart of the process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, type LocalCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Layer, Schedule } from "effect"
import { IngressResource, PodResource } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { runController } from "../../src/runner/Controller.js"
import { eventually, kubeClientLayer, routerConfigLayer, startCluster } from "../support/RouterHarness.js"
import { routesConditionOf as conditionOf, sessionPod } from "../support/SessionPods.js"

const readPod = (cluster: LocalCluster.Service, namespace: string, name: string) =>
  Effect.orDie(cluster.store.get(PodResource, namespace, name))

describe("controller mode, the Pod watch refused for a while", () => {
  it.scopedLive(
    "forgets a Pod deleted while its watch was refused, and routes the Pod waiting for its session id",
    () =>
      Effect.gen(function*() {
        // The garbage collector takes a deleted Pod's objects, as a real cluster's does.
        const sc = yield* startCluster({ controllerManager: true })
        const { cluster, namespace } = sc
        const layer = SessionRouting.layerConfig.pipe(
          Layer.provideMerge(kubeClientLayer("over HTTP", cluster)),
          Layer.provideMerge(routerConfigLayer(sc, { mode: "ingress", routeReadyTimeoutMs: 1_500 }))
        )
        yield* Effect.forkScoped(Effect.provide(runController(), layer))
        yield* Effect.orDie(cluster.store.create(PodResource, namespace, sessionPod("first-pod", "shared")))
        yield* eventually(readPod(cluster, namespace, "first-pod"), (p) => conditionOf(p)?.status === "True")

        // The next two Pod watches are answered 403 (RBAC being changed, say); lists still
        // answer. Ending the open watches makes the controller open one at once.
        const refusal = yield* cluster.faults.add({
          resource: PodResource,
          verbs: ["watch"],
          action: Fault.forbid(),
          times: 2
        })
        const refusalsLeft = Effect.map(cluster.faults.active, (all) => all.find((f) => f.id === refusal)?.times ?? 0)
        yield* cluster.faults.closeWatches
        yield* eventually(refusalsLeft, (left) => left === 1)

        // While the watch is refused: the first Pod is deleted, and another takes its session id.
        yield* Effect.orDie(cluster.store.delete(PodResource, namespace, "first-pod"))
        yield* Effect.orDie(cluster.store.create(PodResource, namespace, sessionPod("second-pod", "shared")))

        // The controller starts its watch again from what it had seen (1 s, then 2 s
        // later): its list lacks the first Pod, which is gone, and the second is routed
        // (its publish tried again once the collector took the first Pod's objects).
        // Before, the restarted watch forgot what it knew: the second Pod stayed
        // SessionTaken until the process restarted.
        const routed = yield* readPod(cluster, namespace, "second-pod").pipe(
          Effect.filterOrFail((p) => conditionOf(p)?.status === "True", (p) => conditionOf(p)),
          Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(15))) }),
          Effect.mapError((c) => `the second Pod was not routed within 15 s: ${JSON.stringify(c)}`)
        )
        expect(conditionOf(routed)).toMatchObject({ status: "True", reason: "RoutesProgrammed" })
        const ingress = yield* eventually(
          Effect.orDie(cluster.store.get(IngressResource, namespace, "telo-run-shared")),
          (i) => i.metadata?.ownerReferences?.[0]?.name === "second-pod"
        )
        expect(ingress.metadata?.ownerReferences).toHaveLength(1)
      }),
    { timeout: 30_000 }
  )
})
