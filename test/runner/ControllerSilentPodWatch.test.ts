/**
 * Controller mode on TestClock, against the in-memory LocalCluster: a Pod watch that
 * goes silent with its connection open (a proxy that lost its upstream, a stalled watch
 * cache, while every other call answers) is noticed by the client's progress deadline,
 * and a Pod created meanwhile is routed once it passes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Stream, TestClock } from "effect"
import { IngressResource, PodResource } from "../../src/domain/Resources.js"
import { makeKubeClient, WATCH_PROGRESS_DEADLINE } from "../../src/layers/kubeClient/ResumableWatch.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { runController } from "../../src/runner/Controller.js"
import { KubeClient, type KubeClientPrimitives } from "../../src/services/KubeClient.js"
import { kubeClientLayer, routerConfigLayer, startCluster } from "../support/RouterHarness.js"
import { sessionPod } from "../support/SessionPods.js"

describe("controller mode, a Pod watch gone silent", () => {
  it.scoped("routes a Pod created while the Pod watch was silent once the watch's progress deadline passes", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster()
      const inMemory = yield* Effect.provide(KubeClient, kubeClientLayer("in memory", sc.cluster))
      // The first Pod watch connection opens and then sends nothing, bookmarks included;
      // every other call, and every later connection, is the cluster's.
      let podWatches = 0
      const watchFrom = ((resource, namespace, options) =>
        resource === PodResource && podWatches++ === 0
          ? Stream.never
          : inMemory.watchFrom(resource, namespace, options)) as KubeClientPrimitives["watchFrom"]
      const kube = makeKubeClient({ ...inMemory, watchFrom })
      const layer = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(Layer.succeed(KubeClient, kube)),
        Layer.provideMerge(routerConfigLayer(sc, { mode: "ingress" }))
      )
      yield* Effect.forkScoped(Effect.provide(runController(), layer))
      // The controller lists the (no) Pods and opens its watch; then a Pod comes.
      yield* TestClock.adjust("1 second")
      expect(podWatches).toBe(1)
      yield* Effect.orDie(sc.cluster.store.create(PodResource, sc.namespace, sessionPod("late-pod", "late")))

      const ingress = Effect.either(sc.cluster.store.get(IngressResource, sc.namespace, "telo-run-late"))
      // Not seen while the connection is silent...
      yield* TestClock.adjust(Duration.subtract(WATCH_PROGRESS_DEADLINE, Duration.millis(1_001)))
      expect(Either.isLeft(yield* ingress)).toBe(true)
      // ...and routed once the deadline closed it and the watch resumed where it was.
      let routed = false
      for (let step = 0; step < 100 && !routed; step++) {
        yield* TestClock.adjust("10 millis")
        routed = Either.isRight(yield* ingress)
      }
      expect(routed).toBe(true)
      expect(podWatches).toBe(2)
    }))
})
