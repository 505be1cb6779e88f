import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Fault, type FaultSpec, LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Effect, Either, Fiber, Layer, Ref, Schedule, TestClock } from "effect"
import { createServer } from "node:net"
import { HttpRouteResource, IngressResource, ServiceResource } from "../../../src/domain/Resources.js"
import type { PortMapping } from "../../../src/domain/Session.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../../../src/layers/RouterConfigLive.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { type KubeError, Transport } from "../../../src/services/KubeError.js"
import type { PublishError, SessionRouter as SessionRouterService } from "../../../src/services/SessionRouter.js"
import {
  BASE_DOMAIN,
  buildRouter,
  faces,
  type KubeCall,
  observedKubeClient,
  routerConfigLayer,
  type RouterLayer,
  sessionObjectNames,
  withRouter
} from "../../support/RouterHarness.js"

const sessionId = "hzyayvabgyvz"
const pod = { podName: "telo-run-hzyayvabgyvz", podUid: "6f1c2d3e-0000-4000-8000-00000000abcd" }
const tcp = (...ports: ReadonlyArray<number>): ReadonlyArray<PortMapping> =>
  ports.map((port) => ({ port, protocol: "tcp" }))
const spec = { sessionId, ...pod, ports: [...tcp(8080, 9090), { port: 5000, protocol: "udp" as const }] }
const service = `telo-run-${sessionId}`
const route = (port: number) => `telo-run-${sessionId}-${port}`
const nothing = { services: [], ingresses: [], httpRoutes: [] }
const gateway = { config: { mode: "gateway" as const } }

/** The failure of `effect`, which must fail. */
const failureOf = <A>(effect: Effect.Effect<A, PublishError>) =>
  Effect.flatMap(
    Effect.either(effect),
    (result) =>
      Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage("expected a PublishError, got success")
  )

/** Adds `fault` to the cluster the first time a call matches `when`, just before that call goes out. */
const armWhen = (when: (call: KubeCall) => boolean, fault: FaultSpec) => {
  let armed = false
  return (call: KubeCall, sc: SessionCluster.SessionCluster) =>
    Effect.suspend(() => {
      if (armed || !when(call)) return Effect.void
      armed = true
      return Effect.asVoid(sc.cluster.faults.add(fault))
    })
}

const realWriteOf = (kind: string, name?: string) => (call: KubeCall) =>
  call.verb === "apply" && !call.dryRun && call.resource.kind === kind && (name === undefined || call.name === name)

