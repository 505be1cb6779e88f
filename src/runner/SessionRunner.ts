/**
 * The runner program: publish a session's routes, hand back its endpoints, and
 * watch each host until the routing layer programs it, as one stream of events in
 * a runner's conventions. Layers in, nothing global.
 */
import { Clock, Data, Effect, Either, Exit, Mailbox, type Scope, type Stream, Tracer } from "effect"
import { atDeadline as unprogrammedAtDeadline } from "../domain/Diagnosis.js"
import type { SessionSpec } from "../domain/Manifests.js"
import {
  type Endpoint,
  endpointsFor,
  hostProblem,
  type PublishedRoute,
  reportOf,
  type RoutingMode,
  Unprogrammed
} from "../domain/Routes.js"
import { parsePorts, parseSessionId } from "../domain/Session.js"
import { readFailure, reportRouteHealth, type RouteHealthEvent } from "../health/RouteHealth.js"
import type { EventRecorder } from "../services/EventRecorder.js"
import type { RouteProbe } from "../services/RouteProbe.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { RouteStatusSource } from "../services/RouteStatusSource.js"
import { type PublishError, SessionRouter } from "../services/SessionRouter.js"
import type { SessionRouting } from "../services/SessionRouting.js"
import { SpanAttribute, SpanName, withSpanWhenTraced } from "../services/Telemetry.js"
import { type FollowUpEvent, makeFollowUps } from "./RouteFollowUps.js"
import { timedPublish, trackHosts } from "./SessionTelemetry.js"

/**
 * Everything a runner is told about a session's routing.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionEvent =
  | {
    readonly type: "published"
    readonly layer: RoutingMode
    readonly routes: ReadonlyArray<PublishedRoute>
    readonly endpoints: ReadonlyArray<Endpoint>
  }
  | {
    readonly type: "route"
    readonly port: number
    readonly host: string
    readonly state: "pending" | "programmed" | "unprogrammed"
    /** Unprogrammed, or pending with its object saying why: why, for a person. */
    readonly reason?: string
    /** Beside `reason`: why, for a program (`Unprogrammed`'s or the hold's code). */
    readonly code?: string
  }
  | { readonly type: "read-error"; readonly reason: string }
  | FollowUpEvent

/**
 * The session spec was refused before anything was published; `reason` names the bad value.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSession extends Data.TaggedError("InvalidSession")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * A published session: its hosts and endpoints, and the stream of its route events.
 *
 * @since 0.1.0
 * @category models
 */
export interface PublishedSession {
  readonly layer: RoutingMode
  readonly routes: ReadonlyArray<PublishedRoute>
  readonly endpoints: ReadonlyArray<Endpoint>
  /**
   * `published` first, then `pending` per host and one terminal state per host
   * (and `read-error` once, if a status read failed). Ends when every host is
   * terminal; closing the scope stops the watch.
   */
  readonly events: Stream.Stream<SessionEvent>
}

/** Refuses a spec whose id, ports or hosts would make an invalid object, before any write. */
export const validateSpec = (
  spec: SessionSpec,
  baseDomain: string | undefined
): Effect.Effect<SessionSpec, InvalidSession> =>
  Effect.gen(function*() {
    const id = parseSessionId(spec.sessionId)
    if (Either.isLeft(id)) return yield* new InvalidSession({ reason: id.left })
    const ports = parsePorts(spec.ports)
    if (Either.isLeft(ports)) return yield* new InvalidSession({ reason: ports.left })
    const host = baseDomain === undefined ? undefined : hostProblem(baseDomain, spec.sessionId)
    if (host !== undefined) return yield* new InvalidSession({ reason: host })
    return spec
  })

/** A health event in the runner's shape. */
export const toSessionEvent = (event: RouteHealthEvent): SessionEvent =>
  event._tag === "ReadError"
    ? { type: "read-error", reason: event.reason }
    : {
      type: "route",
      port: event.route.port,
      host: event.route.host,
      state: event.state,
      ...(event.state === "unprogrammed" ? { reason: event.reason, code: event.code } : {})
    }

/** A published session whose hosts are not followed yet: `follow` reports its events, `published` first. */
interface Publication extends Omit<PublishedSession, "events"> {
  /**
   * Starts handing the session's events to `report`, which answers whether each was
   * heard (false once its reader is gone): makes the follow-ups and reports `published`
   * in the scope, at once, so that a session left right away still has its publish
   * recorded. What it returns follows the hosts, and completes when every one is terminal.
   */
  readonly follow: (
    report: (event: SessionEvent) => Effect.Effect<boolean>
  ) => Effect.Effect<
    Effect.Effect<void, never, RouteStatusSource>,
    never,
    EventRecorder | RouteProbe | RouterConfig | Scope.Scope
  >
}

