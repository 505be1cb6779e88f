/**
 * The shared watch's cache: one entry per object name (the object as cached, the
 * sequence number of its last change, who waits on it), the phase of the watch, and
 * waiting without a fiber: a host waits on its objects' entries and on one shared
 * alarm for its instant. Every change (of an object, or of the phase) takes the next
 * number, so a host's observation is as new as the later of the two. Beside the
 * objects it keeps what the verdict rule needs of the cluster (the Gateway's controller).
 */
import { Clock, Duration, Effect, Fiber, type Metric, MetricLabel, type Scope } from "effect"
import { qualifiedName, type ResourceType } from "../../domain/Resources.js"
import type { KubeError } from "../../services/KubeError.js"
import { statusCacheEntries, statusWaiters } from "../../services/Telemetry.js"
import type { StatusObject, VerdictContext } from "./StatusObjects.js"

/** What the source knows of the whole watch: every host's observation starts from it. */
export type Phase =
  /** The watch is (re)starting: no answer yet since `since`. */
  | { readonly _tag: "Starting"; readonly since: number }
  /**
   * The watch failed and is starting over (`by: "watch"`), or the server stopped
   * answering the liveness check while the watch connection stays up (`by: "probe"`).
   */
  | { readonly _tag: "Failing"; readonly error: KubeError; readonly by: "watch" | "probe" }
  /** In sync with the cluster: each host's object is what the cache holds. */
  | { readonly _tag: "Synced" }
  /**
   * The watch was refused (403, the API not served): this kind is polled instead,
   * until a list and a watch are allowed again.
   */
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
 * The object as cached: what a verdict reads (its identity, generation and status)
 * and nothing else. The spec and `managedFields` are most of an object's size, and a
 * cache of thousands of routes would hold them for nothing.
 */
export const slim = (object: StatusObject): StatusObject => {
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
export const nameOf = (object: StatusObject): string => object.metadata?.name ?? ""

/** The cache of one routed kind, and what the watch and its readers do with it. */
export interface StatusCache {
  readonly phase: () => Phase
  /**
   * Sets the phase and wakes every waiting host. Polling is left only for Synced (a
   * list that the watch after it was let in): a failure of the watch that was stopped
   * when polling began must not show through it.
   */
  readonly enter: (next: Phase) => Effect.Effect<void>
  /**
   * The number a polled observation takes: the next change's. A host that polled and
   * then watches again sees the cache as newer than anything it polled.
   */
  readonly polled: () => number
  /** Records one object's change (already slim; undefined: deleted) and wakes the hosts waiting on it. */
  readonly record: (name: string, object: StatusObject | undefined) => Effect.Effect<void>
  /** Takes a full list as the truth: what it lacks is gone, what changed is recorded. */
  readonly replaceAll: (items: ReadonlyArray<StatusObject>) => Effect.Effect<void>
  readonly objectOf: (name: string) => StatusObject | undefined
  /** What the verdict rule knows besides the objects, as last read (`StatusObjects.context`). */
  readonly known: () => VerdictContext
  readonly learn: (context: VerdictContext) => void
  /** The sequence number of what a read of the named object would answer now. */
  readonly seqOf: (name: string) => number
  /** How many wait for a change right now. */
  readonly waiting: () => number
  /**
   * Waits until one of the named objects changes past what its waiter saw (or the
   * phase does), or until the clock reaches `until`.
   */
  readonly awaitAny: (
    names: ReadonlyArray<string>,
    seen: (i: number) => number,
    until: number
  ) => Effect.Effect<void>
}

/** Waiters' instants, and one timer armed for the earliest of them. */
interface Alarms {
  readonly add: (alarm: Alarm) => void
  readonly remove: (alarm: Alarm) => void
  /** Arms the timer for `at`, unless it rings by then anyway (or `at` is never). */
  readonly arm: (at: number) => Effect.Effect<void>
}

/**
 * One timer for every waiter's instant, armed for the earliest: a session waiting for
 * its deadline costs an entry in a set, not a sleeping fiber. The timer lives in the
 * current scope.
 */
const makeAlarms: Effect.Effect<Alarms, never, Scope.Scope> = Effect.map(Effect.scope, (scope) => {
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

  return { add: (alarm) => void alarms.add(alarm), remove: (alarm) => void alarms.delete(alarm), arm }
})

/**
 * The entries by name, counted in the cache's gauge. The entry of a deleted object is
 * dropped, so that sessions that come and go do not grow the map for ever. A host that
 * last saw the object present must still learn that it is gone: an entry made afresh
 * starts at the newest change ever dropped (`droppedUpTo`), so it reads as newer than
 * anything seen before that deletion.
 */
interface Entries {
  readonly map: Map<string, Entry>
  droppedUpTo: number
  /** The entry of `name`, made (empty) if there is none. */
  readonly of: (name: string) => Entry
  readonly drop: (name: string) => void
}

const makeEntries = (count: (gauge: Metric.Metric.Gauge<number>, by: number) => void): Entries => {
  const map = new Map<string, Entry>()
  const entries: Entries = {
    map,
    droppedUpTo: 0,
    of: (name) => {
      const existing = map.get(name)
      if (existing !== undefined) return existing
      const created: Entry = { object: undefined, seq: entries.droppedUpTo, waiting: undefined }
      map.set(name, created)
      count(statusCacheEntries, 1)
      return created
    },
    drop: (name) => {
      if (map.delete(name)) count(statusCacheEntries, -1)
    }
  }
  return entries
}

/**
 * Waits for a wake on the named entries or at `until`: no fiber, one waiter shared by
 * the entries, and the shared alarm for the instant. `waiting` hears +1 and -1.
 */
const waitOn = (
  entries: Entries,
  alarms: Alarms,
  names: ReadonlyArray<string>,
  until: number,
  waiting: (by: number) => void
): Effect.Effect<void> => {
  const wait = Effect.async<void>((resume) => {
    let open = true
    const waiter: Waiter = { wake: () => leave() && resume(Effect.void) }
    const alarm: Alarm = { at: until, waiter }
    const leave = () => {
      if (!open) return false
      open = false
      waiting(-1)
      alarms.remove(alarm)
      for (const name of names) {
        // An entry dropped meanwhile (its object deleted) was cleared when it woke us.
        const entry = entries.map.get(name)
        if (entry === undefined) continue
        entry.waiting?.delete(waiter)
        // A name with no object is kept only for those who wait on it.
        if (entry.object === undefined && (entry.waiting?.size ?? 0) === 0) entries.drop(name)
      }
      return true
    }
    waiting(1)
    for (const name of names) (entries.of(name).waiting ??= new Set()).add(waiter)
    alarms.add(alarm)
    return Effect.sync(leave)
  })
  return Effect.zipRight(alarms.arm(until), wait)
}

/** Wakes every host waiting on `entry`, once. */
const wake = (entry: Entry): void => {
  const waiting = entry.waiting
  entry.waiting = undefined
  if (waiting !== undefined) { for (const waiter of waiting) waiter.wake() }
}

/** `items` as the truth: what the entries hold that it lacks is gone, what changed is recorded. */
const replaceAll = (
  entries: Entries,
  record: StatusCache["record"],
  items: ReadonlyArray<StatusObject>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const listedNames = new Set(items.map(nameOf))
    for (const [name, entry] of entries.map) {
      if (entry.object !== undefined && !listedNames.has(name)) yield* record(name, undefined)
    }
    for (const item of items) {
      const name = nameOf(item)
      const cached = entries.map.get(name)?.object
      if (cached?.metadata?.resourceVersion !== item.metadata?.resourceVersion) yield* record(name, item)
    }
  })

