/**
 * What the runner does beside each session event: a Kubernetes Event on the session
 * Pod, and for a programmed host, when probes are on, a request through the public
 * path and a look at its Service port's endpoints. Events are only queued with the
 * recorder, never waited for; each probe runs on its own fiber, so neither holds back
 * the route events.
 */
import { Effect, Fiber, Option, type Scope } from "effect"
import { EventReason, type Occurrence, podReference } from "../domain/KubeEvents.js"
import { notReadyReason } from "../domain/RouteProbe.js"
import type { PublishedRoute } from "../domain/Routes.js"
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

/** The Event an event is recorded as, if any: pending hosts are not news. */
export const occurrenceFor = (
  session: FollowedSession,
  namespace: string,
  event: FollowedEvent | FollowUpEvent
): Occurrence | undefined => {
  const regarding = podReference(namespace, session.podName, session.podUid)
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
          note: `${event.host} (port ${event.port}) is programmed`
        }
      }
      if (event.state === "unprogrammed") {
        return {
          regarding,
          type: "Warning",
          reason: EventReason.RouteUnprogrammed,
          action: "WatchRoute",
          note: `${event.host} (port ${event.port}) is not programmed: ${event.reason ?? "no reason given"}`
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

/** A session's follow-ups, fed one event at a time. */
export interface FollowUps {
  /** Starts what `event` calls for: an Event queued at once, a probe on a fiber of its own. */
  readonly onEvent: (event: FollowedEvent | FollowUpEvent) => Effect.Effect<void>
  /** Waits for every probe started so far. */
  readonly done: Effect.Effect<void>
}

/**
 * The follow-ups of `session`, telling what they find through `emit`; undefined when
 * there are none to make (Events off and probes off). Uses `EventRecorder` and
 * `RouteProbe` when the context has them (the `SessionRouter` layers provide both).
 * Probes run in the scope.
 */
export const makeFollowUps = (
  session: FollowedSession,
  emit: (event: FollowUpEvent) => Effect.Effect<boolean>
): Effect.Effect<FollowUps | undefined, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Events turned off come as the recorder that records nothing: no follow-up at all then.
    const recorder = Option.filter(yield* Effect.serviceOption(EventRecorder), (r) => r !== noEvents)
    const probe = yield* Effect.serviceOption(RouteProbe)
    const config = yield* Effect.serviceOption(RouterConfig)
    const namespace = Option.match(config, { onNone: () => "", onSome: (c) => c.sessionNamespace })
    const probing = Option.isSome(probe) && Option.exists(config, (c) => c.routeProbe !== undefined)
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
    const record = (event: FollowedEvent | FollowUpEvent): Effect.Effect<void> => {
      const occurrence = Option.isSome(recorder) ? occurrenceFor(session, namespace, event) : undefined
      if (occurrence === undefined || Option.isNone(recorder)) return Effect.void
      return recorder.value.record(occurrence, problems)
    }

    const check = (route: PublishedRoute): Effect.Effect<ReadonlyArray<FollowUpEvent>> =>
      Option.isNone(probe) ? Effect.succeed([]) : Effect.all(
        [probe.value.probe(session.sessionId, route), probe.value.endpoints(session.sessionId, route)],
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
      Effect.zipRight(
        record(event),
        probing && event.type === "route" && event.state === "programmed"
          ? follow(check({ host: event.host, port: event.port }))
          : Effect.void
      )

    return { onEvent, done: Effect.suspend(() => Effect.asVoid(Fiber.joinAll(running))) }
  })
