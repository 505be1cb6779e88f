/**
 * The EventRecorder over `KubeClient.events`, shaped like client-go's broadcaster and
 * correlator: `record` only queues, a few writer fibers write in the background, and
 * an occurrence whose object and reason already have a write queued or in flight is
 * folded into that write's count instead of making a request of its own.
 * events.k8s.io/v1 first, core/v1 when the server does not serve the newer API.
 * Off when `SESSION_ROUTING_EVENTS=false` or the client cannot write Events.
 */
import { Clock, Duration, Effect, Layer, type Scope } from "effect"
import { hostname } from "node:os"
import { type Occurrence, REPORTING_CONTROLLER } from "../domain/KubeEvents.js"
import { type EventProblemSink, EventRecorder, noEvents } from "../services/EventRecorder.js"
import { type EventWrites, KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { counted, makeCorrelator } from "./eventRecorder/EventSeries.js"
import { makeWriter, writeSeries } from "./eventRecorder/SeriesWrites.js"
import { makeTell } from "./eventRecorder/WriteProblems.js"
import { makeWriteQueue } from "./eventRecorder/WriteQueue.js"

/** How the recorder names itself in the Events it writes. */
export interface EventRecorderOptions {
  /** `reportingInstance`; default `session-routing-<host name>`. */
  readonly instance?: string
}

/**
 * The recorder over `writes`, each write bounded by `timeout`. Its writers live in the
 * scope; closing it waits, within `timeout`, for what is still queued (not when it closes on an interruption).
 */
export const makeWith = (
  writes: EventWrites,
  timeout: Duration.Duration,
  options: EventRecorderOptions = {}
): Effect.Effect<EventRecorder.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const writer = makeWriter(writes, timeout, options.instance ?? `${REPORTING_CONTROLLER}-${hostname()}`)
    const tell = makeTell()
    const correlator = makeCorrelator()
    const queue = yield* makeWriteQueue((entry) => writeSeries(writer, entry, tell), timeout, tell)

    const record = (occurrence: Occurrence, problems?: EventProblemSink): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (writer.api === "none") return Effect.void
        const folded = correlator.fold(occurrence, problems, now)
        return folded === "filtered" || folded === "aggregated" ? counted(folded) : queue.enqueue(folded)
      })

    return EventRecorder.of({ record, flush: queue.idle })
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
