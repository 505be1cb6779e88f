/**
 * The EventRecorder over `KubeClient.events`, shaped like client-go's broadcaster and
 * correlator: `record` only queues, a few writer fibers write in the background, and
 * an occurrence whose object and reason already have a write queued or in flight is
 * folded into that write's count instead of making a request of its own.
 * events.k8s.io/v1 first, core/v1 when the server does not serve the newer API.
 * Off when `SESSION_ROUTING_EVENTS=false` or the client cannot write Events.
 */
import { Clock, Duration, Effect, Either, Layer, Queue, type Scope } from "effect"
import { hostname } from "node:os"
import {
  eventName,
  newCoreEvent,
  newEventV1,
  objectKey,
  type Occurrence,
  occurrenceKey,
  repeatPatch,
  REPORTING_CONTROLLER,
  type SpamBudget,
  spendBudget
} from "../domain/KubeEvents.js"
import { EventResource, EventV1Resource } from "../domain/Resources.js"
import { type EventProblemSink, EventRecorder, noEvents } from "../services/EventRecorder.js"
import { type EventWrites, KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { eventsRecorded, updateSeries } from "../services/Telemetry.js"

/** Which Events API the recorder writes to; `none` once neither is served. */
type Api = "events.k8s.io/v1" | "v1" | "none"

/**
 * One (object, reason) pair: the Event that stands for it once created, what the API
 * holds of its count, and the occurrences not written yet. At most one write per
 * series is queued or in flight, which is what lets repeats fold into it.
 */
interface Series {
  occurrence: Occurrence
  api: "events.k8s.io/v1" | "v1" | undefined
  name: string | undefined
  written: number
  pending: number
  state: "idle" | "queued" | "busy"
  /** Where the latest caller hears of problems. */
  problems: EventProblemSink | undefined
}

/** client-go keeps 4096 series (and spam budgets); an evicted one starts a new Event, as the server's TTL does anyway. */
const MAX_SERIES = 4096
/** client-go's broadcaster queues 1000 Events; past that they are dropped, never waited for. */
const MAX_QUEUED = 1000
/** Writes in flight at once: enough to keep up with a loaded API, few enough not to crowd out routing's own calls. */
const WRITERS = 4

/** A write that got no answer in time, as its own kind of failure. */
interface TimedOut {
  readonly _tag: "TimedOut"
  readonly message: string
}

type WriteFailure = KubeError | TimedOut

/**
 * What went wrong, in words about Events: what to grant, or that they are not served.
 * A KubeError's own reason is worded for routing calls and would give routing advice.
 */
const failureText = (failure: WriteFailure, namespace: string): string => {
  switch (failure._tag) {
    case "Forbidden":
      return `the API server forbids it (${
        failure.status?.message ?? "403"
      }): grant create and patch on events in both groups (events.k8s.io and core) in namespace ${namespace}`
    case "NotServed":
      return "the API server serves neither events.k8s.io/v1 nor core/v1 Events"
    case "TimedOut":
      return failure.message
    default:
      return failure.reason
  }
}

/**
 * The kinds of problem told apart: what to grant, what is not served, and the rest,
 * which all mean the API did not take the write now. A hung write may end as our
 * time limit or as the client's own: one problem, said once.
 */
const problemKind = (failure: WriteFailure): string =>
  failure._tag === "Forbidden" || failure._tag === "NotServed" ? failure._tag : "NoWrite"

/** Counts one occurrence under its outcome. */
const counted = (outcome: "written" | "aggregated" | "filtered" | "dropped" | "failed") =>
  updateSeries(eventsRecorded, [["outcome", outcome]], 1)

export interface EventRecorderOptions {
  /** `reportingInstance`; default `session-routing-<host name>`. */
  readonly instance?: string
}

/** Refreshes `key` as the newest entry of `map`, then evicts the oldest entry `canEvict` allows once past `MAX_SERIES`. */
const rememberIn = <V>(map: Map<string, V>, key: string, value: V, canEvict: (value: V) => boolean) => {
  map.delete(key)
  map.set(key, value)
  if (map.size <= MAX_SERIES) return
  for (const [oldKey, old] of map) {
    if (canEvict(old)) {
      map.delete(oldKey)
      return
    }
  }
}

/**
 * The recorder over `writes`, each write bounded by `timeout`. Its writers live in the
 * scope; closing it waits, within `timeout`, for what is still queued.
 */
export const makeWith = (
  writes: EventWrites,
  timeout: Duration.Duration,
  options: EventRecorderOptions = {}
): Effect.Effect<EventRecorder.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const instance = options.instance ?? `${REPORTING_CONTROLLER}-${hostname()}`
    const queue = yield* Queue.dropping<Series>(MAX_QUEUED)
    const series = new Map<string, Series>()
    const budgets = new Map<string, SpamBudget>()
    const told = new Set<string>()
    const idle = yield* Effect.makeLatch(true)
    let outstanding = 0
    let api: Api = "events.k8s.io/v1"
    let lastNanos = 0n

    /** A fresh instant per Event: two Events in one clock tick must not share a name. */
    const nextNanos = Effect.map(Clock.currentTimeNanos, (now) => {
      lastNanos = now > lastNanos ? now : lastNanos + 1n
      return lastNanos
    })

    // A write the client already bounds gets no second timer: Effect.timeoutFail forks
    // and races two fibers per write, which at a thousand sessions was most of an
    // Event's cost to the runner.
    const bounded = <A>(what: string, self: Effect.Effect<A, KubeError>): Effect.Effect<A, WriteFailure> =>
      writes.timeLimited === true ? self : Effect.timeoutFail(self, {
        duration: timeout,
        onTimeout: (): WriteFailure => ({
          _tag: "TimedOut",
          message: `${what} got no answer within ${Duration.toMillis(timeout)} ms`
        })
      })

    /**
     * Says a problem once per kind for the whole process: to the caller's channel when
     * it still listens, else as a log line, so it is neither lost nor repeated.
     */
    const tell = (kind: string, occurrence: Occurrence, text: string, sink: EventProblemSink | undefined) =>
      Effect.gen(function*() {
        if (told.has(kind)) return
        told.add(kind)
        const target = `pod ${occurrence.regarding.namespace ?? ""}/${occurrence.regarding.name ?? ""}`
        const line = `could not record Event ${occurrence.reason} on ${target}: ${text}; routing goes on without Events`
        const heard = sink === undefined ? false : yield* sink(line)
        if (!heard) yield* Effect.logWarning(line)
      })

    const settle = () => {
      outstanding -= 1
      if (outstanding === 0) idle.unsafeOpen()
    }

    const createOnce = (entry: Series, count: number): Effect.Effect<void, WriteFailure> =>
      Effect.gen(function*() {
        const { occurrence } = entry
        const namespace = occurrence.regarding.namespace ?? ""
        const nanos = yield* nextNanos
        const stamp = { name: eventName(occurrence.regarding.name ?? "object", nanos), instance, nanos }
        if (api === "events.k8s.io/v1") {
          const created = yield* Effect.either(
            bounded(
              "creating an Event",
              writes.create(EventV1Resource, namespace, newEventV1(occurrence, stamp, count))
            )
          )
          if (Either.isRight(created)) {
            entry.api = "events.k8s.io/v1"
            entry.name = stamp.name
            return
          }
          if (created.left._tag !== "NotServed") return yield* Effect.fail(created.left)
          // A server without events.k8s.io/v1 (before 1.19, or with it turned off) still has core Events.
          api = "v1"
        }
        if (api === "v1") {
          yield* bounded(
            "creating an Event",
            writes.create(EventResource, namespace, newCoreEvent(occurrence, stamp, count))
          ).pipe(Effect.tapError((failure) =>
            Effect.sync(() => {
              if (failure._tag === "NotServed") api = "none"
            })
          ))
          entry.api = "v1"
          entry.name = stamp.name
        }
      })

    /** Another recorder (another runner, or this one before a restart) may have taken the name: the next instant is another. */
    const create = (entry: Series, count: number, tries = 6): Effect.Effect<void, WriteFailure> =>
      Effect.catchIf(
        createOnce(entry, count),
        (failure) => failure._tag === "AlreadyExists" && tries > 1,
        () => create(entry, count, tries - 1)
      )

    const repeat = (entry: Series, name: string, count: number): Effect.Effect<void, WriteFailure> =>
      Effect.gen(function*() {
        const nanos = yield* nextNanos
        const namespace = entry.occurrence.regarding.namespace ?? ""
        const body = repeatPatch(entry.api ?? "v1", entry.occurrence, entry.written + count, nanos)
        const patched = yield* Effect.either(bounded(
          "counting a repeated Event",
          entry.api === "v1"
            ? Effect.asVoid(writes.patch(EventResource, namespace, name, body))
            : Effect.asVoid(writes.patch(EventV1Resource, namespace, name, body))
        ))
        if (Either.isRight(patched)) return
        // Events expire (an hour by default): a repeat after that starts a new one.
        if (patched.left._tag !== "NotFound") return yield* Effect.fail(patched.left)
        entry.written = 0
        return yield* create(entry, count)
      })

    /** Writes what `entry` holds, and again while occurrences folded in meanwhile. */
    const write = (entry: Series): Effect.Effect<void> =>
      Effect.gen(function*() {
        entry.state = "busy"
        while (entry.pending > 0 && api !== "none") {
          const count = entry.pending
          entry.pending = 0
          const done = yield* Effect.either(
            entry.name === undefined ? create(entry, count) : repeat(entry, entry.name, count)
          )
          if (Either.isRight(done)) {
            entry.written += count
            yield* counted("written")
            continue
          }
          yield* counted("failed")
          const namespace = entry.occurrence.regarding.namespace ?? ""
          yield* tell(problemKind(done.left), entry.occurrence, failureText(done.left, namespace), entry.problems)
        }
        entry.pending = 0
        entry.state = "idle"
        // The sink is the caller's session stream: an idle series must not keep a closed session alive.
        entry.problems = undefined
      }).pipe(Effect.ensuring(Effect.sync(settle)))

    const record = (occurrence: Occurrence, problems?: EventProblemSink): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (api === "none") return Effect.void
        const budgetKey = objectKey(occurrence)
        const budget = spendBudget(budgets.get(budgetKey), now)
        if (budget === undefined) return counted("filtered")
        rememberIn(budgets, budgetKey, budget, () => true)

        const key = occurrenceKey(occurrence)
        const entry: Series = series.get(key) ?? {
          occurrence,
          api: undefined,
          name: undefined,
          written: 0,
          pending: 0,
          state: "idle",
          problems
        }
        rememberIn(series, key, entry, (old) => old.state === "idle")
        entry.occurrence = occurrence
        entry.pending += 1
        if (problems !== undefined) entry.problems = problems
        // A write of this series is queued or in flight: it takes this occurrence too.
        if (entry.state !== "idle") return counted("aggregated")
        entry.state = "queued"
        outstanding += 1
        idle.unsafeClose()
        return Effect.flatMap(Queue.offer(queue, entry), (queued) => {
          if (queued) return Effect.void
          entry.pending = 0
          entry.state = "idle"
          entry.problems = undefined
          settle()
          return Effect.zipRight(
            counted("dropped"),
            tell(
              "QueueFull",
              occurrence,
              `${MAX_QUEUED} Events are already waiting to be written, so this one and any more while the queue is full are dropped`,
              problems
            )
          )
        })
      })

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), write))).pipe(
      Effect.replicateEffect(WRITERS)
    )
    // Added after the writers, so it runs before they are interrupted: what is queued still gets written.
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.timeout(idle.await, timeout)))

    return EventRecorder.of({ record, flush: idle.await })
  })

/** The recorder the configuration asks for: none when Events are off or the client cannot write them. */
export const make = (
  options: EventRecorderOptions = {}
): Effect.Effect<EventRecorder.Service, never, KubeClient | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* RouterConfig
    const client = yield* KubeClient
    if (config.events === false || client.events === undefined) return noEvents
    return yield* makeWith(client.events, Duration.millis(config.apiTimeoutMs), options)
  })

/** `EventRecorder` from `KubeClient` and `RouterConfig` (`SESSION_ROUTING_EVENTS`, `SESSION_API_TIMEOUT_MS`). */
export const layer: Layer.Layer<EventRecorder, never, KubeClient | RouterConfig> = Layer.scoped(EventRecorder, make())

/** No Events at all. */
export const layerNone: Layer.Layer<EventRecorder> = Layer.succeed(EventRecorder, noEvents)

/**
 * `EventRecorderLive.layer`, `.layerNone`, `.make` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const EventRecorderLive = { layer, layerNone, make, makeWith } as const
