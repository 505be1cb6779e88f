/**
 * Runs router code against a SessionCluster through either face of the cluster:
 * the in-memory KubeClient, or the live client over HTTP with a kubeconfig. The
 * same tests run through both, so the two faces cannot drift apart.
 */
import * as k8s from "@kubernetes/client-node"
import { LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Context, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { sessionSelector } from "../../src/domain/Manifests.js"
import type { GatewayClass, KubeObject } from "../../src/domain/Objects.js"
import { HttpRouteResource, IngressResource, type ResourceType, ServiceResource } from "../../src/domain/Resources.js"
import { KubeClientLive } from "../../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { KubeClient, type ReadableObject } from "../../src/services/KubeClient.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"
import { type RouterSetupError, SessionRouter } from "../../src/services/SessionRouter.js"
import type { SessionRouting } from "../../src/services/SessionRouting.js"

export type Face = "in memory" | "over HTTP"
export const faces: ReadonlyArray<Face> = ["in memory", "over HTTP"]

/** The KubeClient of `face` onto a running cluster. */
export const kubeClientLayer = (face: Face, cluster: LocalCluster.Service): Layer.Layer<KubeClient> => {
  if (face === "in memory") return LocalCluster.layerKubeClient(cluster)
  const kc = new k8s.KubeConfig()
  kc.loadFromString(cluster.kubeconfig())
  return Layer.orDie(KubeClientLive.layerFromKubeConfig(kc))
}

export const BASE_DOMAIN = "sessions.localtest.me"

/** A session with tcp ports 8080 and 9090, its Pod named as the runner names it. */
export const twoPortSession = (sessionId: string, podUid: string) => ({
  sessionId,
  podName: `telo-run-${sessionId}`,
  podUid,
  ports: [{ port: 8080, protocol: "tcp" as const }, { port: 9090, protocol: "tcp" as const }]
})

/** Settings for a test: values win over the sample cluster's; `unset` drops a setting entirely. */
export interface TestConfig extends RouterConfigLive.RouterConfigValues {
  readonly unset?: ReadonlyArray<keyof RouterConfigLive.RouterConfigValues>
}

/** RouterConfig for the sample cluster: its namespace, domain, class and Gateway. */
export const routerConfigLayer = (
  sc: SessionCluster.SessionCluster,
  config: TestConfig = {}
): Layer.Layer<RouterConfig> => {
  const { unset = [], ...values } = config
  const merged: Record<string, unknown> = {
    sessionNamespace: sc.namespace,
    baseDomain: sc.baseDomain,
    ingressClassName: sc.ingressClassName,
    gatewayName: sc.gateway.name,
    gatewayNamespace: sc.gateway.namespace,
    ...values
  }
  for (const key of unset) delete merged[key]
  return Layer.orDie(RouterConfigLive.layerFrom(merged as RouterConfigLive.RouterConfigValues))
}

/** A SessionCluster for the test's scope, with quick controllers unless told otherwise. */
export const startCluster = (
  options: SessionCluster.SessionClusterOptions = {}
): Effect.Effect<SessionCluster.SessionCluster, never, Scope.Scope> =>
  Effect.orDie(
    SessionCluster.make({
      baseDomain: BASE_DOMAIN,
      ingress: { delay: Duration.millis(20) },
      gateway: { delay: Duration.millis(20) },
      dataPlane: false,
      ...options
    })
  )

/**
 * A value as JSON over several lines, cut at 4,000 characters: vitest parses a
 * failure's message with its stack, and one line of a few thousand characters stalls
 * it for minutes (the run then never ends).
 */
const shortJson = (value: unknown): string => {
  const text = JSON.stringify(value, null, 1) ?? String(value)
  return text.length <= 4_000 ? text : `${text.slice(0, 4_000)}\n... (${text.length} characters)`
}

/**
 * Repeats `check` until it holds, up to a few seconds of real time: the cluster's
 * controllers run on the live clock in socket tests. Fails with the last value seen.
 */
export const eventually = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  holds: (a: A) => boolean
): Effect.Effect<A, E | string, R> =>
  read.pipe(
    Effect.filterOrFail(holds, (a) => `condition not met; last value: ${shortJson(a)}`),
    Effect.retry({
      schedule: Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(5))),
      while: (e) => typeof e === "string"
    })
  )

/**
 * Waits until the GatewayClass `read` returns is Accepted: the cluster's controller
 * accepts it moments after the cluster starts, and a check or diagnosis before then
 * rightly reports GatewayClassNotAccepted.
 */
export const untilAccepted = <E, R>(read: Effect.Effect<GatewayClass, E, R>): Effect.Effect<GatewayClass, never, R> =>
  eventually(
    Effect.orDie(read),
    (gc) => (gc.status?.conditions ?? []).some((c) => c.type === "Accepted" && c.status === "True")
  ).pipe(Effect.orDie)

