/**
 * The live KubeClient on @kubernetes/client-node 1.4.0's kubeconfig and credentials:
 * server-side apply, get, delete and list as plain REST requests over node:http
 * (internal/RestTransport), watches as raw connections (internal/WatchConnection),
 * every answer returned as the server's own JSON and every failure as a `KubeError`.
 * Calls and watches reuse keep-alive connections from bounded pools, under one set of
 * time limits and retries.
 */
import type * as k8s from "@kubernetes/client-node"
import {
  Clock,
  Context,
  Duration,
  Effect,
  Either,
  Exit,
  type Fiber,
  FiberRef,
  type FiberStatus,
  Layer,
  Option,
  type Runtime,
  type Schedule,
  type Scope,
  Stream
} from "effect"
import type { ObjectList } from "../domain/Objects.js"
import { apiVersionOf, type ResourceType } from "../domain/Resources.js"
import {
  type ApplyOptions,
  currentTransientRetry,
  FIELD_MANAGER,
  KubeClient,
  type KubeClientPrimitives,
  type RawWatchEvent,
  type ReadableObject
} from "../services/KubeClient.js"
import { Invalid, type KubeError, Unexpected } from "../services/KubeError.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { keepsNoSpans } from "../services/Telemetry.js"
import { clusterQueries } from "./internal/kubeClient/ClusterQueries.js"
import { type ConnectionPools, makeConnectionPools, MAX_CALL_SOCKETS } from "./internal/kubeClient/ConnectionPool.js"
import { makeDeadlines, runtimeOfFiber } from "./internal/kubeClient/Deadlines.js"
import { liveEventWrites } from "./internal/kubeClient/EventWrites.js"
import { cacheExecCredentials } from "./internal/kubeClient/ExecCredentialCache.js"
import {
  KubeConfigError,
  type KubeConfigOptions,
  loadKubeConfig,
  shownServer,
  validate
} from "./internal/kubeClient/KubeConfigLoading.js"
import {
  describeRequest,
  fromResponse,
  type RequestContext,
  requestContext
} from "./internal/kubeClient/KubeErrorParsing.js"
import { countAttempt, failedCode, observeRequest } from "./internal/kubeClient/RequestTelemetry.js"
import {
  makeRestTransport,
  OversizedAnswer,
  type RestAnswer,
  type RestCall,
  UnreadableEncoding
} from "./internal/kubeClient/RestTransport.js"
import { makeKubeClient } from "./internal/kubeClient/ResumableWatch.js"
import { fromTransportError } from "./internal/kubeClient/TransportErrors.js"
import { openWatch, watchEvents } from "./internal/kubeClient/WatchConnection.js"
import { applyBody, wirePath, withTypeMeta } from "./internal/kubeClient/WireObjects.js"
import { makeAdmission } from "./internal/sessionRouter/Admission.js"
import {
  attemptTimedOut,
  callLimits,
  DEFAULT_API_TIMEOUT,
  type LimitOptions,
  retriedAfter,
  transientRetrySchedule,
  withinLimits
} from "./KubeRetry.js"

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

const isObject = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Pages one list may take: 100,000 objects at `LIST_PAGE_SIZE`, past any session
 * namespace. A server that answers every page with another continue token would
 * otherwise be followed, and its items held, for as long as it keeps answering.
 */
export const MAX_LIST_PAGES = 200

