/**
 * LocalCluster's simulated Gateway API controller: it reconciles the Gateways of one
 * GatewayClass and writes HTTPRoute `status.parents` as a conformant implementation
 * does (Accepted / ResolvedRefs with their standard reasons, per route generation),
 * touching only its own entries. In `never` mode it stays silent.
 */
import { Clock, Duration, Effect, type Scope } from "effect"
import {
  type Gateway,
  type HttpRoute,
  type KubeObject,
  type Namespace,
  type ResourceType,
  type RouteParentStatus,
  type Service,
  type Status
} from "session-routing/kubernetes"
import { makeRecorder } from "./ControllerEvents.js"
import {
  type ClusterView,
  type GatewayAddress,
  type GatewayControllerIdentity,
  gatewayStatus,
  kubeTime,
  routeParents,
  sameStatusIgnoringTimes,
  stampCondition
} from "./GatewayStatus.js"
import { type ControllerDelay, followWatch, keyOf, makeWorkQueue, splitKey } from "./Reconciler.js"
import {
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  NamespaceResource,
  ServiceResource
} from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** The controllerName LocalCluster's GatewayClass names, and the one its route status entries carry. */
export const DEFAULT_GATEWAY_CONTROLLER_NAME = "session-routing.dev/local-gateway"

/** How the simulated gateway controller behaves. */
export interface GatewayControllerOptions {
  /** The GatewayClass whose Gateways it owns (`spec.gatewayClassName`). */
  readonly gatewayClassName: string
  /** The controllerName of its entries in route status; default `session-routing.dev/local-gateway`. */
  readonly controllerName?: string
  /** What Gateways publish in `status.addresses`; default `[{ type: "IPAddress", value: "127.0.0.1" }]`. */
  readonly addresses?: ReadonlyArray<GatewayAddress>
  /** Wait before each status write (Gateway or route), or `"never"` to never write. Default 1 second. */
  readonly delay?: ControllerDelay
  /**
   * False: it accepts its GatewayClass and programs its Gateways, and writes no route
   * status at all, as a controller that does not watch the routes' namespace. Default true.
   */
  readonly routeStatus?: boolean
}

/** The default delay: long enough to see `pending`, short enough for a demo. */
export const DEFAULT_GATEWAY_DELAY = Duration.seconds(1)

const DEFAULT_ADDRESSES: ReadonlyArray<GatewayAddress> = [{ type: "IPAddress", value: "127.0.0.1" }]

const ROUTE_PREFIX = "route:"
const GATEWAY_PREFIX = "gateway:"
const CLASS_PREFIX = "class:"

/**
 * Runs the controller in the current scope and returns once it is started; closing
 * the scope stops it. It reads and writes only through `store` (watch, get, list,
 * replaceStatus). A route is re-reconciled whenever it, a Gateway, a Service in its
 * namespace or a Namespace changes; a Gateway whenever a route or a Namespace
 * changes (its listeners count attached routes). Status is written only when it
 * differs from what is stored, transition times aside, so its own writes settle.
 */
