/**
 * The reads behind the diagnosis, through the router's `diagnose` in memory (the way
 * `check` reaches it; route health reaches the same analysis through its status source):
 * what a read that fails or never answers is called in the path (the words the deadline
 * reason quotes after "could not read"), and what the session namespace's labels decide.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Fiber, TestClock } from "effect"
import type { RoutingPath } from "../../../src/domain/Diagnosis.js"
import { GatewayClassResource, IngressClassResource, NamespaceResource } from "../../../src/domain/Resources.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import {
  eventually,
  type RouterContext,
  type RouterLayer,
  type TestConfig,
  withRouter
} from "../../support/RouterHarness.js"

const sessionId = "diagreads1"
const route = { host: `8080-${sessionId}.sessions.localtest.me`, port: 8080 }

/** The path `diagnose` gives the session's 8080 host. */
const pathOf = ({ source }: RouterContext): Effect.Effect<RoutingPath> =>
  Effect.gen(function*() {
    const diagnose = source.diagnose
    if (diagnose === undefined) return yield* Effect.dieMessage("the status source has no diagnosis")
    return (yield* diagnose(sessionId))(route)
  })

const onRouter = <A, E>(
  layer: RouterLayer,
  config: TestConfig,
  cluster: SessionCluster.SessionClusterOptions,
  body: (ctx: RouterContext) => Effect.Effect<A, E>
) => withRouter("in memory", layer, body, { config, cluster })

const gateway: TestConfig = { mode: "gateway" }
/** A listener that admits HTTPRoutes only from namespaces labelled team=a: the diagnosis must read the namespace. */
const selectingListener = {
  gateway: {
    delay: "never" as const,
    listeners: [{
      name: "http",
      protocol: "HTTP" as const,
      port: 80,
      allowedRoutes: { namespaces: { from: "Selector" as const, selector: { matchLabels: { team: "a" } } } }
    }]
  }
}

/** The same listener with a quick controller that writes no route status. */
const acceptingSelector = {
  gateway: { ...selectingListener.gateway, delay: Duration.millis(20), routeStatus: false }
}
const NOT_YET: ReadonlyArray<string> = ["GatewayClassNotAccepted", "GatewayNotAccepted", "GatewayNotProgrammed"]

describe("what the diagnosis reads, and what it calls a read that failed", () => {
  it.effect("calls an IngressClass list that never answers unread after 5 s, instead of waiting the whole API budget", () =>
    onRouter(SessionRouting.layerIngress, {}, { ingress: { delay: "never" } }, (ctx) =>
      Effect.gen(function*() {
        yield* ctx.sc.cluster.faults.add({ resource: IngressClassResource, verbs: ["list"], action: Fault.hang })
        const fiber = yield* Effect.fork(pathOf(ctx))
        yield* TestClock.adjust("5 seconds")
        expect(yield* Fiber.join(fiber)).toEqual({
          _tag: "Unread",
          what: "the IngressClasses",
          reason: "no answer within 5 s"
        })
      })))

  it.live("names the GatewayClass it could not read", () =>
    onRouter(SessionRouting.layerGateway, gateway, { gateway: { delay: "never" } }, (ctx) =>
      Effect.gen(function*() {
        yield* ctx.sc.cluster.faults.add({ resource: GatewayClassResource, verbs: ["get"], action: Fault.forbid() })
        const path = yield* pathOf(ctx)
        expect(path).toEqual({ _tag: "Unread", what: "GatewayClass \"local\"", reason: expect.any(String) })
        expect(path._tag === "Unread" && path.reason).toContain("forbidden")
      })))

  it.live("names the session namespace it could not read when a listener selects namespaces by label", () =>
    onRouter(
      SessionRouting.layerGateway,
      gateway,
      { ...selectingListener, namespaceLabels: { team: "a" } },
      (ctx) =>
        Effect.gen(function*() {
          yield* ctx.sc.cluster.faults.add({ resource: NamespaceResource, verbs: ["get"], action: Fault.forbid() })
          const path = yield* pathOf(ctx)
          expect(path).toEqual({ _tag: "Unread", what: `Namespace "${ctx.sc.namespace}"`, reason: expect.any(String) })
        })
    ))

  it.live("names the missing GatewayClass without reading the namespace, whose read would fail", () =>
    onRouter(
      SessionRouting.layerGateway,
      gateway,
      { gateway: { ...selectingListener.gateway, createClass: false }, namespaceLabels: { team: "a" } },
      (ctx) =>
        Effect.gen(function*() {
          // The class is the first broken link: a namespace read RBAC refuses must not hide it.
          yield* ctx.sc.cluster.faults.add({ resource: NamespaceResource, verbs: ["get"], action: Fault.forbid() })
          const path = yield* pathOf(ctx)
          expect(path._tag === "Broken" ? path.cause.code : path).toBe("GatewayClassNotFound")
        })
    ))

  it.live("finds the route admitted when the session namespace carries the labels the listener selects", () =>
    onRouter(
      SessionRouting.layerGateway,
      gateway,
      { ...acceptingSelector, namespaceLabels: { team: "a" } },
      (ctx) =>
        Effect.gen(function*() {
          // The controller accepts the class and programs the Gateway moments after the start.
          const path = yield* eventually(pathOf(ctx), (p) => !(p._tag === "Broken" && NOT_YET.includes(p.cause.code)))
          expect(path._tag).toBe("Sound")
        })
    ))
})
