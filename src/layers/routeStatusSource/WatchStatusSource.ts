/**
 * The watching route-status source: per process, one list-then-watch of the routed
 * kind in the session namespace, selected by the runner's managed-by label, feeding
 * one cache that every session's health reads from. A verdict is recomputed from the
 * cached object on each change of that object, never by a GET. A refused watch (403,
 * the API not served) falls back to polling, said once, and is tried again now and
 * then until it is allowed; a transient failure is reported to the hosts as
 * unreadable and the watch starts over.
 */
import { Duration, Effect, Either, Layer, Schedule, type Scope, Stream } from "effect"
import { qualifiedName, type ResourceType } from "../../domain/Resources.js"
import type { PublishedRoute, RoutingMode } from "../../domain/Routes.js"
import { KubeClient, withoutTransientRetry } from "../../services/KubeClient.js"
import { type KubeError, Transport } from "../../services/KubeError.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import {
  type ChangeFeed,
  Observation,
  RouteReadError,
  RouteStatusSource,
  WatchUnavailable
} from "../../services/RouteStatusSource.js"
import { describeRequest } from "../kubeClient/KubeErrorParsing.js"
import { deadlineAdvice } from "./Polling.js"
import * as PollStatusSource from "./PollStatusSource.js"
import { makeStatusCache, nameOf, slim, type StatusCache } from "./StatusCache.js"
import { type ModeStatus, modeStatus, type StatusObject, type StatusObjects } from "./StatusObjects.js"

/**
 * The informer restarts after a transient failure on this schedule: quick at first,
 * at most every 10 s, for as long as the process lives.
 */
const RESTART_SCHEDULE = Schedule.exponential(Duration.millis(250)).pipe(
  Schedule.jittered,
  Schedule.either(Schedule.spaced(Duration.seconds(10)))
)

/**
 * After a fall back to polling, list and watch are tried again on this schedule: after
 * 30 s, doubling, at most 5 minutes apart, for as long as the process lives. A 403 may
 * be RBAC being changed or a webhook authorizer's bad moment, and an unserved API one
 * being installed; each try costs two requests that select nothing, so a cluster that
 * never allows the watch pays a couple of requests per 5 minutes.
 */
const REWATCH_SCHEDULE = Schedule.exponential(Duration.seconds(30)).pipe(
  Schedule.jittered,
  Schedule.either(Schedule.spaced(Duration.minutes(5)))
)

/** A label no object carries: the liveness list selects nothing, so it costs the server next to nothing. */
const LIVENESS_LABEL = "telo.run/liveness-probe"

/** A selector within the watch's own that matches no object. */
const nothingOf = (objects: StatusObjects): string => `${objects.selector},${LIVENESS_LABEL}=true`

/** `list and watch ingresses.networking.k8s.io in namespace "..."`, for messages. */
const listAndWatchOf = (objects: StatusObjects, resource: ResourceType<StatusObject>): string =>
  `list and watch ${qualifiedName(resource)} in namespace "${objects.namespace}"`

/** `list ingresses.networking.k8s.io in namespace "..."`, for messages. */
const listingOf = (objects: StatusObjects, resource: ResourceType<StatusObject>): string =>
  describeRequest({ verb: "list", resource: qualifiedName(resource), namespace: objects.namespace })

/** Failures after which watching will not work until a person changes something: poll instead. */
const refusedForGood = (error: KubeError): boolean => error._tag === "Forbidden" || error._tag === "NotServed"

/** One list, then the watch from its resourceVersion, for as long as it lasts. */
const inform = (
  kube: KubeClient.Service,
  objects: StatusObjects,
  resource: ResourceType<StatusObject>,
  cache: StatusCache
): Effect.Effect<never, KubeError> =>
  Effect.gen(function*() {
    // Kept slim, and the list itself let go: the cache is what stays. Without the
    // client's retries: the restart schedule below is the retry, and each failure
    // must reach the hosts as it happens, the server's own answer with it, instead
    // of a retry budget that outlasts their deadline and leaves them "no answer".
    const { items, resourceVersion } = yield* withoutTransientRetry(kube.list(resource, objects.namespace, {
      labelSelector: objects.selector
    })).pipe(
      Effect.map((listed) => ({ items: listed.items.map(slim), resourceVersion: listed.metadata.resourceVersion }))
    )
    // The list is the truth now: what it lacks is gone.
    yield* cache.replaceAll(items)
    cache.learn(yield* objects.context)
    yield* cache.enter({ _tag: "Synced" })
    yield* kube.watch(resource, objects.namespace, {
      labelSelector: objects.selector,
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      known: items,
      // What a relist compares is in the slim copy: the watch keeps no full object either.
      remember: slim
    }).pipe(
      Stream.runForEach((event) =>
        cache.record(nameOf(event.object), event.type === "DELETED" ? undefined : slim(event.object))
      )
    )
    // A resuming watch does not end by itself; if it ever does, start over.
    return yield* new Transport({ reason: `the watch of ${listingOf(objects, resource)} ended`, kind: "other" })
  })

