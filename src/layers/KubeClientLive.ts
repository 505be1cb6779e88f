/**
 * The live KubeClient on @kubernetes/client-node 1.4.0: server-side apply, get, delete
 * and list through the client's typed APIs (internal/TypedApis), raw watch connections
 * over node:http (internal/WatchConnection), every answer returned as the server's own
 * JSON and every failure as a `KubeError`. Calls and watches reuse keep-alive
 * connections from bounded pools, under one set of time limits and retries.
 */
import * as k8s from "@kubernetes/client-node"
import { Duration, Effect, FiberRef, Layer, Option, type Schedule, type Scope, Stream } from "effect"
import type { ObjectList } from "../domain/Objects.js"
import { apiVersionOf, resourcePath, type ResourceType } from "../domain/Resources.js"
import {
  type ApplyOptions,
  currentTransientRetry,
  KubeClient,
  type KubeClientPrimitives,
  type RawWatchEvent,
  type ReadableObject
} from "../services/KubeClient.js"
import {
  describeRequest,
  fromResponse,
  Invalid,
  type KubeError,
  type RequestContext,
  requestContext,
  Unexpected
} from "../services/KubeError.js"
import { makeKubeClient } from "../services/ResumableWatch.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { clusterQueries } from "./internal/ClusterQueries.js"
import { type ConnectionPools, makeConnectionPools } from "./internal/ConnectionPool.js"
import { liveEventWrites } from "./internal/EventWrites.js"
import { KubeConfigError, type KubeConfigOptions, loadKubeConfig, validate } from "./internal/KubeConfigLoading.js"
import { observeRequest } from "./internal/RequestTelemetry.js"
import { fromTransportError, isApiException } from "./internal/TransportErrors.js"
import { applyBody, callMiddleware, families, type Family, parseJson, withTypeMeta } from "./internal/TypedApis.js"
import { openWatch, watchEvents } from "./internal/WatchConnection.js"
import { callLimits, DEFAULT_API_TIMEOUT, transientRetrySchedule, withinLimits } from "./KubeRetry.js"

export { fromTransportError, KubeConfigError, type KubeConfigOptions, loadKubeConfig }

export interface KubeClientLiveOptions {
  /** Retries for transient failures of each call; `transientRetrySchedule` by default. */
  readonly retrySchedule?: Schedule.Schedule<unknown, KubeError>
  /** Reconnect backoff for `watch`; `watchReconnectSchedule` by default. */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, KubeError>
  /**
   * The most one call may take, retries included; each attempt gets half of it (see
   * `callLimits`). For watches it bounds only the wait for response headers. Unset:
   * `RouterConfig.apiTimeoutMs` when a RouterConfig is provided beside this layer
   * (`SESSION_API_TIMEOUT_MS`), else 20 s.
   */
  readonly apiTimeout?: Duration.DurationInput
}

// ---------------------------------------------------------------------------
// The service

/**
 * The live service over a loaded KubeConfig. Fails if its current context does not
 * name a usable cluster. Its idle pooled connections close after 30 s; the layers
 * close them all when they are released.
 */
export const make = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions = {}
): Effect.Effect<KubeClient.Service, KubeConfigError> =>
  Effect.suspend(() => makeOver(kc, options, makeConnectionPools()))

/** `make`, with its connections closed when the scope closes. */
const makeScoped = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions
): Effect.Effect<KubeClient.Service, KubeConfigError, Scope.Scope> =>
  Effect.acquireRelease(Effect.sync(makeConnectionPools), (pools) => Effect.sync(() => pools.close())).pipe(
    Effect.flatMap((pools) => makeOver(kc, options, pools))
  )

