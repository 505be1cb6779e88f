/**
 * The watching route-status source: per process, one list-then-watch of the routed
 * kind in the session namespace, selected by the runner's managed-by label, feeding
 * one cache that every session's health reads from. A verdict is recomputed from the
 * cached object on each change of that object, never by a GET. A watch refused for
 * good (403, the API not served) falls back to polling, said once; a transient
 * failure is reported to the hosts as unreadable and the watch starts over.
 */
import { Clock, Duration, Effect, Layer, Option, Ref, Schedule, type Scope, Stream, SubscriptionRef } from "effect"
import { qualifiedName, type ResourceType } from "../domain/Resources.js"
import type { PublishedRoute } from "../domain/Routes.js"
import { KubeClient, withoutTransientRetry } from "../services/KubeClient.js"
import { describeRequest, type KubeError, Transport } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { Observation, RouteStatusSource, WatchUnavailable } from "../services/RouteStatusSource.js"
import { RouteReadError, SessionRouter, type StatusObject } from "../services/SessionRouter.js"
import * as PollStatusSource from "./PollStatusSource.js"

/** What the source knows about one object name. */
type View =
  /** The watch is (re)starting: no answer yet since `since`. */
  | { readonly _tag: "Starting"; readonly since: number }
  /**
   * The watch failed and is starting over (`by: "watch"`), or the server stopped
   * answering the liveness check while the watch connection stays up (`by: "probe"`).
   */
  | { readonly _tag: "Failing"; readonly error: KubeError; readonly by?: "watch" | "probe" }
  /** In sync with the cluster: the object as it is, or absent. */
  | { readonly _tag: "Synced"; readonly object: StatusObject | undefined }
  /** The watch was refused for good: this kind is polled instead. */
  | { readonly _tag: "Polling" }

type Phase = Exclude<View, { readonly _tag: "Synced" }> | { readonly _tag: "Synced" }

/** An observed name: its view, and how many observers hold it (dropped at zero). */
interface Watched {
  readonly view: SubscriptionRef.SubscriptionRef<View>
  observers: number
}

/**
 * The informer restarts after a transient failure on this schedule: quick at first,
 * at most every 10 s, for as long as the process lives.
 */
const RESTART_SCHEDULE = Schedule.exponential(Duration.millis(250)).pipe(
  Schedule.jittered,
  Schedule.either(Schedule.spaced(Duration.seconds(10)))
)

/** A label no object carries: the liveness list selects nothing, so it costs the server next to nothing. */
const LIVENESS_LABEL = "telo.run/liveness-probe"

/** The liveness interval when no RouterConfig is at hand. */
const DEFAULT_LIVENESS_INTERVAL_MS = 2_000

/** Failures after which watching will not work until a person changes something: poll instead. */
const refusedForGood = (error: KubeError): boolean => error._tag === "Forbidden" || error._tag === "NotServed"

/** The object as cached: without `managedFields`, which verdicts never read and which dominate its size. */
const slim = (object: StatusObject): StatusObject => {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {}
  return { ...object, metadata } as StatusObject
}

const viewOf = (phase: Phase, objects: ReadonlyMap<string, StatusObject>, name: string): View =>
  phase._tag === "Synced" ? { _tag: "Synced", object: objects.get(name) } : phase

/** Whether two views would give the same observation (a verdict is only recomputed on a real change). */
const sameView = (a: View, b: View): boolean => {
  if (a._tag !== b._tag) return false
  switch (a._tag) {
    case "Starting":
      return a.since === (b as typeof a).since
    case "Failing":
      return a.error === (b as typeof a).error
    case "Synced": {
      const other = (b as typeof a).object
      return a.object?.metadata?.resourceVersion === other?.metadata?.resourceVersion &&
        a.object?.metadata?.uid === other?.metadata?.uid
    }
    case "Polling":
      return true
  }
}

