import { describe, expect, it } from "@effect/vitest"
import { Fault, SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Either, Layer } from "effect"
import {
  buildSessionHttpRoutes,
  buildSessionIngress,
  buildSessionService,
  LABEL_SESSION_ID,
  type ManifestSettings,
  podOwnerReference,
  sessionObjectName,
  sessionSelector
} from "../../src/domain/Manifests.js"
import type { KubeObject } from "../../src/domain/Objects.js"
import { HttpRouteResource, IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import type { PortMapping } from "../../src/domain/Session.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { KubeClient } from "../../src/services/KubeClient.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"
import { SessionRouter } from "../../src/services/SessionRouter.js"
import type { RouterContext, RouterLayer as HarnessRouterLayer } from "../support/RouterHarness.js"
import {
  BASE_DOMAIN,
  buildRouter,
  eventually,
  type Face,
  faces,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig
} from "../support/RouterHarness.js"

const sessionId = "hzyayvabgyvz"
const pod = { podName: "telo-run-hzyayvabgyvz", podUid: "6f1c2d3e-0000-4000-8000-00000000abcd" }
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
]
const spec = { sessionId, ...pod, ports }

type RouterLayer = HarnessRouterLayer

/** Runs `body` with a router of `layer` on a fresh cluster, through one face of it. */
const withRouter = <A, E>(
  face: Face,
  layer: RouterLayer,
  body: (ctx: RouterContext) => Effect.Effect<A, E>,
  options: {
    readonly cluster?: Parameters<typeof startCluster>[0]
    readonly config?: TestConfig
  } = {}
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster(options.cluster)
      const kubeLayer = kubeClientLayer(face, sc.cluster)
      const routerLayer = layer.pipe(
        Layer.provideMerge(kubeLayer),
        Layer.provideMerge(routerConfigLayer(sc, options.config))
      )
      return yield* Effect.gen(function*() {
        const router = yield* SessionRouter
        const source = yield* RouteStatusSource
        const kube = yield* KubeClient
        return yield* body({ router, source, kube, sc })
      }).pipe(Effect.provide(routerLayer))
    })
  )

const names = (items: ReadonlyArray<KubeObject>) => items.map((i) => i.metadata?.name).sort()

/** Every object of the session, by type. */
const sessionObjects = (kube: KubeClient.Service, namespace: string) =>
  Effect.all({
    services: kube.list(ServiceResource, namespace, { labelSelector: sessionSelector(sessionId) }),
    ingresses: kube.list(IngressResource, namespace, { labelSelector: sessionSelector(sessionId) }),
    httpRoutes: kube.list(HttpRouteResource, namespace, { labelSelector: sessionSelector(sessionId) })
  }).pipe(
    Effect.map(({ httpRoutes, ingresses, services }) => ({
      services: names(services.items),
      ingresses: names(ingresses.items),
      httpRoutes: names(httpRoutes.items)
    }))
  )

const settingsOf = (sc: SessionCluster.SessionCluster): ManifestSettings => ({
  sessionNamespace: sc.namespace,
  managedBy: "telo-k8s-runner",
  baseDomain: sc.baseDomain,
  ingressClassName: sc.ingressClassName,
  gateway: { namespace: sc.gateway.namespace, name: sc.gateway.name }
})

const route8080 = { host: `8080-${sessionId}.${BASE_DOMAIN}`, port: 8080 }
const route9090 = { host: `9090-${sessionId}.${BASE_DOMAIN}`, port: 9090 }

