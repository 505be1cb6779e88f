/**
 * The EventRecorder over `KubeClient.events`: events.k8s.io/v1 first, core/v1 when
 * the server does not serve the newer API, a count per (object, reason) patched on
 * each repeat, and every write bounded by `SESSION_API_TIMEOUT_MS`. Off when
 * `SESSION_ROUTING_EVENTS=false` or the client cannot write Events.
 */
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { hostname } from "node:os"
import {
  eventName,
  newCoreEvent,
  newEventV1,
  type Occurrence,
  occurrenceKey,
  repeatPatch,
  REPORTING_CONTROLLER
} from "../domain/KubeEvents.js"
import { EventResource, EventV1Resource } from "../domain/Resources.js"
import { EventRecorder, noEvents } from "../services/EventRecorder.js"
import { type EventWrites, KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"

/** Which Events API the recorder writes to; `none` once neither is served. */
type Api = "events.k8s.io/v1" | "v1" | "none"

interface Series {
  readonly api: "events.k8s.io/v1" | "v1"
  readonly name: string
  count: number
}

/** client-go keeps 4096 series; older ones start a new Event, which is what the server's TTL does anyway. */
const MAX_SERIES = 4096

/** A write that got no answer in time, as its own kind of failure. */
interface TimedOut {
  readonly _tag: "TimedOut"
  readonly message: string
}

type WriteFailure = KubeError | TimedOut

const hint = (failure: WriteFailure, namespace: string): string => {
  switch (failure._tag) {
    case "Forbidden":
      return `: grant create and patch on events (events.k8s.io and core) in namespace ${namespace}`
    case "NotServed":
      return ": the API server serves neither events.k8s.io/v1 nor core/v1 Events"
    default:
      return ""
  }
}

export interface EventRecorderOptions {
  /** `reportingInstance`; default `session-routing-<host name>`. */
  readonly instance?: string
}

/** The recorder over `writes`, writing each Event within `timeout`. */
export const makeWith = (writes: EventWrites, timeout: Duration.Duration, options: EventRecorderOptions = {}) =>
  Effect.gen(function*() {
    const instance = options.instance ?? `${REPORTING_CONTROLLER}-${hostname()}`
    const lock = yield* Effect.makeSemaphore(1)
    const series = new Map<string, Series>()
    const reported = new Set<string>()
    let api: Api = "events.k8s.io/v1"
    let lastNanos = 0n

    /** A fresh instant per Event: two Events in one clock tick must not share a name. */
    const nextNanos = Effect.map(Clock.currentTimeNanos, (now) => {
      lastNanos = now > lastNanos ? now : lastNanos + 1n
      return lastNanos
    })

    const bounded = <A>(what: string, self: Effect.Effect<A, KubeError>): Effect.Effect<A, WriteFailure> =>
      Effect.timeoutFail(self, {
        duration: timeout,
        onTimeout: (): WriteFailure => ({
          _tag: "TimedOut",
          message: `${what} got no answer within ${Duration.toMillis(timeout)} ms`
        })
      })

    const report = (occurrence: Occurrence, failure: WriteFailure): Effect.Effect<Option.Option<string>> => {
      if (reported.has(failure._tag)) return Effect.succeed(Option.none())
      reported.add(failure._tag)
      const target = `pod ${occurrence.regarding.namespace ?? ""}/${occurrence.regarding.name ?? ""}`
      const text = `could not record Event ${occurrence.reason} on ${target}: ${failure.message}${
        hint(failure, occurrence.regarding.namespace ?? "")
      }; routing goes on without Events`
      return Effect.as(Effect.logWarning(text), Option.some(text))
    }

    const remember = (key: string, entry: Series) => {
      series.delete(key)
      series.set(key, entry)
      if (series.size > MAX_SERIES) series.delete(series.keys().next().value as string)
    }

    const createOnce = (occurrence: Occurrence, key: string): Effect.Effect<void, WriteFailure> =>
      Effect.gen(function*() {
        const namespace = occurrence.regarding.namespace ?? ""
        const nanos = yield* nextNanos
        const stamp = { name: eventName(occurrence.regarding.name ?? "object", nanos), instance, nanos }
        if (api === "events.k8s.io/v1") {
          const created = yield* bounded(
            "creating an Event",
            writes.create(EventV1Resource, namespace, newEventV1(occurrence, stamp))
          ).pipe(Effect.either)
          if (created._tag === "Right") return remember(key, { api, name: stamp.name, count: 1 })
          if (created.left._tag !== "NotServed") return yield* Effect.fail(created.left)
          // A server without events.k8s.io/v1 (before 1.19, or with it turned off) still has core Events.
          api = "v1"
        }
        if (api === "v1") {
          yield* bounded("creating an Event", writes.create(EventResource, namespace, newCoreEvent(occurrence, stamp)))
            .pipe(
              Effect.tapError((failure) =>
                Effect.sync(() => {
                  if (failure._tag === "NotServed") api = "none"
                })
              )
            )
          remember(key, { api: "v1", name: stamp.name, count: 1 })
        }
      })

    /**
     * Another recorder (another runner, or this one before a restart) may have taken the
     * name at the same instant: the next instant is another name.
     */
    const create = (occurrence: Occurrence, key: string): Effect.Effect<void, WriteFailure> =>
      createOnce(occurrence, key).pipe(Effect.retry({ while: (failure) => failure._tag === "AlreadyExists", times: 5 }))

    const repeat = (occurrence: Occurrence, key: string, entry: Series): Effect.Effect<void, WriteFailure> =>
      Effect.gen(function*() {
        const nanos = yield* nextNanos
        const namespace = occurrence.regarding.namespace ?? ""
        const body = repeatPatch(entry.api, occurrence, entry.count + 1, nanos)
        const patched = yield* bounded(
          "counting a repeated Event",
          entry.api === "v1"
            ? Effect.asVoid(writes.patch(EventResource, namespace, entry.name, body))
            : Effect.asVoid(writes.patch(EventV1Resource, namespace, entry.name, body))
        ).pipe(Effect.either)
        if (patched._tag === "Right") {
          entry.count += 1
          return remember(key, entry)
        }
        // Events expire (an hour by default): a repeat after that starts a new one.
        if (patched.left._tag !== "NotFound") return yield* Effect.fail(patched.left)
        series.delete(key)
        return yield* create(occurrence, key)
      })

    const record = (occurrence: Occurrence): Effect.Effect<Option.Option<string>> =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          if (api === "none") return Effect.succeed(Option.none<string>())
          const key = occurrenceKey(occurrence)
          const entry = series.get(key)
          const write = entry !== undefined ? repeat(occurrence, key, entry) : create(occurrence, key)
          return write.pipe(
            Effect.as(Option.none<string>()),
            Effect.catchAll((failure) => report(occurrence, failure))
          )
        })
      )

    return EventRecorder.of({ record })
  })

/** The recorder the configuration asks for: none when Events are off or the client cannot write them. */
export const make = (
  options: EventRecorderOptions = {}
): Effect.Effect<EventRecorder.Service, never, KubeClient | RouterConfig> =>
  Effect.gen(function*() {
    const config = yield* RouterConfig
    const client = yield* KubeClient
    if (config.events === false || client.events === undefined) return noEvents
    return yield* makeWith(client.events, Duration.millis(config.apiTimeoutMs), options)
  })

/** `EventRecorder` from `KubeClient` and `RouterConfig` (`SESSION_ROUTING_EVENTS`, `SESSION_API_TIMEOUT_MS`). */
export const layer: Layer.Layer<EventRecorder, never, KubeClient | RouterConfig> = Layer.effect(EventRecorder, make())

/** No Events at all. */
export const layerNone: Layer.Layer<EventRecorder> = Layer.succeed(EventRecorder, noEvents)

/** `EventRecorderLive.layer`, `.layerNone`, `.make` under one name. */
export const EventRecorderLive = { layer, layerNone, make, makeWith } as const
