/**
 * The gateway router: which failures earn the Gateway API install advice, which routes
 * belong to a session, what the verdict target and the controller filter hold, and how
 * often it reads the Gateway. In memory, no controller writes status: each test writes
 * the status it means.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, GatewayController, SessionCluster } from "@session-routing/local-cluster"
import { Effect, Either } from "effect"
import type { Condition, HttpRoute, RouteParentStatus } from "../../../src/domain/Objects.js"
import { GatewayResource, HttpRouteResource, IngressResource, ServiceResource } from "../../../src/domain/Resources.js"
import type { PortMapping } from "../../../src/domain/Session.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import { RouterSetupError } from "../../../src/services/SessionRouter.js"
import {
  BASE_DOMAIN,
  type RouterContext,
  setupFailure,
  type TestConfig,
  withRouter
} from "../../support/RouterHarness.js"

const sessionId = "gwrouter1"
const otherId = "gwrouter2"
const pod = (id: string) => ({ podName: `telo-run-${id}`, podUid: "6f1c2d3e-0000-4000-8000-00000000abcd" })
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" }
]
const spec = { sessionId, ...pod(sessionId), ports }
const route8080 = { host: `8080-${sessionId}.${BASE_DOMAIN}`, port: 8080 }
const INSTALL_ADVICE = "install the Gateway API CRDs"

const gatewayConfig: TestConfig = { mode: "gateway" }
/** No controller: the status a test reads is the status it wrote. */
const noController = { gateway: { delay: "never" as const } }

/** A gateway router test in memory, on the sample Gateway, with no controller writing status. */
const onGateway = <A, E>(body: (ctx: RouterContext) => Effect.Effect<A, E>) =>
  withRouter("in memory", SessionRouting.layerGateway, body, { config: gatewayConfig, cluster: noController })

const accepted = (status: "True" | "False", generation: number, reason = "Accepted"): Condition => ({
  type: "Accepted",
  status,
  reason,
  message: `route ${status === "True" ? "accepted" : "refused"}`,
  observedGeneration: generation,
  lastTransitionTime: "2026-01-01T00:00:00Z"
})

/** Replaces the status of the session's 8080 route with `parents`, at its current generation. */
const writeParents = (
  sc: SessionCluster.SessionCluster,
  parents: (generation: number) => ReadonlyArray<RouteParentStatus>
) =>
  Effect.gen(function*() {
    const name = `telo-run-${sessionId}-8080`
    const stored = yield* Effect.orDie(sc.cluster.store.get(HttpRouteResource, sc.namespace, name))
    const generation = stored.metadata?.generation ?? 1
    yield* Effect.orDie(
      sc.cluster.store.replaceStatus(HttpRouteResource, sc.namespace, name, {
        ...stored,
        status: { parents: parents(generation) }
      } as HttpRoute)
    )
  })

/** How many times the gateway router read the Gateway while `body` ran (in memory, no controller). */
const gatewayReadsDuring = <E>(body: (ctx: RouterContext) => Effect.Effect<void, E>) =>
  Effect.gen(function*() {
    let reads = 0
    yield* withRouter("in memory", SessionRouting.layerGateway, body, {
      config: gatewayConfig,
      cluster: noController,
      observe: (call) =>
        Effect.sync(() => {
          if (call.verb === "get" && call.resource === GatewayResource) reads++
        })
    })
    return reads
  })

