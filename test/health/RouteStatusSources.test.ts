/**
 * Route health through each route-status source against LocalCluster's controllers:
 * the same truth from the shared watch and from polling (pending up front, verdicts,
 * rejections, the absolute deadline, a read failure reported once), the watch's
 * verdict at the instant of the status write, and over HTTP, a watch cut or expired
 * mid-settle, a forbidden watch falling back to polling, and following a session
 * with no request at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Chunk, Clock, Duration, Effect, Fiber, Layer, Logger, Ref, Stream, TestClock } from "effect"
import type { Ingress } from "../../src/domain/Objects.js"
import { IngressResource } from "../../src/domain/Resources.js"
import type { PublishedRoute } from "../../src/domain/Routes.js"
import { type RouteHealthEvent, watchRouteHealth } from "../../src/health/RouteHealth.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { followSession } from "../../src/runner/FollowSession.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import { localIngressSilence } from "../support/Causes.js"
import {
  BASE_DOMAIN,
  type Face,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  twoPortSession
} from "../support/RouterHarness.js"

const sessionId = "sources1"
const spec = twoPortSession(sessionId, "a1b2c3d4-0000-4000-8000-00000000abcd")
const hostOf = (port: number) => `${port}-${sessionId}.${BASE_DOMAIN}`

type Source = "watch" | "poll"
type Seen = { readonly at: number; readonly event: RouteHealthEvent }

/**
 * The router, its source and the client, on `face`, configured with `source`, built
 * in the test's scope: the shared watch and the polls' shared reads live as long as
 * the test, not just as long as the effect that first used them.
 */
const routing = (sc: SessionCluster.SessionCluster, face: Face, source: Source, config: TestConfig = {}) =>
  Layer.build(
    (config.mode === "gateway" ? SessionRouting.layerGateway : SessionRouting.layerIngress).pipe(
      Layer.provideMerge(kubeClientLayer(face, sc.cluster)),
      Layer.provideMerge(routerConfigLayer(sc, { statusSource: source, ...config }))
    )
  ).pipe(Effect.orDie)

/** Publishes and forks the health watch, recording each event with the time it came. */
const publishAndWatch = (timing: { readonly timeoutMs: number; readonly intervalMs: number }) =>
  Effect.gen(function*() {
    const router = yield* SessionRouter
    const routes = yield* router.publish(spec)
    const seen = yield* Ref.make<ReadonlyArray<Seen>>([])
    const fiber = yield* watchRouteHealth({ sessionId, routes, ...timing }).pipe(
      Stream.runForEach((event) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(seen, (all) => [...all, { at, event }]))
      ),
      Effect.fork
    )
    return { fiber, seen: Ref.get(seen), router, routes }
  })

const terminal = (seen: ReadonlyArray<Seen>) =>
  seen.filter(({ event }) => event._tag === "Route" && event.state !== "pending")

const reasonOf = (
  event: RouteHealthEvent
) => (event._tag === "Route" && event.state === "unprogrammed" ? event.reason : undefined)