/**
 * The source over the cache: a host's observation is what the phase allows (reading,
 * unreadable, or the verdict on the cached object), and `next` waits for a change past
 * what the host saw. Once the kind falls back to polling, each host is polled.
 */
const sourceOver = (
  cache: StatusCache,
  status: ModeStatus & { readonly objects: StatusObjects },
  poll: RouteStatusSource.Service,
  start: Effect.Effect<void>
): RouteStatusSource.Service => {
  const objects = status.objects
  /** `cache.awaitAny`, the watch started first: the first observer starts it. */
  const awaitAny = (names: ReadonlyArray<string>, seen: (i: number) => number, until: number) =>
    Effect.zipRight(start, cache.awaitAny(names, seen, until))

  const feed: ChangeFeed = {
    seqOf: (sessionId, route) => cache.seqOf(objects.objectName(sessionId, route)),
    awaitAny: (sessionId, hosts, until) => {
      // Hosts that share an object (the ports of one Ingress) wait on it once, for
      // the least any of them has seen.
      const seen = new Map<string, number>()
      for (const host of hosts) {
        const name = objects.objectName(sessionId, host.route)
        seen.set(name, Math.min(seen.get(name) ?? host.seen, host.seen))
      }
      const names = [...seen.keys()]
      const least = [...seen.values()]
      return awaitAny(names, (i) => least[i]!, until)
    }
  }

  const observation = (route: PublishedRoute, name: string): Effect.Effect<Observation> => {
    const phase = cache.phase()
    switch (phase._tag) {
      case "Starting":
        return Effect.succeed(Observation.reading(phase.since))
      case "Failing":
        return Effect.succeed(Observation.unreadable(new RouteReadError({ route, error: phase.error })))
      case "Synced":
      case "Polling": {
        const object = cache.objectOf(name)
        return Effect.succeed(Observation.seen(objects.verdict(object, route, cache.known()), object !== undefined))
      }
    }
  }

  const next: RouteStatusSource.Service["next"] = (sessionId, route, after) =>
    Effect.gen(function*() {
      yield* start
      const name = objects.objectName(sessionId, route)
      while (true) {
        // While the watch is refused, this host is polled.
        if (cache.phase()._tag === "Polling") {
          const { observation } = yield* poll.next(sessionId, route, after)
          return { seq: cache.polled(), observation }
        }
        const seq = cache.seqOf(name)
        if (seq > after) return { seq, observation: yield* observation(route, name) }
        yield* awaitAny([name], () => after, Number.POSITIVE_INFINITY)
      }
    })

  return RouteStatusSource.of({
    // A kind that fell back reads on each call, and route health must know a read is out.
    get kind() {
      return cache.phase()._tag === "Polling" ? "poll" : "watch"
    },
    read: poll.read,
    next,
    get changes() {
      return cache.phase()._tag === "Polling" ? undefined : feed
    },
    // A call waits for the next change; only a kind that fell back to polling waits an interval.
    cadence: (intervalMs) =>
      Schedule.modifyDelay(
        Schedule.forever,
        () => cache.phase()._tag === "Polling" ? Duration.millis(Math.max(1, intervalMs)) : Duration.zero
      ),
    ...deadlineAdvice(status)
  })
}

/**
 * One liveness check. A watch can go silent without closing: a stopped API server
 * keeps its TCP connections up and the kernel answers keep-alive probes. While anything
 * is observed, one list that matches nothing proves once per interval that the server
 * still answers (one request per process, not per host). A failure marks every host
 * unreadable, the cache kept; the next answer restores it. A refusal for good fails it:
 * the watch is then no longer what anyone reads. (A watch that goes silent while the
 * server answers is the client's to notice: its watch has a progress deadline.)
 */
const livenessCheck = (
  kube: KubeClient.Service,
  objects: StatusObjects,
  resource: ResourceType<StatusObject>,
  cache: StatusCache,
  timeoutMs: number
): Effect.Effect<void, KubeError> => {
  const listing = listingOf(objects, resource)
  const probe = withoutTransientRetry(
    kube.list(resource, objects.namespace, { labelSelector: nothingOf(objects) })
  ).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(timeoutMs),
      onTimeout: () =>
        new Transport({
          reason: `could not ${listing}: no answer within ${timeoutMs} ms`,
          kind: "no-answer"
        })
    })
  )
  return Effect.gen(function*() {
    // Liveness is checked only while someone waits for a change.
    if (cache.waiting() === 0) return
    // Refreshed here, off every session's path, before it expires for one of them.
    cache.learn(yield* objects.context)
    const outcome = yield* Effect.either(probe)
    const now = cache.phase()
    if (outcome._tag === "Left") {
      if (refusedForGood(outcome.left)) return yield* Effect.fail(outcome.left)
      if (now._tag === "Synced" || (now._tag === "Failing" && now.by === "probe")) {
        yield* cache.enter({ _tag: "Failing", error: outcome.left, by: "probe" })
      }
    } else if (now._tag === "Failing" && now.by === "probe") {
      yield* cache.enter({ _tag: "Synced" })
    }
  })
}