for (const face of faces) {
  describe(`ingress router (${face})`, () => {
    it.live("publishes the Service and the Ingress the builders define, owned by the Pod", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          const routes = yield* router.publish(spec)
          expect(routes).toEqual([route8080, route9090])
          const service = yield* kube.get(ServiceResource, sc.namespace, `telo-run-${sessionId}`)
          const ingress = yield* kube.get(IngressResource, sc.namespace, `telo-run-${sessionId}`)
          const expectedService = buildSessionService(settingsOf(sc), spec)
          const expectedIngress = buildSessionIngress(settingsOf(sc), spec).ingress
          expect(service.spec?.ports).toEqual(expectedService.spec?.ports)
          expect(service.spec?.selector).toEqual(expectedService.spec?.selector)
          expect(ingress.spec).toEqual(expectedIngress.spec)
          for (const object of [service, ingress]) {
            expect(object.metadata?.labels).toEqual(expectedIngress.metadata?.labels)
            expect(object.metadata?.ownerReferences).toEqual([podOwnerReference(pod.podName, pod.podUid)])
          }
        })))

    it.live("changes nothing when the same session is published twice", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const before = yield* kube.get(IngressResource, sc.namespace, `telo-run-${sessionId}`)
          yield* router.publish(spec)
          const after = yield* kube.get(IngressResource, sc.namespace, `telo-run-${sessionId}`)
          expect(after.metadata?.generation).toBe(before.metadata?.generation)
          expect(after.spec).toEqual(before.spec)
        }), { cluster: { ingress: { delay: "never" } } }))

    it.live("takes over fields another manager set on its own Ingress, and leaves a user's Ingress at its name", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          const name = sessionObjectName(sessionId)
          const edit = (object: object) =>
            Effect.orDie(sc.cluster.store.apply(IngressResource, sc.namespace, name, object as never, {
              fieldManager: "kubectl-edit",
              force: true
            }))
          // Ours, with a rule someone changed by hand: the next publish puts its own back.
          yield* router.publish(spec)
          const ours = yield* kube.get(IngressResource, sc.namespace, name)
          const hand = { ...ours.spec!.rules![0]!, host: `edited.${BASE_DOMAIN}` }
          yield* edit({ ...ours, metadata: { name, namespace: sc.namespace }, spec: { rules: [hand] } })
          yield* router.publish(spec)
          expect((yield* kube.get(IngressResource, sc.namespace, name)).spec?.rules?.[0]?.host).toBe(route8080.host)

          // A user's own Ingress at the session's name: refused, untouched, and the reason says why.
          yield* kube.delete(IngressResource, sc.namespace, name)
          const users = {
            apiVersion: "networking.k8s.io/v1",
            kind: "Ingress",
            metadata: { name, namespace: sc.namespace },
            spec: { rules: [{ host: `users.${BASE_DOMAIN}` }] }
          }
          yield* edit(users)
          const refused = yield* Effect.flip(router.publish(spec))
          expect(refused.reason).toMatch(/conflict with "kubectl-edit"/)
          expect(refused.reason).toContain(
            "it was left as it is: it has no app.kubernetes.io/managed-by label, so it was not published by this runner"
          )
          const left = yield* kube.get(IngressResource, sc.namespace, name)
          expect(left.spec?.rules).toEqual(users.spec.rules)
          expect(left.metadata?.ownerReferences).toBeUndefined()
        }), { cluster: { ingress: { delay: "never" } } }))

    // A user's object at one of our names, with no field in the way: the write would have
    // taken it silently (and the garbage collector deleted it with the session's Pod).
    it.live("leaves a user's Service at the session's name as it is, even when no field conflicts", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          const name = sessionObjectName(sessionId)
          const users = {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name, namespace: sc.namespace },
            spec: { ports: [{ name: "postgres", port: 5432 }] }
          }
          yield* Effect.orDie(sc.cluster.store.apply(ServiceResource, sc.namespace, name, users as never, {
            fieldManager: "kubectl",
            force: true
          }))
          const refused = yield* Effect.flip(router.publish(spec))
          expect(refused.reason).toBe(
            `could not apply Service ${sc.namespace}/${name}: Service ${sc.namespace}/${name} already exists; it was left as it is: it has no app.kubernetes.io/managed-by label, so it was not published by this runner; nothing was changed`
          )
          const left = yield* kube.get(ServiceResource, sc.namespace, name)
          expect([left.metadata?.labels, left.metadata?.ownerReferences, left.spec?.selector]).toEqual([
            undefined,
            undefined,
            undefined
          ])
        }), { cluster: { ingress: { delay: "never" } } }))

    // Two Pods with one session id: the second publish re-owned the first Pod's objects.
    it.live("refuses to publish over the objects of another Pod with the same session id, and changes nothing", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const before = yield* kube.get(IngressResource, sc.namespace, sessionObjectName(sessionId))
          const other = { ...spec, podName: "telo-run-other", podUid: "0f0f0f0f-0000-4000-8000-000000000001" }
          const refused = yield* Effect.flip(router.publish(other))
          expect(refused.reason).toContain(
            `it belongs to Pod ${spec.podName} (uid ${spec.podUid}), not to Pod telo-run-other (uid ${other.podUid}): another Pod has session ${sessionId}`
          )
          const after = yield* kube.get(IngressResource, sc.namespace, sessionObjectName(sessionId))
          expect(after.metadata?.ownerReferences).toEqual(before.metadata?.ownerReferences)
          expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion)
        }), { cluster: { ingress: { delay: "never" } } }))

    it.live("deletes the session Ingress when a reload leaves no routable port, and creates nothing", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const routes = yield* router.publish({ ...spec, ports: [{ port: 5000, protocol: "udp" }] })
          expect(routes).toEqual([])
          // The Service stays for the udp port; the Ingress is gone.
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: [`telo-run-${sessionId}`],
            ingresses: [],
            httpRoutes: []
          })
        })))

    it.live("treats an already-absent Ingress as nothing to delete", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          expect(yield* router.publish({ ...spec, ports: [] })).toEqual([])
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
        })))

    it.live("turns programmed once the controller publishes an address", () =>
      withRouter(face, SessionRouting.layerIngress, ({ router, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const verdict = yield* eventually(source.read(sessionId, route8080), (v) => v.kind === "programmed")
          expect(verdict).toEqual({ kind: "programmed" })
        })))

    it.live("stays pending when no controller claims the Ingress, and says where to look", () =>
      withRouter(face, SessionRouting.layerIngress, ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* Effect.sleep(Duration.millis(200))
          expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "pending" })
          const reason = source.unclaimedReason(route8080)
          expect(reason).toContain(`class "${sc.ingressClassName}"`)
          expect(reason).toContain(`namespace "${sc.namespace}"`)
        }), { cluster: { ingress: { delay: "never" } } }))

    it.live("names the missing class when none is configured", () =>
      withRouter(
        face,
        SessionRouting.layerIngress,
        ({ source }) =>
          Effect.sync(() => expect(source.unclaimedReason(route8080)).toContain("no ingressClassName is configured")),
        { config: { unset: ["ingressClassName"] } }
      ))

    it.live("reports a status it could not read as a read error, never as a verdict", () =>
      withRouter(face, SessionRouting.layerIngress, ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* sc.cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.forbid() })
          const result = yield* Effect.either(source.read(sessionId, route8080))
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isLeft(result)) {
            expect(result.left._tag).toBe("RouteReadError")
            expect(result.left.error._tag).toBe("Forbidden")
          }
        })))

    it.live("reads back the routes a session holds, and unpublishes every object of it", () =>
      withRouter(face, SessionRouting.layerIngress, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          expect(yield* router.routesOf(sessionId)).toEqual([route8080, route9090])
          yield* router.unpublish(sessionId)
          yield* router.unpublish(sessionId)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
          expect(yield* router.routesOf(sessionId)).toEqual([])
        })))
  })

  describe(`gateway router (${face})`, () => {
    const gatewayConfig: TestConfig = { mode: "gateway" }

    it.live("publishes the Service and one HTTPRoute per tcp port, owned by the Pod", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          expect(yield* router.publish(spec)).toEqual([route8080, route9090])
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: [`telo-run-${sessionId}`],
            ingresses: [],
            httpRoutes: [`telo-run-${sessionId}-8080`, `telo-run-${sessionId}-9090`]
          })
          const expected = buildSessionHttpRoutes(settingsOf(sc), spec)[0]!
          const stored = yield* kube.get(HttpRouteResource, sc.namespace, `telo-run-${sessionId}-8080`)
          expect(stored.metadata?.labels).toEqual(expected.metadata?.labels)
          expect(stored.metadata?.ownerReferences).toEqual([podOwnerReference(pod.podName, pod.podUid)])
          expect(stored.spec?.hostnames).toEqual([route8080.host])
          expect(stored.spec?.parentRefs).toEqual(expected.spec?.parentRefs)
          // The server writes defaults back (backendRef group, kind, weight): ours are a subset.
          expect(stored.spec?.rules?.[0]?.backendRefs?.[0]).toMatchObject({ name: `telo-run-${sessionId}`, port: 8080 })
        }), { config: gatewayConfig }))

    it.live("turns programmed once the gateway controller accepts the route", () =>
      withRouter(face, SessionRouting.layerGateway, ({ router, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const verdict = yield* eventually(source.read(sessionId, route9090), (v) => v.kind !== "pending")
          expect(verdict).toEqual({ kind: "programmed" })
        }), { config: gatewayConfig }))

    it.live("stays pending when no controller attaches the route, and names the Gateway", () =>
      withRouter(face, SessionRouting.layerGateway, ({ router, sc, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          yield* Effect.sleep(Duration.millis(200))
          expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "pending" })
          const reason = source.unclaimedReason(route8080)
          expect(reason).toContain(`Gateway ${sc.gateway.namespace}/${sc.gateway.name}`)
          expect(reason).toContain(`*.${BASE_DOMAIN}`)
        }), { config: gatewayConfig, cluster: { gateway: { delay: "never" } } }))

    it.live("is rejected with NotAllowedByListeners when the listener refuses the session namespace", () =>
      withRouter(face, SessionRouting.layerGateway, ({ router, source }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const verdict = yield* eventually(source.read(sessionId, route8080), (v) => v.kind !== "pending")
          expect(verdict).toMatchObject({ kind: "rejected", reason: "NotAllowedByListeners" })
        }), {
        config: { ...gatewayConfig, gatewayNamespace: "gateways" },
        // The Gateway lives in its own namespace and admits only routes from there.
        cluster: { gateway: { gatewayNamespace: "gateways", allowedRoutes: "Same", delay: Duration.millis(20) } }
      }))

    it.live("leaves exactly the objects of the remaining port after a reload from three ports to one", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish({ ...spec, ports: [...ports, { port: 7070, protocol: "tcp" }] })
          const routes = yield* router.publish({ ...spec, ports: [{ port: 9090, protocol: "tcp" }] })
          expect(routes).toEqual([route9090])
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: [`telo-run-${sessionId}`],
            ingresses: [],
            httpRoutes: [`telo-run-${sessionId}-9090`]
          })
          const service = yield* kube.get(ServiceResource, sc.namespace, `telo-run-${sessionId}`)
          expect(service.spec?.ports?.map((p) => p.port)).toEqual([9090])
        }), { config: gatewayConfig }))

    it.live("removes an HTTPRoute of the session that an earlier, crashed run left behind", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          // A run that applied port 7070's route and died before recording it anywhere:
          // only the session label ties it to the session.
          const [orphan] = buildSessionHttpRoutes(settingsOf(sc), { ...spec, ports: [{ port: 7070, protocol: "tcp" }] })
          yield* kube.apply(HttpRouteResource, orphan!)
          yield* router.publish(spec)
          expect((yield* sessionObjects(kube, sc.namespace)).httpRoutes).toEqual([
            `telo-run-${sessionId}-8080`,
            `telo-run-${sessionId}-9090`
          ])
        }), { config: gatewayConfig }))

    it.live("deletes every HTTPRoute when a reload leaves no tcp port", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          expect(yield* router.publish({ ...spec, ports: [{ port: 5000, protocol: "udp" }] })).toEqual([])
          expect((yield* sessionObjects(kube, sc.namespace)).httpRoutes).toEqual([])
        }), { config: gatewayConfig }))

    it.live("says the Gateway API is not installed when HTTPRoutes are not served", () =>
      withRouter(face, SessionRouting.layerGateway, ({ router, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.store.setServed(HttpRouteResource, false)
          const result = yield* Effect.either(router.publish(spec))
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isLeft(result)) {
            expect(result.left.error._tag).toBe("NotServed")
            expect(result.left.reason).toContain("install the Gateway API CRDs")
          }
        }), { config: gatewayConfig }))

    it.live("unpublishes every object with the session label", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          expect(yield* router.routesOf(sessionId)).toEqual([route8080, route9090])
          yield* router.unpublish(sessionId)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
        }), { config: gatewayConfig }))

    it.live("leaves what it does not own: an object with the session label alone, or one no Pod owns", () =>
      withRouter(face, SessionRouting.layerGateway, ({ kube, router, sc }) =>
        Effect.gen(function*() {
          yield* router.publish(spec)
          const published = yield* kube.get(ServiceResource, sc.namespace, sessionObjectName(sessionId))
          const labels = published.metadata?.labels ?? {}
          const foreign = (name: string, own: Record<string, string>) => ({
            apiVersion: "v1",
            kind: "Service",
            metadata: { name, namespace: sc.namespace, labels: own },
            spec: { ports: [{ port: 80 }] }
          })
          // A user's own Service that copied the session label, and one that copied every label.
          yield* kube.apply(ServiceResource, foreign("users-own", { [LABEL_SESSION_ID]: sessionId }))
          yield* kube.apply(ServiceResource, foreign("users-copy", labels))
          yield* router.unpublish(sessionId)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: ["users-copy", "users-own"],
            ingresses: [],
            httpRoutes: []
          })
        }), { config: gatewayConfig }))
  })
}