const makeOver = (
  kc: k8s.KubeConfig,
  options: KubeClientLiveOptions,
  pools: ConnectionPools
): Effect.Effect<KubeClient.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const server = yield* validate(kc, "the given KubeConfig")
    const familyFor = families(kc, server, pools)
    const schedule = options.retrySchedule ?? transientRetrySchedule
    const configured = yield* Effect.serviceOption(RouterConfig)
    const limits = callLimits(
      options.apiTimeout ??
        Option.match(configured, {
          onNone: () => DEFAULT_API_TIMEOUT,
          onSome: (config) => Duration.millis(config.apiTimeoutMs)
        })
    )

    /** One call under its time limits, retried unless the fiber turned the client's retries off. */
    const limited = <A>(ctx: RequestContext, self: Effect.Effect<A, KubeError>) =>
      Effect.flatMap(FiberRef.get(currentTransientRetry), (retry) =>
        withinLimits(self, { target: { what: describeRequest(ctx), server }, limits, retry, schedule }))

    /**
     * One request, its raw JSON answer parsed; timed out per attempt, retried while
     * transient, each attempt counted and the whole call in one span.
     */
    const request = (
      ctx: RequestContext,
      run: (options: k8s.ConfigurationOptions) => Promise<unknown>,
      contentType?: k8s.PatchStrategy,
      extra: { readonly dryRun?: boolean } = {}
    ): Effect.Effect<unknown, KubeError> =>
      observeRequest(ctx, extra, (observe) =>
        Effect.suspend(() => {
          const captured: { text?: string; code?: number } = {}
          const attempt = Effect.tryPromise({
            try: (signal) => {
              const base: k8s.ConfigurationOptions = {
                middleware: [callMiddleware(signal, captured)],
                middlewareMergeStrategy: "append"
              }
              return run(contentType !== undefined ? k8s.setHeaderOptions("Content-Type", contentType, base) : base)
            },
            catch: (error): KubeError =>
              isApiException(error)
                ? fromResponse(ctx, error.code, captured.text ?? error.body, error.headers["retry-after"], error)
                : captured.text !== undefined
                // An answer arrived, and the typed API could not deserialise it.
                ? new Unexpected({
                  reason: `the API server at ${server} answered ${
                    describeRequest(ctx)
                  } with a body the client could not read`
                })
                : fromTransportError(ctx, server, error)
          })
          return observe(
            attempt.pipe(Effect.flatMap(() =>
              parseJson(ctx, server, captured.text)
            )),
            () => captured.code ?? 200
          )
        }).pipe((self) => limited(ctx, self)))

    /** One call on a resource type through its typed API. */
    const call = (
      ctx: RequestContext,
      resource: ResourceType<unknown>,
      run: (family: Family, options: k8s.ConfigurationOptions) => Promise<unknown>,
      contentType?: k8s.PatchStrategy,
      extra: { readonly dryRun?: boolean } = {}
    ): Effect.Effect<unknown, KubeError> =>
      Effect.flatMap(
        familyFor(resource),
        (family) => request(ctx, (options) => run(family, options), contentType, extra)
      )

    const apply: KubeClientPrimitives["apply"] = (resource, object, applyOptions?: ApplyOptions) => {
      const name = object.metadata?.name
      const namespace = object.metadata?.namespace
      const ctx = requestContext("apply", resource, namespace ?? "", name)
      if (name === undefined || name === "" || namespace === undefined || namespace === "") {
        const field = name === undefined || name === "" ? "metadata.name" : "metadata.namespace"
        return Effect.fail(
          new Invalid({
            reason: `cannot ${describeRequest(ctx)}: ${field} is required`,
            causes: [{ reason: "FieldValueRequired", field, message: "Required value" }]
          })
        )
      }
      const params = {
        force: applyOptions?.force ?? true,
        ...(applyOptions?.dryRun === true ? { dryRun: "All" } : {})
      }
      return call(
        ctx,
        resource,
        (family, opts) => family.apply(namespace, name, applyBody(resource, object), params, opts),
        k8s.PatchStrategy.ServerSideApply,
        { dryRun: applyOptions?.dryRun === true }
      ) as Effect.Effect<never, KubeError>
    }

    const get: KubeClientPrimitives["get"] = (resource, namespace, name) =>
      call(
        requestContext("get", resource, namespace, name),
        resource,
        (family, opts) => family.get(namespace, name, opts)
      ) as Effect.Effect<
        never,
        KubeError
      >

    const del: KubeClientPrimitives["delete"] = (resource, namespace, name) =>
      Effect.asVoid(
        call(
          requestContext("delete", resource, namespace, name),
          resource,
          (family, opts) => family.delete(namespace, name, opts)
        )
      )

    const list: KubeClientPrimitives["list"] = <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      listOptions?: { readonly labelSelector?: string }
    ) =>
      call(
        requestContext("list", resource, namespace),
        resource,
        (family, opts) => family.list(namespace, listOptions?.labelSelector, opts)
      ).pipe(
        Effect.map((raw): ObjectList<A> => {
          const answer = raw as Partial<ObjectList<A>>
          return {
            apiVersion: answer.apiVersion ?? apiVersionOf(resource),
            kind: answer.kind ?? resource.listKind,
            metadata: answer.metadata ?? {},
            items: (answer.items ?? []).map((item) => withTypeMeta(resource, item))
          }
        })
      )

    const watchFrom: KubeClientPrimitives["watchFrom"] = <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      watchOptions: { readonly labelSelector?: string; readonly resourceVersion: string }
    ): Stream.Stream<RawWatchEvent<A>, KubeError> => {
      const ctx = requestContext("watch", resource, namespace)
      const url = new URL(server + resourcePath(resource, namespace))
      url.searchParams.set("watch", "true")
      url.searchParams.set("allowWatchBookmarks", "true")
      url.searchParams.set("resourceVersion", watchOptions.resourceVersion)
      if (watchOptions.labelSelector !== undefined) url.searchParams.set("labelSelector", watchOptions.labelSelector)
      return Stream.unwrapScoped(
        Effect.gen(function*() {
          // Lives as long as the stream: closing it (consumer done, fiber
          // interrupted) aborts the connection.
          const connection = yield* Effect.acquireRelease(
            Effect.sync(() => new AbortController()),
            (controller) => Effect.sync(() => controller.abort())
          )
          // The span and the count cover the opening (until the headers), not the stream after it.
          const opening = yield* observeRequest(ctx, {}, (observe) =>
            observe(
              Effect.tryPromise({
                try: (signal) => openWatch(kc, pools, url, AbortSignal.any([signal, connection.signal])),
                catch: (error) => fromTransportError(ctx, server, error)
              }).pipe(
                Effect.flatMap((opened) =>
                  opened.ok
                    ? Effect.succeed(opened.response)
                    : Effect.fail(fromResponse(ctx, opened.code, opened.text, opened.retryAfter))
                )
              ),
              () => 200
            ).pipe((self) => limited(ctx, self)))
          return watchEvents<A>(opening, ctx, server, (error) => fromTransportError(ctx, server, error))
        })
      )
    }

    return {
      ...makeKubeClient(
        { apply, get, delete: del, list, watchFrom },
        options.reconnectSchedule !== undefined ? { reconnectSchedule: options.reconnectSchedule } : {}
      ),
      cluster: clusterQueries(kc, server, pools, request),
      events: liveEventWrites(kc, server, pools, request)
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

/** `KubeClientLive.layer`, `.layerFromKubeConfig`, `.make`, `.loadKubeConfig` under one name. */
export const KubeClientLive = { layer, layerFromKubeConfig, make, loadKubeConfig } as const
