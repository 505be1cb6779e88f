/**
 * LocalCluster over HTTP: the API server's REST paths, discovery, watch streaming
 * and error bodies on 127.0.0.1, so @kubernetes/client-node and kubectl talk to it
 * as to a real cluster. Closing the scope closes the server and every open watch.
 * The faults' server lifecycle pauses it (nothing answers, connections held), stops
 * it (listener and connections closed) and restarts it on the same port. It counts
 * what it serves, and its connections, in `Metrics` (served on `/metrics`).
 */
import { Cause, Data, Effect, FiberId, FiberSet, type Scope } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { Socket } from "node:net"
import { type ApiSecurity, makeGate } from "./ApiSecurity.js"
import { type Faults, makeFaults } from "./Faults.js"
import {
  failure,
  makeWhenAnswering,
  mediaType,
  methodNotAllowed,
  pageNotFound,
  send,
  statusReply
} from "./internal/httpReply.js"
import { makeResourceHandler } from "./internal/httpResource.js"
import { makeRouter, type Route } from "./internal/httpRouting.js"
import {
  type ClusterMetrics,
  makeMetrics,
  nonResourceRequestLabels,
  type RequestLabels,
  resourceRequestLabels
} from "./Metrics.js"
import { RestartError } from "./ServerLifecycle.js"
import type { ClusterStore } from "./Store.js"
import { makeTokenRequests, TOKEN_SUBRESOURCE } from "./TokenRequest.js"

/** How the server is set up. */
export interface HttpApiOptions {
  readonly store: ClusterStore
  /** Faults to honour, and the server lifecycle that pauses, stops and restarts this server. */
  readonly faults?: Faults
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number
  /**
   * What `/version` reports; default `v1.35.4`, the release `npm run cluster:real` runs, whose defaults match what
   * LocalCluster serves: watch-list on (off in 1.30 and 1.33), OpenAPI v3.
   */
  readonly gitVersion?: string
  /** Where to count requests and connections (shared with the in-memory face); fresh counters if unset. */
  readonly metrics?: ClusterMetrics
  /** Serve HTTPS with this certificate, asking clients for theirs (signed by `ca`) to authenticate them. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string }
  /** Authentication and authorization; unset: every request is allowed. */
  readonly security?: ApiSecurity
}

/** A running server. */
export interface HttpApi {
  /** `http://127.0.0.1:<port>`, or `https://` with TLS. */
  readonly url: string
  readonly port: number
  /** What it counted, as `/metrics` serves it. */
  readonly metrics: ClusterMetrics
}

/** The server could not start (e.g. the port is taken). */
export class HttpApiError
  extends Data.TaggedError("HttpApiError")<{ readonly reason: string; readonly cause?: unknown }>
{}

const HOST = "127.0.0.1"
/**
 * How long an idle keep-alive connection stays open: kube-apiserver's `IdleTimeout`.
 * Node's default (5 s) would close pooled client connections far sooner than a real
 * server does, and hide whether a client reuses them.
 */
const IDLE_TIMEOUT_MS = 90_000

/** What one request will be counted as, once its routing is known; unset: not counted (a stopped server reads nothing). */
interface Counted {
  labels?: RequestLabels
  endLongRunning?: () => void
}