/** Items per page of a list: client-go's pager default. */
const LIST_PAGE_SIZE = 500

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
    const address = yield* validate(kc, "the given KubeConfig")
    cacheExecCredentials(kc)
    const transport = makeRestTransport(kc, pools, address)
    // What every message names: the address without its userinfo.
    const server = shownServer(address)
    const schedule = options.retrySchedule ?? transientRetrySchedule
    const configured = yield* Effect.serviceOption(RouterConfig)
    const limits = callLimits(
      options.apiTimeout ??
        Option.match(configured, {
          onNone: () => DEFAULT_API_TIMEOUT,
          onSome: (config) => Duration.millis(config.apiTimeoutMs)
        })
    )

    /**
     * Calls admitted at once. A call waits here for its turn, and its time limits start
     * once it is admitted: waiting in our own queue behind a burst is not the API server
     * failing to answer, and a limit that counted it failed most of 10,000 publishes.
     * Watches open on a pool of their own without waiting here, so a burst of publishes
     * never delays the status watch that reports on them.
     */
    const admission = makeAdmission(MAX_CALL_SOCKETS)

    /** The limit of every attempt this client sends, one timer for them all. */
    const deadlines = makeDeadlines(Duration.toMillis(limits.attempt))

    /** The limits of one call of `ctx`: this client's, retried when `retry`. */
    const limitOptions = (ctx: RequestContext, retry: boolean, attemptBounded: boolean): LimitOptions => ({
      target: { what: describeRequest(ctx), server },
      limits,
      retry,
      schedule,
      attemptBounded
    })
    /**
     * One call under its time limits, retried unless the fiber turned the client's
     * retries off; `attemptBounded` when each attempt ends itself at `limits.attempt`.
     */
    const limited = <A>(ctx: RequestContext, self: Effect.Effect<A, KubeError>, attemptBounded = false) =>
      Effect.flatMap(
        FiberRef.get(currentTransientRetry),
        (retry) => withinLimits(self, limitOptions(ctx, retry, attemptBounded))
      )

    /** What a body that was not read says: the call, the status, and why. */
    const unread = (ctx: RequestContext, code: number, why: string) =>
      new Unexpected({
        reason: `the API server at ${server} answered ${describeRequest(ctx)} (${code}) with ${why}`,
        code
      })

    /** What one attempt's answer (or its failure to come) means: the parsed body of a 2xx, else a `KubeError`. */
    const outcome = (ctx: RequestContext, answer: RestAnswer): Either.Either<unknown, KubeError> => {
      if (answer.code < 200 || answer.code > 299) {
        return Either.left(fromResponse(ctx, answer.code, answer.text, answer.retryAfter))
      }
      let body: unknown
      try {
        body = JSON.parse(answer.text)
      } catch {
        return Either.left(
          new Unexpected({
            reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body that is not JSON`
          })
        )
      }
      // Every answer of the API is an object (an object, a list, a Status); anything
      // else would reach the caller as if it were one, or break it on first use.
      const shapeProblem = !isObject(body)
        ? "JSON that is not an object"
        : ctx.verb === "list" && !Array.isArray((body as { readonly items?: unknown }).items)
        ? "a list without an items array"
        // A named object's read (not `/version`, which is no object) carries its metadata.
        : ctx.verb === "get" && ctx.name !== undefined && !isObject((body as { readonly metadata?: unknown }).metadata)
        ? "an object without metadata"
        : undefined
      return shapeProblem === undefined
        ? Either.right(body)
        : Either.left(
          new Unexpected({
            reason: `the API server at ${server} answered ${describeRequest(ctx)} with ${shapeProblem}`,
            code: answer.code
          })
        )
    }

    const failureOf = (ctx: RequestContext, error: unknown): KubeError =>
      error instanceof OversizedAnswer
        ? unread(ctx, error.code, `a body over ${error.limit / 1024} KiB, which was not read`)
        : error instanceof UnreadableEncoding
        ? unread(ctx, error.code, `a body in content-encoding "${error.encoding}", which it cannot read`)
        : fromTransportError(ctx, server, error)

    /**
     * Sends one attempt with its deadline armed on `clock`: `done` hears, once, the
     * answer's status and what it means, or (no status) the transport's failure or the
     * deadline's. The result cancels the request and closes its connection, and after
     * `done` does nothing. `runtime` starts the deadlines' sweeper when none runs.
     */
    const sendAttempt = (
      ctx: RequestContext,
      call: RestCall,
      clock: Clock.Clock,
      runtime: () => Runtime.Runtime<never>,
      done: (code: number | undefined, result: Either.Either<unknown, KubeError>) => void
    ): () => void => {
      let over = false
      let cancel = (): void => {}
      const finish = (code: number | undefined, result: Either.Either<unknown, KubeError>) => {
        if (over) return
        over = true
        deadline.disarm()
        done(code, result)
      }
      const deadline = deadlines.unsafeArm(clock, runtime, () => {
        cancel()
        // Made only when it happens: an error captures a stack trace.
        finish(undefined, Either.left(attemptTimedOut({ what: describeRequest(ctx), server }, limits)))
      })
      cancel = transport(
        call,
        (answer) => finish(answer.code, outcome(ctx, answer)),
        (error) => finish(undefined, Either.left(failureOf(ctx, error)))
      )
      return () => {
        if (over) return
        over = true
        deadline.disarm()
        cancel()
      }
    }

    /**
     * One attempt: the request sent, its deadline armed, and the fiber suspended once
     * until the answer, the deadline, or an interruption (which cancels the request
     * and closes its connection). `answered` is the status of an answer that succeeded.
     */
    const attempt = (ctx: RequestContext, call: RestCall, answered: (code: number) => void) =>
      Effect.withFiberRuntime<unknown, KubeError>((fiber, status) =>
        Effect.async((resume) => {
          const cancel = sendAttempt(
            ctx,
            call,
            Context.get(fiber.currentDefaultServices, Clock.Clock),
            runtimeOfFiber(fiber, status),
            (code, result) => {
              if (code !== undefined && Either.isRight(result)) answered(code)
              resume(result)
            }
          )
          return Effect.sync(cancel)
        })
      )

    /**
     * One request when its span would go nowhere: admission, the attempt's deadline, the
     * request and its count, by callbacks in a single suspension of the fiber. The
     * composed path (`admission.admit`, `observeRequest`, `limited`, `attempt`) takes
     * about five times the fiber steps, which at thousands of sessions published at
     * once was the largest part of the runner's CPU. Only a first attempt that fails,
     * with retries on, goes on through `retriedAfter`, holding its permit until the call
     * ends, as an admitted call does.
     */
    const direct = (
      fiber: Fiber.RuntimeFiber<unknown, unknown>,
      status: FiberStatus.Running,
      ctx: RequestContext,
      call: RestCall,
      admitted: boolean
    ): Effect.Effect<unknown, KubeError> => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const retry = fiber.getFiberRef(currentTransientRetry)
      const runtime = runtimeOfFiber(fiber, status)
      /** Whether this call holds one of the admission's permits. */
      let holding = false
      // The call's time limits start once it is admitted, as in `limited`.
      let start = 0
      let failedAt = 0
      const release = () => {
        if (!holding) return
        holding = false
        admission.unsafeRelease()
      }
      const first = Effect.async<unknown, KubeError>((resume) => {
        let over = false
        /** Set once the attempt is sent; until then the call waits for admission. */
        let cancel: (() => void) | undefined
        const send = () => {
          holding = admitted
          start = clock.unsafeCurrentTimeMillis()
          // The attempt's end: counted once, the permit kept only for a retry to come.
          cancel = sendAttempt(ctx, call, clock, runtime, (code, result) => {
            over = true
            const failure = Either.isLeft(result)
            countAttempt(ctx, code ?? (failure ? result.left.code : undefined))
            if (failure) failedAt = clock.unsafeCurrentTimeMillis()
            if (!(failure && retry)) release()
            resume(result)
          })
        }
        const leave = admitted ? admission.unsafeEnter(send) : (send(), () => {})
        return Effect.sync(() => {
          if (!over) {
            over = true
            // Interrupted: out of the queue, or the request aborted and its connection closed.
            leave()
            if (cancel !== undefined) {
              cancel()
              countAttempt(ctx, undefined)
            }
          }
          // Also when the attempt had ended, kept its permit for a retry, and the
          // interruption came before the retry began.
          release()
        })
      })
      if (!retry) return first
      // The permit a failed first attempt kept goes back however the retries end, even
      // when the fiber is interrupted between the failure and the first retry.
      return Effect.uninterruptibleMask((restore) =>
        Effect.catchAll(restore(first), (error) =>
          Effect.ensuring(
            restore(
              retriedAfter(error, { start, failedAt }, countedAttempt(ctx, call), limitOptions(ctx, true, true))
            ),
            Effect.sync(release)
          ))
      )
    }

    /** One attempt counted as it ends, for retries after `direct`'s first. */
    const countedAttempt = (ctx: RequestContext, call: RestCall) =>
      Effect.suspend(() => {
        let code = 0
        return Effect.onExit(
          attempt(ctx, call, (answered) => code = answered),
          (exit) => Effect.sync(() => countAttempt(ctx, Exit.isSuccess(exit) ? code : failedCode(exit.cause)))
        )
      })

    /**
     * One request, its answer read once and (when 2xx) parsed once; each attempt within
     * its time limit, retried while transient, counted, and the whole call in one span.
     * Calls wait for admission (`unadmitted` ones do not); interrupting the fiber aborts
     * the request and closes its connection.
     */
    const request = (
      ctx: RequestContext,
      call: RestCall,
      extra: { readonly dryRun?: boolean; readonly unadmitted?: boolean } = {}
    ): Effect.Effect<unknown, KubeError> =>
      Effect.withFiberRuntime((fiber, status) =>
        keepsNoSpans(fiber.currentTracer)
          ? direct(fiber, status, ctx, call, extra.unadmitted !== true)
          : observeRequest(ctx, extra, (observe) =>
            Effect.suspend(() => {
              let code = 0
              const self = limited(ctx, observe(attempt(ctx, call, (answered) => code = answered), () => code), true)
              return extra.unadmitted === true ? self : admission.admit(self)
            }))
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
      const dryRun = applyOptions?.dryRun === true
      const query = `?fieldManager=${FIELD_MANAGER}&force=${applyOptions?.force ?? true}${dryRun ? "&dryRun=All" : ""}`
      return request(ctx, {
        method: "PATCH",
        path: wirePath(resource, namespace, name) + query,
        // JSON is YAML: the apply patch type takes it as it is.
        body: JSON.stringify(applyBody(resource, object)),
        contentType: "application/apply-patch+yaml"
      }, { dryRun }) as Effect.Effect<never, KubeError>
    }

    const get: KubeClientPrimitives["get"] = (resource, namespace, name) =>
      request(
        requestContext("get", resource, namespace, name),
        { method: "GET", path: wirePath(resource, namespace, name) }
      ) as Effect.Effect<never, KubeError>

    const del: KubeClientPrimitives["delete"] = (resource, namespace, name, options) =>
      Effect.asVoid(
        request(
          requestContext("delete", resource, namespace, name),
          {
            method: "DELETE",
            path: wirePath(resource, namespace, name),
            ...(options?.uid !== undefined
              ? {
                body: JSON.stringify({ kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: options.uid } }),
                contentType: "application/json"
              }
              : {})
          }
        )
      )

    /** One page of a list: at most `LIST_PAGE_SIZE` items, from where `continueToken` left off. */
    const listPage = (
      resource: ResourceType<ReadableObject>,
      namespace: string,
      labelSelector: string | undefined,
      continueToken: string | undefined
    ) => {
      const query = new URLSearchParams({ limit: String(LIST_PAGE_SIZE) })
      if (labelSelector !== undefined) query.set("labelSelector", labelSelector)
      if (continueToken !== undefined) query.set("continue", continueToken)
      return Effect.map(
        request(requestContext("list", resource, namespace), {
          method: "GET",
          path: `${wirePath(resource, namespace)}?${query.toString()}`
        }),
        (raw) => raw as Partial<ObjectList<ReadableObject>>
      )
    }

    /**
     * Lists in pages, as client-go's pager does: thousands of session objects in one
     * answer would be tens of MiB read at once (past the answer's bound at 10,000
     * sessions), while pages of 500 each stay small. Every page is of the first page's
     * resourceVersion, so together they are one consistent list.
     */
    const list: KubeClientPrimitives["list"] = <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      listOptions?: { readonly labelSelector?: string }
    ) =>
      Effect.gen(function*() {
        const items: Array<A> = []
        let first: Partial<ObjectList<ReadableObject>> | undefined
        let continueToken: string | undefined
        let pages = 0
        do {
          if (pages++ === MAX_LIST_PAGES) {
            return yield* new Unexpected({
              reason: `the API server at ${server} answered ${
                describeRequest(requestContext("list", resource, namespace))
              } with more than ${MAX_LIST_PAGES} pages of ${LIST_PAGE_SIZE}, and the list was given up`
            })
          }
          const page = yield* listPage(resource, namespace, listOptions?.labelSelector, continueToken)
          first ??= page
          for (const item of page.items ?? []) items.push(withTypeMeta(resource, item as A))
          continueToken = page.metadata?.continue === "" ? undefined : page.metadata?.continue
        } while (continueToken !== undefined)
        const { continue: _continue, ...metadata } = first.metadata ?? {}
        return {
          apiVersion: first.apiVersion ?? apiVersionOf(resource),
          kind: first.kind ?? resource.listKind,
          metadata,
          items
        }
      })

    const watchFrom: KubeClientPrimitives["watchFrom"] = <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      watchOptions: { readonly labelSelector?: string; readonly resourceVersion: string }
    ): Stream.Stream<RawWatchEvent<A>, KubeError> => {
      const ctx = requestContext("watch", resource, namespace)
      const url = new URL(address + wirePath(resource, namespace))
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
      cluster: clusterQueries(kc, server, request),
      // The recorder bounds its own writes (a few at a time): they do not queue behind a
      // burst of publishes, whose sessions' Events would otherwise be dropped by the thousand.
      events: liveEventWrites((ctx, call) => request(ctx, call, { unadmitted: true }))
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

/**
 * `KubeClientLive.layer`, `.layerFromKubeConfig`, `.make`, `.loadKubeConfig` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const KubeClientLive = { layer, layerFromKubeConfig, make, loadKubeConfig } as const