/**
 * Validates and publishes the session, inside its span: what `publishSession` and
 * `reportSession` share. Its hosts are tracked from here (in the caller's scope, so
 * they stay in the gauge until it closes: a settled session is still published).
 */
const publication = (
  spec: SessionSpec
): Effect.Effect<Publication, PublishError | InvalidSession, SessionRouting | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const router = yield* SessionRouter
    const config = yield* RouterConfig
    // The publish's span when traced; `Effect.annotateCurrentSpan` would fail (and
    // recover) twice per session to find there is none.
    const span = yield* Effect.serviceOption(Tracer.ParentSpan)
    const annotate = (key: string, value: unknown) => {
      if (span._tag === "Some" && span.value._tag === "Span") span.value.attribute(key, value)
    }
    annotate(SpanAttribute.mode, router.layer)
    annotate(SpanAttribute.namespace, config.sessionNamespace)
    yield* validateSpec(spec, config.baseDomain)
    const publishedAt = yield* Clock.currentTimeMillis
    const routes = yield* timedPublish(router.layer, router.publish(spec))
    annotate(SpanAttribute.hostCount, routes.length)
    const endpoints = endpointsFor({
      baseDomain: config.baseDomain,
      sessionId: spec.sessionId,
      ports: spec.ports,
      publishesRoutes: router.layer !== "none"
    })
    const published: SessionEvent = { type: "published", layer: router.layer, routes, endpoints }
    // Inside the publish span, so each host's span is its child.
    const tracker = yield* trackHosts({
      mode: router.layer,
      sessionId: spec.sessionId,
      publish: { routes, publishedAt }
    })
    // What follows the publish stays under its span, wherever it runs.
    const underSpan = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      span._tag === "Some" ? Effect.withParentSpan(effect, span.value) : effect
    const follow = (report: (event: SessionEvent) => Effect.Effect<boolean>) =>
      Effect.gen(function*() {
        // Each event is tracked, handed to the runner, then followed up (an Event, a probe).
        const followUps = yield* makeFollowUps(spec, report)
        const emit = (event: SessionEvent) =>
          Effect.zipRight(report(event), followUps === undefined ? Effect.void : followUps.onEvent(event))
        yield* emit(published)
        return reportRouteHealth({
          sessionId: spec.sessionId,
          routes,
          timeoutMs: config.routeReadyTimeoutMs,
          intervalMs: config.routePollIntervalMs
        }, (health) => {
          const event = toSessionEvent(health)
          return Effect.zipRight(tracker.observe(event), emit(event))
        }).pipe(
          Effect.zipRight(followUps === undefined ? Effect.void : followUps.done),
          underSpan
        )
      }).pipe(underSpan)
    return { layer: router.layer, routes, endpoints, follow }
  }).pipe(
    withSpanWhenTraced(SpanName.publish, () => ({
      captureStackTrace: false,
      attributes: { [SpanAttribute.sessionId]: spec.sessionId, [SpanAttribute.portCount]: spec.ports.length }
    }))
  )

/**
 * Publishes the session through `SessionRouter` and starts watching its routes in
 * the current scope. The watch starts at once, whether or not `events` is read.
 *
 * @since 0.1.0
 * @category programs
 */
export const publishSession = (
  spec: SessionSpec
): Effect.Effect<PublishedSession, PublishError | InvalidSession, SessionRouting | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const { endpoints, follow, layer, routes } = yield* publication(spec)
    // One mailbox and one fiber per session: the events wait in the mailbox for the stream.
    const out = yield* Mailbox.make<SessionEvent>()
    const watch = yield* follow((event) => out.offer(event))
    yield* watch.pipe(
      Effect.onExit((exit) => out.done(Exit.asVoid(exit))),
      Effect.forkScoped
    )
    return { layer, routes, endpoints, events: Mailbox.toStream(out) }
  })

/**
 * Publishes the session as `publishSession` does, then follows its hosts on the
 * caller's fiber: each event of `events` goes to `report` as it happens (`published`
 * first, with the endpoints; one at a time, in the stream's order), and the effect
 * completes when every host is terminal. A publish that fails fails it before any
 * event.
 *
 * The lean form for a runner that follows hundreds of sessions at once: no mailbox,
 * no stream and no fiber of its own per session. Fork it to go on while the hosts
 * settle; closing the scope stops the watch.
 *
 * @since 0.1.0
 * @category programs
 */
