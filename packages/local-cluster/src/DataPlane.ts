/**
 * LocalCluster's data plane: a loopback HTTP proxy that routes by Host header
 * according to the *programmed* Ingresses and accepted HTTPRoutes in the store. When
 * Pods stand behind a Service it forwards only to the ready endpoints of its
 * EndpointSlices; otherwise to the backend address registered for the Service port.
 * It answers the way real ones do: 404 for an unrouted host, 500 for an unresolved
 * backendRef, 502 for an unreachable backend, 503 for no (ready) endpoints.
 */
import { Data, Effect, FiberSet, HashMap, Option, Random, Ref, type Scope } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import {
  type Gateway,
  type HttpRoute,
  type Ingress,
  type KubeObject,
  type Namespace,
  type ResourceType,
  type Service,
  type Status
} from "session-routing/kubernetes"
import { makeRecorder } from "./ControllerEvents.js"
import { DEFAULT_GATEWAY_CONTROLLER_NAME } from "./GatewayController.js"
import { followReadinessGates, KUBELET_MANAGER, setPodReady } from "./internal/podReadiness.js"
import { type EndpointChoice, type ReadyEndpoint, readyEndpoints } from "./internal/readyEndpoints.js"
import {
  decideRoute,
  hostOfHeader,
  type IngressClassSelector,
  pickBackend,
  type RouteSource,
  type RoutingState
} from "./RouteTable.js"
import {
  EndpointSliceResource,
  GatewayResource,
  HttpRouteResource,
  IngressResource,
  NamespaceResource,
  PodResource,
  ServiceResource
} from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** A Service port, as routes name it. */
export interface BackendKey {
  readonly namespace: string
  readonly service: string
  readonly port: number
}

/** Where the traffic for a Service port really goes. */
export interface BackendAddress {
  readonly host: string
  readonly port: number
}

/** Where the proxy listens and which routing objects it serves. */
export interface DataPlaneOptions {
  /** Listen address; default `127.0.0.1`. */
  readonly host?: string
  /** Listen port; default 0 (any free port). */
  readonly port?: number
  /** HTTPRoute parent entries of this controller count; default `session-routing.dev/local-gateway`. */
  readonly controllerName?: string
  /** Serve only Ingresses of this class; default every Ingress with a published address. */
  readonly ingressClass?: IngressClassSelector
}

/** A running data plane. */
export interface DataPlane {
  readonly host: string
  readonly port: number
  /** `http://<host>:<port>`: send requests here with the route's host in the Host header. */
  readonly url: string
  /** Sends a Service port's traffic to `address`; replaces an earlier registration. */
  readonly registerBackend: (key: BackendKey, address: BackendAddress) => Effect.Effect<void>
  readonly unregisterBackend: (key: BackendKey) => Effect.Effect<void>
  /**
   * Serves a Pod at `address` as its workload would: the Pod turns Running and Ready
   * (podIP the address's host, as its kubelet reports once a readiness probe passes), so
   * its Services' EndpointSlices list it ready and traffic for it comes to `address`. A
   * Pod with readiness gates turns Ready only once each gate's condition is True, and
   * follows those conditions whoever writes them.
   */
  readonly registerPod: (pod: PodRef, address: BackendAddress) => Effect.Effect<void, Status>
  /** The Pod's workload stopped: it turns not Ready, and its Services answer 503 if it was their last. */
  readonly unregisterPod: (pod: PodRef) => Effect.Effect<void, Status>
}

/** A Pod, as the data plane names one. */
export interface PodRef {
  readonly namespace: string
  readonly name: string
}

/** The proxy could not start listening. */
export class DataPlaneError extends Data.TaggedError("DataPlaneError")<{
  readonly reason: string
  readonly cause: unknown
}> {}

/** Identifies responses that the data plane itself produced, and the object that routed the rest. */
export const ROUTED_BY_HEADER = "x-local-cluster-routed-by"

const backendKeyString = (key: BackendKey): string => `${key.namespace}/${key.service}:${key.port}`

const sourceString = (source: RouteSource): string => `${source.kind}/${source.namespace}/${source.name}`

/** Connection-scoped headers a proxy must not forward (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade"
])

const forwardable = (headers: Http.IncomingHttpHeaders): Http.OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())))

const respond = (
  res: Http.ServerResponse,
  status: number,
  body: string,
  extraHeaders: Http.OutgoingHttpHeaders = {}
): void => {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const text = body.endsWith("\n") ? body : `${body}\n`
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...extraHeaders
  })
  res.end(text)
}

/**
 * The request target in origin form (`/path?query`). A client that uses the data
 * plane as an HTTP proxy (`curl --proxy`) sends the absolute form instead.
 */
const originForm = (url: string | undefined): string => {
  const raw = url ?? "/"
  if (raw.startsWith("/")) return raw
  try {
    const parsed = new URL(raw)
    return `${parsed.pathname}${parsed.search}`
  } catch {
    return "/"
  }
}

