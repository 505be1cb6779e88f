import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Chunk, Duration, Effect, Layer, Stream } from "effect"
import { IngressResource } from "../../src/domain/Resources.js"
import { type RouteHealthEvent, watchRouteHealth } from "../../src/health/RouteHealth.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import { localIngressSilence } from "../support/Causes.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer, startCluster } from "../support/RouterHarness.js"

const sessionId = "health1"
const spec = {
  sessionId,
  podName: "telo-run-health1",
  podUid: "a1b2c3d4-0000-4000-8000-000000000001",
  ports: [{ port: 8080, protocol: "tcp" as const }]
}
const route = { host: `8080-${sessionId}.${BASE_DOMAIN}`, port: 8080 }

/**
 * Publishes through the live client over HTTP and watches on the live clock, with a
 * short deadline: the whole path a runner takes, against LocalCluster's controllers.
 */
const publishAndWatch = (
  cluster: Parameters<typeof startCluster>[0],
  before: (sc: SessionCluster.SessionCluster) => Effect.Effect<unknown> = () => Effect.void
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster(cluster)
      yield* before(sc)
      const layers = SessionRouting.layerIngress.pipe(
        Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
        Layer.provideMerge(routerConfigLayer(sc))
      )
      return yield* Effect.gen(function*() {
        const router = yield* SessionRouter
        const routes = yield* router.publish(spec)
        const events = yield* Stream.runCollect(
          watchRouteHealth({ sessionId, routes, timeoutMs: 1_500, intervalMs: 50 })
        )
        return { events: Chunk.toReadonlyArray(events), router }
      }).pipe(Effect.provide(layers))
    })
  )

const states = (events: ReadonlyArray<RouteHealthEvent>) =>
  events.map((e) => (e._tag === "Route" ? `${e.state}` : "read-error"))

describe("route health over HTTP against LocalCluster", () => {
  it.live("turns programmed when the controller publishes an address after 300 ms", () =>
    Effect.gen(function*() {
      const { events } = yield* publishAndWatch({ ingress: { delay: Duration.millis(300) } })
      expect(events).toEqual([
        { _tag: "Route", route, state: "pending" },
        { _tag: "Route", route, state: "programmed" }
      ])
    }))

  it.live("calls the host unprogrammed with its diagnosis when no controller ever writes status", () =>
    Effect.gen(function*() {
      const { events } = yield* publishAndWatch({ ingress: { delay: "never" } })
      expect(events).toEqual([
        { _tag: "Route", route, state: "pending" },
        { _tag: "Route", route, state: "unprogrammed", reason: localIngressSilence(), code: "NoIngressStatus" }
      ])
    }))

  it.live("reports forbidden reads once, and the read failure, not the unclaimed advice, at the deadline", () =>
    Effect.gen(function*() {
      const { events } = yield* publishAndWatch({ ingress: { delay: Duration.millis(300) } }, (sc) =>
        // Every read refused: the shared watch falls back to polling, and the polls are refused too.
        sc.cluster.faults.add({ resource: IngressResource, verbs: ["get", "list", "watch"], action: Fault.forbid() }))
      expect(states(events)).toEqual(["pending", "read-error", "unprogrammed"])
      const last = events.at(-1)
      expect(last?._tag === "Route" && last.state === "unprogrammed" && last.reason).toMatch(
        /^route status could not be read: ingresses\.networking\.k8s\.io "telo-run-health1" is forbidden/
      )
      expect(last?._tag === "Route" && last.state === "unprogrammed" && last.reason).not.toMatch(
        /no ingress controller/
      )
    }))

  it.live("says the server's own answer when every read of the routes answers 503, not that nobody answered", () =>
    Effect.gen(function*() {
      const { events } = yield* publishAndWatch(
        { ingress: { delay: Duration.millis(300) } },
        (sc) =>
          sc.cluster.faults.add({
            resource: IngressResource,
            verbs: ["get", "list", "watch"],
            action: Fault.respond(503, { message: "etcd leader unavailable" })
          })
      )
      expect(states(events)).toEqual(["pending", "read-error", "unprogrammed"])
      const last = events.at(-1)
      const reason = last?._tag === "Route" && last.state === "unprogrammed" ? last.reason : ""
      expect(reason).toMatch(/^route status could not be read: .*etcd leader unavailable/)
      expect(reason).not.toMatch(/no answer within/)
    }))
})