for (const source of ["watch", "poll"] as const) {
  describe(`route health on the ${source} source (TestClock)`, () => {
    it.scoped("reports pending up front, then programmed once the controller writes status", () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: { delay: Duration.millis(300) }, gateway: false })
        const run = yield* publishAndWatch({ timeoutMs: 5_000, intervalMs: 100 }).pipe(
          Effect.provide(yield* routing(sc, "in memory", source))
        )
        yield* TestClock.adjust(Duration.millis(1_000))
        yield* Fiber.join(run.fiber)
        const seen = yield* run.seen
        expect(seen.slice(0, 2).map(({ at, event }) => [at, event._tag === "Route" && event.state])).toEqual([
          [0, "pending"],
          [0, "pending"]
        ])
        const settled = terminal(seen)
        expect(settled.map(({ event }) => event._tag === "Route" && event.state)).toEqual(["programmed", "programmed"])
        // The watch answers at the instant of the status write; polling at its next read.
        for (const { at } of settled) {
          if (source === "watch") expect(at).toBe(300)
          else expect(at).toBeGreaterThanOrEqual(300), expect(at).toBeLessThanOrEqual(400)
        }
      }))

    it.scoped("ends every host unclaimed at the absolute deadline, with the diagnosis, when no controller writes status", () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
        const run = yield* publishAndWatch({ timeoutMs: 1_000, intervalMs: 100 }).pipe(
          Effect.provide(yield* routing(sc, "in memory", source))
        )
        yield* TestClock.adjust(Duration.millis(1_000))
        yield* Fiber.join(run.fiber)
        const settled = terminal(yield* run.seen)
        expect(settled.map(({ at }) => at)).toEqual([1_000, 1_000])
        for (const { event } of settled) {
          expect(event._tag === "Route" && reasonOf(event)).toBe(localIngressSilence())
        }
      }))

    it.scoped("reports a read failure once, and never the unclaimed advice, when every read is refused", () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: { delay: Duration.millis(300) }, gateway: false })
        yield* sc.cluster.faults.add({
          resource: IngressResource,
          verbs: ["get", "list", "watch"],
          action: Fault.forbid()
        })
        const run = yield* publishAndWatch({ timeoutMs: 1_000, intervalMs: 100 }).pipe(
          Effect.provide(
            yield* routing(sc, "in memory", source).pipe(Effect.provide(Logger.remove(Logger.defaultLogger)))
          )
        )
        yield* TestClock.adjust(Duration.millis(1_000))
        yield* Fiber.join(run.fiber)
        const seen = yield* run.seen
        expect(seen.filter(({ event }) => event._tag === "ReadError")).toHaveLength(1)
        for (const { event } of terminal(seen)) {
          expect(reasonOf(event)).toMatch(/^route status could not be read: .*forbidden/)
        }
      }))

    it.scoped("with a zero deadline, ends each host once as unread, never unclaimed", () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
        const run = yield* publishAndWatch({ timeoutMs: 0, intervalMs: 100 }).pipe(
          Effect.provide(yield* routing(sc, "in memory", source))
        )
        yield* Fiber.join(run.fiber)
        const seen = yield* run.seen
        expect(seen.filter(({ event }) => event._tag === "ReadError")).toHaveLength(1)
        const settled = terminal(seen)
        expect(settled).toHaveLength(2)
        for (const { at, event } of settled) {
          expect(at).toBe(0)
          expect(reasonOf(event)).toMatch(/^route status could not be read: .*the 0 ms route deadline/)
        }
      }))

    it.scoped("ends a rejected host at once, with the controller's reason", () =>
      Effect.gen(function*() {
        const sc = yield* startCluster({ ingress: false, gateway: { delay: Duration.millis(50) } })
        const context = yield* routing(sc, "in memory", source, { mode: "gateway", gatewaySection: "no-such-listener" })
        const run = yield* publishAndWatch({ timeoutMs: 5_000, intervalMs: 100 }).pipe(Effect.provide(context))
        yield* TestClock.adjust(Duration.millis(500))
        yield* Fiber.join(run.fiber)
        const settled = terminal(yield* run.seen)
        expect(settled).toHaveLength(2)
        for (const { at, event } of settled) {
          expect(reasonOf(event)).toMatch(/^NoMatchingParent/)
          expect(at).toBeLessThanOrEqual(source === "watch" ? 50 : 150)
        }
      }))
  })
}

describe("the shared watch's deadlines (TestClock)", () => {
  it.scoped("ends each session at its own deadline, an earlier one started later included, on one shared alarm", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
      const context = yield* routing(sc, "in memory", "watch")
      const watchFor = (id: string, timeoutMs: number) =>
        Effect.gen(function*() {
          const router = yield* SessionRouter
          const routes = yield* router.publish({ ...spec, sessionId: id, podName: `telo-run-${id}` })
          return yield* watchRouteHealth({ sessionId: id, routes, timeoutMs, intervalMs: 100 }).pipe(
            Stream.filter((event) => event._tag === "Route" && event.state !== "pending"),
            Stream.mapEffect((event) => Effect.map(Clock.currentTimeMillis, (at) => ({ at, event }))),
            Stream.runCollect,
            Effect.map(Chunk.toReadonlyArray),
            Effect.fork
          )
        }).pipe(Effect.provide(context))
      const late = yield* watchFor("late", 2_000)
      yield* TestClock.adjust(Duration.millis(100))
      const early = yield* watchFor("early", 400)
      yield* TestClock.adjust(Duration.millis(2_000))
      // Both unclaimed, each at its own deadline from its own start: 500 and 2,000.
      expect((yield* Fiber.join(early)).map(({ at }) => at)).toEqual([500, 500])
      expect((yield* Fiber.join(late)).map(({ at }) => at)).toEqual([2_000, 2_000])
    }))

  it.scoped("gives the verdict at the virtual instant of the status write", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: { delay: Duration.millis(1_234) }, gateway: false })
      const run = yield* publishAndWatch({ timeoutMs: 5_000, intervalMs: 1_000 }).pipe(
        Effect.provide(yield* routing(sc, "in memory", "watch"))
      )
      yield* TestClock.adjust(Duration.millis(5_000))
      yield* Fiber.join(run.fiber)
      expect(terminal(yield* run.seen).map(({ at }) => at)).toEqual([1_234, 1_234])
    }))
})

