/**
 * LocalCluster: an API server in process, for the demo and for tests. It holds the
 * store, serves it over HTTP on 127.0.0.1 with a kubeconfig to reach it, offers the
 * same cluster as an in-memory KubeClient, and runs the simulated controllers.
 */
import { Context, Data, Effect, Layer, type Scope, Stream } from "effect"
import { type KubeClient, type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { stringify } from "yaml"
import { ADMIN, type ClusterAccess, type Credential, makeClusterAccess } from "./ClusterAccess.js"
import { writeCredentialFile } from "./CredentialFile.js"
import * as EndpointSliceController from "./EndpointSliceController.js"
import { type Faults, makeFaults } from "./Faults.js"
import * as GarbageCollector from "./GarbageCollector.js"
import { type HttpApiError, serve } from "./HttpApi.js"
import * as InMemoryKubeClient from "./InMemoryKubeClient.js"
import { makeMemoryStore, type MemoryStore, type MemoryStoreOptions } from "./MemoryStore.js"
import { type ClusterMetrics, makeMetrics } from "./Metrics.js"
import { servedResources } from "./ServedResources.js"
import type { ServerLifecycle } from "./ServerLifecycle.js"

const GATEWAY_API_GROUP = "gateway.networking.k8s.io"

/**
 * What controllers and clients need of a cluster: its store and its faults. Tests
 * steer failures through `faults`: `faults.add(spec)` for per-request faults (which
 * may start `after` N requests or `from` an instant), `faults.server` for the API
 * server process (`pause` / `resume`, `stop` / `restart`).
 */
export interface ClusterHandle {
  readonly store: MemoryStore
  readonly faults: Faults
  /**
   * What the API server counted: `apiserver_request_total` by verb, resource and code
   * for both faces (the in-memory client's calls under the verbs HTTP would use), watches
   * open, and the HTTP face's TCP connections. `GET /metrics` serves the same counters.
   * The simulated controllers reach the store directly and are not counted.
   */
  readonly metrics: ClusterMetrics
}

/**
 * Something that runs against the cluster for as long as it lives: the simulated
 * ingress and gateway controllers, the data plane. Started in order once the store
 * exists, each in its own fiber, and stopped when the cluster's scope closes.
 */
export type LocalClusterController = (cluster: ClusterHandle) => Effect.Effect<unknown, never, Scope.Scope>

/** How a LocalCluster is set up: the store's options plus its HTTP face and controllers. */
export interface LocalClusterOptions extends MemoryStoreOptions {
  /** False: the Gateway API CRDs are not installed, and every type of the group answers 404. Default true. */
  readonly gatewayApi?: boolean
  /** Port on 127.0.0.1 for the HTTP API; 0 (the default) picks a free one. */
  readonly port?: number
  /** The controllers to run (see `LocalClusterController`). */
  readonly controllers?: ReadonlyArray<LocalClusterController>
  /** Names used in the kubeconfig; default `local-cluster`. */
  readonly contextName?: string
  /** The namespace the kubeconfig's context selects; default `default`. */
  readonly contextNamespace?: string
  /**
   * Run kube-controller-manager's garbage collector and EndpointSlice controller, as
   * every real cluster does: objects whose owners are gone are deleted (so objects
   * naming a Pod uid that does not exist go at once), and each selecting Service gets
   * an EndpointSlice of the Pods it matches. Default false: most tests publish for
   * Pods they never create.
   */
  readonly controllerManager?: boolean
  /**
   * Serve HTTPS with a CA made at start and authenticate every request, as a real API
   * server does: client certificates, bearer tokens, exec plugins (see `kubeconfigAs`).
   * `rbac: true` also authorizes every request by RBAC (Roles and bindings in the store,
   * bootstrap ones written at start); without it everything authenticated is allowed.
   * Unset (the default): plain HTTP, no authentication, everything allowed.
   */
  readonly auth?: { readonly rbac?: boolean }
}

/** Writing the kubeconfig failed. */
export class KubeconfigWriteError extends Data.TaggedError("KubeconfigWriteError")<{
  readonly reason: string
  readonly cause?: unknown
}> {}

/** The running cluster's service interface. */
export declare namespace LocalCluster {
  export interface Service extends ClusterHandle {
    /** `http://127.0.0.1:<port>`, or `https://` with `auth`. */
    readonly url: string
    /** A kubeconfig (YAML) whose current context reaches this cluster (with `auth`, as the admin: group system:masters). */
    readonly kubeconfig: () => string
    /** With `auth`: the CA, and kubeconfigs for any user by any way of authenticating. */
    readonly access?: ClusterAccess
    /** A kubeconfig for `credential`'s user; without `auth` there is no one to be, and it is `kubeconfig()`. */
    readonly kubeconfigAs: (credential: Credential) => Effect.Effect<string>
    readonly writeKubeconfig: (path: string) => Effect.Effect<void, KubeconfigWriteError>
  }
}

/** A kubeconfig for a plain-HTTP server: client-node needs `skipTLSVerify` and a user entry. */
export const kubeconfigFor = (url: string, name = "local-cluster", namespace = "default"): string =>
  stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: url, "insecure-skip-tls-verify": true } }],
    users: [{ name: `${name}-user`, user: { token: "local-cluster" } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-user`, namespace } }],
    "current-context": name,
    preferences: {}
  })

/**
 * The store as the simulated controllers reach it: through the API server, so their
 * reads, writes and watch events wait while it is paused or down, as a real
 * controller's requests and retries would. The data plane keeps the store itself:
 * a proxy goes on serving what it was programmed with.
 */
const throughServer = (store: MemoryStore, server: ServerLifecycle): MemoryStore => {
  const gate = <F extends (...args: Array<any>) => Effect.Effect<any, any>>(call: F): F =>
    ((...args: Parameters<F>) => Effect.zipRight(server.awaitRunning, call(...args))) as F
  return {
    ...store,
    create: gate(store.create),
    replace: gate(store.replace),
    apply: gate(store.apply),
    replaceStatus: gate(store.replaceStatus),
    get: gate(store.get),
    list: gate(store.list),
    delete: gate(store.delete),
    watch: (resource, namespace, options) =>
      Stream.mapEffect(store.watch(resource, namespace, options), (event) => Effect.as(server.awaitRunning, event))
  }
}

const startControllers = (handle: ClusterHandle, controllers: ReadonlyArray<LocalClusterController> | undefined) => {
  const seen: ClusterHandle = { ...handle, store: throughServer(handle.store, handle.faults.server) }
  return Effect.forEach(controllers ?? [], (controller) => Effect.forkScoped(controller(seen)), { discard: true })
}

/** The cluster without its HTTP face: store, faults and controllers. */
export const makeInMemory = (options: LocalClusterOptions = {}): Effect.Effect<ClusterHandle, never, Scope.Scope> =>
  Effect.gen(function*() {
    const store = yield* makeMemoryStore({
      ...options,
      unserved: [
        ...(options.unserved ?? []),
        ...(options.gatewayApi === false ? servedResources.filter((r) => r.group === GATEWAY_API_GROUP) : [])
      ] as ReadonlyArray<ResourceType<KubeObject>>
    })
    const faults = yield* makeFaults
    const metrics = yield* makeMetrics
    const handle: ClusterHandle = { store, faults, metrics }
    const builtIn: ReadonlyArray<LocalClusterController> = options.controllerManager === true
      ? [({ store }) => GarbageCollector.run(store), ({ store }) => EndpointSliceController.run(store)]
      : []
    yield* startControllers(handle, [...builtIn, ...(options.controllers ?? [])])
    return handle
  })

/** The whole cluster: store, faults, controllers and the HTTP API, for the life of the scope. */
export const make = (
  options: LocalClusterOptions = {}
): Effect.Effect<LocalCluster.Service, HttpApiError, Scope.Scope> =>
  Effect.gen(function*() {
    const handle = yield* makeInMemory(options)
    const access = options.auth === undefined ? undefined : yield* makeClusterAccess(handle.store, options.auth)
    const api = yield* serve({
      store: handle.store,
      faults: handle.faults,
      metrics: handle.metrics,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(access !== undefined ? { tls: access.tls, security: access.security } : {})
    })
    const names = {
      ...(options.contextName !== undefined ? { name: options.contextName } : {}),
      ...(options.contextNamespace !== undefined ? { namespace: options.contextNamespace } : {})
    }
    const admin = access === undefined
      ? kubeconfigFor(api.url, options.contextName, options.contextNamespace)
      : yield* access.kubeconfigFor(api.url, ADMIN, names)
    const kubeconfig = () => admin
    return {
      ...handle,
      url: api.url,
      kubeconfig,
      ...(access !== undefined ? { access } : {}),
      kubeconfigAs: (
        credential
      ) => (access === undefined ? Effect.succeed(admin) : access.kubeconfigFor(api.url, credential, names)),
      writeKubeconfig: (path: string) =>
        Effect.tryPromise({
          try: () => writeCredentialFile(path, kubeconfig()),
          catch: (cause) =>
            new KubeconfigWriteError({
              reason: `cannot write the kubeconfig to ${path}: ${
                cause instanceof Error ? cause.message : String(cause)
              }`,
              cause
            })
        })
    }
  })

/** The in-memory KubeClient over a cluster, honouring its faults and counted in its metrics. */
export const layerKubeClient = (cluster: ClusterHandle): Layer.Layer<KubeClient> =>
  InMemoryKubeClient.layer(cluster.store, { faults: cluster.faults, metrics: cluster.metrics })

/** A running LocalCluster as a service. */
export class LocalCluster extends Context.Tag("session-routing/LocalCluster")<LocalCluster, LocalCluster.Service>() {
  static readonly make = make
  static readonly makeInMemory = makeInMemory
  static readonly layerKubeClient = layerKubeClient
  static readonly kubeconfigFor = kubeconfigFor
  /** The cluster for the life of the layer. */
  static readonly layer = (options: LocalClusterOptions = {}): Layer.Layer<LocalCluster, HttpApiError> =>
    Layer.scoped(LocalCluster, make(options))
  /** The in-memory KubeClient of the cluster in context. */
  static readonly layerKubeClientFromContext: Layer.Layer<KubeClient, never, LocalCluster> = Layer.unwrapEffect(
    Effect.map(LocalCluster, layerKubeClient)
  )
}
