/**
 * The shared-watch route-status source on its own, in memory on TestClock: what its
 * cache keeps of an object and what it holds (as its metrics show it), the liveness
 * list that marks every host unreadable when the server stops answering, an unserved
 * API falling back to polling, a relist that finds an object gone, and who is woken.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Clock, Deferred, Effect, Fiber, Logger, Metric, Ref, Stream, TestClock } from "effect"
import { IngressResource } from "../../../src/domain/Resources.js"
import type { PublishedRoute } from "../../../src/domain/Routes.js"
import { RouteVerdict, Unprogrammed } from "../../../src/domain/Routes.js"
import { reportRouteHealth, RouteHealthEvent } from "../../../src/health/RouteHealth.js"
import {
  modeStatus,
  type StatusObject,
  type StatusObjects
} from "../../../src/layers/routeStatusSource/StatusObjects.js"
import * as WatchStatusSource from "../../../src/layers/routeStatusSource/WatchStatusSource.js"
import * as IngressRouter from "../../../src/layers/sessionRouter/IngressRouter.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { NotServed, Transport } from "../../../src/services/KubeError.js"
import { RouterConfig } from "../../../src/services/RouterConfig.js"
import {
  Observation,
  type RouteStatusSource,
  RouteStatusSource as RouteStatusSourceTag
} from "../../../src/services/RouteStatusSource.js"
import { SessionRouter } from "../../../src/services/SessionRouter.js"
import { statusCacheEntries, statusWaiters } from "../../../src/services/Telemetry.js"
import {
  BASE_DOMAIN,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  twoPortSession
} from "../../support/RouterHarness.js"

const sessionId = "watchsrc1"
const spec = twoPortSession(sessionId, "7d3c9e2f-0000-4000-8000-00000000abcd")
const r8080: PublishedRoute = { host: `8080-${sessionId}.${BASE_DOMAIN}`, port: 8080 }
const r9090: PublishedRoute = { host: `9090-${sessionId}.${BASE_DOMAIN}`, port: 9090 }
const objectName = `telo-run-${sessionId}`

/**
 * An ingress router on a cluster whose controller never writes status (to publish
 * with), and the watching source beside it, built from the client and the
 * configuration alone (its status objects changed by `adapt`), in the test's scope;
 * `collect` gathers the warnings logged by the fibers it starts.
 */
const watchingSource = (
  options: {
    readonly config?: TestConfig
    readonly adapt?: (objects: StatusObjects) => StatusObjects
    /** The client the source reads through, made from the cluster's. */
    readonly client?: (kube: KubeClient.Service) => KubeClient.Service
  } = {}
) =>
  Effect.gen(function*() {
    const sc: SessionCluster.SessionCluster = yield* startCluster({ ingress: { delay: "never" }, gateway: false })
    const kube = yield* Effect.provide(KubeClient, kubeClientLayer("in memory", sc.cluster))
    const config = yield* Effect.provide(RouterConfig, routerConfigLayer(sc, options.config))
    const router = yield* IngressRouter.make.pipe(
      Effect.provideService(KubeClient, kube),
      Effect.provideService(RouterConfig, config),
      Effect.orDie
    )
    const adapt = options.adapt ?? ((objects) => objects)
    const client = options.client?.(kube) ?? kube
    const status = yield* modeStatus(client, config)
    const warnings = yield* Ref.make<ReadonlyArray<string>>([])
    const collect = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message }) => Effect.runSync(Ref.update(warnings, (all) => [...all, String(message)])))
    )
    const source = yield* WatchStatusSource.fromStatus(client, config, { ...status, objects: adapt(status.objects!) })
    return { sc, kube, router, source, status, warnings: Ref.get(warnings), collect }
  })

/** The next observation of `route` after `after`, on a fork, with the clock moved `millis`. */
const nextAfter = (source: RouteStatusSource.Service, route: PublishedRoute, after: number, millis: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(source.next(sessionId, route, after))
    yield* TestClock.adjust(millis)
    return yield* Fiber.join(fiber)
  })

/**
 * The session published and its host synced, on a source whose liveness list runs
 * every 100 ms and is cut off at 500 ms (half the API time limit).
 */
const livenessChecked = Effect.gen(function*() {
  const { router, sc, source } = yield* watchingSource({ config: { routePollIntervalMs: 100, apiTimeoutMs: 1_000 } })
  yield* router.publish(spec)
  const starting = yield* source.next(sessionId, r8080, 0)
  const synced = yield* nextAfter(source, r8080, starting.seq, 0)
  return { sc, source, synced }
})

