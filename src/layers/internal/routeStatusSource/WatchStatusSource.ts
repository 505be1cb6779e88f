/**
 * The watching route-status source: per process, one list-then-watch of the routed
 * kind in the session namespace, selected by the runner's managed-by label, feeding
 * one cache that every session's health reads from. A verdict is recomputed from the
 * cached object on each change of that object, never by a GET. A watch refused for
 * good (403, the API not served) falls back to polling, said once; a transient
 * failure is reported to the hosts as unreadable and the watch starts over.
 */
import {
  Clock,
  Duration,
  Effect,
  Fiber,
  Layer,
  type Metric,
  MetricLabel,
  Option,
  Schedule,
  type Scope,
  Stream
} from "effect"
import { qualifiedName, type ResourceType } from "../../../domain/Resources.js"
import type { PublishedRoute } from "../../../domain/Routes.js"
import { KubeClient, withoutTransientRetry } from "../../../services/KubeClient.js"
import { type KubeError, Transport } from "../../../services/KubeError.js"
import { RouterConfig } from "../../../services/RouterConfig.js"
import {
  type ChangeFeed,
  Observation,
  RouteStatusSource,
  WatchUnavailable
} from "../../../services/RouteStatusSource.js"
import { RouteReadError, SessionRouter, type StatusObject } from "../../../services/SessionRouter.js"
import { statusCacheEntries, statusWaiters } from "../../../services/Telemetry.js"
import { describeRequest } from "../kubeClient/KubeErrorParsing.js"
import * as PollStatusSource from "./PollStatusSource.js"

/** What the source knows of the whole watch: every host's observation starts from it. */
type Phase =
  /** The watch is (re)starting: no answer yet since `since`. */
  | { readonly _tag: "Starting"; readonly since: number }
  /**
   * The watch failed and is starting over (`by: "watch"`), or the server stopped
   * answering the liveness check while the watch connection stays up (`by: "probe"`).
   */
  | { readonly _tag: "Failing"; readonly error: KubeError; readonly by: "watch" | "probe" }
  /** In sync with the cluster: each host's object is what the cache holds. */
  | { readonly _tag: "Synced" }
  /** The watch was refused for good: this kind is polled instead. */
  | { readonly _tag: "Polling" }

/**
 * A session (or one host) waiting for a change: woken at most once, by whichever
 * comes first of a change to one of its objects, a change of phase, or its instant.
 */
interface Waiter {
  readonly wake: () => void
}

/**
 * One object name: the object as cached (undefined: absent), the sequence number of
 * its last change, and who waits for its next one. Plain mutable state, only
 * touched synchronously inside effects: a watched route costs this entry and its
 * share of one waiter, and no fiber. An entry with no object lives only while
 * someone waits on it.
 */
interface Entry {
  object: StatusObject | undefined
  seq: number
  waiting: Set<Waiter> | undefined
}

/** A waiter's wake-up at an instant (epoch ms): a session's route deadline. */
interface Alarm {
  readonly at: number
  readonly waiter: Waiter
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

/**
 * The object as cached: what a verdict reads (its identity, generation and status)
 * and nothing else. The spec and `managedFields` are most of an object's size, and a
 * cache of thousands of routes would hold them for nothing.
 */
const slim = (object: StatusObject): StatusObject => {
  const { generation, name, namespace, resourceVersion, uid } = object.metadata ?? {}
  const kept: Record<string, unknown> = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name, namespace, uid, resourceVersion, generation },
    status: object.status
  }
  return kept as StatusObject
}

