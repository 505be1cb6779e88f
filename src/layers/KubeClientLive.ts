/**
 * The live KubeClient on @kubernetes/client-node 1.4.0's kubeconfig and credentials:
 * server-side apply, get, delete and list as plain REST requests over node:http
 * (internal/RestTransport), watches as raw connections (internal/WatchConnection),
 * every answer returned as the server's own JSON and every failure as a `KubeError`.
 * Calls and watches reuse keep-alive connections from bounded pools, under one set of
 * time limits and retries.
 */
import type * as k8s from "@kubernetes/client-node"
import { Duration, Effect, Layer, type Schedule, type Scope } from "effect"
import { KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { clusterQueries } from "./kubeClient/ClusterQueries.js"
import { type ConnectionPools, makeConnectionPools } from "./kubeClient/ConnectionPool.js"
import { liveLeaseCalls, livePodWrites } from "./kubeClient/ControllerWrites.js"
import { liveEventWrites } from "./kubeClient/EventWrites.js"
import { cacheExecCredentials } from "./kubeClient/ExecCredentialCache.js"
import {
  clearTextCredentialsWarning,
  clientNodeView,
  KubeConfigError,
  type KubeConfigOptions,
  loadKubeConfig,
  shownServer,
  validate
} from "./kubeClient/KubeConfigLoading.js"
import { MAX_LIST_PAGES, objectCalls } from "./kubeClient/ObjectCalls.js"
import { makeCaller, makeRequests } from "./kubeClient/Requests.js"
import { makeRestTransport } from "./kubeClient/RestTransport.js"
import { makeKubeClient } from "./kubeClient/ResumableWatch.js"
import { fromTransportError } from "./kubeClient/TransportErrors.js"
import { makeWatchFrom } from "./kubeClient/WatchFrom.js"
import { type CallLimits, callLimits, DEFAULT_API_TIMEOUT, transientRetrySchedule } from "./KubeRetry.js"

export { fromTransportError, KubeConfigError, type KubeConfigOptions, loadKubeConfig, MAX_LIST_PAGES }

export interface KubeClientLiveOptions {
  /** Retries for transient failures of each call; `transientRetrySchedule` by default. */
  readonly retrySchedule?: Schedule.Schedule<unknown, KubeError>
  /** Reconnect backoff for `watch`; `watchReconnectSchedule` by default. */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, KubeError>
  /**
   * The most one call may take, retries included; each attempt gets half of it (see
   * `callLimits`). For watches it bounds only the wait for response headers. Unset:
   * 20 s; `layerConfig` takes `RouterConfig.apiTimeoutMs` (`SESSION_API_TIMEOUT_MS`).
   */
  readonly apiTimeout?: Duration.DurationInput
}

/** The call limits `options` set: their `apiTimeout` (named as the option), else 20 s. */
const limitsOf = (options: KubeClientLiveOptions): CallLimits =>
  options.apiTimeout !== undefined
    ? callLimits(options.apiTimeout, "KubeClientLive's apiTimeout option")
    : callLimits(DEFAULT_API_TIMEOUT)

/**
 * The live service over a loaded KubeConfig. Fails if its current context does not
 * name a usable cluster. Its idle pooled connections close after 30 s; the layers
 * close them all when they are released.
 */
export const make = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions = {}
): Effect.Effect<KubeClient.Service, KubeConfigError> =>
  Effect.suspend(() => makeOver(kc, options, limitsOf(options), makeConnectionPools()))

/** `make`, with its connections closed when the scope closes. */
const makeScoped = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions,
  limits: CallLimits = limitsOf(options)
): Effect.Effect<KubeClient.Service, KubeConfigError, Scope.Scope> =>
  Effect.acquireRelease(Effect.sync(makeConnectionPools), (pools) => Effect.sync(() => pools.close())).pipe(
    Effect.flatMap((pools) => makeOver(kc, options, limits, pools))
  )