describe("what its cache keeps, and when it reads", () => {
  it.scoped("caches only what a verdict reads of each object: its identity, generation and status", () =>
    Effect.gen(function*() {
      const given: Array<StatusObject | undefined> = []
      const { kube, router, sc, source } = yield* watchingSource({
        adapt: (objects) => ({
          ...objects,
          verdict: (object, route, known) => {
            given.push(object)
            return objects.verdict(object, route, known)
          }
        })
      })
      yield* router.publish(spec)
      // A watching source offers the change feed a session's one fiber waits on.
      expect(source.kind).toBe("watch")
      expect(source.changes).toBeDefined()
      const starting = yield* source.next(sessionId, r8080, 0)
      expect(starting.observation._tag).toBe("Reading")
      const synced = yield* nextAfter(source, r8080, starting.seq, 0)
      expect(synced.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      // The controller's address arrives as a watch event, which carries the whole object.
      const current = yield* Effect.orDie(kube.get(IngressResource, "telo-sessions", objectName))
      yield* Effect.orDie(
        sc.cluster.store.replaceStatus(IngressResource, "telo-sessions", objectName, {
          ...current,
          status: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } }
        })
      )
      const programmed = yield* nextAfter(source, r8080, synced.seq, 0)
      expect(programmed.observation).toEqual(Observation.seen(RouteVerdict.programmed, true))
      const stored = yield* Effect.orDie(kube.get(IngressResource, "telo-sessions", objectName))
      const metadata = stored.metadata!
      expect(metadata.generation).toBeDefined()
      expect(stored.spec).toBeDefined()
      expect(given.at(-1)).toEqual({
        apiVersion: stored.apiVersion,
        kind: stored.kind,
        metadata: {
          name: metadata.name,
          namespace: metadata.namespace,
          uid: metadata.uid,
          resourceVersion: metadata.resourceVersion,
          generation: metadata.generation
        },
        status: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } }
      })
    }))

  it.scoped("reads ahead what verdicts need before it syncs, and again on the liveness interval while hosts wait", () =>
    Effect.gen(function*() {
      // What the gateway router reads ahead (its Gateway's controller name), counted, and
      // what each verdict was given of it.
      let prepared = 0
      const judgedWith: Array<string | undefined> = []
      const { router, source } = yield* watchingSource({
        config: { routePollIntervalMs: 100 },
        adapt: (objects) => ({
          ...objects,
          context: Effect.sync(() => ({ controllerName: `controller-${++prepared}` })),
          verdict: (object, route, known) => {
            judgedWith.push(known.controllerName)
            return objects.verdict(object, route, known)
          }
        })
      })
      yield* router.publish(spec)
      const starting = yield* source.next(sessionId, r8080, 0)
      const synced = yield* nextAfter(source, r8080, starting.seq, 0)
      expect(synced.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      // Read before the first verdict from the cache, so that no verdict waits on it.
      expect(prepared).toBe(1)
      expect(judgedWith).toEqual(["controller-1"])
      const feed = source.changes!
      const waiting = yield* Effect.fork(
        feed.awaitAny(sessionId, [{ route: r8080, seen: feed.seqOf(sessionId, r8080) }], 250)
      )
      yield* TestClock.adjust(250)
      yield* Fiber.join(waiting)
      // Refreshed by the liveness checks at 100 and 200 ms.
      expect(prepared).toBe(3)
    }))

  it.effect("keeps an entry per object and per name waited for, and a waiter per waiting host, none left behind", () =>
    Effect.gen(function*() {
      // The gauges are the process's: this test reads what it adds to them.
      const gauge = (metric: Metric.Metric.Gauge<number>) =>
        Metric.value(Metric.tagged(metric, "resource", "ingresses.networking.k8s.io")).pipe(
          Effect.map((state) => state.value)
        )
      const base = { entries: yield* gauge(statusCacheEntries), waiters: yield* gauge(statusWaiters) }
      const held = Effect.all({
        entries: Effect.map(gauge(statusCacheEntries), (n) => n - base.entries),
        waiters: Effect.map(gauge(statusWaiters), (n) => n - base.waiters)
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const { router, sc, source } = yield* watchingSource()
        const other = twoPortSession("watchsrc2", "7d3c9e2f-0000-4000-8000-00000000abce")
        const otherRoute: PublishedRoute = { host: `8080-watchsrc2.${BASE_DOMAIN}`, port: 8080 }
        yield* router.publish(spec)
        yield* router.publish(other)
        const starting = yield* source.next(sessionId, r8080, 0)
        const synced = yield* nextAfter(source, r8080, starting.seq, 0)
        expect(yield* held).toEqual({ entries: 2, waiters: 0 })
        // A host waiting on its Ingress, and one waiting on a name that has no object yet.
        const waiting = yield* Effect.fork(source.next(sessionId, r8080, synced.seq))
        const ghost = yield* Effect.fork(source.next("ghost", r8080, synced.seq))
        yield* TestClock.adjust(0)
        expect(yield* held).toEqual({ entries: 3, waiters: 2 })
        // The one that leaves takes its name's entry with it: nothing is cached there.
        yield* Fiber.interrupt(ghost)
        expect(yield* held).toEqual({ entries: 2, waiters: 1 })
        // Deleted objects leave the cache, whether a host waits on them or not (the
        // watch delivers in order: the waiting host wakes after both are gone).
        yield* Effect.orDie(sc.cluster.store.delete(IngressResource, "telo-sessions", "telo-run-watchsrc2"))
        yield* Effect.orDie(sc.cluster.store.delete(IngressResource, "telo-sessions", objectName))
        expect((yield* Fiber.join(waiting)).observation).toEqual(Observation.seen(RouteVerdict.pending, false))
        expect(yield* held).toEqual({ entries: 0, waiters: 0 })
        // One object cached again when the scope closes.
        const gone = source.changes!.seqOf("watchsrc2", otherRoute)
        yield* router.publish(other)
        yield* source.next("watchsrc2", otherRoute, gone)
        expect(yield* held).toEqual({ entries: 1, waiters: 0 })
      }))
      // The cache went with the source's scope.
      expect(yield* held).toEqual({ entries: 0, waiters: 0 })
    }))
})

