/**
 * The runner's calls, as a caller sees them on any routing layer: the event stream of
 * a publish, each host's verdict read once (its reads at the same time, a refused one
 * said once and per host), unpublishing, and which event counts as unprogrammed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Chunk, Duration, Effect, Either, Exit, Fiber, Layer, Option, Scope, Stream, TestClock } from "effect"
import { HttpRouteResource, IngressResource } from "../../src/domain/Resources.js"
import { RouteVerdict } from "../../src/domain/Routes.js"
import type { PortMapping } from "../../src/domain/Session.js"
import { pollingOver } from "../../src/layers/RouteStatusSourceLive.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import {
  publishSession,
  reportSession,
  type SessionEvent,
  sessionStatus,
  unpublishSession
} from "../../src/runner/SessionRunner.js"
import { type EventProblemSink, EventRecorder } from "../../src/services/EventRecorder.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"
import { SessionRouter as SessionRouterTag } from "../../src/services/SessionRouter.js"
import { localGatewayClassUnaccepted } from "../support/Causes.js"
import { BASE_DOMAIN, routerConfigLayer, type RouterLayer, type TestConfig } from "../support/RouterHarness.js"

const sessionId = "abc123"
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
]
const spec = { sessionId, podName: "telo-run-abc123", podUid: "0b7e6a52-1111-4222-8333-444455556666", ports }
const host = (port: number) => `${port}-${sessionId}.${BASE_DOMAIN}`

/**
 * The runner over the in-memory face of a SessionCluster, all on TestClock: the
 * controllers' delays, the poll interval and the deadline are virtual time.
 */
const withRunner = <A, E>(
  layer: RouterLayer,
  cluster: SessionCluster.SessionClusterOptions,
  config: TestConfig,
  body: (
    sc: SessionCluster.SessionCluster
  ) => Effect.Effect<A, E, SessionRouting.SessionRouting | RouterConfig | Scope.Scope>
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* Effect.orDie(SessionCluster.make({ baseDomain: BASE_DOMAIN, dataPlane: false, ...cluster }))
      const layers = layer.pipe(
        Layer.provideMerge(LocalCluster.layerKubeClient(sc.cluster)),
        Layer.provideMerge(
          routerConfigLayer(sc, { routePollIntervalMs: 100, routeReadyTimeoutMs: 3_000, ...config })
        )
      )
      return yield* body(sc).pipe(Effect.provide(layers))
    })
  )

/** Collects the whole event stream while advancing virtual time past every deadline. */
const collectAll = (events: Stream.Stream<SessionEvent>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Stream.runCollect(events))
    yield* TestClock.adjust(Duration.seconds(10))
    return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
  })