for (const face of faces) {
  describe(`publishing all or nothing (${face})`, () => {
    it.live("leaves no object, not even the Service, when the API server forbids writing an HTTPRoute", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({ resource: HttpRouteResource, verbs: ["patch"], action: Fault.forbid() })
          // With Services undeletable, taking a written Service back would fail: only a
          // dry run before the first write keeps it from staying behind.
          yield* sc.cluster.faults.add({ resource: ServiceResource, verbs: ["delete"], action: Fault.forbid() })
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.error._tag).toBe("Forbidden")
          expect(failure.reason).toContain("; nothing was changed")
          expect(failure.reason).toContain(`could not apply HTTPRoute ${sc.namespace}/${route(8080)}: `)
          expect(failure.reason).toContain("is forbidden")
          // Only an unserved API means "install the Gateway API": a 403 keeps its own words.
          expect(failure.reason).not.toContain("install the Gateway API CRDs")
          yield* sc.cluster.faults.clear
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
        }), gateway))

    it.live("keeps an invalid HTTPRoute's own reason and leaves no object", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["patch"],
            action: Fault.respond(422),
            times: 1
          })
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.error._tag).toBe("Invalid")
          expect(failure.reason).toContain(`could not apply HTTPRoute ${sc.namespace}/${route(8080)}: `)
          expect(failure.reason).toContain("is invalid")
          expect(failure.reason).not.toContain("install the Gateway API CRDs")
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
        }), gateway))

    it.live("leaves no Service behind in gateway mode on a cluster without the Gateway API", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.store.setServed(HttpRouteResource, false)
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.error._tag).toBe("NotServed")
          expect(failure.reason).toContain("install the Gateway API CRDs, or set SESSION_ROUTING_MODE=ingress")
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
        }), gateway))

    it.live("leaves no Service behind when the Ingress is refused", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({
            resource: IngressResource,
            verbs: ["patch"],
            action: Fault.respond(422),
            times: 1
          })
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.reason).toContain(`could not apply Ingress ${sc.namespace}/${service}: `)
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
        })))

    it.live("removes the Service it created when the second write of a fresh publish fails", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.reason).toContain(`could not apply HTTPRoute ${sc.namespace}/${route(8080)}: `)
          expect(failure.reason).toContain(`removed what this publish had created (Service ${sc.namespace}/${service})`)
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
        }), {
        ...gateway,
        // The dry runs pass; the cluster refuses the first real HTTPRoute write.
        observe: armWhen(realWriteOf("HTTPRoute"), {
          resource: HttpRouteResource,
          verbs: ["patch"],
          action: Fault.forbid(),
          times: 1
        })
      }))

    it.live("leaves the previous objects in place when a reload fails midway", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const uids = Effect.all([
            kube.get(ServiceResource, sc.namespace, service),
            kube.get(HttpRouteResource, sc.namespace, route(8080)),
            kube.get(HttpRouteResource, sc.namespace, route(9090))
          ]).pipe(Effect.map((objects) => objects.map((o) => o.metadata?.uid)))
          const before = yield* uids
          // 7070's route is created, then 6060's write is refused: 7070 must go again.
          const failure = yield* failureOf(router.publish({ ...spec, ports: tcp(8080, 7070, 6060) }))
          expect(failure.reason).toContain(`could not apply HTTPRoute ${sc.namespace}/${route(6060)}: `)
          expect(failure.reason).toContain(
            `removed what this publish had created (HTTPRoute ${sc.namespace}/${route(7070)})`
          )
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual({
            services: [service],
            ingresses: [],
            httpRoutes: [route(8080), route(9090)]
          })
          expect(yield* uids).toEqual(before)
        }), {
        ...gateway,
        observe: armWhen(realWriteOf("HTTPRoute", route(6060)), {
          resource: HttpRouteResource,
          verbs: ["patch"],
          action: Fault.respond(409),
          times: 1
        })
      }))

    it.live("names what it created and could not remove", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.faults.add({ resource: ServiceResource, verbs: ["delete"], action: Fault.forbid() })
          const failure = yield* failureOf(router.publish(spec))
          expect(failure.reason).toContain(`could not apply HTTPRoute ${sc.namespace}/${route(8080)}: `)
          expect(failure.reason).toContain(
            `could not remove what this publish created, so these remain: Service ${sc.namespace}/${service} (could not delete it: `
          )
          yield* sc.cluster.faults.clear
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual({ ...nothing, services: [service] })
        }), {
        ...gateway,
        observe: armWhen(realWriteOf("HTTPRoute"), {
          resource: HttpRouteResource,
          verbs: ["patch"],
          action: Fault.forbid(),
          times: 1
        })
      }))

    it.live("takes back what it created when removing the first old object fails, so the old state stays whole", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["delete"],
            action: Fault.respond(409),
            times: 1
          })
          const failure = yield* failureOf(router.publish({ ...spec, ports: tcp(8080, 7070) }))
          expect(failure.reason).toContain(`could not delete HTTPRoute ${sc.namespace}/${route(9090)}: `)
          expect(failure.reason).toContain(
            `removed what this publish had created (HTTPRoute ${sc.namespace}/${route(7070)})`
          )
          expect((yield* sessionObjectNames(kube, sc.namespace, sessionId)).httpRoutes).toEqual([
            route(8080),
            route(9090)
          ])
        }), gateway))

    it.live("keeps the new objects and names the old ones left when a later removal fails", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish({ ...spec, ports: tcp(7070, 8080, 9090) })
          // 7070's route is removed first (lists come sorted by name); once it is gone
          // the old state cannot come back, so the publish goes forward instead.
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["delete"],
            name: route(9090),
            action: Fault.respond(409),
            times: 1
          })
          const failure = yield* failureOf(router.publish({ ...spec, ports: tcp(8080) }))
          expect(failure.reason).toContain(`could not delete HTTPRoute ${sc.namespace}/${route(9090)}: `)
          expect(failure.reason).toContain(
            `the session's new objects are in place, and these objects it no longer needs remain: HTTPRoute ${sc.namespace}/${
              route(9090)
            } (could not delete it: `
          )
          expect((yield* sessionObjectNames(kube, sc.namespace, sessionId)).httpRoutes).toEqual([
            route(8080),
            route(9090)
          ])
        }), gateway))
  })

  describe(`switching modes (${face})`, () => {
    it.live("names an old mode's object it found and could not delete, instead of leaving it serving unsaid", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.scoped(Effect.gen(function*() {
          yield* router.publish(spec)
          const ingressRouter = yield* Effect.orDie(
            buildRouter(
              SessionRouting.layerIngress.pipe(
                Layer.provide(Layer.succeed(KubeClient, kube)),
                Layer.provide(routerConfigLayer(sc))
              )
            )
          )
          yield* sc.cluster.faults.add({
            resource: HttpRouteResource,
            verbs: ["delete"],
            name: route(9090),
            action: Fault.forbid()
          })
          const failure = yield* failureOf(ingressRouter.publish(spec))
          expect(failure.reason).toContain(`HTTPRoute ${sc.namespace}/${route(9090)} (could not delete it: `)
          yield* sc.cluster.faults.clear
          const left = yield* sessionObjectNames(kube, sc.namespace, sessionId)
          expect(left.httpRoutes).toEqual([route(9090)])
          expect(left.ingresses).toEqual([service])
        })), gateway))
  })

  describe(`unpublishing what it can (${face})`, () => {
    it.live("names the Service it left when listing Services is forbidden, and still removes the Ingress", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* sc.cluster.faults.add({ resource: ServiceResource, verbs: ["list"], action: Fault.forbid() })
          const failure = yield* failureOf(router.unpublish(sessionId))
          expect(failure.error._tag).toBe("Forbidden")
          expect(failure.reason).toContain(`could not remove every object of session ${sessionId}`)
          expect(failure.reason).toContain("the session's Service objects (could not list them: ")
          expect(failure.reason).toContain("services is forbidden")
          yield* sc.cluster.faults.clear
          expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual({ ...nothing, services: [service] })
        })))

    it.live("tries the Services after an Ingress it could not delete, and names both", () =>
      withRouter(face, SessionRouting.layerIngress, ({ router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["delete"], action: Fault.respond(409) })
          yield* sc.cluster.faults.add({ resource: ServiceResource, verbs: ["delete"], action: Fault.respond(409) })
          const failure = yield* failureOf(router.unpublish(sessionId))
          expect(failure.reason).toContain(`Ingress ${sc.namespace}/${service} (could not delete it: `)
          expect(failure.reason).toContain(`Service ${sc.namespace}/${service} (could not delete it: `)
        })))
  })
}