describe("the liveness list", () => {
  it.scoped("marks a waiting host unreadable when the liveness list goes unanswered for half the API time limit", () =>
    Effect.gen(function*() {
      const { sc, source, synced } = yield* livenessChecked
      expect(synced.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      // From 50 ms on, every list hangs: the liveness list at 100 ms gets no answer.
      const hang = yield* sc.cluster.faults.add({
        resource: IngressResource,
        verbs: ["list"],
        action: Fault.hang,
        from: 50
      })
      const waiting = yield* Effect.fork(source.next(sessionId, r8080, synced.seq))
      yield* TestClock.adjust(599)
      expect(waiting.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      const failing = yield* Fiber.join(waiting)
      expect(failing.observation._tag).toBe("Unreadable")
      expect(failing.observation._tag === "Unreadable" && failing.observation.error.error).toMatchObject({
        _tag: "Transport",
        kind: "no-answer"
      })
      // The server answers again: the next liveness list restores the cached verdict.
      yield* sc.cluster.faults.remove(hang)
      const restored = yield* nextAfter(source, r8080, failing.seq, 200)
      expect(restored.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
    }))

  it.scoped("wakes nobody while the liveness list answers, and shows the newest failure while it does not", () =>
    Effect.gen(function*() {
      const { sc, source, synced } = yield* livenessChecked
      // Ten liveness lists answer: no news, so a waiting host stays asleep.
      const waiting = yield* Effect.fork(source.next(sessionId, r8080, synced.seq))
      yield* TestClock.adjust(1_000)
      expect(waiting.unsafePoll()).toBeNull()
      // The lists start to hang: the host is told once the first goes unanswered.
      const hang = yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.hang })
      yield* TestClock.adjust(600)
      const hung = yield* Fiber.join(waiting)
      expect(hung.observation._tag === "Unreadable" && hung.observation.error.error).toMatchObject({
        _tag: "Transport",
        kind: "no-answer"
      })
      // Then the server answers them with 503s: the newest failure is what the host sees.
      yield* sc.cluster.faults.remove(hang)
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.respond(503) })
      const refused = yield* nextAfter(source, r8080, hung.seq, 200)
      expect(refused.observation._tag === "Unreadable" && refused.observation.error.error).toMatchObject({
        _tag: "Unavailable",
        code: 503
      })
    }))

  it.scoped("sends liveness lists that select nothing, and only while someone waits for a change", () =>
    Effect.gen(function*() {
      const lists: Array<{ readonly at: number; readonly items: number }> = []
      const selectors: Array<string | undefined> = []
      const { router, source, status } = yield* watchingSource({
        config: { routePollIntervalMs: 100 },
        client: (kube) => ({
          ...kube,
          list: (...args) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (at) => {
                selectors.push(args[2]?.labelSelector)
                return kube.list(...args).pipe(
                  Effect.tap((listed) => void lists.push({ at, items: listed.items.length }))
                )
              }
            )
        })
      })
      yield* router.publish(spec)
      const feed = source.changes!
      yield* nextAfter(source, r8080, 0, 0)
      // One session waits until 300 ms, then nothing waits for a second.
      const waiting = yield* Effect.fork(
        feed.awaitAny(sessionId, [{ route: r8080, seen: feed.seqOf(sessionId, r8080) }], 300)
      )
      yield* TestClock.adjust(300)
      yield* Fiber.join(waiting)
      // The watch's own list finds the session's Ingress; a liveness list finds nothing.
      expect(lists[0]).toEqual({ at: 0, items: 1 })
      expect(lists.filter(({ at }) => at > 0 && at < 300)).toEqual([{ at: 100, items: 0 }, { at: 200, items: 0 }])
      // Only this runner's objects: the watch's list selects them by the managed-by label.
      const managedBy = status.objects!.selector
      expect(managedBy).toMatch(/^app\.kubernetes\.io\/managed-by=/)
      expect(selectors.slice(0, 3)).toEqual([
        managedBy,
        `${managedBy},telo.run/liveness-probe=true`,
        `${managedBy},telo.run/liveness-probe=true`
      ])
      yield* TestClock.adjust(1_000)
      expect(lists.filter(({ at }) => at > 300)).toEqual([])
    }))

  it.scoped("leaves hosts reading while the watch is still starting, whatever the liveness list says", () =>
    Effect.gen(function*() {
      const { sc, source } = yield* watchingSource({ config: { routePollIntervalMs: 100, apiTimeoutMs: 1_000 } })
      // Every list hangs: the watch's first list, and the liveness lists too.
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.hang })
      const starting = yield* source.next(sessionId, r8080, 0)
      expect(starting.observation).toEqual(Observation.reading(0))
      // The liveness list at 100 ms times out at 600 ms: the watch has not answered
      // yet either, so the host learns nothing new.
      const waiting = yield* Effect.fork(source.next(sessionId, r8080, starting.seq))
      yield* TestClock.adjust(2_000)
      expect(waiting.unsafePoll()).toBeNull()
    }))
})