describe("publishSession", () => {
  it.scoped("streams published, pending per host, then programmed per host on the ingress layer", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: Duration.millis(700) } },
      {},
      () =>
        Effect.gen(function*() {
          const session = yield* publishSession(spec)
          expect(session.layer).toBe("ingress")
          const events = yield* collectAll(session.events)
          expect(events.slice(0, 3)).toEqual([
            {
              type: "published",
              layer: "ingress",
              routes: [
                { host: host(8080), port: 8080 },
                { host: host(9090), port: 9090 }
              ],
              endpoints: [
                { host: host(8080), port: 8080, protocol: "tcp", url: `https://${host(8080)}` },
                { host: host(9090), port: 9090, protocol: "tcp", url: `https://${host(9090)}` },
                { host: "", port: 5000, protocol: "udp" }
              ]
            },
            { type: "route", port: 8080, host: host(8080), state: "pending" },
            { type: "route", port: 9090, host: host(9090), state: "pending" }
          ])
          // Hosts that settle at the same instant come in no promised order.
          expect(new Set(events.slice(3))).toEqual(
            new Set([
              { type: "route", port: 8080, host: host(8080), state: "programmed" },
              { type: "route", port: 9090, host: host(9090), state: "programmed" }
            ])
          )
        })
    ))

  it.scoped("ends a host the Gateway refuses as unprogrammed with the controller's reason", () =>
    withRunner(
      SessionRouting.layerGateway,
      { gateway: { gatewayNamespace: "gateways", allowedRoutes: "Same", delay: Duration.millis(300) } },
      { mode: "gateway", gatewayNamespace: "gateways" },
      () =>
        Effect.gen(function*() {
          const session = yield* publishSession({ ...spec, ports: [{ port: 8080, protocol: "tcp" }] })
          const events = yield* collectAll(session.events)
          const last = events.at(-1)
          expect(last).toMatchObject({ type: "route", port: 8080, state: "unprogrammed" })
          expect(last?.type === "route" && last.reason).toMatch(/^NotAllowedByListeners/)
        })
    ))

  it.scoped("calls a host no controller claims unprogrammed at the deadline, with the broken link as its reason", () =>
    withRunner(
      SessionRouting.layerGateway,
      { gateway: { delay: "never" } },
      { mode: "gateway" },
      () =>
        Effect.gen(function*() {
          const session = yield* publishSession({ ...spec, ports: [{ port: 8080, protocol: "tcp" }] })
          const events = yield* collectAll(session.events)
          expect(events.slice(1)).toEqual([
            { type: "route", port: 8080, host: host(8080), state: "pending" },
            {
              type: "route",
              port: 8080,
              host: host(8080),
              state: "unprogrammed",
              reason: localGatewayClassUnaccepted,
              code: "GatewayClassNotAccepted"
            }
          ])
        })
    ))

  it.scoped("reports a forbidden status read once, and as the reason at the deadline", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: Duration.millis(200) } },
      {},
      (sc) =>
        Effect.gen(function*() {
          // Every read refused: the shared watch falls back to polling, and the polls are refused too.
          yield* sc.cluster.faults.add({
            resource: IngressResource,
            verbs: ["get", "list", "watch"],
            action: Fault.forbid()
          })
          const session = yield* publishSession(spec)
          const events = yield* collectAll(session.events)
          const readErrors = events.filter((e) => e.type === "read-error")
          expect(readErrors).toHaveLength(1)
          const terminal = events.filter((e) => e.type === "route" && e.state !== "pending")
          expect(terminal).toHaveLength(2)
          for (const event of terminal) {
            expect(event).toMatchObject({ state: "unprogrammed" })
            expect(event.type === "route" && event.reason).toMatch(/^route status could not be read: .*forbidden/)
          }
        })
    ))

  it.scoped("publishes nothing and watches nothing on the none layer", () =>
    withRunner(SessionRouting.layerNone, {}, { mode: "none" }, () =>
      Effect.gen(function*() {
        const session = yield* publishSession(spec)
        expect(yield* collectAll(session.events)).toEqual([
          {
            type: "published",
            layer: "none",
            routes: [],
            endpoints: ports.map((p) => ({ host: "", port: p.port, protocol: p.protocol }))
          }
        ])
      })))

  it.scoped("refuses a bad session before publishing anything", () =>
    withRunner(SessionRouting.layerIngress, {}, {}, () =>
      Effect.gen(function*() {
        const result = yield* Effect.either(publishSession({ ...spec, sessionId: "Not_Valid" }))
        expect(Either.isLeft(result) && result.left._tag).toBe("InvalidSession")
        const dup = yield* Effect.either(
          publishSession({ ...spec, ports: [{ port: 80, protocol: "tcp" }, { port: 80, protocol: "tcp" }] })
        )
        expect(Either.isLeft(dup) && dup.left.message).toContain("80/tcp")
        expect(yield* sessionStatus(sessionId)).toEqual([])
      })))

  it.scoped("stops polling when the publishing scope closes", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: "never" } },
      { statusSource: "poll" },
      (sc) =>
        Effect.gen(function*() {
          // A fault that changes nothing and counts down once per status read.
          const id = yield* sc.cluster.faults.add({
            resource: IngressResource,
            verbs: ["get"],
            action: Fault.latency(0),
            times: 10_000
          })
          const reads = Effect.map(
            sc.cluster.faults.active,
            (faults) => 10_000 - (faults.find((f) => f.id === id)?.times ?? 0)
          )
          const scope = yield* Scope.make()
          yield* publishSession(spec).pipe(Scope.extend(scope))
          yield* TestClock.adjust(Duration.millis(250))
          const before = yield* reads
          expect(before).toBeGreaterThan(0)
          yield* Scope.close(scope, Exit.void)
          yield* TestClock.adjust(Duration.seconds(2))
          expect(yield* reads).toBe(before)
        })
    ))
})

/** `reportSession` forked, its events kept in order, virtual time advanced past every deadline. */
const reportAll = (
  session: typeof spec,
  report: (event: SessionEvent) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    const events: Array<SessionEvent> = []
    const fiber = yield* Effect.fork(
      reportSession(session, (event) => Effect.zipRight(Effect.sync(() => events.push(event)), report(event)))
    )
    yield* TestClock.adjust(Duration.seconds(10))
    const exit = yield* Fiber.await(fiber)
    return { exit, events }
  })