/**
 * Whether list and watch are allowed again, at the cost of one list and one watch that
 * select nothing. A watch is refused as it opens, in one round trip; one that no answer
 * has refused within `graceMs` (the API time limit, the most a call may take) was let
 * in. Fails with whatever refused or failed either.
 */
const allowedAgain = (
  kube: KubeClient.Service,
  objects: StatusObjects,
  resource: ResourceType<StatusObject>,
  graceMs: number
): Effect.Effect<void, KubeError> =>
  withoutTransientRetry(Effect.gen(function*() {
    const labelSelector = nothingOf(objects)
    const listed = yield* kube.list(resource, objects.namespace, { labelSelector })
    const watching = kube.watchFrom(resource, objects.namespace, {
      labelSelector,
      resourceVersion: listed.metadata.resourceVersion ?? "0"
    })
    // A watch the server closes at once was let in too.
    yield* Effect.raceFirst(Stream.runDrain(watching), Effect.sleep(Duration.millis(graceMs)))
  }))

/**
 * The watching source over `status`, reading through `kube` on `config`'s intervals;
 * its watch lives in the current scope. A mode with nothing published is polled.
 */
export const fromStatus = (
  kube: KubeClient.Service,
  config: RouterConfig.Service,
  status: ModeStatus
): Effect.Effect<RouteStatusSource.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const poll = yield* PollStatusSource.fromStatus(kube, status)
    const objects = status.objects
    // Nothing is published (mode none), so there is nothing to watch.
    if (objects === undefined) return poll

    const livenessIntervalMs = config.routePollIntervalMs
    // As long as one attempt of a call may take.
    const livenessTimeoutMs = Math.max(1, Math.floor(config.apiTimeoutMs / 2))
    const resource = objects.resource as ResourceType<StatusObject>
    const cache = yield* makeStatusCache(resource)

    const what = listAndWatchOf(objects, resource)

    // Fails only with a refusal for good; a transient failure is the hosts' to see, and starts over.
    const informer = inform(kube, objects, resource, cache).pipe(
      Effect.tapError((
        error
      ) => (refusedForGood(error) ? Effect.void : cache.enter({ _tag: "Failing", error, by: "watch" }))),
      Effect.retry({ schedule: RESTART_SCHEDULE, while: (error) => !refusedForGood(error) })
    )

    // Fails only with a refusal for good.
    const liveness = livenessCheck(kube, objects, resource, cache, livenessTimeoutMs).pipe(
      Effect.zipRight(Effect.sleep(Duration.millis(Math.max(1, livenessIntervalMs)))),
      Effect.forever
    )

    /**
     * Watches until the informer or the liveness list meets a refusal for good (403 on
     * list or watch, the API not served), whichever first, both then stopped; polls
     * this kind from then on, said once; and tries list and watch again on
     * `REWATCH_SCHEDULE` until both are allowed, said once too, to watch again. The
     * informer's list then takes the cache from polling back to in sync.
     */
    const supervise = Effect.gen(function*() {
      const rewatch = yield* Schedule.driver(REWATCH_SCHEDULE)
      while (true) {
        const refusal = yield* Effect.flip(Effect.raceFirst(informer, liveness))
        yield* Effect.logWarning(new WatchUnavailable({ what, reason: refusal.reason }).message)
        yield* cache.enter({ _tag: "Polling" })
        while (true) {
          yield* rewatch.next(undefined).pipe(Effect.orElse(() => Effect.void))
          if (Either.isRight(yield* Effect.either(allowedAgain(kube, objects, resource, config.apiTimeoutMs)))) break
        }
        yield* rewatch.reset
        yield* Effect.logInfo(`can ${what} again: route status is watched again, no longer polled`)
      }
    })

    // Started by the first observer, once, in the layer's scope: it stops when the layer does.
    const start = yield* Effect.once(Effect.asVoid(Effect.forkIn(supervise, scope)))

    return sourceOver(cache, { ...status, objects }, poll, start)
  })

/**
 * The watching source for `mode` (by default the one `RouterConfig` routes in), its
 * objects derived from `RouterConfig`; its watch lives in the current scope.
 */
export const makeFor = (
  mode?: RoutingMode
): Effect.Effect<RouteStatusSource.Service, never, KubeClient | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* KubeClient
    const config = yield* RouterConfig
    return yield* fromStatus(kube, config, yield* modeStatus(kube, config, mode))
  })

/** The watching source for the mode `RouterConfig` routes in. */
export const make: Effect.Effect<RouteStatusSource.Service, never, KubeClient | RouterConfig | Scope.Scope> = makeFor()

/** `RouteStatusSource` from one shared watch per routed kind, for `mode`. Needs `KubeClient` and `RouterConfig`. */
export const layerFor = (mode?: RoutingMode): Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> =>
  Layer.scoped(RouteStatusSource, makeFor(mode))

/**
 * `RouteStatusSource` from one shared watch per routed kind, for the mode `RouterConfig`
 * routes in. Needs `KubeClient` and `RouterConfig`.
 */
export const layer: Layer.Layer<RouteStatusSource, never, KubeClient | RouterConfig> = layerFor()
