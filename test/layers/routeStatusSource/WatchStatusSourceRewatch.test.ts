/**
 * The shared-watch route-status source after its watch was refused, in memory on
 * TestClock: it polls, tries list and watch again after 30 s, doubling up to every
 * 5 minutes, and goes back to watching once both are allowed, saying each change once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Clock, Effect, Fiber, Logger, Ref, Stream, TestClock } from "effect"
import type { Ingress } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { type PublishedRoute, RouteVerdict } from "../../../src/domain/Routes.js"
import { modeStatus } from "../../../src/layers/routeStatusSource/StatusObjects.js"
import * as WatchStatusSource from "../../../src/layers/routeStatusSource/WatchStatusSource.js"
import * as IngressRouter from "../../../src/layers/sessionRouter/IngressRouter.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { RouterConfig } from "../../../src/services/RouterConfig.js"
import { Observation, type RouteStatusSource } from "../../../src/services/RouteStatusSource.js"
import {
  BASE_DOMAIN,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  twoPortSession
} from "../../support/RouterHarness.js"

const sessionId = "rewatch1"
const spec = twoPortSession(sessionId, "7d3c9e2f-0000-4000-8000-00000000beef")
const r8080: PublishedRoute = { host: `8080-${sessionId}.${BASE_DOMAIN}`, port: 8080 }
const objectName = `telo-run-${sessionId}`

/** What a try of list and watch looks like: both select nothing (the liveness label). */
const isProbe = (labelSelector: string | undefined) => labelSelector?.includes("telo.run/liveness-probe") === true

/**
 * A session published on a cluster whose controller never writes status, and the
 * watching source over the cluster's client (API time limit 1 s), which counts its GETs
 * and notes when each watch of nothing opens; `logged` is what its fibers logged.
 */
const refusedOnce = Effect.gen(function*() {
  const sc = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
  const kube = yield* Effect.provide(KubeClient, kubeClientLayer("in memory", sc.cluster))
  const config = yield* Effect.provide(RouterConfig, routerConfigLayer(sc, { apiTimeoutMs: 1_000 }))
  const router = yield* IngressRouter.make.pipe(
    Effect.provideService(KubeClient, kube),
    Effect.provideService(RouterConfig, config),
    Effect.orDie
  )
  const counts = { gets: 0 }
  const tries: Array<number> = []
  const client: KubeClient.Service = {
    ...kube,
    get: (...args) => Effect.suspend(() => (counts.gets++, kube.get(...args))),
    watchFrom: (resource, namespace, options) =>
      Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) => {
        if (isProbe(options.labelSelector)) tries.push(now)
        return kube.watchFrom(resource, namespace, options)
      }))
  }
  const logged = yield* Ref.make<ReadonlyArray<string>>([])
  const collect = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) =>
      Effect.runSync(Ref.update(logged, (all) => [...all, `${logLevel.label}: ${String(message)}`]))
    )
  )
  const status = yield* modeStatus(client, config)
  const source = yield* WatchStatusSource.fromStatus(client, config, status)
  return { sc, router, source, counts, tries, logged: Ref.get(logged), collect }
})

/** The next observation of `route` after `after`, on a fork, with the clock moved `millis`. */
const nextAfter = (source: RouteStatusSource.Service, after: number, millis: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(source.next(sessionId, r8080, after))
    yield* TestClock.adjust(millis)
    return yield* Fiber.join(fiber)
  })

const refusal =
  "WARN: cannot list and watch ingresses.networking.k8s.io in namespace \"telo-sessions\": ingresses.networking.k8s.io is forbidden: User \"system:serviceaccount:default:session-routing\" cannot watch resource \"ingresses\" in API group \"networking.k8s.io\" in the namespace \"telo-sessions\" (grant the verb \"watch\" on ingresses.networking.k8s.io to this identity in a Role); route status is polled instead"
const watchedAgain =
  "INFO: can list and watch ingresses.networking.k8s.io in namespace \"telo-sessions\" again: route status is watched again, no longer polled"