describe("reportSession", () => {
  it.scoped("hands the stream's events to a callback, published first, and completes when every host is terminal", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: Duration.millis(700) } },
      {},
      () =>
        Effect.gen(function*() {
          const { events, exit } = yield* reportAll(spec)
          expect(Exit.isSuccess(exit)).toBe(true)
          expect(events.map((event) => event.type === "route" ? `${event.port} ${event.state}` : event.type))
            .toEqual(["published", "8080 pending", "9090 pending", expect.any(String), expect.any(String)])
          expect(events[0]).toMatchObject({
            type: "published",
            layer: "ingress",
            routes: [{ port: 8080 }, { port: 9090 }]
          })
          expect(new Set(events.slice(3))).toEqual(
            new Set([
              { type: "route", port: 8080, host: host(8080), state: "programmed" },
              { type: "route", port: 9090, host: host(9090), state: "programmed" }
            ])
          )
        })
    ))

  it.scoped("fails a refused session before reporting anything", () =>
    withRunner(SessionRouting.layerIngress, {}, {}, () =>
      Effect.gen(function*() {
        const { events, exit } = yield* reportAll({ ...spec, sessionId: "Not_A_Label" })
        expect(Exit.isFailure(exit) && Exit.causeOption(exit).pipe(Option.map(String), Option.getOrElse(() => "")))
          .toContain("Not_A_Label")
        expect(events).toEqual([])
      })))

  it.scoped("reports one event at a time, follow-ups from other fibers included, and none once it completed", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: Duration.millis(700) } },
      {},
      () =>
        Effect.gen(function*() {
          // Every Event "fails", and says so from a fiber of its own, while the route
          // events are still being reported.
          let sink: EventProblemSink | undefined
          const refusing = Layer.succeed(
            EventRecorder,
            EventRecorder.of({
              record: (_, problems) => {
                sink = problems
                return problems === undefined ? Effect.void : Effect.asVoid(Effect.forkDaemon(problems("forbidden")))
              },
              flush: Effect.void
            })
          )
          let inside = 0
          let most = 0
          const slow = (event: SessionEvent) =>
            Effect.acquireUseRelease(
              Effect.sync(() => (most = Math.max(most, ++inside))),
              () => event.type === "route" ? Effect.sleep(Duration.millis(100)) : Effect.void,
              () => Effect.sync(() => inside--)
            )
          const { events, exit } = yield* reportAll(spec, slow).pipe(Effect.provide(refusing))
          expect(Exit.isSuccess(exit)).toBe(true)
          expect(most).toBe(1)
          const types = events.map((event) => event.type === "route" ? event.state : event.type)
          expect(types.slice(0, 3)).toEqual(["published", "pending", "pending"])
          expect(types.filter((type) => type === "programmed")).toHaveLength(2)
          expect(types.filter((type) => type === "event-error")).not.toHaveLength(0)
          // The session's report is over: a late problem is not heard, and not reported.
          const count = events.length
          expect(sink).toBeDefined()
          expect(yield* sink!("late")).toBe(false)
          expect(events).toHaveLength(count)
        })
    ))
})

describe("sessionStatus and unpublishSession", () => {
  it.scoped("reads each host's verdict once, then removes the session", () =>
    withRunner(
      SessionRouting.layerIngress,
      { ingress: { delay: Duration.millis(100) } },
      {},
      () =>
        Effect.gen(function*() {
          yield* publishSession(spec)
          expect(yield* sessionStatus(sessionId)).toEqual([
            { type: "route", port: 8080, host: host(8080), state: "pending" },
            { type: "route", port: 9090, host: host(9090), state: "pending" }
          ])
          yield* TestClock.adjust(Duration.millis(150))
          expect(yield* sessionStatus(sessionId)).toEqual([
            { type: "route", port: 8080, host: host(8080), state: "programmed" },
            { type: "route", port: 9090, host: host(9090), state: "programmed" }
          ])
          yield* unpublishSession(sessionId)
          yield* unpublishSession(sessionId)
          expect(yield* sessionStatus(sessionId)).toEqual([])
        })
    ))
})