describe("an unserved API, a refused or failed watch", () => {
  it.scoped("polls instead, and says so once, when the routed API is not served", () =>
    Effect.gen(function*() {
      // Lists answer as a cluster without the routed kind's API does (HTTPRoutes
      // without the Gateway API CRDs); single reads still work.
      const notServed = new NotServed({
        reason: "the API server does not serve ingresses.networking.k8s.io",
        resource: "ingresses.networking.k8s.io"
      })
      const { collect, router, source, warnings } = yield* watchingSource({
        client: (kube) => ({ ...kube, list: () => Effect.fail(notServed) })
      })
      yield* router.publish(spec)
      // The watch starts with the first observer, which logs through its own logger.
      const first = yield* nextAfter(source, r8080, 0, 0).pipe(Effect.provide(collect))
      const second = yield* nextAfter(source, r8080, first.seq, 0)
      // Polled: a GET of the session Ingress.
      expect(second.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      expect(source.kind).toBe("poll")
      expect(source.changes).toBeUndefined()
      const said = yield* warnings
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(
        /^cannot list and watch ingresses\.networking\.k8s\.io in namespace "telo-sessions": the API server does not serve ingresses\.networking\.k8s\.io; route status is polled instead$/
      )
    }))

  it.scoped("judges a host it fell back to polling as a reader: a read hung at the deadline is unreadable, and reads keep the interval", () =>
    Effect.gen(function*() {
      // List and watch refused for good; GETs of the session Ingress answer until 500 ms, then hang.
      let gets = 0
      const { collect, router, sc, source } = yield* watchingSource({
        client: (kube) => ({ ...kube, get: (...args) => Effect.suspend(() => (gets++, kube.get(...args))) })
      })
      const routes = yield* router.publish(spec)
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list", "watch"], action: Fault.forbid() })
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.hang, from: 500 })
      const events: Array<RouteHealthEvent> = []
      const fiber = yield* reportRouteHealth(
        { sessionId, routes: [routes[0]!], timeoutMs: 1_000, intervalMs: 100 },
        (event) => Effect.sync(() => void events.push(event))
      ).pipe(
        Effect.provideService(SessionRouter, router),
        Effect.provideService(RouteStatusSourceTag, source),
        Effect.provide(collect),
        Effect.fork
      )
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fiber)
      expect(source.kind).toBe("poll")
      // One read every 100 ms: 0, 100, ..., 500, the last one hung.
      expect(gets).toBe(6)
      // The read out at the deadline had been out far longer than any answer took:
      // silence, never the advice that nobody claimed the route.
      expect(events.at(-1)).toEqual(
        RouteHealthEvent.unprogrammed(
          routes[0]!,
          Unprogrammed.unreadable(
            "route status could not be read: the status read got no answer within 500 ms (cut off by the 1000 ms route deadline)"
          )
        )
      )
    }))

  it.scoped("stops its watch, and says so once, when the liveness list is refused for good", () =>
    Effect.gen(function*() {
      let watching = 0
      const { collect, sc, source, warnings } = yield* watchingSource({
        config: { routePollIntervalMs: 100 },
        client: (kube) => ({
          ...kube,
          watch: (...args) =>
            kube.watch(...args).pipe(
              Stream.onStart(Effect.sync(() => watching++)),
              Stream.ensuring(Effect.sync(() => watching--))
            )
        })
      })
      const feed = source.changes!
      yield* nextAfter(source, r8080, 0, 0).pipe(Effect.provide(collect))
      expect(watching).toBe(1)
      // RBAC loses the list verb while the watch connection stays up.
      yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.forbid() })
      const waiting = yield* Effect.fork(
        feed.awaitAny(sessionId, [{ route: r8080, seen: feed.seqOf(sessionId, r8080) }], 1_000)
      )
      yield* TestClock.adjust(100)
      yield* Fiber.join(waiting)
      expect(source.kind).toBe("poll")
      expect(watching).toBe(0)
      expect(yield* warnings).toHaveLength(1)
    }))

  it.scoped("never lets a liveness list that answers hide a watch that cannot list", () =>
    Effect.gen(function*() {
      // The watch's own list keeps failing; the liveness list fails three times (the
      // last two after the watch failed), then answers.
      let probes = 0
      const refused = new Transport({ reason: "connection refused", kind: "refused" })
      const { source } = yield* watchingSource({
        config: { routePollIntervalMs: 100 },
        client: (kube) => ({
          ...kube,
          list: (resource, namespace, options) =>
            Effect.suspend(() => {
              if (options?.labelSelector?.includes("telo.run/liveness-probe") !== true) return Effect.fail(refused)
              probes++
              return probes <= 3 ? Effect.fail(refused) : kube.list(resource, namespace, options)
            })
        })
      })
      const feed = source.changes!
      let seen = 0
      const observed: Array<Observation["_tag"]> = []
      // Each wait ends between two liveness checks (every 100 ms), so that one is always waiting.
      for (let until = 150; until <= 2_050; until += 100) {
        const waiting = yield* Effect.fork(feed.awaitAny(sessionId, [{ route: r8080, seen }], until))
        yield* TestClock.adjust(until - (yield* Clock.currentTimeMillis))
        yield* Fiber.join(waiting)
        if (feed.seqOf(sessionId, r8080) <= seen) continue
        const next = yield* source.next(sessionId, r8080, seen)
        seen = next.seq
        observed.push(next.observation._tag)
      }
      expect(probes).toBeGreaterThan(4)
      expect(observed).toContain("Unreadable")
      expect(observed).not.toContain("Seen")
    }))

  it.scoped("learns from the relist after a failed watch that an object was deleted meanwhile", () =>
    Effect.gen(function*() {
      // The first watch fails when the test says so; the ones after it run as usual.
      const fail = yield* Deferred.make<void>()
      let watches = 0
      const { router, sc, source } = yield* watchingSource({
        client: (kube) => ({
          ...kube,
          watch: (resource, namespace, options) => {
            watches++
            if (watches > 1) return kube.watch(resource, namespace, options)
            const failure = Stream.fromEffect(
              Deferred.await(fail).pipe(
                Effect.zipRight(Effect.fail(new Transport({ reason: "the watch connection was reset", kind: "other" })))
              )
            )
            return Stream.merge(kube.watch(resource, namespace, options), failure, { haltStrategy: "either" })
          }
        })
      })
      yield* router.publish(spec)
      const starting = yield* source.next(sessionId, r8080, 0)
      const synced = yield* nextAfter(source, r8080, starting.seq, 0)
      expect(synced.observation).toEqual(Observation.seen(RouteVerdict.pending, true))
      // The watch fails, and while it is down the session's Ingress is deleted.
      yield* Deferred.succeed(fail, undefined)
      const failing = yield* nextAfter(source, r8080, synced.seq, 0)
      expect(failing.observation._tag).toBe("Unreadable")
      yield* Effect.orDie(sc.cluster.store.delete(IngressResource, "telo-sessions", objectName))
      // The restart lists again (within its first pause, at most a few hundred ms):
      // the object is gone.
      let seen = yield* nextAfter(source, r8080, failing.seq, 1_000)
      while (seen.observation._tag !== "Seen") seen = yield* nextAfter(source, r8080, seen.seq, 1_000)
      expect(seen.observation).toEqual(Observation.seen(RouteVerdict.pending, false))
      expect(watches).toBe(2)
    }))
})

