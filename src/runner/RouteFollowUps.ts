/**
 * What the runner does beside each session event: a Kubernetes Event on the session
 * Pod, and for a programmed host, when probes are on, a request through the public
 * path and a look at its Service port's endpoints. Events are only queued with the
 * recorder, never waited for; each probe runs on its own fiber, so neither holds back
 * the route events. The publish's own Event waits a little for the hosts' verdicts,
 * which tell it when they come in time.
 */
import { Clock, Context, Duration, Effect, ExecutionStrategy, Exit, Fiber, Option, Runtime, Scope } from "effect"
import { EventReason, type Occurrence, podReference } from "../domain/KubeEvents.js"
import { notReadyReason } from "../domain/RouteProbe.js"
import type { PublishedRoute } from "../domain/Routes.js"
import { type Deadline, type Deadlines, makeDeadlines, runtimeOfFiber } from "../layers/Deadlines.js"
import { EventRecorder, noEvents } from "../services/EventRecorder.js"
import { RouteProbe } from "../services/RouteProbe.js"
import { RouterConfig } from "../services/RouterConfig.js"
import type { SessionEvent } from "./SessionRunner.js"

/**
 * The session events follow-ups add, beside the route events they follow.
 *
 * @since 0.1.0
 * @category models
 */
export type FollowUpEvent =
  | {
    readonly type: "probe"
    readonly port: number
    readonly host: string
    readonly ok: boolean
    readonly status?: number
    readonly reason?: string
  }
  | {
    readonly type: "endpoints"
    readonly port: number
    readonly host: string
    readonly ready: false
    readonly reason: string
  }
  | { readonly type: "event-error"; readonly reason: string }

/** The route events follow-ups react to: the runner's own `SessionEvent` members. */
export type FollowedEvent = Exclude<SessionEvent, FollowUpEvent>

/** The session a stream of events belongs to. */
export interface FollowedSession {
  readonly sessionId: string
  readonly podName: string
  readonly podUid: string
}

/**
 * How long a publish's Event waits for the session's verdicts. When every host has
 * settled by then, its verdicts tell the publish too (each says how long after it
 * came), and the publish costs no write of its own: Events are requests to the API
 * server, and a second write per session was most of what Events cost a runner
 * publishing thousands of sessions. A session still unsettled then gets its
 * `RoutesPublished`, saying how many hosts had settled; so does one whose scope closes
 * first (a publish nobody watches).
 */
export const PUBLISHED_EVENT_WAIT = Duration.seconds(10)

/** The publish waits of each recorder's sessions: one sweeper for them all, every wait of one length. */
const publishWaits = new WeakMap<EventRecorder.Service, Deadlines>()

const publishWaitsOf = (recorder: EventRecorder.Service): Deadlines => {
  const found = publishWaits.get(recorder)
  if (found !== undefined) return found
  const made = makeDeadlines(Duration.toMillis(PUBLISHED_EVENT_WAIT))
  publishWaits.set(recorder, made)
  return made
}