describe("sessionStatus", () => {
  it.scoped("reports a refused status read as one read-error, and each refused host as unprogrammed with why", () =>
    withRunner(
      SessionRouting.layerGateway,
      { gateway: { delay: "never" } },
      { mode: "gateway" },
      (sc) =>
        Effect.gen(function*() {
          yield* publishSession(spec)
          // Only the 8080 route's read is refused; 9090's is read as usual.
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["get"],
            name: `telo-run-${sessionId}-8080`,
            action: Fault.forbid()
          })
          const first = yield* sessionStatus(sessionId)
          expect(first).toEqual([
            { type: "read-error", reason: expect.stringMatching(/forbidden/) },
            {
              type: "route",
              port: 8080,
              host: host(8080),
              state: "unprogrammed",
              reason: expect.stringMatching(/^route status could not be read: .*forbidden/),
              code: "RouteStatusUnreadable"
            },
            { type: "route", port: 9090, host: host(9090), state: "pending" }
          ])

          // Both refused: still one read-error, and each host says why on its own.
          yield* sc.cluster.faults.add({ resource: HttpRouteResource, verbs: ["get"], action: Fault.forbid() })
          const both = yield* sessionStatus(sessionId)
          expect(both.filter((e) => e.type === "read-error")).toHaveLength(1)
          expect(both.slice(1)).toEqual([
            expect.objectContaining({ type: "route", port: 8080, state: "unprogrammed" }),
            expect.objectContaining({ type: "route", port: 9090, state: "unprogrammed" })
          ])
        })
    ))

  it.effect("reads a session's hosts at the same time, so a slow read does not add up per host", () =>
    Effect.gen(function*() {
      const routes = [8080, 9090, 7070].map((port) => ({ port, host: host(port) }))
      // Every read takes one second: all of them together take one second, not three.
      const slowRouter = SessionRouterTag.of({
        layer: "gateway",
        publish: () => Effect.succeed(routes),
        routesOf: () => Effect.succeed(routes),
        unpublish: () => Effect.void
      })
      const slowSource = pollingOver(
        () => Effect.as(Effect.sleep("1 second"), { verdict: RouteVerdict.programmed, present: true }),
        { unclaimedReason: () => "unclaimed" }
      )
      const fiber = yield* Effect.fork(
        sessionStatus(sessionId).pipe(
          Effect.provideService(SessionRouterTag, slowRouter),
          Effect.provideService(RouteStatusSource, slowSource)
        )
      )
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.poll(fiber)).toEqual(
        Option.some(
          Exit.succeed(routes.map((r) => ({ type: "route", port: r.port, host: r.host, state: "programmed" })))
        )
      )
    }))
})

describe("one caller, any routing layer", () => {
  /** The runner's whole life of a session, written once, with no word of which layer routes it. */
  const caller = Effect.gen(function*() {
    const session = yield* publishSession(spec)
    const events = yield* collectAll(session.events)
    const programmed = yield* sessionStatus(sessionId)
    yield* unpublishSession(sessionId)
    return { events, programmed, afterUnpublish: yield* sessionStatus(sessionId) }
  })

  const layers = [
    { name: "ingress", layer: SessionRouting.layerIngress, config: {} },
    { name: "gateway", layer: SessionRouting.layerGateway, config: { mode: "gateway" } }
  ] as const

  for (const { config, layer, name } of layers) {
    it.scoped(`publishes, watches, reads and unpublishes the same way on the ${name} layer`, () =>
      withRunner(
        layer,
        { ingress: { delay: Duration.millis(300) }, gateway: { delay: Duration.millis(300) } },
        config,
        () =>
          Effect.gen(function*() {
            const { afterUnpublish, events, programmed } = yield* caller
            expect(events[0]).toMatchObject({ type: "published", layer: name })
            expect(events.slice(1, 3)).toEqual([
              { type: "route", port: 8080, host: host(8080), state: "pending" },
              { type: "route", port: 9090, host: host(9090), state: "pending" }
            ])
            expect(new Set(events.slice(3))).toEqual(
              new Set([
                { type: "route", port: 8080, host: host(8080), state: "programmed" },
                { type: "route", port: 9090, host: host(9090), state: "programmed" }
              ])
            )
            expect(programmed).toEqual([
              { type: "route", port: 8080, host: host(8080), state: "programmed" },
              { type: "route", port: 9090, host: host(9090), state: "programmed" }
            ])
            expect(afterUnpublish).toEqual([])
          })
      ))
  }
})