describe("publishing and reading when the API refuses, and the Gateway API install advice", () => {
  it.live("keeps a 403's own reason instead of the Gateway API install advice", () =>
    onGateway(
      ({ router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({ resource: HttpRouteResource, verbs: ["patch"], action: Fault.forbid() })
          const result = yield* Effect.either(router.publish(spec))
          if (Either.isRight(result)) return expect.fail("a publish refused by RBAC succeeded")
          expect(result.left.error._tag).toBe("Forbidden")
          expect(result.left.reason).not.toContain(INSTALL_ADVICE)
          expect(result.left.reason).toContain("forbidden")
        })
    ))

  it.live("keeps a refused list's own reason, giving the install advice only when HTTPRoutes are not served", () =>
    onGateway(
      ({ router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["list"],
            action: Fault.forbid(),
            times: 1
          })
          const forbidden = yield* Effect.flip(router.routesOf(sessionId))
          expect(forbidden.error._tag).toBe("Forbidden")
          expect(forbidden.reason).toMatch(/^could not list the HTTPRoutes of session gwrouter1: .*forbidden/)
          expect(forbidden.reason).not.toContain(INSTALL_ADVICE)

          yield* sc.cluster.store.setServed(HttpRouteResource, false)
          const notServed = yield* Effect.flip(router.routesOf(sessionId))
          expect(notServed.error._tag).toBe("NotServed")
          expect(notServed.reason).toContain(INSTALL_ADVICE)
        })
    ))

  it.live("fails the publish before any write when the other mode's objects cannot be listed, unless forbidden or not served", () =>
    onGateway(
      ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.respond(401) })
          const result = yield* Effect.either(router.publish(spec))
          if (Either.isRight(result)) return expect.fail("a publish that could not look for old Ingresses succeeded")
          expect(result.left.error._tag).toBe("Unauthorized")
          // Nothing was written: the plan reads everything before its first write.
          const routes = yield* kube.list(HttpRouteResource, sc.namespace)
          expect(routes.items).toEqual([])
        })
    ))

  it.live("publishes although the other mode's objects are forbidden or not served", () =>
    onGateway(
      ({ router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.forbid(), times: 1 })
          expect(yield* router.publish(spec)).toEqual([route8080, {
            host: `9090-${sessionId}.${BASE_DOMAIN}`,
            port: 9090
          }])
          yield* sc.cluster.store.setServed(IngressResource, false)
          expect(yield* router.publish(spec)).toHaveLength(2)
        })
    ))
})

describe("a session's routes and Service", () => {
  it.live("lists only this session's routes, not another's", () =>
    onGateway(
      ({ router }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* router.publish({ sessionId: otherId, ...pod(otherId), ports: [{ port: 7070, protocol: "tcp" }] })
          expect(yield* router.routesOf(sessionId)).toEqual([
            route8080,
            { host: `9090-${sessionId}.${BASE_DOMAIN}`, port: 9090 }
          ])
          expect(yield* router.routesOf(otherId)).toEqual([{ host: `7070-${otherId}.${BASE_DOMAIN}`, port: 7070 }])
        })
    ))

  it.live("orders a session's routes by port, not by object name", () =>
    onGateway(
      ({ router }) =>
        Effect.gen(function*() {
          // By name, telo-run-<id>-10000 sorts before telo-run-<id>-9090.
          yield* router.publish({ ...spec, ports: [{ port: 10000, protocol: "tcp" }, { port: 9090, protocol: "tcp" }] })
          expect((yield* router.routesOf(sessionId)).map((r) => r.port)).toEqual([9090, 10000])
        })
    ))

  it.live("removes the session Service and every HTTPRoute when a reload leaves no ports", () =>
    onGateway(
      ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          expect(yield* router.publish({ ...spec, ports: [] })).toEqual([])
          expect((yield* kube.list(ServiceResource, sc.namespace)).items).toEqual([])
          expect((yield* kube.list(HttpRouteResource, sc.namespace)).items).toEqual([])
        })
    ))

  it.live("unpublishes the Service where HTTPRoutes are not served", () =>
    onGateway(
      ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* sc.cluster.store.setServed(HttpRouteResource, false)
          yield* router.unpublish(sessionId)
          expect((yield* kube.list(ServiceResource, sc.namespace)).items).toEqual([])
        })
    ))
})

/** Our Gateway's entries on the route: another controller accepts it, our controller refuses it. */
const othersAcceptOursRejects = (sc: SessionCluster.SessionCluster) => {
  const parentRef = { name: sc.gateway.name }
  return writeParents(sc, (g) => [
    { parentRef, controllerName: "example.com/another-controller", conditions: [accepted("True", g)] },
    {
      parentRef,
      controllerName: GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME,
      conditions: [accepted("False", g, "NotAllowedByListeners")]
    }
  ])
}

