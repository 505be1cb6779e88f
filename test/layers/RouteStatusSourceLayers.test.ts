/**
 * The status sources stand on their own, below the router: each layer builds from
 * KubeClient and RouterConfig alone (no SessionRouter anywhere in its context), follows
 * a session someone else published to its verdicts, and says at a deadline what the
 * configuration's routing depends on. A router's layer names its own mode to the
 * source it provides.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Chunk, Duration, Effect, Fiber, Layer, Stream, TestClock } from "effect"
import { deadlineReason, ingressUnclaimedAdvice, ROUTING_OFF_ADVICE } from "../../src/domain/Diagnosis.js"
import { IngressResource } from "../../src/domain/Resources.js"
import { RouteVerdict } from "../../src/domain/Routes.js"
import { watchRouteHealth } from "../../src/health/RouteHealth.js"
import * as RouteStatusSourceLive from "../../src/layers/RouteStatusSourceLive.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import type { KubeClient } from "../../src/services/KubeClient.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"
import { Observation } from "../../src/services/RouteStatusSource.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import { localIngressSilence } from "../support/Causes.js"
import {
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  twoPortSession
} from "../support/RouterHarness.js"

const sessionId = "alone1"
const spec = twoPortSession(sessionId, "c4d5e6f7-0000-4000-8000-00000000abcd")

/** Each public source layer, typed with what it may need: KubeClient and RouterConfig, no router. */
const sourceLayers: ReadonlyArray<{
  readonly name: string
  readonly layer: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig>
}> = [
  { name: "layerWatch", layer: RouteStatusSourceLive.layerWatch },
  { name: "layerPoll", layer: RouteStatusSourceLive.layerPoll },
  { name: "layerConfig", layer: RouteStatusSourceLive.layerConfig }
]

describe("the status-source layers, from KubeClient and RouterConfig alone", () => {
  for (const { layer, name } of sourceLayers) {
    it.scoped(`${name} follows hosts another router published to programmed, and diagnoses the configured mode`, () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: { delay: Duration.millis(300) }, gateway: false })
        const kube = kubeClientLayer("in memory", sc.cluster)
        const config = routerConfigLayer(sc)
        // Published by a router that is nowhere in the source's context.
        const routes = yield* Effect.flatMap(SessionRouter, (router) => router.publish(spec)).pipe(
          Effect.provide(SessionRouting.layerIngress.pipe(Layer.provide(kube), Layer.provide(config))),
          Effect.orDie
        )
        const context = yield* Layer.build(layer.pipe(Layer.provide(kube), Layer.provide(config)))
        const source = yield* Effect.provide(RouteStatusSource, context)
        const fiber = yield* watchRouteHealth({ sessionId, routes, timeoutMs: 5_000, intervalMs: 100 }).pipe(
          Stream.runCollect,
          Effect.provide(context),
          Effect.fork
        )
        yield* TestClock.adjust(Duration.seconds(1))
        const settled = Chunk.toReadonlyArray(yield* Fiber.join(fiber)).filter((event) =>
          event._tag === "Route" && event.state !== "pending"
        )
        expect(settled.map((event) => event._tag === "Route" && event.state)).toEqual(["programmed", "programmed"])
        // What it says at a deadline is the configuration's, read by the source itself.
        expect(source.unclaimedReason(routes[0]!)).toBe(ingressUnclaimedAdvice(sc.namespace, sc.ingressClassName))
        const pathOf = yield* source.diagnose!(sessionId)
        expect(deadlineReason(pathOf(routes[0]!), "advice")).toBe(localIngressSilence(sc.namespace))
      }))
  }

  it.scoped("reads and diagnoses nothing when the configuration publishes nothing (no base domain)", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: false, gateway: false })
      // Any read of the routed kind would be refused: the answer below comes from no read.
      yield* sc.cluster.faults.add({
        resource: IngressResource,
        verbs: ["get", "list", "watch"],
        action: Fault.forbid()
      })
      const source = yield* Effect.provide(
        RouteStatusSource,
        RouteStatusSourceLive.layerWatch.pipe(
          Layer.provide(kubeClientLayer("in memory", sc.cluster)),
          Layer.provide(routerConfigLayer(sc, { unset: ["baseDomain"] }))
        )
      )
      const route = { host: "8080-alone1.nowhere", port: 8080 }
      expect(source.kind).toBe("poll")
      expect(source.changes).toBeUndefined()
      expect(source.diagnose).toBeUndefined()
      expect(source.unclaimedReason(route)).toBe(ROUTING_OFF_ADVICE)
      expect(yield* source.next(sessionId, route, 0)).toEqual({
        seq: 1,
        observation: Observation.seen(RouteVerdict.pending, true)
      })
    }))
})

describe("the source a router layer provides", () => {
  const adviceOf = (router: typeof SessionRouting.layerIngress, config: TestConfig) =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: false, gateway: false })
      const source = yield* Effect.provide(
        RouteStatusSource,
        router.pipe(
          Layer.provide(kubeClientLayer("in memory", sc.cluster)),
          Layer.provide(routerConfigLayer(sc, config))
        )
      ).pipe(Effect.orDie)
      return source.unclaimedReason({ host: `8080-${sessionId}.${sc.baseDomain}`, port: 8080 })
    })

  it.scoped("reads the kind its router publishes, whatever mode the configuration names", () =>
    Effect.gen(function*() {
      // The ingress layer starts under a gateway configuration (the gateway layer needs
      // a Gateway, which only gateway mode configures): its source is an ingress one.
      expect(yield* adviceOf(SessionRouting.layerIngress, { mode: "gateway" })).toMatch(
        /^no ingress controller claimed the session Ingress/
      )
      expect(yield* adviceOf(SessionRouting.layerGateway, { mode: "gateway" })).toMatch(
        /^no Gateway controller accepted the HTTPRoute for 8080-alone1\./
      )
    }))

  it.effect("is one that reads and diagnoses nothing from the none layer, which needs nothing", () =>
    Effect.gen(function*() {
      const source = yield* Effect.provide(RouteStatusSource, RouteStatusSourceLive.layerNone)
      const route = { host: "8080-alone1.nowhere", port: 8080 }
      expect(source.kind).toBe("poll")
      expect(source.diagnose).toBeUndefined()
      expect(source.unclaimedReason(route)).toBe(ROUTING_OFF_ADVICE)
      expect(yield* source.next(sessionId, route, 0)).toEqual({
        seq: 1,
        observation: Observation.seen(RouteVerdict.pending, true)
      })
    }))
})