export const reportSession = (
  spec: SessionSpec,
  report: (event: SessionEvent) => Effect.Effect<void>
): Effect.Effect<void, PublishError | InvalidSession, SessionRouting | RouterConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const session = yield* publication(spec)
    // Follow-ups (an Event's failure, a probe's result) arrive on fibers of their own,
    // yet `report` sees one event at a time: one that comes while another is being
    // reported waits in `queued`, and the fiber reporting hands it over next. None is
    // reported once the session's report is over. A report is cut short only with the
    // session: this fiber interrupted, or the scope closed, which ends the follow-ups'
    // fibers and this report alike.
    let open = true
    let reporting = false
    const queued: Array<SessionEvent> = []
    const handOver: Effect.Effect<void> = Effect.suspend(() => {
      const next = queued.shift()
      if (next !== undefined && open) return Effect.zipRight(report(next), handOver)
      reporting = false
      return Effect.void
    })
    const heard = (event: SessionEvent): Effect.Effect<boolean> =>
      Effect.suspend(() => {
        if (!open) return Effect.succeed(false)
        if (reporting) {
          queued.push(event)
          return Effect.succeed(true)
        }
        reporting = true
        return Effect.as(Effect.zipRight(report(event), handOver), true)
      })
    yield* Effect.flatten(session.follow(heard)).pipe(Effect.ensuring(Effect.sync(() => (open = false))))
  })

/**
 * How `sessionStatus` judges a host still pending: how long its object has existed, and
 * after how long a pending host counts as unprogrammed (as `publish --watch` would have
 * said at its deadline).
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusOptions {
  /** When the host's routing object was created (epoch ms), if known. */
  readonly since?: (route: PublishedRoute) => number | undefined
  /** The route deadline, `RouterConfig.routeReadyTimeoutMs`. */
  readonly deadlineMs?: number
}

/**
 * One read of every host the cluster holds for the session: one `route` event per
 * host (a failed read is `unprogrammed` with the read failure as its reason, never
 * a verdict), and `read-error` once if any read failed. A host still pending says for
 * how long; one pending past the deadline is `unprogrammed` with the diagnosis of its
 * routing's first broken link, as a publish's watch reports it at its deadline.
 *
 * @since 0.1.0
 * @category programs
 */
export const sessionStatus = (
  sessionId: string,
  options: StatusOptions = {}
): Effect.Effect<ReadonlyArray<SessionEvent>, PublishError | InvalidSession, SessionRouter | RouteStatusSource> =>
  Effect.gen(function*() {
    const id = parseSessionId(sessionId)
    if (Either.isLeft(id)) return yield* new InvalidSession({ reason: id.left })
    const router = yield* SessionRouter
    const source = yield* RouteStatusSource
    const routes = yield* router.routesOf(sessionId)
    const results = yield* Effect.forEach(
      routes,
      (route) => Effect.either(source.read(sessionId, route)).pipe(Effect.map((verdict) => ({ route, verdict }))),
      { concurrency: 8 }
    )
    const now = yield* Clock.currentTimeMillis
    // Read once for the session, and only if a host is pending past the deadline.
    const diagnosis = yield* Effect.cached(
      source.diagnose === undefined ? Effect.succeed(undefined) : source.diagnose(sessionId)
    )
    const events: Array<SessionEvent> = []
    let readErrorReported = false
    for (const { route, verdict } of results) {
      const base = { type: "route" as const, port: route.port, host: route.host }
      if (Either.isLeft(verdict)) {
        if (!readErrorReported) {
          readErrorReported = true
          events.push({ type: "read-error", reason: verdict.left.reason })
        }
        events.push({ ...base, state: "unprogrammed", ...readFailure(verdict.left) })
        continue
      }
      const since = options.since?.(route)
      if (verdict.right.kind !== "pending" || verdict.right.held !== undefined || since === undefined) {
        events.push({ ...base, ...reportOf(verdict.right) })
        continue
      }
      const ageMs = Math.max(0, now - since)
      const deadlineMs = options.deadlineMs
      if (deadlineMs !== undefined && ageMs >= deadlineMs) {
        const pathOf = yield* diagnosis
        const why = pathOf === undefined
          ? Unprogrammed.unclaimed(source.unclaimedReason(route))
          : unprogrammedAtDeadline(pathOf(route), source.unclaimedReason(route))
        events.push({ ...base, state: "unprogrammed", ...why })
        continue
      }
      events.push({
        ...base,
        state: "pending",
        reason: `published ${Math.round(ageMs / 1000)} s ago${
          deadlineMs === undefined ? "" : `; unprogrammed if still pending ${Math.round(deadlineMs / 1000)} s after`
        }`
      })
    }
    return events
  })

/**
 * Removes every routing object of the session; a session with none is fine.
 *
 * @since 0.1.0
 * @category programs
 */
export const unpublishSession = (
  sessionId: string
): Effect.Effect<void, PublishError | InvalidSession, SessionRouter> =>
  Effect.gen(function*() {
    const id = parseSessionId(sessionId)
    if (Either.isLeft(id)) return yield* new InvalidSession({ reason: id.left })
    const router = yield* SessionRouter
    yield* Effect.annotateCurrentSpan(SpanAttribute.mode, router.layer)
    yield* router.unpublish(sessionId)
  }).pipe(Effect.withSpan(SpanName.unpublish, { attributes: { [SpanAttribute.sessionId]: sessionId } }))
