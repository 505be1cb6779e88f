/**
 * The live KubeClient on @kubernetes/client-node 1.4.0: server-side apply, get, delete
 * and list through the client's typed APIs, raw watch connections over node:http, every
 * answer returned as the server's own JSON and every failure as a `KubeError`. Calls
 * and watches reuse keep-alive connections from bounded pools.
 */
import * as k8s from "@kubernetes/client-node"
import { Duration, Effect, FiberRef, Layer, Option, type Schedule, type Scope, Stream } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import type { KubeObject, ObjectList } from "../domain/Objects.js"
import { apiVersionOf, qualifiedName, resourcePath, type ResourceType } from "../domain/Resources.js"
import {
  type ApplyOptions,
  type ClusterQueries,
  currentTransientRetry,
  FIELD_MANAGER,
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
  Unexpected
} from "../services/KubeError.js"
import { makeKubeClient } from "../services/ResumableWatch.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { apiConfiguration, type ConnectionPools, makeConnectionPools } from "./internal/ConnectionPool.js"
import { liveEventWrites } from "./internal/EventWrites.js"
import { KubeConfigError, type KubeConfigOptions, loadKubeConfig, validate } from "./internal/KubeConfigLoading.js"
import { observeRequest } from "./internal/RequestTelemetry.js"
import { fromTransportError, isApiException } from "./internal/TransportErrors.js"
import { watchEvents } from "./internal/WatchBody.js"
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
// Calls through the typed APIs

/**
 * Per-call middleware: `pre` hands the fiber's abort signal to the request, so
 * interrupting the fiber cancels it; `post` keeps the raw body, because the typed
 * APIs turn answers into model instances (timestamps become Dates, unknown fields
 * vanish) and error bodies into whatever `getBodyAsAny` makes of them.
 */
const callMiddleware = (signal: AbortSignal, captured: { text?: string; code?: number }): k8s.ObservableMiddleware => ({
  pre: (request) => {
    request.setSignal(signal)
    return new k8s.Observable(Promise.resolve(request))
  },
  post: (response) =>
    new k8s.Observable(
      response.body.text().then((text) => {
        captured.text = text
        captured.code = response.httpStatusCode
        return new k8s.ResponseContext(response.httpStatusCode, response.headers, {
          text: () => Promise.resolve(text),
          binary: () => Promise.resolve(Buffer.from(text))
        })
      })
    )
})

interface Family {
  readonly apply: (
    namespace: string,
    name: string,
    body: KubeObject,
    params: { readonly dryRun?: string; readonly force: boolean },
    options: k8s.ConfigurationOptions
  ) => Promise<unknown>
  readonly get: (namespace: string, name: string, options: k8s.ConfigurationOptions) => Promise<unknown>
  readonly delete: (namespace: string, name: string, options: k8s.ConfigurationOptions) => Promise<unknown>
  readonly list: (
    namespace: string,
    labelSelector: string | undefined,
    options: k8s.ConfigurationOptions
  ) => Promise<unknown>
}

const selector = (labelSelector: string | undefined) => (labelSelector !== undefined ? { labelSelector } : {})