describe("taking back only what this publish changed (in memory)", () => {
  it.live("names as removed only the writes that landed, when a lost answer may hide one more", () =>
    withRouter("in memory", SessionRouting.layerGateway, ({ kube, router, sc }) =>
      Effect.gen(function*() {
        // A 503 on 9090's create may have been stored, so it is deleted too; it was not
        // there (a 404), and only the Service and 8080's route are named as removed.
        const failure = yield* failureOf(router.publish(spec))
        expect(failure.error._tag).toBe("Unavailable")
        expect(failure.reason).toMatch(
          new RegExp(
            `; removed what this publish had created \\(HTTPRoute ${sc.namespace}/${
              route(8080)
            }, Service ${sc.namespace}/${service}\\)$`
          )
        )
        expect(yield* sessionObjectNames(kube, sc.namespace, sessionId)).toEqual(nothing)
      }), {
      ...gateway,
      observe: armWhen(realWriteOf("HTTPRoute", route(9090)), {
        resource: HttpRouteResource,
        verbs: ["patch"],
        action: Fault.respond(503),
        times: 1
      })
    }))

  it.live("an old object already gone when its delete comes does not count as removed: a later refusal still goes back", () => {
    let armed = false
    return withRouter("in memory", SessionRouting.layerGateway, ({ kube, router, sc }) =>
      Effect.gen(function*() {
        yield* router.publish({ ...spec, ports: tcp(7070, 8080, 9090) })
        const failure = yield* failureOf(router.publish({ ...spec, ports: tcp(8080, 6060) }))
        expect(failure.reason).toContain(`could not delete HTTPRoute ${sc.namespace}/${route(9090)}: `)
        // Nothing of the old state was removed by this publish, so its new route goes again.
        expect(failure.reason).toContain(
          `removed what this publish had created (HTTPRoute ${sc.namespace}/${route(6060)})`
        )
        expect((yield* sessionObjectNames(kube, sc.namespace, sessionId)).httpRoutes).toEqual([
          route(8080),
          route(9090)
        ])
      }), {
      ...gateway,
      // Just before the publish deletes 7070's route, someone else deletes it; 9090's delete is then refused.
      observe: (call, sc) =>
        Effect.suspend(() => {
          if (armed || call.verb !== "delete" || call.name !== route(7070)) return Effect.void
          armed = true
          return Effect.zipRight(
            Effect.orDie(sc.cluster.store.delete(HttpRouteResource, sc.namespace, route(7070))),
            sc.cluster.faults.add({
              resource: HttpRouteResource,
              verbs: ["delete"],
              name: route(9090),
              action: Fault.respond(409),
              times: 1
            })
          )
        })
    })
  })
})