describe("the verdict: its target, the controller filter and the Gateway reads", () => {
  it.live("decides by the entry for the listener SESSION_GATEWAY_SECTION names, and names that listener when unclaimed", () =>
    withRouter(
      "in memory",
      SessionRouting.layerGateway,
      ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const gatewayRef = {
            group: "gateway.networking.k8s.io",
            kind: "Gateway",
            namespace: sc.gateway.namespace,
            name: sc.gateway.name
          }
          // Accepted on the configured listener: that entry decides.
          yield* writeParents(sc, (g) => [
            {
              parentRef: { ...gatewayRef, sectionName: "web" },
              controllerName: GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME,
              conditions: [accepted("True", g)]
            }
          ])
          expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "programmed" })
          // An entry for the whole Gateway (no listener) is another parent: it does not decide.
          yield* writeParents(sc, (g) => [
            {
              parentRef: gatewayRef,
              controllerName: GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME,
              conditions: [accepted("True", g)]
            }
          ])
          expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "pending" })
          expect(source.unclaimedReason(route8080)).toContain(
            `Gateway ${sc.gateway.namespace}/${sc.gateway.name} (listener "web")`
          )
        }),
      { config: { ...gatewayConfig, gatewaySection: "web" }, cluster: noController }
    ))

  it.live("lets no other controller's acceptance for our Gateway outvote our controller's rejection", () =>
    onGateway(
      ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* othersAcceptOursRejects(sc)
          expect(yield* source.read(sessionId, route8080)).toEqual({
            kind: "rejected",
            reason: "NotAllowedByListeners",
            message: "route refused"
          })
        })
    ))

  it.live("tries a failed Gateway lookup again at the next verdict instead of trusting it for minutes", () =>
    onGateway(
      ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* othersAcceptOursRejects(sc)
          yield* sc.cluster.faults.add({ resource: GatewayResource, verbs: ["get"], action: Fault.forbid(), times: 1 })
          // Controller unknown: any current acceptance decides.
          expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "programmed" })
          // The next verdict learns the controller, and only its entry counts.
          expect(yield* source.read(sessionId, route8080)).toMatchObject({
            kind: "rejected",
            reason: "NotAllowedByListeners"
          })
        })
    ))

  it.live("reads the Gateway once to learn its controller, not once per verdict", () =>
    Effect.gen(function*() {
      const reads = yield* gatewayReadsDuring(({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* writeParents(sc, (g) => [
            {
              parentRef: { name: sc.gateway.name },
              controllerName: GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME,
              conditions: [accepted("True", g)]
            }
          ])
          for (let i = 0; i < 3; i++) {
            expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "programmed" })
          }
        })
      )
      expect(reads).toBe(1)
    }))

  // While a session's routes are still being written every host is absent, and a
  // Gateway read for each would only add requests: an absent route is pending whoever
  // owns the Gateway.
  it.live("reads no Gateway for the verdict of an HTTPRoute not written yet", () =>
    Effect.gen(function*() {
      const reads = yield* gatewayReadsDuring(({ source }) =>
        Effect.gen(function*() {
          for (let i = 0; i < 3; i++) {
            expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "pending" })
          }
        })
      )
      expect(reads).toBe(0)
    }))

  it.live("names the Gateway alone in the unclaimed advice when no listener is configured", () =>
    onGateway(
      ({ sc, source }) =>
        Effect.succeed(
          expect(source.unclaimedReason(route8080)).toContain(
            `on Gateway ${sc.gateway.namespace}/${sc.gateway.name}: check that the Gateway exists`
          )
        )
    ))
})

describe("start-up", () => {
  it.effect("refuses to start without a Gateway to attach routes to, and names the setting", () =>
    Effect.gen(function*() {
      // Outside gateway mode the configuration holds no Gateway: only the layer itself can say so.
      expect(yield* setupFailure(SessionRouting.layerGateway, { mode: "ingress" })).toEqual(
        new RouterSetupError({
          reason: "the gateway routing layer needs a Gateway to attach routes to: set SESSION_GATEWAY_NAME"
        })
      )
    }))
})