describe("waking those who wait", () => {
  it.scoped("wakes each waiting session at its own instant, a later one asked for after an earlier included", () =>
    Effect.gen(function*() {
      const { source } = yield* watchingSource()
      const feed = source.changes!
      const route = (id: string): PublishedRoute => ({ host: `8080-${id}.${BASE_DOMAIN}`, port: 8080 })
      const waitUntil = (id: string, until: number) =>
        Effect.fork(feed.awaitAny(id, [{ route: route(id), seen: feed.seqOf(id, route(id)) }], until))
      // Synced first, so that only the instants can wake the sessions.
      yield* nextAfter(source, route("early"), 0, 0)
      const early = yield* waitUntil("early", 500)
      const late = yield* waitUntil("late", 2_000)
      yield* TestClock.adjust(500)
      expect(early.unsafePoll()).not.toBeNull()
      expect(late.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1_500)
      expect(late.unsafePoll()).not.toBeNull()
    }))

  it.scoped("returns at once from a wait on several objects when any one of them has news", () =>
    Effect.gen(function*() {
      // One object per host, as the gateway router's HTTPRoutes are.
      const { source } = yield* watchingSource({
        adapt: (objects) => ({ ...objects, objectName: (id, route) => `telo-run-${id}-${route.port}` })
      })
      const feed = source.changes!
      yield* nextAfter(source, r8080, 0, 0)
      const waited = yield* Effect.fork(
        feed.awaitAny(sessionId, [
          { route: r8080, seen: feed.seqOf(sessionId, r8080) },
          // Seen one change less than there is: news for this host.
          { route: r9090, seen: feed.seqOf(sessionId, r9090) - 1 }
        ], 1_000)
      )
      yield* TestClock.adjust(0)
      expect(waited.unsafePoll()).not.toBeNull()
    }))

  it.scoped("returns at once from a wait when one host of a shared object has not seen its latest change", () =>
    Effect.gen(function*() {
      // The ports of one session share its Ingress: the wait is for the least any has seen.
      const { router, source } = yield* watchingSource()
      yield* router.publish(spec)
      const starting = yield* source.next(sessionId, r8080, 0)
      const synced = yield* nextAfter(source, r8080, starting.seq, 0)
      const feed = source.changes!
      const waited = yield* Effect.fork(
        feed.awaitAny(sessionId, [{ route: r8080, seen: synced.seq }, { route: r9090, seen: synced.seq - 1 }], 1_000)
      )
      yield* TestClock.adjust(0)
      expect(waited.unsafePoll()).not.toBeNull()
    }))

  it.scoped("still wakes a host waiting on a name with no object after another host waiting on it leaves", () =>
    Effect.gen(function*() {
      const { router, source } = yield* watchingSource()
      const starting = yield* source.next(sessionId, r8080, 0)
      const synced = yield* nextAfter(source, r8080, starting.seq, 0)
      expect(synced.observation).toEqual(Observation.seen(RouteVerdict.pending, false))
      const leaving = yield* Effect.fork(source.next(sessionId, r8080, synced.seq))
      const staying = yield* Effect.fork(source.next(sessionId, r8080, synced.seq))
      yield* TestClock.adjust(0)
      yield* Fiber.interrupt(leaving)
      // The Ingress appears: the host still waiting hears of it.
      yield* router.publish(spec)
      expect((yield* Fiber.join(staying)).observation).toEqual(Observation.seen(RouteVerdict.pending, true))
    }))
})