/** An empty cache for `resource`, its metrics labelled with it; it is cleared with the scope. */
export const makeStatusCache = (
  resource: ResourceType<StatusObject>
): Effect.Effect<StatusCache, never, Scope.Scope> =>
  Effect.gen(function*() {
    // One label array for every update: the metric finds its series by the array itself.
    const labels = [MetricLabel.make("resource", qualifiedName(resource))]
    const count = (gauge: Metric.Metric.Gauge<number>, by: number) => gauge.unsafeModify(by, labels)
    const entries = makeEntries(count)
    // Hosts still waiting leave when their fibers end.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        count(statusCacheEntries, -entries.map.size)
        entries.map.clear()
      })
    )
    const alarms = yield* makeAlarms
    let changes = 0
    let phase: Phase = { _tag: "Starting", since: yield* Clock.currentTimeMillis }
    let phaseSeq = ++changes
    let waiters = 0
    let known: VerdictContext = {}

    const enter = (next: Phase) =>
      Effect.sync(() => {
        if (phase._tag === "Polling" && next._tag !== "Synced") return
        phase = next
        phaseSeq = ++changes
        for (const entry of entries.map.values()) wake(entry)
      })

    const record = (name: string, object: StatusObject | undefined) =>
      Effect.sync(() => {
        const entry = entries.of(name)
        entry.object = object
        entry.seq = ++changes
        if (object === undefined) {
          // Hosts waiting on it hold the entry itself and still see the deletion.
          entries.drop(name)
          entries.droppedUpTo = entry.seq
        }
        wake(entry)
      })

    const seqOf = (name: string) => Math.max(entries.map.get(name)?.seq ?? entries.droppedUpTo, phaseSeq)

    const awaitAny = (names: ReadonlyArray<string>, seen: (i: number) => number, until: number) =>
      Effect.clockWith((clock) => {
        // Entering polling is a change of phase too: a host never waits on a watch that is gone.
        if (names.some((name, i) => seqOf(name) > seen(i))) return Effect.void
        if (clock.unsafeCurrentTimeMillis() >= until) return Effect.void
        return waitOn(entries, alarms, names, until, (by) => {
          waiters += by
          count(statusWaiters, by)
        })
      })

    return {
      phase: () => phase,
      enter,
      record,
      replaceAll: (items) => replaceAll(entries, record, items),
      objectOf: (name) => entries.map.get(name)?.object,
      known: () => known,
      learn: (context) => {
        known = context
      },
      seqOf,
      polled: () => ++changes,
      waiting: () => waiters,
      awaitAny
    }
  })