/** One call a router made, as `observedKubeClient` reports it. */
export interface KubeCall {
  readonly verb: "apply" | "get" | "delete" | "list"
  readonly resource: ResourceType<unknown>
  readonly name?: string
  readonly dryRun: boolean
}

/**
 * `kube` with `observe` run before each call: tests count requests with it, or arm a
 * fault at the exact moment they need (after the dry runs, before one real write),
 * which a fault's own `times` cannot express.
 */
export const observedKubeClient = (
  kube: KubeClient.Service,
  observe: (call: KubeCall) => Effect.Effect<void>
): KubeClient.Service => ({
  ...kube,
  apply: (resource, object, options) =>
    Effect.zipRight(
      observe({ verb: "apply", resource, ...nameOf(object.metadata?.name), dryRun: options?.dryRun === true }),
      kube.apply(resource, object, options)
    ),
  get: (resource, namespace, name) =>
    Effect.zipRight(observe({ verb: "get", resource, name, dryRun: false }), kube.get(resource, namespace, name)),
  delete: (resource, namespace, name) =>
    Effect.zipRight(observe({ verb: "delete", resource, name, dryRun: false }), kube.delete(resource, namespace, name)),
  list: (resource, namespace, options) =>
    Effect.zipRight(observe({ verb: "list", resource, dryRun: false }), kube.list(resource, namespace, options))
})

const nameOf = (name: string | undefined) => (name !== undefined ? { name } : {})

/**
 * The router `layer` builds, built in the current scope: a router's layer holds what its
 * publishes share (the lists they look up together) for as long as it lives, so the
 * router must not outlive it, as it would taken out with `Effect.provide`.
 */
export const buildRouter = <E, R>(
  layer: Layer.Layer<SessionRouter, E, R>
): Effect.Effect<SessionRouter.Service, E, R | Scope.Scope> =>
  Effect.map(Layer.build(layer), Context.get(SessionRouter))

/** A `SessionRouting` layer (router, status source, Events, probe) over a client and a configuration. */
export type RouterLayer = Layer.Layer<SessionRouting, RouterSetupError, KubeClient | RouterConfig>

/** What a router test gets: the router, the status source beside it, the client under them, and the cluster. */
export interface RouterContext {
  readonly router: SessionRouter.Service
  readonly source: RouteStatusSource.Service
  readonly kube: KubeClient.Service
  readonly sc: SessionCluster.SessionCluster
}

/**
 * Runs `body` with a router of `layer` on a fresh cluster, through one face of it;
 * `observe` sees every call the router makes (see `observedKubeClient`).
 */
export const withRouter = <A, E>(
  face: Face,
  layer: RouterLayer,
  body: (ctx: RouterContext) => Effect.Effect<A, E>,
  options: {
    readonly cluster?: SessionCluster.SessionClusterOptions
    readonly config?: TestConfig
    readonly observe?: (call: KubeCall, sc: SessionCluster.SessionCluster) => Effect.Effect<void>
  } = {}
): Effect.Effect<A, E> =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster(options.cluster)
      const kube = yield* Effect.provide(KubeClient, kubeClientLayer(face, sc.cluster))
      const observe = options.observe
      const routerKube = observe !== undefined ? observedKubeClient(kube, (call) => observe(call, sc)) : kube
      const built = yield* Effect.orDie(
        Layer.build(
          layer.pipe(
            Layer.provide(Layer.succeed(KubeClient, routerKube)),
            Layer.provide(routerConfigLayer(sc, options.config))
          )
        )
      )
      return yield* body({
        router: Context.get(built, SessionRouter),
        source: Context.get(built, RouteStatusSource),
        kube,
        sc
      })
    })
  )

/** What building `layer` on a fresh cluster with `config` fails with: the router must refuse to start. */
export const setupFailure = (layer: RouterLayer, config: TestConfig): Effect.Effect<RouterSetupError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster()
      const built = layer.pipe(
        Layer.provide(kubeClientLayer("in memory", sc.cluster)),
        Layer.provide(routerConfigLayer(sc, config))
      )
      return yield* Effect.flip(
        Effect.flatMap(Effect.provide(SessionRouter, built), () => Effect.dieMessage("the router started"))
      )
    })
  )

const namesOf = (items: ReadonlyArray<KubeObject>) => items.flatMap((i) => i.metadata?.name ?? []).sort()

/**
 * The names of every object carrying the session label, by type. A type the cluster
 * does not serve holds none.
 */
export const sessionObjectNames = (kube: KubeClient.Service, namespace: string, sessionId: string) => {
  const names = <T extends ReadableObject>(resource: ResourceType<T>) =>
    kube.list(resource, namespace, { labelSelector: sessionSelector(sessionId) }).pipe(
      Effect.map((list) => namesOf(list.items)),
      Effect.catchTag("NotServed", () => Effect.succeed<ReadonlyArray<string>>([]))
    )
  return Effect.all({
    services: names(ServiceResource),
    ingresses: names(IngressResource),
    httpRoutes: names(HttpRouteResource)
  })
}