for (const face of faces) {
  describe(`switching routing modes (${face})`, () => {
    /** An ingress router and a gateway router over the same cluster, as before and after a change of mode. */
    const bothRouters = <A, E>(
      body: (ctx: {
        readonly ingress: SessionRouter.Service
        readonly gateway: SessionRouter.Service
        readonly kube: KubeClient.Service
        readonly sc: SessionCluster.SessionCluster
      }) => Effect.Effect<A, E>
    ) =>
      Effect.scoped(
        Effect.gen(function*() {
          const sc = yield* startCluster()
          const kubeLayer = kubeClientLayer(face, sc.cluster)
          const routerOf = (layer: RouterLayer, config: TestConfig) =>
            buildRouter(layer.pipe(Layer.provide(kubeLayer), Layer.provide(routerConfigLayer(sc, config))))
          const ingress = yield* routerOf(SessionRouting.layerIngress, {})
          const gateway = yield* routerOf(SessionRouting.layerGateway, { mode: "gateway" })
          const kube = yield* Effect.provide(KubeClient, kubeLayer)
          return yield* body({ ingress, gateway, kube, sc })
        })
      )

    it.live("removes the other mode's objects when a session is published in a new mode", () =>
      bothRouters(({ gateway, ingress, kube, sc }) =>
        Effect.gen(function*() {
          yield* ingress.publish(spec)
          yield* gateway.publish(spec)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: [`telo-run-${sessionId}`],
            ingresses: [],
            httpRoutes: [`telo-run-${sessionId}-8080`, `telo-run-${sessionId}-9090`]
          })
          yield* ingress.publish(spec)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({
            services: [`telo-run-${sessionId}`],
            ingresses: [`telo-run-${sessionId}`],
            httpRoutes: []
          })
        })
      ))

    it.live("unpublishes what either mode left", () =>
      bothRouters(({ gateway, ingress, kube, sc }) =>
        Effect.gen(function*() {
          yield* gateway.publish(spec)
          yield* ingress.unpublish(sessionId)
          expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
        })
      ))

    it.live("publishes in ingress mode where HTTPRoutes are not served or not readable", () =>
      bothRouters(({ ingress, sc }) =>
        Effect.gen(function*() {
          yield* sc.cluster.store.setServed(HttpRouteResource, false)
          expect(yield* ingress.publish(spec)).toEqual([route8080, route9090])
          yield* sc.cluster.store.setServed(HttpRouteResource, true)
          yield* sc.cluster.faults.add({ resource: HttpRouteResource, verbs: ["list"], action: Fault.forbid() })
          expect(yield* ingress.publish(spec)).toEqual([route8080, route9090])
        })
      ))
  })
}