const families = (kc: k8s.KubeConfig, server: string, pools: ConnectionPools) => {
  const configuration = apiConfiguration(kc, server, pools)
  const core = new k8s.CoreV1Api(configuration)
  const networking = new k8s.NetworkingV1Api(configuration)
  const custom = new k8s.CustomObjectsApi(configuration)
  const services: Family = {
    apply: (namespace, name, body, params, options) =>
      core.patchNamespacedService({ namespace, name, body, fieldManager: FIELD_MANAGER, ...params }, options),
    get: (namespace, name, options) => core.readNamespacedService({ namespace, name }, options),
    delete: (namespace, name, options) => core.deleteNamespacedService({ namespace, name }, options),
    list: (namespace, labelSelector, options) =>
      core.listNamespacedService({ namespace, ...selector(labelSelector) }, options)
  }
  const ingresses: Family = {
    apply: (namespace, name, body, params, options) =>
      networking.patchNamespacedIngress({ namespace, name, body, fieldManager: FIELD_MANAGER, ...params }, options),
    get: (namespace, name, options) => networking.readNamespacedIngress({ namespace, name }, options),
    delete: (namespace, name, options) => networking.deleteNamespacedIngress({ namespace, name }, options),
    list: (namespace, labelSelector, options) =>
      networking.listNamespacedIngress({ namespace, ...selector(labelSelector) }, options)
  }
  const customFamily = (resource: ResourceType<unknown>): Family => {
    const { group, plural, version } = resource
    return {
      apply: (namespace, name, body, params, options) =>
        custom.patchNamespacedCustomObject(
          { group, version, plural, namespace, name, body, fieldManager: FIELD_MANAGER, ...params },
          options
        ),
      get: (namespace, name, options) =>
        custom.getNamespacedCustomObject({ group, version, plural, namespace, name }, options),
      delete: (namespace, name, options) =>
        custom.deleteNamespacedCustomObject({ group, version, plural, namespace, name }, options),
      list: (namespace, labelSelector, options) =>
        custom.listNamespacedCustomObject({ group, version, plural, namespace, ...selector(labelSelector) }, options)
    }
  }
  // Cluster-scoped custom resources (GatewayClass): the namespace argument is ignored.
  const clusterCustomFamily = (resource: ResourceType<unknown>): Family => {
    const { group, plural, version } = resource
    return {
      apply: (_namespace, name, body, params, options) =>
        custom.patchClusterCustomObject(
          { group, version, plural, name, body, fieldManager: FIELD_MANAGER, ...params },
          options
        ),
      get: (_namespace, name, options) => custom.getClusterCustomObject({ group, version, plural, name }, options),
      delete: (_namespace, name, options) =>
        custom.deleteClusterCustomObject({ group, version, plural, name }, options),
      list: (_namespace, labelSelector, options) =>
        custom.listClusterCustomObject({ group, version, plural, ...selector(labelSelector) }, options)
    }
  }
  // Read only: the KubeClient types admit no write of these, so apply and delete cannot be reached.
  const readOnly = (
    get: Family["get"],
    list: Family["list"]
  ): Family => ({
    apply: () => Promise.reject(new Error("read-only resource")),
    delete: () => Promise.reject(new Error("read-only resource")),
    get,
    list
  })
  const namespaces = readOnly(
    (_namespace, name, options) => core.readNamespace({ name }, options),
    (_namespace, labelSelector, options) => core.listNamespace({ ...selector(labelSelector) }, options)
  )
  const ingressClasses = readOnly(
    (_namespace, name, options) => networking.readIngressClass({ name }, options),
    (_namespace, labelSelector, options) => networking.listIngressClass({ ...selector(labelSelector) }, options)
  )
  const discovery = new k8s.DiscoveryV1Api(configuration)
  const endpointSlices = readOnly(
    (namespace, name, options) => discovery.readNamespacedEndpointSlice({ namespace, name }, options),
    (namespace, labelSelector, options) =>
      discovery.listNamespacedEndpointSlice({ namespace, ...selector(labelSelector) }, options)
  )
  return (resource: ResourceType<unknown>): Effect.Effect<Family> => {
    if (resource.group === "discovery.k8s.io" && resource.plural === "endpointslices") {
      return Effect.succeed(endpointSlices)
    }
    if (resource.group === "" && resource.plural === "services") return Effect.succeed(services)
    if (resource.group === "" && resource.plural === "namespaces") return Effect.succeed(namespaces)
    if (resource.group === "networking.k8s.io" && resource.plural === "ingresses") return Effect.succeed(ingresses)
    if (resource.group === "networking.k8s.io" && resource.plural === "ingressclasses") {
      return Effect.succeed(ingressClasses)
    }
    if (resource.custom) {
      return Effect.succeed(resource.namespaced ? customFamily(resource) : clusterCustomFamily(resource))
    }
    // The KubeClient types admit only Services, Ingresses and Gateway API kinds:
    // anything else is a programming error, not a cluster answer.
    return Effect.dieMessage(`KubeClientLive does not handle ${qualifiedName(resource)}`)
  }
}

