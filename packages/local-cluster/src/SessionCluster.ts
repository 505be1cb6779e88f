/**
 * A LocalCluster set up the way session routing expects a real one: the session
 * namespace, an IngressClass and a GatewayClass with a Gateway, each with its
 * controller, and a data plane that serves what they programmed. The demo, the
 * `cluster` command and the end-to-end tests all start from here.
 */
import { Effect, type Scope } from "effect"
import {
  apiVersionOf,
  type Gateway,
  type GatewayClass,
  type GatewayListener,
  type IngressClass,
  type KubeObject,
  type ResourceType
} from "session-routing/kubernetes"
import * as DataPlane from "./DataPlane.js"
import * as EndpointSliceController from "./EndpointSliceController.js"
import * as GatewayController from "./GatewayController.js"
import type { GatewayAddress } from "./GatewayStatus.js"
import type { HttpApiError } from "./HttpApi.js"
import * as IngressController from "./IngressController.js"
import { LocalCluster, type LocalClusterController } from "./LocalCluster.js"
import type { ControllerDelay } from "./Reconciler.js"
import { GatewayClassResource, GatewayResource, IngressClassResource, NamespaceResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

export interface IngressSetup {
  /** Default `local`. */
  readonly className?: string
  /** Before it publishes an address, or `"never"` (the silent-404 cluster). Default 1 s. */
  readonly delay?: ControllerDelay
  /** `spec.controller` of its IngressClass; default `session-routing.dev/local-ingress`. */
  readonly controllerName?: string
  /** Mark its IngressClass default (and claim Ingresses that name no class). Default false. */
  readonly defaultClass?: boolean
}

export interface GatewaySetup {
  /** GatewayClass name; default `local`. */
  readonly className?: string
  /** Default `sessions`. */
  readonly gatewayName?: string
  /** Default: the session namespace. */
  readonly gatewayNamespace?: string
  /** The listener's `allowedRoutes.namespaces.from`; default `Same`. */
  readonly allowedRoutes?: "Same" | "All"
  /** The listener hostname; default `*.<baseDomain>`. */
  readonly listenerHostname?: string
  /** Before it writes status, or `"never"` (no controller attaches routes). Default 1 s. */
  readonly delay?: ControllerDelay
  /** `spec.controllerName` of its GatewayClass, and of its entries in route status; default `session-routing.dev/local-gateway`. */
  readonly controllerName?: string
  /** The Gateway's listeners, replacing the one HTTP listener `allowedRoutes` and `listenerHostname` describe. */
  readonly listeners?: ReadonlyArray<GatewayListener>
  /** False: the Gateway names a GatewayClass that does not exist. Default true. */
  readonly createClass?: boolean
  /** False: the controller programs the Gateway and writes no route status. Default true. */
  readonly routeStatus?: boolean
  /** What the Gateway publishes in `status.addresses`; none leaves it unprogrammed. */
  readonly addresses?: ReadonlyArray<GatewayAddress>
}

export interface SessionClusterOptions {
  /** The session namespace to create; default `telo-sessions`. */
  readonly namespace?: string
  /** Hosts the Gateway listener covers; default `sessions.localtest.me`. */
  readonly baseDomain?: string
  /** The ingress controller; `false` runs none (the IngressClass is still created). */
  readonly ingress?: IngressSetup | false
  /** The gateway controller; `false` runs none (the GatewayClass and Gateway are still created). */
  readonly gateway?: GatewaySetup | false
  /** Port of the HTTP API on 127.0.0.1; default 0 (any free port). */
  readonly port?: number
  /** Start the data plane (a Host-routing proxy on 127.0.0.1); default true. */
  readonly dataPlane?: boolean
  /**
   * Run the garbage collector and the EndpointSlice controller (see `LocalClusterOptions`):
   * objects are then collected when their Pod goes, or at once if it never existed.
   * Default false.
   */
  readonly controllerManager?: boolean
  /**
   * Run the EndpointSlice controller without the garbage collector (`controllerManager`
   * runs both): a session Service's ready Pods take its traffic, while objects owned by
   * a Pod that does not exist stay. Default false.
   */
  readonly endpointSlices?: boolean
  /** Labels of the session namespace (what a listener's `allowedRoutes` Selector matches). */
  readonly namespaceLabels?: Readonly<Record<string, string>>
  /** More IngressClasses, served by no controller (a class of another cluster, a second default). */
  readonly ingressClasses?: ReadonlyArray<IngressClass>
  /** HTTPS, authentication and (with `rbac`) authorization, as `LocalClusterOptions.auth`; default off. */
  readonly auth?: { readonly rbac?: boolean }
}

export interface SessionCluster {
  readonly cluster: LocalCluster.Service
  /** Present unless `dataPlane: false`. */
  readonly dataPlane: DataPlane.DataPlane | undefined
  readonly namespace: string
  readonly baseDomain: string
  readonly ingressClassName: string
  readonly gateway: { readonly namespace: string; readonly name: string; readonly className: string }
}

export const DEFAULT_SESSION_NAMESPACE = "telo-sessions"
export const DEFAULT_BASE_DOMAIN = "sessions.localtest.me"
export const DEFAULT_CLASS_NAME = "local"
export const DEFAULT_GATEWAY_NAME = "sessions"

/** Creates an object in a fresh store; a failure is a bug in the seed itself, not a cluster answer. */
export const seed = <A extends KubeObject>(
  store: ClusterStore,
  resource: ResourceType<A>,
  namespace: string | undefined,
  body: A
): Effect.Effect<A> => Effect.orDie(store.create(resource, namespace, body))

/** A GatewayClass naming the controller that implements it. */
export const gatewayClassFor = (name: string, controllerName: string): GatewayClass => ({
  apiVersion: apiVersionOf(GatewayClassResource),
  kind: GatewayClassResource.kind,
  metadata: { name },
  spec: { controllerName }
})

/** A Gateway with one plain-HTTP listener on port 80 for `hostname`. */
export const gatewayFor = (options: {
  readonly name: string
  readonly namespace: string
  readonly className: string
  readonly hostname: string
  readonly allowedRoutes: "Same" | "All"
  /** Replaces the one HTTP listener the other options describe. */
  readonly listeners?: ReadonlyArray<GatewayListener>
}): Gateway => ({
  apiVersion: apiVersionOf(GatewayResource),
  kind: GatewayResource.kind,
  metadata: { name: options.name, namespace: options.namespace },
  spec: {
    gatewayClassName: options.className,
    listeners: options.listeners ?? [
      {
        name: "http",
        protocol: "HTTP",
        port: 80,
        hostname: options.hostname,
        allowedRoutes: { namespaces: { from: options.allowedRoutes } }
      }
    ]
  }
})

/** Starts the cluster, its controllers and its data plane for the life of the scope. */
export const make = (
  options: SessionClusterOptions = {}
): Effect.Effect<SessionCluster, HttpApiError | DataPlane.DataPlaneError, Scope.Scope> =>
  Effect.gen(function*() {
    const namespace = options.namespace ?? DEFAULT_SESSION_NAMESPACE
    const baseDomain = options.baseDomain ?? DEFAULT_BASE_DOMAIN
    const ingress = options.ingress === false ? undefined : (options.ingress ?? {})
    const gatewaySetup = options.gateway === false ? undefined : (options.gateway ?? {})
    const ingressClassName = ingress?.className ?? DEFAULT_CLASS_NAME
    const gatewayClassName = gatewaySetup?.className ?? DEFAULT_CLASS_NAME
    const gateway = {
      namespace: gatewaySetup?.gatewayNamespace ?? namespace,
      name: gatewaySetup?.gatewayName ?? DEFAULT_GATEWAY_NAME,
      className: gatewayClassName
    }

    const controllers: Array<LocalClusterController> = []
    if (ingress !== undefined) {
      controllers.push(({ store }) =>
        IngressController.run(store, {
          className: ingressClassName,
          ...(ingress.delay !== undefined ? { delay: ingress.delay } : {}),
          ...(ingress.controllerName !== undefined ? { controllerName: ingress.controllerName } : {}),
          ...(ingress.defaultClass !== undefined ? { defaultClass: ingress.defaultClass } : {})
        })
      )
    }
    if (gatewaySetup !== undefined) {
      controllers.push(({ store }) =>
        GatewayController.run(store, {
          gatewayClassName,
          ...(gatewaySetup.controllerName !== undefined ? { controllerName: gatewaySetup.controllerName } : {}),
          ...(gatewaySetup.delay !== undefined ? { delay: gatewaySetup.delay } : {}),
          ...(gatewaySetup.routeStatus !== undefined ? { routeStatus: gatewaySetup.routeStatus } : {}),
          ...(gatewaySetup.addresses !== undefined ? { addresses: gatewaySetup.addresses } : {})
        })
      )
    }

    if (options.endpointSlices === true && options.controllerManager !== true) {
      controllers.push(({ store }) => EndpointSliceController.run(store))
    }

    const cluster = yield* LocalCluster.make({
      namespaces: [...new Set([namespace, gateway.namespace])],
      controllers,
      contextNamespace: namespace,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.controllerManager !== undefined ? { controllerManager: options.controllerManager } : {}),
      ...(options.auth !== undefined ? { auth: options.auth } : {})
    })
    const store = cluster.store

    if (options.namespaceLabels !== undefined) {
      const current = yield* Effect.orDie(store.get(NamespaceResource, undefined, namespace))
      yield* Effect.orDie(store.replace(NamespaceResource, undefined, namespace, {
        ...current,
        metadata: { ...current.metadata, labels: { ...current.metadata?.labels, ...options.namespaceLabels } }
      }))
    }
    yield* seed(
      store,
      IngressClassResource,
      undefined,
      IngressController.ingressClassFor({
        className: ingressClassName,
        ...(ingress?.controllerName !== undefined ? { controllerName: ingress.controllerName } : {}),
        ...(ingress?.defaultClass !== undefined ? { defaultClass: ingress.defaultClass } : {})
      })
    )
    for (const extra of options.ingressClasses ?? []) yield* seed(store, IngressClassResource, undefined, extra)
    if (gatewaySetup?.createClass !== false) {
      yield* seed(
        store,
        GatewayClassResource,
        undefined,
        gatewayClassFor(
          gatewayClassName,
          gatewaySetup?.controllerName ?? GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME
        )
      )
    }
    yield* seed(
      store,
      GatewayResource,
      gateway.namespace,
      gatewayFor({
        name: gateway.name,
        namespace: gateway.namespace,
        className: gatewayClassName,
        hostname: gatewaySetup?.listenerHostname ?? `*.${baseDomain}`,
        allowedRoutes: gatewaySetup?.allowedRoutes ?? "Same",
        ...(gatewaySetup?.listeners !== undefined ? { listeners: gatewaySetup.listeners } : {})
      })
    )

    const dataPlane = options.dataPlane === false
      ? undefined
      : yield* DataPlane.make(store, {
        ingressClass: { className: ingressClassName },
        ...(gatewaySetup?.controllerName !== undefined ? { controllerName: gatewaySetup.controllerName } : {})
      })

    return { cluster, dataPlane, namespace, baseDomain, ingressClassName, gateway }
  })