/** `ms` as a person reads a wait: tenths of a second under a minute, whole seconds past it. */
const elapsed = (ms: number): string => {
  const seconds = Math.max(0, ms) / 1000
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds)} s`
}

/**
 * The Event an event is recorded as, if any: pending hosts are not news. With
 * `afterPublishMs`, a host's verdict says how long after the publish it came.
 */
export const occurrenceFor = (
  session: FollowedSession,
  namespace: string,
  event: FollowedEvent | FollowUpEvent,
  afterPublishMs?: number
): Occurrence | undefined => {
  const regarding = podReference(namespace, session.podName, session.podUid)
  const after = afterPublishMs === undefined ? "" : `, ${elapsed(afterPublishMs)} after publish`
  switch (event.type) {
    case "published":
      return event.routes.length === 0 ? undefined : {
        regarding,
        type: "Normal",
        reason: EventReason.RoutesPublished,
        action: "Publish",
        note: `published ${event.routes.length} ${
          event.routes.length === 1 ? "host" : "hosts"
        } of session ${session.sessionId} via ${event.layer}: ${event.routes.map((r) => r.host).join(", ")}`
      }
    case "route":
      if (event.state === "programmed") {
        return {
          regarding,
          type: "Normal",
          reason: EventReason.RouteProgrammed,
          action: "WatchRoute",
          note: `${event.host} (port ${event.port}) is programmed${after}`
        }
      }
      if (event.state === "unprogrammed") {
        return {
          regarding,
          type: "Warning",
          reason: EventReason.RouteUnprogrammed,
          action: "WatchRoute",
          note: `${event.host} (port ${event.port}) is not programmed${after}: ${event.reason ?? "no reason given"}`
        }
      }
      return undefined
    case "read-error":
      return {
        regarding,
        type: "Warning",
        reason: EventReason.RouteStatusUnreadable,
        action: "WatchRoute",
        note: `route status could not be read: ${event.reason}`
      }
    default:
      return undefined
  }
}

/** A publish's Event when it is written after all: how many hosts were still waiting, and for how long. */
export const latePublishOccurrence = (
  published: Occurrence,
  waiting: number,
  hosts: number,
  afterMs: number
): Occurrence => ({
  ...published,
  note: `${published.note}; ${waiting === hosts ? "none" : `${hosts - waiting} of ${hosts}`} settled after ${
    elapsed(afterMs)
  }`
})

/** A session's follow-ups, fed one event at a time. */
export interface FollowUps {
  /** Starts what `event` calls for: an Event queued at once, a probe on a fiber of its own. */
  readonly onEvent: (event: FollowedEvent | FollowUpEvent) => Effect.Effect<void>
  /** Waits for every probe started so far. */
  readonly done: Effect.Effect<void>
}

/**
 * The follow-ups of `session`, telling what they find through `emit`; undefined when
 * there are none to make (Events off and probes off). Probes run in the scope.
 */
export const makeFollowUps = (
  session: FollowedSession,
  emit: (event: FollowUpEvent) => Effect.Effect<boolean>
): Effect.Effect<FollowUps | undefined, never, EventRecorder | RouteProbe | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    // Events turned off come as the recorder that records nothing: no follow-up at all then.
    const events = yield* EventRecorder
    const recorder = events === noEvents ? Option.none() : Option.some(events)
    const probe = yield* RouteProbe
    const config = yield* RouterConfig
    const namespace = config.sessionNamespace
    const probing = config.routeProbe !== undefined
    if (Option.isNone(recorder) && !probing) return undefined

    const scope = yield* Effect.scope
    const running: Array<Fiber.RuntimeFiber<void>> = []
    const follow = (work: Effect.Effect<ReadonlyArray<FollowUpEvent>>) =>
      Effect.map(
        Effect.forkIn(Effect.flatMap(work, (found) => Effect.forEach(found, emit, { discard: true })), scope),
        (fiber) => {
          running.push(fiber)
        }
      )

    // Queued, never awaited: a slow or refused events API holds back no route event. A
    // problem comes back as an event-error while this session's stream still listens.
    const problems = (reason: string) => emit({ type: "event-error", reason })
    const write = (occurrence: Occurrence | undefined): Effect.Effect<void> =>
      occurrence === undefined || Option.isNone(recorder) ? Effect.void : recorder.value.record(occurrence, problems)

    // The publish's Event, held until every host has settled (then its verdicts tell it)
    // or `PUBLISHED_EVENT_WAIT` passes (then it is written, saying how many had settled), or
    // the scope closes first (written then, as for a publish nobody watches).
    let publishedAt: number | undefined
    let held:
      | {
        readonly occurrence: Occurrence
        readonly at: number
        readonly waiting: Set<number>
        readonly hosts: number
        readonly deadline: Deadline
        /** The hold's part of the session's scope: closing it writes what is still held. */
        readonly closing: Scope.CloseableScope
      }
      | undefined
    const release: Effect.Effect<void> = Effect.suspend(() => {
      const late = held
      if (late === undefined) return Effect.void
      held = undefined
      late.deadline.disarm()
      return Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => write(latePublishOccurrence(late.occurrence, late.waiting.size, late.hosts, now - late.at))
      ).pipe(Effect.zipRight(Scope.close(late.closing, Exit.void)))
    })
    const hold = (event: Extract<FollowedEvent, { readonly type: "published" }>, recording: EventRecorder.Service) =>
      Effect.withFiberRuntime<void>((fiber, status) => {
        const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
        const at = clock.unsafeCurrentTimeMillis()
        publishedAt = at
        const occurrence = occurrenceFor(session, namespace, event)
        if (occurrence === undefined) return Effect.void
        // Closed when the hosts settle, so a settled session keeps nothing of the hold.
        return Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (closing) => {
          const runtime = runtimeOfFiber(fiber, status)
          held = {
            occurrence,
            at,
            waiting: new Set(event.routes.map((r) => r.port)),
            hosts: event.routes.length,
            deadline: publishWaitsOf(recording).unsafeArm(clock, runtime, () => Runtime.runFork(runtime())(release)),
            closing
          }
          return Scope.addFinalizer(closing, release)
        })
      })
    const settle = (event: Extract<FollowedEvent, { readonly type: "route" }>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const verdict = write(
          occurrenceFor(session, namespace, event, publishedAt === undefined ? undefined : now - publishedAt)
        )
        if (held === undefined || !held.waiting.delete(event.port) || held.waiting.size > 0) return verdict
        const { closing, deadline } = held
        held = undefined
        deadline.disarm()
        return Effect.zipRight(verdict, Scope.close(closing, Exit.void))
      })
    const record = (event: FollowedEvent | FollowUpEvent): Effect.Effect<void> =>
      Option.isNone(recorder)
        ? Effect.void
        : event.type === "published"
        ? hold(event, recorder.value)
        : event.type === "route"
        // A pending host is not news.
        ? event.state === "pending" ? Effect.void : settle(event)
        : write(occurrenceFor(session, namespace, event))

    const check = (route: PublishedRoute): Effect.Effect<ReadonlyArray<FollowUpEvent>> =>
      Effect.all(
        [probe.probe(session.sessionId, route), probe.endpoints(session.sessionId, route)],
        { concurrency: 2 }
      ).pipe(Effect.map(([outcome, readiness]): ReadonlyArray<FollowUpEvent> => [
        ...(readiness === "not-ready"
          ? [{
            type: "endpoints" as const,
            port: route.port,
            host: route.host,
            ready: false as const,
            reason: notReadyReason(route.port)
          }]
          : []),
        { type: "probe", port: route.port, host: route.host, ...outcome }
      ]))

    const onEvent = (event: FollowedEvent | FollowUpEvent) =>
      probing && event.type === "route" && event.state === "programmed"
        ? Effect.zipRight(record(event), follow(check({ host: event.host, port: event.port })))
        : record(event)

    // One join at a time: `Fiber.joinAll` builds a composite fiber even for none.
    return { onEvent, done: Effect.suspend(() => Effect.forEach(running, Fiber.join, { discard: true })) }
  })