const pathOf = (target: string): string => {
  const q = target.search(/[?#]/)
  return q >= 0 ? target.slice(0, q) : target
}

/**
 * Proxies one request to `address`. Errors before the backend answered become a 502
 * naming the backend; after it started answering, the only honest thing left is to
 * cut the connection. Interruption (the data plane closing) destroys both sides.
 */
const forward = (
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  address: BackendAddress,
  target: string,
  backend: string,
  routedBy: string
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    let done = false
    const finish = () => {
      if (!done) {
        done = true
        resume(Effect.void)
      }
    }
    const remote = req.socket.remoteAddress ?? ""
    const priorFor = req.headers["x-forwarded-for"]
    const upstream = Http.request({
      host: address.host,
      port: address.port,
      method: req.method ?? "GET",
      path: target,
      headers: {
        ...forwardable(req.headers),
        "x-forwarded-for": priorFor !== undefined ? `${String(priorFor)}, ${remote}` : remote,
        "x-forwarded-host": req.headers.host ?? "",
        "x-forwarded-proto": "http"
      }
    })
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, { ...forwardable(answer.headers), [ROUTED_BY_HEADER]: routedBy })
      answer.pipe(res)
      answer.on("end", finish)
      answer.on("error", () => {
        res.destroy()
        finish()
      })
    })
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      // The client already left (we destroyed the upstream for it): nobody to answer.
      if (res.destroyed) return finish()
      respond(
        res,
        502,
        `502 Bad Gateway: backend ${backend} at ${address.host}:${address.port} is unreachable (${
          error.code ?? error.message
        })`,
        { [ROUTED_BY_HEADER]: routedBy }
      )
      finish()
    })
    // The client gave up: stop talking to the backend on its behalf.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy()
      finish()
    })
    req.pipe(upstream)
    return Effect.sync(() => {
      upstream.destroy()
      res.destroy()
    })
  })

/**
 * Starts the data plane in the current scope; closing the scope stops accepting,
 * interrupts requests in flight and closes every connection. Routing state is read
 * from `store` on each request, so a route serves from the moment its status says
 * so and never before. A resource type that is not served (Gateway API CRDs off)
 * counts as empty, so Ingress routing works without it.
 */