/** Starts the HTTP API on 127.0.0.1 for as long as the scope lives. */
export const serve = (options: HttpApiOptions): Effect.Effect<HttpApi, HttpApiError, Scope.Scope> =>
  Effect.gen(function*() {
    const { store } = options
    const faults = options.faults ?? (yield* makeFaults)
    const metrics = options.metrics ?? (yield* makeMetrics)
    const gitVersion = options.gitVersion ?? "v1.35.4"
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    const sockets = new Set<Socket>()
    let port = 0

    const route = makeRouter({ store, metrics, gitVersion, serverAddress: () => `${HOST}:${port}` })
    const whenAnswering = makeWhenAnswering(faults)
    const handleResource = makeResourceHandler(store, faults, whenAnswering, {
      [TOKEN_SUBRESOURCE]: makeTokenRequests(store, options.security?.authenticator)
    })
    const gate = makeGate(options.security)

    const handle = (req: IncomingMessage, res: ServerResponse, counted: Counted): Effect.Effect<void> =>
      Effect.gen(function*() {
        // A paused server reads nothing, discovery and health checks included.
        if ((yield* faults.server.awaitAnswering) === "stopped") {
          res.destroy()
          return
        }
        const url = new URL(req.url ?? "/", `http://${HOST}`)
        const segments = url.pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
        const routed = yield* route(segments, req.headers.accept)
        const method = req.method ?? "GET"
        counted.labels = labelsOf(req, url, routed)
        const refused = yield* gate(req, url, segments, routed)
        if (refused !== undefined) return yield* whenAnswering(res, Effect.sync(() => send(res, refused)))
        if (counted.labels.verb === "WATCH") counted.endLongRunning = metrics.startLongRunning(counted.labels)
        if (routed._tag === "Reply") {
          const reply = yield* routed.reply
          // Discovery is read-only; a path nothing serves stays the plain 404 whatever the method.
          const answer = method === "GET" || method === "HEAD" || reply === pageNotFound
            ? reply
            : statusReply(methodNotAllowed())
          return yield* whenAnswering(res, Effect.sync(() => send(res, answer)))
        }
        const reply = yield* handleResource(req, res, url.searchParams, routed.target)
        if (reply !== undefined) yield* whenAnswering(res, Effect.sync(() => send(res, reply)))
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : whenAnswering(
              res,
              Effect.sync(() =>
                send(
                  res,
                  statusReply(
                    failure(500, "InternalError", `Internal error occurred: ${Cause.pretty(cause).split("\n")[0]}`)
                  )
                )
              )
            )
        )
      )

    /**
     * The apiserver's labels for a request: a resource path by its type and verb rules,
     * anything else (discovery, /version, /metrics, a path nothing serves) by its path.
     */
    const labelsOf = (req: IncomingMessage, url: URL, routed: Route): RequestLabels => {
      const method = req.method ?? "GET"
      if (routed._tag === "Reply") return nonResourceRequestLabels(method, url.pathname)
      const { name, namespace, resource, subresource } = routed.target
      const watch = url.searchParams.get("watch")
      return resourceRequestLabels({
        method,
        contentType: mediaType(req),
        watch: watch === "true" || watch === "1",
        group: resource.group,
        version: resource.version,
        resource: resource.plural,
        namespace,
        name,
        subresource,
        dryRun: url.searchParams.getAll("dryRun")
      })
    }

    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const counted: Counted = {}
      const fiber = run(handle(req, res, counted))
      res.on("close", () => {
        // A client that goes away (a watch closed, a request aborted) ends its handler.
        fiber.unsafeInterruptAsFork(FiberId.none)
        // Counted as it ends, as the apiserver does: a watch when it closes, and a
        // request that never got a status line with code 0.
        counted.endLongRunning?.()
        if (counted.labels !== undefined) metrics.recordRequest(counted.labels, res.headersSent ? res.statusCode : 0)
      })
    }
    // With TLS a client certificate is asked for but not required: the authenticator
    // checks it, so a bad one is a 401 with a Status rather than a failed handshake.
    const server = options.tls === undefined
      ? createServer(onRequest)
      : createTlsServer({ ...options.tls, requestCert: true, rejectUnauthorized: false }, onRequest)
    server.keepAliveTimeout = IDLE_TIMEOUT_MS
    server.on(options.tls === undefined ? "connection" : "secureConnection", (socket: Socket) => {
      sockets.add(socket)
      const closed = metrics.connectionAccepted()
      socket.on("close", () => {
        sockets.delete(socket)
        closed()
      })
    })

    const listen = (on: number) =>
      Effect.async<number, HttpApiError>((resume) => {
        const onError = (cause: Error) =>
          resume(Effect.fail(new HttpApiError({ reason: `cannot listen on ${HOST}:${on}: ${cause.message}`, cause })))
        server.once("error", onError)
        server.listen(on, HOST, () => {
          server.off("error", onError)
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      })

    // Connections in progress are destroyed, not drained: a killed process says nothing
    // more, and its clients see resets (and refusals once the listener is gone).
    const close = Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      for (const socket of sockets) socket.destroy()
    })

    port = yield* listen(options.port ?? 0)
    yield* Effect.addFinalizer(() => close)
    yield* faults.server.attach({
      stop: close,
      // The same port, so a kubeconfig written before the restart still reaches it.
      restart: Effect.asVoid(
        Effect.mapError(
          listen(port),
          (e) => new RestartError({ reason: `the API server cannot restart: ${e.reason}`, cause: e })
        )
      )
    })
    return { url: `${options.tls === undefined ? "http" : "https"}://${HOST}:${port}`, port, metrics }
  })
