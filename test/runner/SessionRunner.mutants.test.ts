/**
 * Runner behaviour that mutation testing found unchecked: `sessionStatus` when a
 * status read fails. In memory, on TestClock; no controller writes status.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Effect, Exit, Fiber, Layer, Option, TestClock } from "effect"
import { HttpRouteResource } from "../../src/domain/Resources.js"
import { SessionRouter } from "../../src/layers/SessionRouterLayers.js"
import { publishSession, sessionStatus } from "../../src/runner/SessionRunner.js"
import { SessionRouter as SessionRouterTag } from "../../src/services/SessionRouter.js"
import { BASE_DOMAIN, routerConfigLayer } from "../support/RouterHarness.js"

const sessionId = "abc123"
const spec = {
  sessionId,
  podName: "telo-run-abc123",
  podUid: "0b7e6a52-1111-4222-8333-444455556666",
  ports: [
    { port: 8080, protocol: "tcp" },
    { port: 9090, protocol: "tcp" }
  ] as const
}
const host = (port: number) => `${port}-${sessionId}.${BASE_DOMAIN}`

describe("sessionStatus when reads fail", () => {
  it.scoped("sessionStatus reports a failed read as unprogrammed with the read failure and one read-error", () =>
    Effect.gen(function*() {
      const sc = yield* Effect.orDie(
        SessionCluster.make({ baseDomain: BASE_DOMAIN, dataPlane: false, gateway: { delay: "never" } })
      )
      const layers = SessionRouter.layerGateway.pipe(
        Layer.provideMerge(LocalCluster.layerKubeClient(sc.cluster)),
        Layer.provideMerge(routerConfigLayer(sc, { mode: "gateway" }))
      )
      yield* Effect.gen(function*() {
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
      }).pipe(Effect.provide(layers))
    }))
})

describe("sessionStatus reads", () => {
  it.effect("reads a session's hosts at the same time, so a slow read does not add up per host", () =>
    Effect.gen(function*() {
      const routes = [8080, 9090, 7070].map((port) => ({ port, host: host(port) }))
      // Every read takes one second: all of them together take one second, not three.
      const slowRouter = SessionRouterTag.of({
        layer: "gateway",
        publish: () => Effect.succeed(routes),
        routesOf: () => Effect.succeed(routes),
        verdictFor: () => Effect.as(Effect.sleep("1 second"), { kind: "programmed" as const }),
        unclaimedReason: () => "unclaimed",
        unpublish: () => Effect.void
      })
      const fiber = yield* Effect.fork(
        sessionStatus(sessionId).pipe(Effect.provideService(SessionRouterTag, slowRouter))
      )
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.poll(fiber)).toEqual(
        Option.some(
          Exit.succeed(routes.map((r) => ({ type: "route", port: r.port, host: r.host, state: "programmed" })))
        )
      )
    }))
})