describe("router selection", () => {
  it.live("picks the layer RouterConfig names", () =>
    Effect.gen(function*() {
      for (const mode of ["ingress", "gateway", "none"] as const) {
        const layer = yield* withRouter("in memory", SessionRouting.layerConfig, ({ router }) =>
          Effect.succeed(router.layer), {
          config: { mode }
        })
        expect(layer).toBe(mode)
      }
    }))

  it.live("publishes nothing without a base domain, whatever the mode", () =>
    withRouter("in memory", SessionRouting.layerConfig, ({ kube, router, sc }) =>
      Effect.gen(function*() {
        expect(router.layer).toBe("none")
        expect(yield* router.publish(spec)).toEqual([])
        expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
      }), { config: { mode: "ingress", unset: ["baseDomain"] } }))

  it.live("the none layer publishes and diagnoses nothing", () =>
    withRouter("in memory", SessionRouting.layerNone, ({ kube, router, sc, source }) =>
      Effect.gen(function*() {
        expect(yield* router.publish(spec)).toEqual([])
        expect(yield* router.routesOf(sessionId)).toEqual([])
        expect(yield* sessionObjects(kube, sc.namespace)).toEqual({ services: [], ingresses: [], httpRoutes: [] })
        expect(source.diagnose).toBeUndefined()
      })))

  it.live("the none layer calls a host pending and says at its deadline that routing is off", () =>
    withRouter("in memory", SessionRouting.layerNone, ({ router, source }) =>
      Effect.gen(function*() {
        expect(yield* source.read(sessionId, route8080)).toEqual({ kind: "pending" })
        expect(source.unclaimedReason(route8080)).toBe(
          "session routing is off (SESSION_ROUTING_MODE=none, or no base domain): nothing publishes this host"
        )
        yield* router.unpublish(sessionId)
      })))
})