/** The watching source over the router in context; its watch lives in the current scope. */
export const make: Effect.Effect<RouteStatusSource.Service, never, KubeClient | SessionRouter | Scope.Scope> = Effect
  .gen(function*() {
    const kube = yield* KubeClient
    const router = yield* SessionRouter
    const scope = yield* Effect.scope
    const poll = yield* PollStatusSource.make
    const objects = router.statusObjects
    // Nothing is published (mode none), so there is nothing to watch.
    if (objects === undefined) return poll

    const config = yield* Effect.serviceOption(RouterConfig)
    const livenessIntervalMs = Option.match(config, {
      onNone: () => DEFAULT_LIVENESS_INTERVAL_MS,
      onSome: (c) => c.routePollIntervalMs
    })
    // As long as one attempt of a call may take.
    const livenessTimeoutMs = Option.match(config, {
      onNone: () => DEFAULT_LIVENESS_INTERVAL_MS,
      onSome: (c) => Math.max(1, Math.floor(c.apiTimeoutMs / 2))
    })
    const resource = objects.resource as ResourceType<StatusObject>
    const cache = new Map<string, StatusObject>()
    const watched = new Map<string, Watched>()
    const phase = yield* Ref.make<Phase>({ _tag: "Starting", since: yield* Clock.currentTimeMillis })

    /** Sets the phase and tells every observed name. */
    const enter = (next: Phase) =>
      Ref.set(phase, next).pipe(
        Effect.zipRight(
          Effect.forEach(watched, ([name, entry]) => SubscriptionRef.set(entry.view, viewOf(next, cache, name)), {
            discard: true
          })
        )
      )

    /** Records one object's change and tells its observers, if any. */
    const record = (name: string, object: StatusObject | undefined) =>
      Effect.suspend(() => {
        if (object === undefined) cache.delete(name)
        else cache.set(name, slim(object))
        const entry = watched.get(name)
        return entry === undefined ? Effect.void : SubscriptionRef.set(entry.view, { _tag: "Synced", object: cache.get(name) })
      })

    const listing = describeRequest({ verb: "list", resource: qualifiedName(resource), namespace: objects.namespace })

    /** One list, then the watch from its resourceVersion, for as long as it lasts. */
    const informOnce: Effect.Effect<never, KubeError> = Effect.gen(function*() {
      const listed = yield* kube.list(resource, objects.namespace, { labelSelector: objects.selector })
      cache.clear()
      for (const item of listed.items) cache.set(item.metadata?.name ?? "", slim(item))
      yield* enter({ _tag: "Synced" })
      yield* kube.watch(resource, objects.namespace, {
        labelSelector: objects.selector,
        ...(listed.metadata.resourceVersion !== undefined ? { resourceVersion: listed.metadata.resourceVersion } : {}),
        known: listed.items
      }).pipe(
        Stream.runForEach((event) =>
          record(event.object.metadata?.name ?? "", event.type === "DELETED" ? undefined : event.object)
        )
      )
      // A resuming watch does not end by itself; if it ever does, start over.
      return yield* new Transport({ reason: `the watch of ${listing} ended`, kind: "other" })
    })

    const informer = informOnce.pipe(
      Effect.tapError((error) => (refusedForGood(error) ? Effect.void : enter({ _tag: "Failing", error, by: "watch" }))),
      Effect.retry({ schedule: RESTART_SCHEDULE, while: (error) => !refusedForGood(error) }),
      Effect.catchAll((error) =>
        Effect.logWarning(
          new WatchUnavailable({
            what: `list and watch ${qualifiedName(resource)} in namespace "${objects.namespace}"`,
            reason: error.reason
          }).message
        ).pipe(Effect.zipRight(enter({ _tag: "Polling" })))
      )
    )

    // A watch can go silent without closing: a stopped API server keeps its TCP
    // connections up and the kernel answers keep-alive probes. While anything is
    // observed, one list that matches nothing proves once per interval that the
    // server still answers (one request per process, not per host). A failure marks
    // every host unreadable, the cache kept; the next answer restores it.
    const probe = withoutTransientRetry(
      kube.list(resource, objects.namespace, { labelSelector: `${objects.selector},${LIVENESS_LABEL}=true` })
    ).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(livenessTimeoutMs),
        onTimeout: () =>
          new Transport({
            reason: `could not ${listing}: no answer within ${livenessTimeoutMs} ms`,
            kind: "no-answer"
          })
      })
    )
    const checkLiveness = Effect.gen(function*() {
      if (watched.size === 0) return
      const outcome = yield* Effect.either(probe)
      const now = yield* Ref.get(phase)
      if (outcome._tag === "Left") {
        if (now._tag === "Synced" || (now._tag === "Failing" && now.by === "probe")) {
          yield* enter({ _tag: "Failing", error: outcome.left, by: "probe" })
        }
      } else if (now._tag === "Failing" && now.by === "probe") {
        yield* enter({ _tag: "Synced" })
      }
    })
    const liveness = checkLiveness.pipe(Effect.repeat(Schedule.spaced(Duration.millis(Math.max(1, livenessIntervalMs)))))

    // Started by the first observer, once, in the layer's scope: they stop when the layer does.
    const start = yield* Effect.once(
      Effect.forkIn(informer, scope).pipe(Effect.zipRight(Effect.forkIn(liveness, scope)))
    )

    /** The view of `name`, shared by every observer of it while any observes. */
    const hold = (name: string) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const existing = watched.get(name)
          if (existing !== undefined) {
            existing.observers++
            return existing.view
          }
          const view = yield* SubscriptionRef.make(viewOf(yield* Ref.get(phase), cache, name))
          watched.set(name, { view, observers: 1 })
          return view
        }),
        () =>
          Effect.sync(() => {
            const entry = watched.get(name)
            if (entry !== undefined && --entry.observers === 0) watched.delete(name)
          })
      )

    const toObservation = (route: PublishedRoute, view: View): Effect.Effect<Observation> => {
      switch (view._tag) {
        case "Starting":
          // Like a read that is out: if the watch never answers, the deadline says so.
          return Effect.succeed(Observation.reading(view.since))
        case "Failing":
          return Effect.succeed(Observation.unreadable(new RouteReadError({ route, error: view.error })))
        case "Synced":
          return Effect.map(
            objects.verdictOf(view.object, route),
            (verdict) => Observation.seen(verdict, view.object !== undefined)
          )
        case "Polling":
          return Effect.die("unreachable: polling views end the cached stream")
      }
    }

    const observe: RouteStatusSource.Service["observe"] = (sessionId, route, options) =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          yield* start
          const view = yield* hold(objects.objectName(sessionId, route))
          const cached = view.changes.pipe(
            Stream.takeWhile((v) => v._tag !== "Polling"),
            Stream.changesWith(sameView),
            Stream.mapEffect((v) => toObservation(route, v))
          )
          // Once the watch is refused for good, this host is polled from then on.
          const fallback = Stream.unwrap(
            Effect.map(Ref.get(phase), (now) => (now._tag === "Polling" ? poll.observe(sessionId, route, options) : Stream.empty))
          )
          return Stream.concat(cached, fallback)
        })
      )

    return RouteStatusSource.of({
      kind: "watch",
      observe,
      // A pull waits for the next change; only a kind that fell back to polling waits an interval.
      cadence: (intervalMs) =>
        Schedule.modifyDelayEffect(Schedule.forever, () =>
          Effect.map(Ref.get(phase), (now) =>
            now._tag === "Polling" ? Duration.millis(Math.max(1, intervalMs)) : Duration.zero
          ))
    })
  })

/** `RouteStatusSource` from one shared watch per routed kind. Needs `KubeClient` and `SessionRouter`. */
export const layer: Layer.Layer<RouteStatusSource, never, KubeClient | SessionRouter> = Layer.scoped(
  RouteStatusSource,
  make
)