describe("the shared watch over HTTP", () => {
  const overHttp = (
    cluster: Parameters<typeof startCluster>[0],
    before: (sc: SessionCluster.SessionCluster) => Effect.Effect<unknown>
  ) =>
    Effect.gen(function*() {
      const sc = yield* startCluster(cluster)
      yield* before(sc)
      const warnings = yield* Ref.make<ReadonlyArray<string>>([])
      const collect = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => Effect.runSync(Ref.update(warnings, (all) => [...all, String(message)])))
      )
      const events = yield* Effect.gen(function*() {
        const router = yield* SessionRouter
        const routes = yield* router.publish(spec)
        return Chunk.toReadonlyArray(
          yield* Stream.runCollect(watchRouteHealth({ sessionId, routes, timeoutMs: 5_000, intervalMs: 50 }))
        )
      }).pipe(
        Effect.provide(yield* routing(sc, "over HTTP", "watch").pipe(Effect.provide(collect))),
        Effect.provide(collect)
      )
      return { events, warnings: yield* Ref.get(warnings), sc }
    })

  const programmedBoth = (events: ReadonlyArray<RouteHealthEvent>) =>
    expect(events.filter((event) => event._tag === "Route" && event.state === "programmed")).toHaveLength(2)

  it.scopedLive("loses no verdict when the watch is cut mid-settle", () =>
    Effect.gen(function*() {
      const { events } = yield* overHttp({ ingress: { delay: Duration.millis(300) }, gateway: false }, (sc) =>
        sc.cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.cutWatch(0), times: 2 }))
      programmedBoth(events)
    }))

  it.scopedLive("loses no verdict when the watch expires (410) mid-settle", () =>
    Effect.gen(function*() {
      const { events } = yield* overHttp({ ingress: { delay: Duration.millis(300) }, gateway: false }, (sc) =>
        sc.cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.expireWatch(0), times: 1 }))
      programmedBoth(events)
    }))

  it.scopedLive("falls back to polling when listing is forbidden, says so once, and still settles every host", () =>
    Effect.gen(function*() {
      const { events, warnings } = yield* overHttp(
        { ingress: { delay: Duration.millis(300) }, gateway: false },
        (sc) => sc.cluster.faults.add({ resource: IngressResource, verbs: ["list", "watch"], action: Fault.forbid() })
      )
      programmedBoth(events)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(
        /^cannot list and watch ingresses\.networking\.k8s\.io in namespace "telo-sessions": .*forbidden.*; route status is polled instead$/
      )
    }))

  /** Publishes the session and watches its route health until every host is settled (programmed). */
  const publishedAndProgrammed = Effect.gen(function*() {
    const router = yield* SessionRouter
    const routes = yield* router.publish(spec)
    yield* Stream.runDrain(watchRouteHealth({ sessionId, routes, timeoutMs: 5_000, intervalMs: 50 }))
    return { router, routes }
  })

  /** Follows the programmed `routes` on a fiber, collecting the first `count` events. */
  const followProgrammed = (routes: ReadonlyArray<PublishedRoute>, count: number) =>
    followSession(
      sessionId,
      routes.map((route) => ({ ...route, state: "programmed" as const })),
      { intervalMs: 50, readTimeoutMs: 2_000 }
    ).pipe(Stream.take(count), Stream.runCollect, Effect.fork)

  it.scopedLive("reports a deleted object as gone through followSession, and a new one as news again", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
      yield* Effect.gen(function*() {
        const { router, routes } = yield* publishedAndProgrammed
        const followed = yield* followProgrammed(routes, 6)
        yield* Effect.orDie(sc.cluster.store.delete(IngressResource, sc.namespace, `telo-run-${sessionId}`))
        // Published again: the controller programs the new Ingress.
        yield* router.publish(spec)
        const events = Chunk.toReadonlyArray(yield* Fiber.join(followed)) as ReadonlyArray<SessionEvent>
        const of = (port: number) =>
          events.filter((e) => e.type === "route" && e.port === port).map((e) => e.type === "route" && e.state)
        // Gone, back without status, then programmed by the controller.
        for (const port of [8080, 9090]) expect(of(port)).toEqual(["unprogrammed", "pending", "programmed"])
      }).pipe(Effect.provide(yield* routing(sc, "over HTTP", "watch")))
    }))

  it.scopedLive("reports a regression after programmed through followSession without a single GET", () =>
    Effect.gen(function*() {
      const sc = yield* startCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
      yield* Effect.gen(function*() {
        const { routes } = yield* publishedAndProgrammed
        // From here on, every GET of an Ingress is counted (a fault that changes nothing).
        const id = yield* sc.cluster.faults.add({
          resource: IngressResource,
          verbs: ["get"],
          action: Fault.latency(0),
          times: 1_000
        })
        const gets = Effect.map(sc.cluster.faults.active, (all) => 1_000 - (all.find((f) => f.id === id)?.times ?? 0))
        const followed = yield* followProgrammed(routes, 2)
        // The controller's address goes away: a load balancer lost the route.
        const name = `telo-run-${sessionId}`
        const ingress = yield* Effect.orDie(sc.cluster.store.get(IngressResource, sc.namespace, name))
        yield* Effect.orDie(
          sc.cluster.store.replaceStatus(IngressResource, sc.namespace, name, { ...ingress, status: {} } as Ingress)
        )
        const events = Chunk.toReadonlyArray(yield* Fiber.join(followed)) as ReadonlyArray<SessionEvent>
        expect(events.map((event) => event.type === "route" && [event.host, event.state]).sort()).toEqual([
          [hostOf(8080), "pending"],
          [hostOf(9090), "pending"]
        ])
        expect(yield* gets).toBe(0)
      }).pipe(Effect.provide(yield* routing(sc, "over HTTP", "watch")))
    }))
})