/** The cache's key for an object: its name (the API server never sends an object without one). */
const nameOf = (object: StatusObject): string => object.metadata?.name ?? ""

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
    const entries = new Map<string, Entry>()
    // What the cache holds, in the process's metrics: names kept, and who waits on them.
    // One label array for every update: the metric finds its series by the array itself.
    const labels = [MetricLabel.make("resource", qualifiedName(resource))]
    const count = (gauge: Metric.Metric.Gauge<number>, by: number) => gauge.unsafeModify(by, labels)
    // The cache goes with the layer. Hosts still waiting leave when their fibers end.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        count(statusCacheEntries, -entries.size)
        entries.clear()
      })
    )
    // Every change (of an object, or of the phase) takes the next number: a host's
    // observation is as new as the later of its object's change and the phase's.
    let changes = 0
    let phase: Phase = { _tag: "Starting", since: yield* Clock.currentTimeMillis }
    let phaseSeq = ++changes

    const wake = (entry: Entry): void => {
      const waiting = entry.waiting
      entry.waiting = undefined
      if (waiting !== undefined) { for (const waiter of waiting) waiter.wake() }
    }

    /** Sets the phase and wakes every waiting host. Polling, once entered, is for good. */
    const enter = (next: Phase) =>
      Effect.sync(() => {
        if (phase._tag === "Polling") return
        phase = next
        phaseSeq = ++changes
        for (const entry of entries.values()) wake(entry)
      })

    // The entry of a deleted object is dropped, so that sessions that come and go do
    // not grow the map for ever. A host that last saw the object present must still
    // learn that it is gone: an entry made afresh starts at the newest change ever
    // dropped, so it reads as newer than anything seen before that deletion.
    let droppedUpTo = 0

    const entryOf = (name: string): Entry => {
      const existing = entries.get(name)
      if (existing !== undefined) return existing
      const created: Entry = { object: undefined, seq: droppedUpTo, waiting: undefined }
      entries.set(name, created)
      count(statusCacheEntries, 1)
      return created
    }

    const drop = (name: string): void => {
      if (entries.delete(name)) count(statusCacheEntries, -1)
    }

    /** Records one object's change (already slim) and wakes the hosts waiting on it. */
    const record = (name: string, object: StatusObject | undefined) =>
      Effect.sync(() => {
        const entry = entryOf(name)
        entry.object = object
        entry.seq = ++changes
        if (object === undefined) {
          // Hosts waiting on it hold the entry itself and still see the deletion.
          drop(name)
          droppedUpTo = entry.seq
        }
        wake(entry)
      })

    const listing = describeRequest({ verb: "list", resource: qualifiedName(resource), namespace: objects.namespace })

    /** One list, then the watch from its resourceVersion, for as long as it lasts. */
    const informOnce: Effect.Effect<never, KubeError> = Effect.gen(function*() {
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
      const listedNames = new Set(items.map(nameOf))
      for (const [name, entry] of entries) {
        if (entry.object !== undefined && !listedNames.has(name)) yield* record(name, undefined)
      }
      for (const item of items) {
        const name = nameOf(item)
        const cached = entries.get(name)?.object
        if (cached?.metadata?.resourceVersion !== item.metadata?.resourceVersion) yield* record(name, item)
      }
      if (objects.prepare !== undefined) yield* objects.prepare
      yield* enter({ _tag: "Synced" })
      yield* kube.watch(resource, objects.namespace, {
        labelSelector: objects.selector,
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
        known: items,
        // What a relist compares is in the slim copy: the watch keeps no full object either.
        remember: slim
      }).pipe(
        Stream.runForEach((event) =>
          record(nameOf(event.object), event.type === "DELETED" ? undefined : slim(event.object))
        )
      )
      // A resuming watch does not end by itself; if it ever does, start over.
      return yield* new Transport({ reason: `the watch of ${listing} ended`, kind: "other" })
    })

    let informerFiber: Fiber.RuntimeFiber<void> | undefined
    /**
     * Polls this kind from now on, and says so once: the watch was refused for good
     * (403 on list or watch, the API not served), whether the informer or the
     * liveness list met the refusal first.
     */
    const fallBack = (error: KubeError) =>
      Effect.suspend(() => {
        if (phase._tag === "Polling") return Effect.void
        return Effect.logWarning(
          new WatchUnavailable({
            what: `list and watch ${qualifiedName(resource)} in namespace "${objects.namespace}"`,
            reason: error.reason
          }).message
        ).pipe(
          Effect.zipRight(enter({ _tag: "Polling" })),
          // The watch is no longer what anyone reads: stop it (without waiting, as the
          // informer itself may be the one falling back).
          Effect.zipRight(informerFiber === undefined ? Effect.void : Fiber.interruptFork(informerFiber))
        )
      })

    const informer = informOnce.pipe(
      Effect.tapError((
        error
      ) => (refusedForGood(error) ? Effect.void : enter({ _tag: "Failing", error, by: "watch" }))),
      Effect.retry({ schedule: RESTART_SCHEDULE, while: (error) => !refusedForGood(error) }),
      Effect.catchAll(fallBack)
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
      if (waiters === 0) return
      // Refreshed here, off every session's path, before it expires for one of them.
      if (objects.prepare !== undefined) yield* objects.prepare
      const outcome = yield* Effect.either(probe)
      const now = phase
      if (outcome._tag === "Left") {
        if (refusedForGood(outcome.left)) {
          yield* fallBack(outcome.left)
          // Nothing left to check: the informer's watch is no longer what anyone reads.
          return yield* Effect.interrupt
        }
        if (now._tag === "Synced" || (now._tag === "Failing" && now.by === "probe")) {
          yield* enter({ _tag: "Failing", error: outcome.left, by: "probe" })
        }
      } else if (now._tag === "Failing" && now.by === "probe") {
        yield* enter({ _tag: "Synced" })
      }
    })
    const liveness = checkLiveness.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.max(1, livenessIntervalMs))))
    )

    // Started by the first observer, once, in the layer's scope: they stop when the layer does.
    const start = yield* Effect.once(
      Effect.forkIn(informer, scope).pipe(
        Effect.tap((fiber) => Effect.sync(() => (informerFiber = fiber))),
        Effect.zipRight(Effect.forkIn(liveness, scope))
      )
    )

    // Waiters for a change right now: liveness is checked only while there are any.
    let waiters = 0

    // One timer for every waiter's instant, armed for the earliest: a session waiting
    // for its deadline costs an entry in this set, not a sleeping fiber.
    const alarms = new Set<Alarm>()
    let armedAt = Number.POSITIVE_INFINITY
    let alarmFiber: Fiber.RuntimeFiber<void> | undefined

    const ring: Effect.Effect<void> = Effect.suspend(() => {
      armedAt = Number.POSITIVE_INFINITY
      alarmFiber = undefined
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        let earliest = Number.POSITIVE_INFINITY
        for (const alarm of alarms) {
          if (alarm.at <= now) alarm.waiter.wake()
          else earliest = Math.min(earliest, alarm.at)
        }
        return arm(earliest)
      })
    })

    /** Arms the timer for `at`, unless it rings by then anyway (or `at` is never). */
    const arm = (at: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (at >= armedAt) return Effect.void
        armedAt = at
        const previous = alarmFiber
        return Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => Effect.sleep(Duration.millis(Math.max(0, at - now)))),
          Effect.zipRight(ring),
          Effect.forkIn(scope),
          Effect.flatMap((fiber) => {
            alarmFiber = fiber
            return previous === undefined ? Effect.void : Fiber.interruptFork(previous)
          })
        )
      })

    /** The sequence number of what `next` would answer for the named object now. */
    const seqOf = (name: string) => Math.max(entries.get(name)?.seq ?? droppedUpTo, phaseSeq)

    /**
     * Waits until one of the named objects changes past what its waiter saw (or the
     * phase does), or until the clock reaches `until`: no fiber, one waiter shared
     * by the objects' entries, and the shared alarm for the instant.
     */
    const awaitAny = (
      names: ReadonlyArray<string>,
      seen: (i: number) => number,
      until: number
    ): Effect.Effect<void> =>
      Effect.zipRight(
        start,
        Effect.clockWith((clock) => {
          // Entering polling is a change of phase too: a host never waits on a watch that is gone.
          if (names.some((name, i) => seqOf(name) > seen(i))) return Effect.void
          if (clock.unsafeCurrentTimeMillis() >= until) return Effect.void
          const wait = Effect.async<void>((resume) => {
            let waiting = true
            const waiter: Waiter = { wake: () => leave() && resume(Effect.void) }
            const alarm: Alarm = { at: until, waiter }
            const leave = () => {
              if (!waiting) return false
              waiting = false
              waiters--
              count(statusWaiters, -1)
              alarms.delete(alarm)
              for (const name of names) {
                // An entry dropped meanwhile (its object deleted) was cleared when it woke us.
                const entry = entries.get(name)
                if (entry === undefined) continue
                entry.waiting?.delete(waiter)
                // A name with no object is kept only for those who wait on it.
                if (entry.object === undefined && (entry.waiting?.size ?? 0) === 0) drop(name)
              }
              return true
            }
            waiters++
            count(statusWaiters, 1)
            for (const name of names) (entryOf(name).waiting ??= new Set()).add(waiter)
            alarms.add(alarm)
            return Effect.sync(leave)
          })
          return Effect.zipRight(arm(until), wait)
        })
      )

    const feed: ChangeFeed = {
      seqOf: (sessionId, route) => seqOf(objects.objectName(sessionId, route)),
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
      switch (phase._tag) {
        case "Starting":
          return Effect.succeed(Observation.reading(phase.since))
        case "Failing":
          return Effect.succeed(Observation.unreadable(new RouteReadError({ route, error: phase.error })))
        case "Synced":
        case "Polling": {
          const object = entries.get(name)?.object
          return Effect.map(
            objects.verdictOf(object, route),
            (verdict) => Observation.seen(verdict, object !== undefined)
          )
        }
      }
    }

    const next: RouteStatusSource.Service["next"] = (sessionId, route, after) =>
      Effect.gen(function*() {
        yield* start
        const name = objects.objectName(sessionId, route)
        while (true) {
          // Once the watch is refused for good, this host is polled from then on.
          if (phase._tag === "Polling") return yield* poll.next(sessionId, route, Math.max(after, changes))
          const seq = seqOf(name)
          if (seq > after) return { seq, observation: yield* observation(route, name) }
          yield* awaitAny([name], () => after, Number.POSITIVE_INFINITY)
        }
      })

    return RouteStatusSource.of({
      // A kind that fell back reads on each call, and route health must know a read is out.
      get kind() {
        return phase._tag === "Polling" ? "poll" : "watch"
      },
      next,
      get changes() {
        return phase._tag === "Polling" ? undefined : feed
      },
      // A call waits for the next change; only a kind that fell back to polling waits an interval.
      cadence: (intervalMs) =>
        Schedule.modifyDelay(
          Schedule.forever,
          () => phase._tag === "Polling" ? Duration.millis(Math.max(1, intervalMs)) : Duration.zero
        )
    })
  })

/** `RouteStatusSource` from one shared watch per routed kind. Needs `KubeClient` and `SessionRouter`. */
export const layer: Layer.Layer<RouteStatusSource, never, KubeClient | SessionRouter> = Layer.scoped(
  RouteStatusSource,
  make
)