export const run = (store: ClusterStore, options: GatewayControllerOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (options.delay === "never") {
      yield* Effect.logDebug(`gateway controller for class ${options.gatewayClassName}: never writes status`)
      return
    }
    const identity: GatewayControllerIdentity = {
      gatewayClassName: options.gatewayClassName,
      controllerName: options.controllerName ?? DEFAULT_GATEWAY_CONTROLLER_NAME
    }
    const addresses = options.addresses ?? DEFAULT_ADDRESSES
    const recorder = yield* makeRecorder(store, identity.controllerName)

    const listAll = <A extends KubeObject>(resource: ResourceType<A>) =>
      store.list(resource, undefined).pipe(Effect.map((list) => list.items))

    // Level-triggered: every reconcile reads the whole (small, in-memory) world afresh.
    const view: Effect.Effect<ClusterView, Status> = Effect.all({
      gateways: listAll<Gateway>(GatewayResource),
      services: listAll<Service>(ServiceResource),
      namespaces: listAll<Namespace>(NamespaceResource),
      routes: listAll<HttpRoute>(HttpRouteResource)
    })

    const now = Effect.map(Clock.currentTimeMillis, kubeTime)

    const getOrUndefined = <A extends KubeObject>(resource: ResourceType<A>, key: string) => {
      const { name, namespace } = splitKey(key)
      return store.get(resource, namespace, name).pipe(
        // Deleted while we waited: nothing to write.
        Effect.catchIf((status) => status.code === 404, () => Effect.succeed(undefined))
      )
    }

    const reconcileRoute = (key: string) =>
      Effect.gen(function*() {
        const route = yield* getOrUndefined(HttpRouteResource, key)
        if (route === undefined) return
        const parents = routeParents(route, yield* view, identity, yield* now)
        if (sameStatusIgnoringTimes(route.status?.parents ?? [], parents)) return
        const { name, namespace } = splitKey(key)
        yield* store.replaceStatus(
          HttpRouteResource,
          namespace,
          name,
          { ...route, status: { ...route.status, parents } },
          { fieldManager: identity.controllerName }
        )
        yield* Effect.forEach(parents, (parent) => recordVerdict(route, parent), { discard: true })
      })

    // Each verdict written is also told as an Event, worded by its condition: accepted, or refused and why.
    const recordVerdict = (route: HttpRoute, parent: RouteParentStatus) => {
      if (parent.controllerName !== identity.controllerName) return Effect.void
      const accepted = parent.conditions?.find((c) => c.type === "Accepted")
      const resolved = parent.conditions?.find((c) => c.type === "ResolvedRefs")
      const refusal = accepted?.status === "False" ? accepted : resolved?.status === "False" ? resolved : undefined
      if (refusal !== undefined) {
        return recorder.record({
          resource: HttpRouteResource,
          object: route,
          type: "Warning",
          reason: refusal.reason,
          message: refusal.message
        })
      }
      if (accepted?.status !== "True") return Effect.void
      const gatewayNamespace = parent.parentRef.namespace ?? route.metadata?.namespace ?? ""
      return recorder.record({
        resource: HttpRouteResource,
        object: route,
        type: "Normal",
        reason: accepted.reason,
        message: `${accepted.message} (parent Gateway ${gatewayNamespace}/${parent.parentRef.name})`
      })
    }

    const reconcileGateway = (key: string) =>
      Effect.gen(function*() {
        const gateway = yield* getOrUndefined(GatewayResource, key)
        if (gateway === undefined || gateway.spec?.gatewayClassName !== identity.gatewayClassName) return
        const status = gatewayStatus(gateway, yield* view, addresses, yield* now)
        if (sameStatusIgnoringTimes(gateway.status ?? {}, status)) return
        const { name, namespace } = splitKey(key)
        yield* store.replaceStatus(GatewayResource, namespace, name, { ...gateway, status }, {
          fieldManager: identity.controllerName
        })
      })

    // Every GatewayClass naming this controller is accepted, as a conformant
    // implementation does; without it a class reads as one no controller runs for.
    const reconcileClass = (name: string) =>
      Effect.gen(function*() {
        const gatewayClass = yield* getOrUndefined(GatewayClassResource, `/${name}`)
        if (gatewayClass === undefined || gatewayClass.spec?.controllerName !== identity.controllerName) return
        const generation = gatewayClass.metadata?.generation
        const accepted = stampCondition(
          {
            type: "Accepted",
            status: "True",
            reason: "Accepted",
            message: "GatewayClass is accepted",
            ...(generation !== undefined ? { observedGeneration: generation } : {})
          },
          gatewayClass.status?.conditions,
          yield* now
        )
        const status = { ...gatewayClass.status, conditions: [accepted] }
        if (sameStatusIgnoringTimes(gatewayClass.status ?? {}, status)) return
        yield* store.replaceStatus(GatewayClassResource, undefined, name, { ...gatewayClass, status }, {
          fieldManager: identity.controllerName
        })
      })

    const queue = yield* makeWorkQueue({
      name: `gateway controller (${identity.gatewayClassName})`,
      delay: options.delay ?? DEFAULT_GATEWAY_DELAY,
      reconcile: (key) =>
        key.startsWith(ROUTE_PREFIX)
          ? options.routeStatus === false ? Effect.void : reconcileRoute(key.slice(ROUTE_PREFIX.length))
          : key.startsWith(CLASS_PREFIX)
          ? reconcileClass(key.slice(CLASS_PREFIX.length))
          : reconcileGateway(key.slice(GATEWAY_PREFIX.length))
    })

    yield* Effect.forkScoped(
      followWatch(store, GatewayClassResource, (event) =>
        event.type === "ADDED" || event.type === "MODIFIED"
          ? queue.enqueue(CLASS_PREFIX + ((event.object as KubeObject).metadata?.name ?? ""))
          : Effect.void)
    )

    const enqueueRoutes = (namespace: string | undefined) =>
      store.list(HttpRouteResource, namespace).pipe(
        Effect.flatMap((list) =>
          Effect.forEach(list.items, (r) => queue.enqueue(ROUTE_PREFIX + keyOf(r)), { discard: true })
        ),
        Effect.catchAll((status) => Effect.logDebug(`could not list HTTPRoutes: ${status.message ?? status.code}`))
      )

    const enqueueGateways = store.list(GatewayResource, undefined).pipe(
      Effect.flatMap((list) =>
        Effect.forEach(
          list.items.filter((g) => g.spec?.gatewayClassName === identity.gatewayClassName),
          (g) => queue.enqueue(GATEWAY_PREFIX + keyOf(g)),
          { discard: true }
        )
      ),
      Effect.catchAll((status) => Effect.logDebug(`could not list Gateways: ${status.message ?? status.code}`))
    )

    const changes = (type: string) => type === "ADDED" || type === "MODIFIED" || type === "DELETED"

    yield* Effect.forkScoped(followWatch(store, HttpRouteResource, (event) => {
      if (!changes(event.type)) return Effect.void
      // A route moving between Gateways changes both Gateways' attachedRoutes; the old one is not in the event.
      return Effect.zipRight(
        event.type === "DELETED" ? Effect.void : queue.enqueue(ROUTE_PREFIX + keyOf(event.object as KubeObject)),
        enqueueGateways
      )
    }))

    yield* Effect.forkScoped(followWatch(store, GatewayResource, (event) => {
      if (!changes(event.type)) return Effect.void
      const gateway = event.object as Gateway
      // A Gateway that leaves our class, or goes away, still changes which routes we must answer for.
      return Effect.zipRight(
        event.type !== "DELETED" && gateway.spec?.gatewayClassName === identity.gatewayClassName
          ? queue.enqueue(GATEWAY_PREFIX + keyOf(gateway))
          : Effect.void,
        enqueueRoutes(undefined)
      )
    }))

    yield* Effect.forkScoped(followWatch(store, ServiceResource, (event) =>
      // Only routes in the Service's namespace can resolve to it: cross-namespace refs are refused anyway.
      changes(event.type) ? enqueueRoutes((event.object as KubeObject).metadata?.namespace) : Effect.void))

    yield* Effect.forkScoped(followWatch(store, NamespaceResource, (event) =>
      // Namespace labels decide `allowedRoutes.namespaces.from: Selector`.
      changes(event.type) ? Effect.zipRight(enqueueRoutes(undefined), enqueueGateways) : Effect.void))
  })