const parseJson = (ctx: RequestContext, server: string, text: string | undefined): Effect.Effect<unknown, KubeError> =>
  Effect.try({
    try: () => JSON.parse(text ?? "") as unknown,
    catch: () =>
      new Unexpected({
        reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body that is not JSON`
      })
  })

/** Built-in list items come without kind/apiVersion; give them back so items read like `get` answers. */
const withTypeMeta = <A>(resource: ResourceType<A>, item: A): A => ({
  apiVersion: apiVersionOf(resource),
  kind: resource.kind,
  ...item
})

/** A server-side apply body refuses managedFields; one read back from the server carries them. */
const applyBody = (resource: ResourceType<unknown>, object: KubeObject): KubeObject => {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {}
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: object.kind ?? resource.kind,
    metadata
  }
}

// ---------------------------------------------------------------------------
// Watch connections over node:http

type WatchOpening =
  | { readonly ok: true; readonly response: http.IncomingMessage }
  | { readonly ok: false; readonly code: number; readonly text: string; readonly retryAfter: string | undefined }

/**
 * Opens one watch connection and resolves as soon as the response headers arrive
 * (a watch sends its body for as long as it lasts). A non-200 answer is read whole
 * so its Status can be mapped. The client's own `Watch` is not used: it drops the
 * error body, swallows unparseable lines and reports a server close as success.
 */
const openWatch = async (
  kc: k8s.KubeConfig,
  pools: ConnectionPools,
  url: URL,
  signal: AbortSignal
): Promise<WatchOpening> => {
  const options: https.RequestOptions = {}
  // Same credentials and TLS settings as the typed APIs (token refresh included), over a pooled connection.
  await kc.applyToHTTPSOptions(options)
  options.agent = pools.forWatch(options.agent as http.Agent | undefined)
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === "https:" ? https : http).request(url, {
      ...options,
      method: "GET",
      headers: { ...options.headers, Accept: "application/json" },
      signal
    }, resolve)
    request.on("error", reject)
    // A half-dead connection otherwise hangs the watch silently forever.
    request.on("socket", (socket) => socket.setKeepAlive(true, 30_000))
    request.end()
  })
  if (response.statusCode === 200) return { ok: true, response }
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  const retryAfter = response.headers["retry-after"]
  return {
    ok: false,
    code: response.statusCode ?? 500,
    text: Buffer.concat(chunks).toString("utf8"),
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter
  }
}

// ---------------------------------------------------------------------------
// Questions about the server itself

type Request = (
  ctx: RequestContext,
  run: (options: k8s.ConfigurationOptions) => Promise<unknown>
) => Effect.Effect<unknown, KubeError>

/** `GET /version`, discovery and `SelfSubjectAccessReview`, through the same limits as every call. */
const clusterQueries = (
  kc: k8s.KubeConfig,
  server: string,
  pools: ConnectionPools,
  request: Request
): ClusterQueries => {
  const configuration = apiConfiguration(kc, server, pools)
  const version = new k8s.VersionApi(configuration)
  const core = new k8s.CoreV1Api(configuration)
  const custom = new k8s.CustomObjectsApi(configuration)
  const authorization = new k8s.AuthorizationV1Api(configuration)
  const context = kc.getCurrentContext()
  return {
    server,
    ...(context !== "" ? { context } : {}),
    version: request({ verb: "get", resource: "version" }, (options) => version.getCode({}, options)).pipe(
      Effect.map((raw) => {
        const info = raw as { gitVersion?: string; platform?: string }
        return {
          gitVersion: info.gitVersion ?? "unknown",
          ...(info.platform !== undefined ? { platform: info.platform } : {})
        }
      })
    ),
    servedResources: (group, groupVersion) =>
      request(
        { verb: "discover", resource: group === "" ? groupVersion : `${group}/${groupVersion}` },
        (options) => (group === ""
          ? core.getAPIResources({}, options)
          : custom.getAPIResources({ group, version: groupVersion }, options))
      ).pipe(
        Effect.map((raw) =>
          ((raw as { resources?: ReadonlyArray<{ name?: string }> }).resources ?? []).flatMap((r) =>
            r.name !== undefined && !r.name.includes("/") ? [r.name] : []
          )
        )
      ),
    accessReview: (question) =>
      request(
        { verb: "create", resource: "selfsubjectaccessreviews.authorization.k8s.io" },
        (options) =>
          authorization.createSelfSubjectAccessReview({
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SelfSubjectAccessReview",
              spec: { resourceAttributes: { ...question } }
            }
          }, options)
      ).pipe(
        Effect.map((raw) => {
          const status = (raw as { status?: { allowed?: boolean; reason?: string; evaluationError?: string } }).status
          const reason = status?.reason ?? status?.evaluationError
          return { allowed: status?.allowed === true, ...(reason !== undefined && reason !== "" ? { reason } : {}) }
        })
      )
  }
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

    const named = (
      verb: string,
      resource: ResourceType<unknown>,
      namespace: string,
      name?: string
    ): RequestContext => ({
      verb,
      resource: qualifiedName(resource),
      namespace,
      ...(name !== undefined ? { name } : {})
    })

    const apply: KubeClientPrimitives["apply"] = (resource, object, applyOptions?: ApplyOptions) => {
      const name = object.metadata?.name
      const namespace = object.metadata?.namespace
      const ctx = named("apply", resource, namespace ?? "", name)
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
        named("get", resource, namespace, name),
        resource,
        (family, opts) => family.get(namespace, name, opts)
      ) as Effect.Effect<
        never,
        KubeError
      >

    const del: KubeClientPrimitives["delete"] = (resource, namespace, name) =>
      Effect.asVoid(
        call(
          named("delete", resource, namespace, name),
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
        named("list", resource, namespace),
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
      const ctx = named("watch", resource, namespace)
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
