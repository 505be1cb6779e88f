/**
 * The writes of one series: create its Event (events.k8s.io/v1 first, core/v1 when the
 * server does not serve the newer API), patch its count on a repeat, and start a new
 * Event when the old one expired or its name was taken.
 */
import { Clock, Duration, Effect, Either } from "effect"
import { eventName, newCoreEvent, newEventV1, repeatPatch } from "../../domain/KubeEvents.js"
import { EventResource, EventV1Resource } from "../../domain/Resources.js"
import type { EventWrites } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { counted, type Series, settleSeries } from "./EventSeries.js"
import { failureText, problemKind, type Tell, type WriteFailure } from "./WriteProblems.js"

/** Which Events API the recorder writes to; `none` once neither is served. */
export type Api = "events.k8s.io/v1" | "v1" | "none"

/** What every write of one recorder shares: the client, its bound, its name, and what the server serves. */
export interface Writer {
  readonly writes: EventWrites
  readonly timeout: Duration.Duration
  /** `reportingInstance` of every Event. */
  readonly instance: string
  api: Api
  /** The last instant an Event was named after. */
  lastNanos: bigint
}

/** A writer to the newer API first, over `writes`, each write bounded by `timeout`. */
export const makeWriter = (writes: EventWrites, timeout: Duration.Duration, instance: string): Writer => ({
  writes,
  timeout,
  instance,
  api: "events.k8s.io/v1",
  lastNanos: 0n
})

/** A fresh instant per Event: two Events in one clock tick must not share a name. */
const nextNanos = (writer: Writer) =>
  Effect.map(Clock.currentTimeNanos, (now) => {
    writer.lastNanos = now > writer.lastNanos ? now : writer.lastNanos + 1n
    return writer.lastNanos
  })

// A write the client already bounds gets no second timer: Effect.timeoutFail forks
// and races two fibers per write, which at a thousand sessions was most of an
// Event's cost to the runner.
const bounded = <A>(writer: Writer, what: string, self: Effect.Effect<A, KubeError>): Effect.Effect<A, WriteFailure> =>
  writer.writes.timeLimited === true ? self : Effect.timeoutFail(self, {
    duration: writer.timeout,
    onTimeout: (): WriteFailure => ({
      _tag: "TimedOut",
      message: `${what} got no answer within ${Duration.toMillis(writer.timeout)} ms`
    })
  })

const createOnce = (writer: Writer, entry: Series, count: number): Effect.Effect<void, WriteFailure> =>
  Effect.gen(function*() {
    const { occurrence } = entry
    const namespace = occurrence.regarding.namespace ?? ""
    const nanos = yield* nextNanos(writer)
    const stamp = { name: eventName(occurrence.regarding.name ?? "object", nanos), instance: writer.instance, nanos }
    if (writer.api === "events.k8s.io/v1") {
      const created = yield* Effect.either(
        bounded(
          writer,
          "creating an Event",
          writer.writes.create(EventV1Resource, namespace, newEventV1(occurrence, stamp, count))
        )
      )
      if (Either.isRight(created)) {
        entry.api = "events.k8s.io/v1"
        entry.name = stamp.name
        return
      }
      if (created.left._tag !== "NotServed") return yield* Effect.fail(created.left)
      // A server without events.k8s.io/v1 (before 1.19, or with it turned off) still has core Events.
      writer.api = "v1"
    }
    if (writer.api === "v1") {
      yield* bounded(
        writer,
        "creating an Event",
        writer.writes.create(EventResource, namespace, newCoreEvent(occurrence, stamp, count))
      ).pipe(Effect.tapError((failure) =>
        Effect.sync(() => {
          if (failure._tag === "NotServed") writer.api = "none"
        })
      ))
      entry.api = "v1"
      entry.name = stamp.name
    }
  })

/** Another recorder (another runner, or this one before a restart) may have taken the name: the next instant is another. */
const create = (writer: Writer, entry: Series, count: number, tries = 6): Effect.Effect<void, WriteFailure> =>
  Effect.catchIf(
    createOnce(writer, entry, count),
    (failure) => failure._tag === "AlreadyExists" && tries > 1,
    () => create(writer, entry, count, tries - 1)
  )

const repeat = (writer: Writer, entry: Series, name: string, count: number): Effect.Effect<void, WriteFailure> =>
  Effect.gen(function*() {
    const nanos = yield* nextNanos(writer)
    const namespace = entry.occurrence.regarding.namespace ?? ""
    const body = repeatPatch(entry.api ?? "v1", entry.occurrence, entry.written + count, nanos)
    const patched = yield* Effect.either(bounded(
      writer,
      "counting a repeated Event",
      entry.api === "v1"
        ? Effect.asVoid(writer.writes.patch(EventResource, namespace, name, body))
        : Effect.asVoid(writer.writes.patch(EventV1Resource, namespace, name, body))
    ))
    if (Either.isRight(patched)) return
    // Events expire (an hour by default): a repeat after that starts a new one.
    if (patched.left._tag !== "NotFound") return yield* Effect.fail(patched.left)
    entry.written = 0
    return yield* create(writer, entry, count)
  })

/** Writes what `entry` holds, and again while occurrences folded in meanwhile; then leaves it idle. */
export const writeSeries = (writer: Writer, entry: Series, tell: Tell): Effect.Effect<void> =>
  Effect.gen(function*() {
    entry.state = "busy"
    while (entry.pending > 0 && writer.api !== "none") {
      const count = entry.pending
      entry.pending = 0
      const done = yield* Effect.either(
        entry.name === undefined ? create(writer, entry, count) : repeat(writer, entry, entry.name, count)
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
    settleSeries(entry)
  })
