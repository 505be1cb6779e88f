/**
 * The polling route-status source on its own, in memory on TestClock: hosts that
 * share an object share each GET while it is out (and only while it is out), what an
 * absent object and a refused read become, polls without the client's retries and a
 * one-off read with them, and a mode that publishes nothing reading nothing at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Effect, Fiber, FiberRef, Layer, Ref, TestClock } from "effect"
import { IngressResource } from "../../../src/domain/Resources.js"
import type { PublishedRoute } from "../../../src/domain/Routes.js"
import { RouteVerdict } from "../../../src/domain/Routes.js"
import * as PollStatusSource from "../../../src/layers/routeStatusSource/PollStatusSource.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import { currentTransientRetry, KubeClient } from "../../../src/services/KubeClient.js"
import { Observation } from "../../../src/services/RouteStatusSource.js"
import { RouteReadError } from "../../../src/services/RouteStatusSource.js"
import {
  BASE_DOMAIN,
  buildRouter,
  kubeClientLayer,
  observedKubeClient,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  twoPortSession
} from "../../support/RouterHarness.js"

const sessionId = "pollsrc1"
const spec = twoPortSession(sessionId, "5e2b7c1a-0000-4000-8000-00000000abcd")
const route = (port: number, id = sessionId): PublishedRoute => ({ host: `${port}-${id}.${BASE_DOMAIN}`, port })

/**
 * An ingress router on a cluster whose controller never writes status (to publish
 * with), and the polling source beside it, built from the client and `config` alone,
 * counting the GETs the source sends.
 */
const pollingSource = (config: TestConfig = {}) =>
  Effect.gen(function*() {
    const sc: SessionCluster.SessionCluster = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
    const kube = yield* Effect.provide(KubeClient, kubeClientLayer("in memory", sc.cluster))
    const router = yield* buildRouter(
      SessionRouting.layerIngress.pipe(
        Layer.provide(Layer.succeed(KubeClient, kube)),
        Layer.provide(routerConfigLayer(sc))
      )
    ).pipe(Effect.orDie)
    const gets = yield* Ref.make(0)
    // Whether the client's own retries were on for each GET.
    const retried = yield* Ref.make<ReadonlyArray<boolean>>([])
    const counted = observedKubeClient(
      kube,
      (call) =>
        call.verb === "get"
          ? Ref.update(gets, (n) => n + 1).pipe(
            Effect.zipRight(FiberRef.get(currentTransientRetry)),
            Effect.flatMap((on) => Ref.update(retried, (all) => [...all, on]))
          )
          : Effect.void
    )
    const source = yield* PollStatusSource.make.pipe(
      Effect.provideService(KubeClient, counted),
      Effect.provide(routerConfigLayer(sc, config))
    )
    return { sc, router, source, gets: Ref.get(gets), retried: Ref.get(retried) }
  })

describe("the polling route-status source", () => {
  it.scoped("sends one GET for hosts that share an object while it is out, and a fresh one after it answered", () =>
    Effect.gen(function*() {
      const { gets, router, sc, source } = yield* pollingSource()
      const routes = yield* router.publish(spec)
      expect(routes).toEqual([route(8080), route(9090)])
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.latency(100) })
      const both = yield* Effect.fork(
        Effect.all(routes.map((r) => source.next(sessionId, r, 0)), { concurrency: "unbounded" })
      )
      yield* TestClock.adjust(100)
      const pending = Observation.seen(RouteVerdict.pending, true)
      expect(yield* Fiber.join(both)).toEqual([{ seq: 1, observation: pending }, { seq: 1, observation: pending }])
      expect(yield* gets).toBe(1)
      // The shared read is let go once it answered: the next round reads the cluster again.
      const again = yield* Effect.fork(source.next(sessionId, routes[0]!, 1))
      yield* TestClock.adjust(100)
      expect(yield* Fiber.join(again)).toEqual({ seq: 2, observation: pending })
      expect(yield* gets).toBe(2)
    }))

  it.scoped("keeps the shared read going for the other hosts when one of them stops waiting", () =>
    Effect.gen(function*() {
      const { gets, router, sc, source } = yield* pollingSource()
      const routes = yield* router.publish(spec)
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.latency(100) })
      const first = yield* Effect.fork(source.next(sessionId, routes[0]!, 0))
      const second = yield* Effect.fork(source.next(sessionId, routes[1]!, 0))
      yield* TestClock.adjust(50)
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust(50)
      expect(yield* Fiber.join(second)).toEqual({ seq: 1, observation: Observation.seen(RouteVerdict.pending, true) })
      expect(yield* gets).toBe(1)
    }))

  it.scoped("polls without the client's own retries, the schedule being the retry, and reads once with them", () =>
    Effect.gen(function*() {
      const { retried, router, source } = yield* pollingSource()
      const [r8080] = yield* router.publish(spec)
      yield* source.next(sessionId, r8080!, 0)
      expect(yield* retried).toEqual([false])
      // A one-off read (a status asked once) has no schedule to retry it.
      expect(yield* source.read(sessionId, r8080!)).toEqual(RouteVerdict.pending)
      expect(yield* retried).toEqual([false, true])
    }))

  it.scoped("says an object that does not exist is absent and still pending", () =>
    Effect.gen(function*() {
      const { source } = yield* pollingSource()
      expect(yield* source.next("neverpublished", route(8080, "neverpublished"), 4)).toEqual({
        seq: 5,
        observation: Observation.seen(RouteVerdict.pending, false)
      })
    }))

  it.scoped("turns a refused read into an unreadable observation that keeps the API's error", () =>
    Effect.gen(function*() {
      const { router, sc, source } = yield* pollingSource()
      const [r8080] = yield* router.publish(spec)
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.forbid() })
      const { observation, seq } = yield* source.next(sessionId, r8080!, 0)
      expect(seq).toBe(1)
      expect(observation._tag).toBe("Unreadable")
      const error = observation._tag === "Unreadable" ? observation.error : undefined
      expect(error).toBeInstanceOf(RouteReadError)
      expect(error?.route).toEqual(r8080)
      expect(error?.error._tag).toBe("Forbidden")
    }))

  it.scoped("reads nothing and answers pending when the configuration publishes nothing (mode none)", () =>
    Effect.gen(function*() {
      const { gets, router, source } = yield* pollingSource({ mode: "none" })
      yield* router.publish(spec)
      expect(source.kind).toBe("poll")
      expect(yield* source.next(sessionId, route(8080), 0)).toEqual({
        seq: 1,
        observation: Observation.seen(RouteVerdict.pending, true)
      })
      expect(yield* source.next(sessionId, route(9090), 1)).toEqual({
        seq: 2,
        observation: Observation.seen(RouteVerdict.pending, true)
      })
      // Nothing went to the client: there is no object of this mode to read.
      expect(yield* gets).toBe(0)
    }))
})