export const make = (
  store: ClusterStore,
  options: DataPlaneOptions = {}
): Effect.Effect<DataPlane, DataPlaneError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const controllerName = options.controllerName ?? DEFAULT_GATEWAY_CONTROLLER_NAME
    const registry = yield* Ref.make(HashMap.empty<string, BackendAddress>())

    const listAll = <A extends KubeObject>(resource: ResourceType<A>) =>
      store.list(resource, undefined).pipe(
        Effect.map((list) => list.items),
        Effect.catchIf((status) => status.code === 404, () => Effect.succeed([] as ReadonlyArray<A>))
      )

    const readState = Effect.all({
      ingresses: listAll<Ingress>(IngressResource),
      httpRoutes: listAll<HttpRoute>(HttpRouteResource),
      gateways: listAll<Gateway>(GatewayResource),
      services: listAll<Service>(ServiceResource),
      namespaces: listAll<Namespace>(NamespaceResource)
    }).pipe(
      Effect.map((objects): RoutingState => ({
        ...objects,
        controllerName,
        ...(options.ingressClass !== undefined ? { ingressClass: options.ingressClass } : {})
      }))
    )

    const pods = yield* Ref.make(HashMap.empty<string, BackendAddress>())
    const kubelet = yield* makeRecorder(store, KUBELET_MANAGER)
    // Another writer's condition for a readiness gate decides Ready as soon as it is written.
    yield* followReadinessGates(store)
    const podKey = (pod: PodRef): string => `${pod.namespace}/${pod.name}`

    /** When Pods stand behind the Service, only its ready endpoints take traffic (read from its EndpointSlices). */
    const endpointsOf = (namespace: string, service: string, port: number) =>
      Effect.gen(function*() {
        const target = yield* store.get(ServiceResource, namespace, service).pipe(
          Effect.catchIf((status) => status.code === 404, () => Effect.succeed(undefined))
        )
        if (target?.spec?.selector === undefined) return { _tag: "NoPods" } as EndpointChoice
        const inNamespace = <A extends KubeObject>(resource: ResourceType<A>) =>
          store.list(resource, namespace).pipe(
            Effect.map((list) => list.items),
            Effect.catchIf((status) => status.code === 404, () => Effect.succeed([] as ReadonlyArray<A>))
          )
        const registered = yield* Ref.get(pods)
        return readyEndpoints(
          target,
          port,
          yield* inNamespace(PodResource),
          yield* inNamespace(EndpointSliceResource),
          (pod) => HashMap.has(registered, podKey({ namespace, name: pod.metadata?.name ?? "" }))
        )
      })

    /**
     * A ready endpoint's address: the backend registered for its Pod (the Pod's stand-in),
     * else the one registered for the Service port, else the endpoint's own address and port.
     */
    const endpointAddress = (endpoints: ReadonlyArray<ReadyEndpoint>, key: string) =>
      Effect.gen(function*() {
        const endpoint = endpoints[Math.floor((yield* Random.next) * endpoints.length)]!
        const registered = yield* Ref.get(pods)
        const byPod = endpoint.pod === undefined ? Option.none() : HashMap.get(registered, podKey(endpoint.pod))
        if (Option.isSome(byPod)) return byPod.value
        const byService = HashMap.get(yield* Ref.get(registry), key)
        if (Option.isSome(byService)) return byService.value
        return { host: endpoint.address, port: endpoint.port ?? 80 }
      })

    const handle = (req: Http.IncomingMessage, res: Http.ServerResponse): Effect.Effect<void> =>
      Effect.gen(function*() {
        const requestHost = hostOfHeader(req.headers.host)
        const target = originForm(req.url)
        const path = pathOf(target)
        const state = yield* readState
        const decision = decideRoute(state, { host: requestHost, path })
        if (decision.kind === "none") {
          // What a real ingress default backend does: a 404 that says no rule matched, not that the app said so.
          return respond(
            res,
            404,
            `404 Not Found: no programmed Ingress or accepted HTTPRoute routes host "${requestHost}" path "${path}"`,
            { [ROUTED_BY_HEADER]: "default-backend" }
          )
        }
        const routedBy = sourceString(decision.source)
        const backend = pickBackend(decision.backends, yield* Random.next)
        if (backend.kind === "error") {
          const title = backend.status === 500 ? "500 Internal Server Error" : "503 Service Unavailable"
          return respond(res, backend.status, `${title}: ${backend.message}`, { [ROUTED_BY_HEADER]: routedBy })
        }
        const key = backendKeyString({ namespace: backend.namespace, service: backend.service, port: backend.port })
        const choice = yield* endpointsOf(backend.namespace, backend.service, backend.port)
        if (choice._tag === "NoneReady") {
          return respond(res, 503, `503 Service Unavailable: ${choice.message}`, { [ROUTED_BY_HEADER]: routedBy })
        }
        const address = choice._tag === "Ready"
          ? Option.some(yield* endpointAddress(choice.endpoints, key))
          : HashMap.get(yield* Ref.get(registry), key)
        if (Option.isNone(address)) {
          return respond(
            res,
            503,
            `503 Service Unavailable: no endpoints for Service ${backend.namespace}/${backend.service} port ${backend.port} (no backend registered)`,
            { [ROUTED_BY_HEADER]: routedBy }
          )
        }
        yield* forward(req, res, address.value, target, key, routedBy)
      }).pipe(
        Effect.catchAll((status) =>
          Effect.sync(() =>
            respond(res, 503, `503 Service Unavailable: could not read routing state: ${status.message ?? status.code}`)
          )
        ),
        Effect.catchAllDefect((defect) =>
          Effect.sync(() => respond(res, 500, `500 Internal Server Error: data plane failure: ${String(defect)}`))
        )
      )

    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server, DataPlaneError>((resume) => {
        const s = Http.createServer()
        const onError = (cause: Error) =>
          resume(
            Effect.fail(
              new DataPlaneError({ reason: `cannot listen on ${host}:${options.port ?? 0}: ${cause.message}`, cause })
            )
          )
        s.once("error", onError)
        s.listen(options.port ?? 0, host, () => {
          s.off("error", onError)
          resume(Effect.succeed(s))
        })
      }),
      (s) =>
        Effect.async<void>((resume) => {
          s.close(() => resume(Effect.void))
          // Idle keep-alive connections would otherwise hold close() open.
          s.closeAllConnections()
        })
    )

    // Created after the server, so closing the scope interrupts requests before the server closes.
    const runFork = yield* FiberSet.makeRuntime<never, void, never>()
    server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      runFork(handle(req, res))
    })

    const port = (server.address() as AddressInfo).port
    return {
      host,
      port,
      url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
      registerBackend: (key, address) => Ref.update(registry, HashMap.set(backendKeyString(key), address)),
      unregisterBackend: (key) => Ref.update(registry, HashMap.remove(backendKeyString(key))),
      registerPod: (pod, address) =>
        Effect.zipRight(
          Ref.update(pods, HashMap.set(podKey(pod), address)),
          setPodReady(store, kubelet, pod, address.host)
        ),
      unregisterPod: (pod) =>
        Effect.zipRight(Ref.update(pods, HashMap.remove(podKey(pod))), setPodReady(store, kubelet, pod, undefined))
    } satisfies DataPlane
  })