describe("a watch refused, then allowed again", () => {
  it.scoped("goes back to watching after one 403 on its watch, saying once that it polls and once that it watches again", () =>
    Effect.gen(function*() {
      const { collect, counts, logged, router, sc, source, tries } = yield* refusedOnce
      yield* router.publish(spec)
      // One watch answered 403: RBAC being changed, an authorizer's bad moment.
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.forbid(), times: 1 })
      const first = yield* nextAfter(source, 0, 0).pipe(Effect.provide(collect))
      let seen = first.seq
      expect(source.kind).toBe("poll")
      expect(yield* logged).toEqual([refusal])

      // Polled meanwhile, one GET per call, as before.
      const polled = yield* nextAfter(source, seen, 0)
      expect(polled.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      expect(counts.gets).toBeGreaterThan(0)
      seen = polled.seq

      // The first try, 30 s later (jittered: 24 to 36 s), finds list and watch allowed: the
      // watch is let in once no refusal came within the API time limit (1 s).
      yield* TestClock.adjust("23 seconds")
      expect(tries).toEqual([])
      yield* TestClock.adjust("15 seconds")
      expect(tries).toHaveLength(1)
      expect(tries[0]).toBeGreaterThanOrEqual(24_000)
      expect(tries[0]).toBeLessThanOrEqual(36_000)
      expect(source.kind).toBe("watch")
      expect(source.changes).toBeDefined()
      expect(yield* logged).toEqual([refusal, watchedAgain])

      // The host that polled sees the watched state at once, and then each change from
      // the watch, with no GET.
      const gets = counts.gets
      const answering = yield* Effect.fork(source.next(sessionId, r8080, seen))
      yield* TestClock.adjust(0)
      expect(answering.unsafePoll()).not.toBeNull()
      const watched = yield* Fiber.join(answering)
      expect(watched.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      const ingress = yield* Effect.orDie(sc.cluster.store.get(IngressResource, "telo-sessions", objectName))
      const programmed: Ingress = { ...ingress, status: { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } } }
      const waiting = yield* Effect.fork(source.next(sessionId, r8080, watched.seq))
      yield* Effect.orDie(sc.cluster.store.replaceStatus(IngressResource, "telo-sessions", objectName, programmed))
      yield* TestClock.adjust(0)
      const change = yield* Fiber.join(waiting)
      expect(change.observation._tag === "Seen" && change.observation.verdict.kind).toBe("programmed")
      expect(counts.gets).toBe(gets)
      // Nothing said twice, and no more tries.
      yield* TestClock.adjust("10 minutes")
      expect(yield* logged).toEqual([refusal, watchedAgain])
      expect(tries).toHaveLength(1)
    }))

  it.scoped("tries again after 30 s, doubling up to every 5 minutes, and polls meanwhile, while the watch stays refused", () =>
    Effect.gen(function*() {
      const { collect, logged, router, sc, source, tries } = yield* refusedOnce
      yield* router.publish(spec)
      // Lists answer; every watch is refused.
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.forbid() })
      yield* nextAfter(source, 0, 0).pipe(Effect.provide(collect))
      expect(source.kind).toBe("poll")
      yield* TestClock.adjust("30 minutes")
      // Jittered delays are fractions of a millisecond.
      const gaps = tries.map((at, i) => Math.round(at - (tries[i - 1] ?? 0)))
      // 30 s, 60 s, 120 s, 240 s, each jittered by 0.8 to 1.2, then 5 minutes apart.
      expect(gaps.length).toBeGreaterThanOrEqual(7)
      for (const [i, base] of [30_000, 60_000, 120_000, 240_000].entries()) {
        expect(gaps[i]).toBeGreaterThanOrEqual(base * 0.8)
        expect(gaps[i]).toBeLessThanOrEqual(base * 1.2)
      }
      expect(gaps.slice(4)).toEqual(gaps.slice(4).map(() => 300_000))
      expect(source.kind).toBe("poll")
      const polled = yield* nextAfter(source, 0, 0)
      expect(polled.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      // Said once, however many tries failed.
      expect(yield* logged).toEqual([refusal])
    }))
})