const makeOver = (
  given: k8s.KubeConfig,
  options: KubeClientLiveOptions,
  limits: CallLimits,
  pools: ConnectionPools
): Effect.Effect<KubeClient.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const address = yield* validate(given, "the given KubeConfig")
    const clearText = clearTextCredentialsWarning(given)
    if (clearText !== undefined) yield* Effect.logWarning(clearText)
    const kc = clientNodeView(given)
    cacheExecCredentials(kc)
    // What every message names: the address without its userinfo.
    const server = shownServer(address)
    const { limited, request } = makeRequests(
      makeCaller(makeRestTransport(kc, pools, address), server, limits, options.retrySchedule ?? transientRetrySchedule)
    )
    return {
      ...makeKubeClient(
        { ...objectCalls(request, server), watchFrom: makeWatchFrom({ kc, pools, address, server, limited }) },
        options.reconnectSchedule !== undefined ? { reconnectSchedule: options.reconnectSchedule } : {}
      ),
      cluster: clusterQueries(kc, server, request),
      // The recorder bounds its own writes (a few at a time): they do not queue behind a
      // burst of publishes, whose sessions' Events would otherwise be dropped by the thousand.
      events: liveEventWrites((ctx, call) => request(ctx, call, { unadmitted: true })),
      pods: livePodWrites(request),
      // A renewal that waited behind a burst of publishes could outlive the lease it renews.
      leases: liveLeaseCalls((ctx, call) => request(ctx, call, { unadmitted: true }))
    }
  })

/** The live layer over an already loaded KubeConfig (tests, embedding). */
export const layerFromKubeConfig = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions = {}
): Layer.Layer<KubeClient, KubeConfigError> => Layer.scoped(KubeClient, makeScoped(kc, options))

/**
 * The live layer: the kubeconfig from `kubeconfigPath` or the default chain
 * (KUBECONFIG, ~/.kube/config, in-cluster), optionally another `context`. A missing
 * or unusable kubeconfig fails the layer with a `KubeConfigError` naming it.
 */
export const layer = (
  options: KubeConfigOptions & KubeClientLiveOptions = {}
): Layer.Layer<KubeClient, KubeConfigError> =>
  Layer.scoped(KubeClient, Effect.flatMap(loadKubeConfig(options), (kc) => makeScoped(kc, options)))

/** The client over `kc`, its time limit `RouterConfig`'s, named as the setting that sets it. */
const makeConfigured = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions
): Effect.Effect<KubeClient.Service, KubeConfigError, RouterConfig | Scope.Scope> =>
  Effect.flatMap(RouterConfig, (config) => makeScoped(kc, options, callLimits(Duration.millis(config.apiTimeoutMs))))

/**
 * `layer`, its time limit `RouterConfig`'s (`SESSION_API_TIMEOUT_MS`), named so in the
 * failures it bounds: the client a runner provides beside `RouterConfigLive`.
 */
export const layerConfig = (
  options: KubeConfigOptions & Omit<KubeClientLiveOptions, "apiTimeout"> = {}
): Layer.Layer<KubeClient, KubeConfigError, RouterConfig> =>
  Layer.scoped(KubeClient, Effect.flatMap(loadKubeConfig(options), (kc) => makeConfigured(kc, options)))

/** `layerFromKubeConfig`, its time limit `RouterConfig`'s, as `layerConfig` has it. */
export const layerConfigFromKubeConfig = (
  kc: k8s.KubeConfig,
  options: Omit<KubeClientLiveOptions, "apiTimeout"> = {}
): Layer.Layer<KubeClient, KubeConfigError, RouterConfig> => Layer.scoped(KubeClient, makeConfigured(kc, options))

/**
 * `KubeClientLive.layer`, `.layerConfig`, `.layerFromKubeConfig`, `.layerConfigFromKubeConfig`,
 * `.make`, `.loadKubeConfig` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const KubeClientLive = {
  layer,
  layerConfig,
  layerFromKubeConfig,
  layerConfigFromKubeConfig,
  make,
  loadKubeConfig
} as const