/** A port on 127.0.0.1 that nothing listens on any more: every connection is refused. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const routerConfigValues = {
  sessionNamespace: "telo-sessions",
  baseDomain: BASE_DOMAIN,
  ingressClassName: "local",
  gatewayName: "sessions"
}

/** An in-memory cluster, and a client over it that gives up on a hung call after 10 s as the live client does. */
const clusterWithCallLimit = Effect.gen(function*() {
  const cluster = yield* LocalCluster.makeInMemory({ namespaces: ["telo-sessions"] })
  const inMemory = yield* Effect.provide(KubeClient, LocalCluster.layerKubeClient(cluster))
  const limited = <A>(self: Effect.Effect<A, KubeError>) =>
    Effect.timeoutFail(self, {
      duration: "10 seconds",
      onTimeout: () => new Transport({ reason: "could not reach the API server: no answer within 10s" })
    })
  const kube: KubeClient.Service = {
    ...inMemory,
    list: (resource, namespace, options) => limited(inMemory.list(resource, namespace, options)),
    delete: (resource, namespace, name) => limited(inMemory.delete(resource, namespace, name))
  }
  return { cluster, kube }
})

/** The failure of unpublishing the session with `router`, the clock moved on a minute meanwhile. */
const unpublishForAMinute = (router: SessionRouterService.Service) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(failureOf(router.unpublish(sessionId)))
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

/** A router of `layer` over `kube`, counting the calls it makes. */
const countingRouter = (layer: RouterLayer, mode: "ingress" | "gateway", kube: KubeClient.Service) =>
  Effect.gen(function*() {
    const calls = yield* Ref.make(0)
    const router = yield* buildRouter(
      layer.pipe(
        Layer.provide(Layer.succeed(KubeClient, observedKubeClient(kube, () => Ref.update(calls, (n) => n + 1)))),
        Layer.provide(Layer.orDie(RouterConfigLive.layerFrom({ ...routerConfigValues, mode })))
      )
    )
    return { router, calls }
  }).pipe(Effect.orDie)

describe("unpublishing from a server that does not answer", () => {
  it.live("stops after the first refused connection, naming every step it did not try", () =>
    Effect.scoped(Effect.gen(function*() {
      const kc = new k8s.KubeConfig()
      kc.loadFromString(LocalCluster.kubeconfigFor(`http://127.0.0.1:${yield* closedPort}`))
      // No retries: the test is about the router's steps, not the client's schedule.
      const kube = yield* Effect.provide(
        KubeClient,
        Layer.orDie(KubeClientLive.layerFromKubeConfig(kc, { retrySchedule: Schedule.stop }))
      )
      const { calls, router } = yield* countingRouter(SessionRouting.layerIngress, "ingress", kube)
      const failure = yield* failureOf(router.unpublish(sessionId))
      expect(yield* Ref.get(calls)).toBe(1)
      expect(failure.error._tag).toBe("Transport")
      expect(failure.reason).toContain("the session's Ingress objects (could not list them: ")
      expect(failure.reason).toContain("the session's HTTPRoute objects (not tried: the API server stopped answering)")
      expect(failure.reason).toContain("the session's Service objects (not tried: the API server stopped answering)")
    })))

  it.effect("stops after the first call that gets no answer within its time limit", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { cluster, kube } = yield* clusterWithCallLimit
        yield* cluster.faults.add({ action: Fault.hang })
        const { calls, router } = yield* countingRouter(SessionRouting.layerGateway, "gateway", kube)
        const failure = yield* unpublishForAMinute(router)
        expect(yield* Ref.get(calls)).toBe(1)
        expect(failure.reason).toContain("the session's HTTPRoute objects (could not list them: ")
        expect(failure.reason).toContain("the session's Ingress objects (not tried: the API server stopped answering)")
        expect(failure.reason).toContain("the session's Service objects (not tried: the API server stopped answering)")
      })
    ))

  it.effect("stops at a delete that gets no answer, and names the session's other objects as not tried", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { cluster, kube } = yield* clusterWithCallLimit
        const { calls, router } = yield* countingRouter(SessionRouting.layerGateway, "gateway", kube)
        yield* router.publish({ ...spec, ports: tcp(8080, 9090) })
        yield* cluster.faults.add({
          resource: HttpRouteResource,
          verbs: ["delete"],
          name: route(8080),
          action: Fault.hang
        })
        const before = yield* Ref.get(calls)
        const failure = yield* unpublishForAMinute(router)
        // The list of the session's HTTPRoutes, then the delete that hung: nothing after it.
        expect((yield* Ref.get(calls)) - before).toBe(2)
        const notTried = "not tried: the API server stopped answering"
        expect(failure.reason).toBe(
          `could not remove every object of session ${sessionId}; these may remain: ` +
            `HTTPRoute telo-sessions/${
              route(8080)
            } (could not delete it: could not reach the API server: no answer within 10s); ` +
            `HTTPRoute telo-sessions/${route(9090)} (${notTried}); ` +
            `the session's Ingress objects (${notTried}); the session's Service objects (${notTried})`
        )
      })
    ))
})
