/**
 * The live KubeClient on @kubernetes/client-node 1.4.0: server-side apply, get, delete
 * and list through the client's typed APIs, raw watch connections over node:http, every
 * answer returned as the server's own JSON and every failure as a `KubeError`. Calls
 * and watches reuse keep-alive connections from bounded pools.
 */
import * as k8s from "@kubernetes/client-node"
import { Config, Data, Duration, Effect, FiberRef, Layer, Option, type Schedule, type Scope, Stream } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import type { KubeObject, ObjectList, Status } from "../domain/Objects.js"
import { apiVersionOf, qualifiedName, resourcePath, type ResourceType } from "../domain/Resources.js"
import {
  type ApplyOptions,
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
  fromStatus,
  Invalid,
  type KubeError,
  type RequestContext,
  Transport,
  Unexpected
} from "../services/KubeError.js"
import { makeKubeClient } from "../services/ResumableWatch.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { callLimits, DEFAULT_API_TIMEOUT, transientRetrySchedule, withinLimits } from "./KubeRetry.js"

/** The kubeconfig could not be found, read, or does not describe a usable cluster. */
export class KubeConfigError extends Data.TaggedError("KubeConfigError")<{
  /** One sentence a person can act on, naming the file and context involved. */
  readonly reason: string
  readonly path?: string
  readonly context?: string
}> {
  override get message(): string {
    return this.reason
  }
}

export interface KubeConfigOptions {
  /** Read this file instead of the default chain (KUBECONFIG, ~/.kube/config, in-cluster). */
  readonly kubeconfigPath?: string
  /** Use this context instead of the kubeconfig's current-context. */
  readonly context?: string
}

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

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// ---------------------------------------------------------------------------
// Loading the kubeconfig

const configError = (reason: string, fields: { path?: string | undefined; context?: string | undefined } = {}) =>
  new KubeConfigError({
    reason,
    ...(fields.path !== undefined ? { path: fields.path } : {}),
    ...(fields.context !== undefined ? { context: fields.context } : {})
  })

// client-node's own messages for a malformed kubeconfig name the field at fault
// ("clusters[0].cluster.server is missing") and carry no credentials, so they are
// worth passing on; a YAML error is cut to its first line (the rest is a snippet).
const describeLoadFailure = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  if (code === "ENOENT") return "the file does not exist"
  if (code === "EACCES" || code === "EPERM") return "the file is not readable by this user"
  if (code === "EISDIR") return "it is a directory, not a file"
  const message = error instanceof Error ? error.message.split("\n")[0] : undefined
  return message !== undefined && message !== "" ? `it is not a valid kubeconfig: ${message}` : "it is not a valid kubeconfig"
}

const loadFile = (kc: k8s.KubeConfig, file: string): Effect.Effect<void, KubeConfigError> =>
  Effect.try({
    try: () => kc.loadFromFile(file),
    catch: (error) => configError(`could not load the kubeconfig ${file}: ${describeLoadFailure(error)}`, { path: file })
  })

interface Loaded {
  readonly kc: k8s.KubeConfig
  /** Where it came from, for messages. */
  readonly source: string
  readonly path?: string
}

const loadFromChain = (options: KubeConfigOptions): Effect.Effect<Loaded, KubeConfigError> =>
  Effect.gen(function*() {
    const kc = new k8s.KubeConfig()
    if (options.kubeconfigPath !== undefined) {
      yield* loadFile(kc, options.kubeconfigPath)
      return { kc, source: `the kubeconfig ${options.kubeconfigPath}`, path: options.kubeconfigPath }
    }
    const env = yield* Config.option(Config.string("KUBECONFIG")).pipe(Effect.orElseSucceed(() => Option.none()))
    if (Option.isSome(env) && env.value.trim() !== "") {
      // kubectl skips KUBECONFIG entries that do not exist and merges the rest, the
      // first file's current-context winning; client-node would throw on a missing one.
      const files = env.value.split(path.delimiter).filter((file) => file !== "")
      const present = files.filter((file) => fs.existsSync(file))
      const [first, ...rest] = present
      if (first === undefined) {
        return yield* configError(`KUBECONFIG names ${files.join(", ")}, and none of them exists`, {
          path: env.value
        })
      }
      yield* loadFile(kc, first)
      for (const file of rest) {
        const other = new k8s.KubeConfig()
        yield* loadFile(other, file)
        kc.mergeConfig(other, true)
      }
      return { kc, source: `the kubeconfig from KUBECONFIG=${env.value}`, path: env.value }
    }
    const home = path.join(os.homedir(), ".kube", "config")
    if (fs.existsSync(home)) {
      yield* loadFile(kc, home)
      return { kc, source: `the kubeconfig ${home}`, path: home }
    }
    if (fs.existsSync(SERVICE_ACCOUNT_TOKEN)) {
      yield* Effect.try({
        try: () => kc.loadFromCluster(),
        catch: (error) => configError(`could not use the in-cluster service account: ${describeLoadFailure(error)}`)
      })
      return { kc, source: "the in-cluster service account configuration" }
    }
    return yield* configError(
      `no kubeconfig found: KUBECONFIG is unset, ${home} does not exist, and this is not a Pod with a service account token (${SERVICE_ACCOUNT_TOKEN}); pass a kubeconfig path`
    )
  })

/**
 * Checks that the kubeconfig's current context resolves to a cluster this client can
 * talk to, and returns its server URL. Fails now, naming the file and context, rather
 * than on the first request with the client's own error.
 */
const validate = (kc: k8s.KubeConfig, source: string, file?: string): Effect.Effect<string, KubeConfigError> =>
  Effect.gen(function*() {
    const name = kc.getCurrentContext()
    const fields = { path: file, context: name }
    const context = name ? kc.getContextObject(name) : null
    if (!name) return yield* configError(`${source} has no current-context: pass a context`, fields)
    if (context === null) {
      return yield* configError(
        `${source} has no context "${name}" (it has: ${
          kc.getContexts().map((c) => c.name).join(", ") || "none"
        })`,
        fields
      )
    }
    const cluster = kc.getCurrentCluster()
    if (cluster === null) {
      return yield* configError(
        `context "${name}" in ${source} refers to cluster "${context.cluster}", which it does not define`,
        fields
      )
    }
    if (context.user && kc.getCurrentUser() === null) {
      return yield* configError(
        `context "${name}" in ${source} refers to user "${context.user}", which it does not define`,
        fields
      )
    }
    const url = URL.canParse(cluster.server) ? new URL(cluster.server) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return yield* configError(
        `cluster "${cluster.name}" in ${source} has server "${cluster.server}", which is not an http(s) URL`,
        fields
      )
    }
    if (url.protocol === "http:" && !cluster.skipTLSVerify) {
      // client-node refuses plain HTTP unless the cluster entry opts out of TLS checks.
      return yield* configError(
        `cluster "${cluster.name}" in ${source} uses plain HTTP (${cluster.server}): set insecure-skip-tls-verify: true on it`,
        fields
      )
    }
    return cluster.server.replace(/\/+$/, "")
  })

/**
 * Loads a kubeconfig from an explicit path or the default chain (KUBECONFIG,
 * ~/.kube/config, in-cluster), switches to `context` if given, and checks it.
 */
export const loadKubeConfig = (options: KubeConfigOptions = {}): Effect.Effect<k8s.KubeConfig, KubeConfigError> =>
  Effect.gen(function*() {
    const { kc, path: file, source } = yield* loadFromChain(options)
    if (options.context !== undefined) {
      if (kc.getContextObject(options.context) === null) {
        return yield* configError(
          `${source} has no context "${options.context}" (it has: ${
            kc.getContexts().map((c) => c.name).join(", ") || "none"
          })`,
          { path: file, context: options.context }
        )
      }
      kc.setCurrentContext(options.context)
    }
    yield* validate(kc, source, file)
    return kc
  })

// ---------------------------------------------------------------------------
// Failures

const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: "the connection was refused (is the API server running, and is the kubeconfig's server address right?)",
  ECONNRESET: "the connection was reset before the answer was complete",
  EPIPE: "the connection was closed while the request was being sent",
  ERR_STREAM_PREMATURE_CLOSE: "the connection closed before the answer was complete",
  ETIMEDOUT: "the connection timed out",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved just now",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ECONNABORTED: "the connection was aborted"
}

const TLS_CODE = /CERT|TLS|SSL|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/

const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code === "string") return code
  const cause = (error as { cause?: unknown }).cause
  return cause !== undefined && cause !== error ? errorCode(cause) : undefined
}

const errorName = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && typeof (error as { name?: unknown }).name === "string"
    ? (error as { name: string }).name
    : undefined

/**
 * A failure with no HTTP answer. Network failures become `Transport` (transient);
 * anything else failed inside the client before a request went out (a credential
 * plugin, a missing parameter) and retrying will not help: `Unexpected`. The
 * client's own message is never used: it can carry the URL with its query and more.
 */
export const fromTransportError = (ctx: RequestContext, server: string, error: unknown): KubeError => {
  const what = describeRequest(ctx)
  const code = errorCode(error)
  const name = errorName(error)
  const type = (error as { type?: unknown } | null)?.type
  if (code !== undefined && code in SYSTEM_ERRORS) {
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: ${SYSTEM_ERRORS[code]} (${code})`,
      kind: code === "ECONNREFUSED" ? "refused" : code === "ENOTFOUND" ? "dns" : code === "ETIMEDOUT" ? "no-answer" : "other"
    })
  }
  if (code !== undefined && TLS_CODE.test(code)) {
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: the TLS handshake failed (${code}); check the kubeconfig's certificate-authority and server name`,
      kind: "tls"
    })
  }
  if (name === "AbortError") {
    // Our own interruption never gets here (the fiber is gone); this is an abort from below.
    return new Transport({
      cause: error, reason: `could not ${what} at ${server}: the request was aborted`, kind: "other" })
  }
  if (type === "request-timeout" || type === "body-timeout") {
    return new Transport({
      cause: error, reason: `could not ${what} at ${server}: the request timed out`, kind: "no-answer" })
  }
  if (name === "FetchError" || code !== undefined) {
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: the request failed (${code ?? name ?? "no answer"})`,
      kind: "other"
    })
  }
  return new Unexpected({
    cause: error,
    reason: `could not ${what} at ${server}: the client failed before sending the request (${
      name ?? "unknown error"
    }); check the kubeconfig user's credentials`
  })
}

const isApiException = (error: unknown): error is k8s.ApiException<unknown> =>
  error instanceof k8s.ApiException ||
  (typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "number" &&
    typeof (error as { headers?: unknown }).headers === "object")

// ---------------------------------------------------------------------------
// Connections

/**
 * Calls in flight on one pool before more wait for a free connection: well above the
 * runner's concurrency (8), and a bound on what a burst costs the API server.
 */
const MAX_CALL_SOCKETS = 32
/** Idle connections a pool keeps for the next call or watch. */
const MAX_FREE_SOCKETS = 8
/**
 * An idle pooled connection is closed after this long: well inside kube-apiserver's
 * 90 s idle timeout, so a call never picks a connection the server is closing.
 */
const IDLE_SOCKET_TIMEOUT_MS = 30_000
/**
 * TLS identities pooled at once, per kind: a credential plugin that rotates the client
 * certificate gets a pool for the new one, and the oldest pool is retired.
 */
const MAX_IDENTITIES = 4

/** The TLS options client-node copies into the agents it builds (`KubeConfig.applyToHTTPSOptions`). */
const TLS_OPTIONS = [
  "ca",
  "cert",
  "key",
  "pfx",
  "passphrase",
  "rejectUnauthorized",
  "servername",
  "ciphers",
  "honorCipherOrder",
  "ecdhCurve",
  "clientCertEngine",
  "crl",
  "dhparam",
  "secureOptions",
  "secureProtocol",
  "sessionIdContext"
] as const

/**
 * Keep-alive agents shared by every call and watch of one client. client-node 1.4.0
 * builds a new agent for each request (`applySecurityAuthentication`, `applyToHTTPSOptions`)
 * carrying the kubeconfig's CA, client certificate and TLS settings, so each request
 * opened its own connection. Here the agent it built picks a pooled one with the very
 * same TLS options (keyed by a digest of them), so credentials read per request (a
 * rotated certificate, a refreshed token in the headers) still apply.
 */
interface ConnectionPools {
  /** The pooled agent for a call client-node would have sent through `built`. */
  readonly forCall: (built: http.Agent | undefined) => http.Agent | undefined
  /**
   * The same for a watch. Watches have pools of their own, unbounded in connections
   * (each holds one for its life, and a bound would hang the next watch), so that they
   * never take a call's place; a watch the server ended leaves its connection for the next.
   */
  readonly forWatch: (built: http.Agent | undefined) => http.Agent | undefined
  /** Closes every pooled connection. */
  readonly close: () => void
}

const digest = (options: https.AgentOptions): string => {
  const hash = createHash("sha256")
  for (const name of TLS_OPTIONS) {
    const value: unknown = options[name]
    hash.update(`${name}\0`)
    for (const part of Array.isArray(value) ? value : [value]) {
      if (Buffer.isBuffer(part)) hash.update("b").update(part)
      else if (typeof part === "string") hash.update("s").update(part)
      else hash.update(`j${JSON.stringify(part) ?? "undefined"}`)
      hash.update("\0")
    }
  }
  return hash.digest("base64")
}

const tlsOptionsOf = (agent: https.Agent): https.AgentOptions => {
  const options: Record<string, unknown> = {}
  for (const name of TLS_OPTIONS) {
    // Only what client-node set: an explicit undefined `rejectUnauthorized` would turn verification off.
    if (agent.options[name] !== undefined) options[name] = agent.options[name]
  }
  return options as https.AgentOptions
}

/** A pool that is no longer picked: its idle connections go now, busy ones when their idle timeout passes. */
const retire = (agent: http.Agent) => {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy()
}

const makeConnectionPools = (): ConnectionPools => {
  // Insertion order is recency: a pool used again moves to the end.
  const pools = new Map<string, http.Agent>()
  const pooled = (kind: "call" | "watch", built: http.Agent | undefined): http.Agent | undefined => {
    // A proxy agent (the cluster's proxy-url) is of another class, carrying its proxy: used as built.
    if (built === undefined || (built.constructor !== http.Agent && built.constructor !== https.Agent)) return built
    const secure = built instanceof https.Agent
    const tls = secure ? tlsOptionsOf(built) : {}
    const key = `${kind} ${secure ? `https ${digest(tls)}` : "http"}`
    const found = pools.get(key)
    if (found !== undefined) {
      pools.delete(key)
      pools.set(key, found)
      return found
    }
    const options: https.AgentOptions = {
      ...tls,
      keepAlive: true,
      // The most recently used connection first, so a quiet client keeps few warm.
      scheduling: "lifo",
      timeout: IDLE_SOCKET_TIMEOUT_MS,
      maxFreeSockets: MAX_FREE_SOCKETS,
      ...(kind === "call" ? { maxSockets: MAX_CALL_SOCKETS } : {})
    }
    const agent = secure ? new https.Agent(options) : new http.Agent(options)
    pools.set(key, agent)
    const ofKind = [...pools.keys()].filter((k) => k.startsWith(`${kind} `))
    if (ofKind.length > MAX_IDENTITIES) {
      const oldest = ofKind[0]!
      retire(pools.get(oldest)!)
      pools.delete(oldest)
    }
    return agent
  }
  return {
    forCall: (built) => pooled("call", built),
    forWatch: (built) => pooled("watch", built),
    close: () => {
      for (const agent of pools.values()) agent.destroy()
      pools.clear()
    }
  }
}

/**
 * Static middleware of the typed APIs: runs after client-node has authenticated the
 * request (headers set, agent built), and sends it through the pool instead.
 */
const pooledConnections = (pools: ConnectionPools): k8s.ObservableMiddleware => ({
  pre: (request) => {
    const agent = pools.forCall(request.getAgent())
    if (agent !== undefined) request.setAgent(agent)
    return new k8s.Observable(Promise.resolve(request))
  },
  post: (response) => new k8s.Observable(Promise.resolve(response))
})

// ---------------------------------------------------------------------------
// Calls through the typed APIs

/**
 * Per-call middleware: `pre` hands the fiber's abort signal to the request, so
 * interrupting the fiber cancels it; `post` keeps the raw body, because the typed
 * APIs turn answers into model instances (timestamps become Dates, unknown fields
 * vanish) and error bodies into whatever `getBodyAsAny` makes of them.
 */
const callMiddleware = (signal: AbortSignal, captured: { text?: string }): k8s.ObservableMiddleware => ({
  pre: (request) => {
    request.setSignal(signal)
    return new k8s.Observable(Promise.resolve(request))
  },
  post: (response) =>
    new k8s.Observable(
      response.body.text().then((text) => {
        captured.text = text
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
  // `kc.makeApiClient`, plus the middleware that pools connections.
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(server, {}),
    authMethods: { default: kc },
    middleware: [pooledConnections(pools)]
  })
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
        custom.patchClusterCustomObject({ group, version, plural, name, body, fieldManager: FIELD_MANAGER, ...params }, options),
      get: (_namespace, name, options) => custom.getClusterCustomObject({ group, version, plural, name }, options),
      delete: (_namespace, name, options) => custom.deleteClusterCustomObject({ group, version, plural, name }, options),
      list: (_namespace, labelSelector, options) =>
        custom.listClusterCustomObject({ group, version, plural, ...selector(labelSelector) }, options)
    }
  }
  return (resource: ResourceType<unknown>): Effect.Effect<Family> => {
    if (resource.group === "" && resource.plural === "services") return Effect.succeed(services)
    if (resource.group === "networking.k8s.io" && resource.plural === "ingresses") return Effect.succeed(ingresses)
    if (resource.custom) return Effect.succeed(resource.namespaced ? customFamily(resource) : clusterCustomFamily(resource))
    // The KubeClient types admit only Services, Ingresses and Gateway API kinds:
    // anything else is a programming error, not a cluster answer.
    return Effect.dieMessage(`KubeClientLive does not handle ${qualifiedName(resource)}`)
  }
}

const parseJson = (ctx: RequestContext, server: string, text: string | undefined): Effect.Effect<unknown, KubeError> =>
  Effect.try({
    try: () => JSON.parse(text ?? "") as unknown,
    catch: () =>
      new Unexpected({ reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body that is not JSON` })
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
  return { ...object, apiVersion: object.apiVersion ?? apiVersionOf(resource), kind: object.kind ?? resource.kind, metadata }
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
const openWatch = async (kc: k8s.KubeConfig, pools: ConnectionPools, url: URL, signal: AbortSignal): Promise<WatchOpening> => {
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

/**
 * The body of an open watch as a stream of bytes, ending when the server ends it.
 * Events rather than `for await`: a Readable's async iterator queues `return()`
 * behind a pending `next()`, so an idle watch could never be closed from our side.
 * The buffer is unbounded because dropping a chunk would lose an event; a watch's
 * volume is what the server writes, a few objects per change.
 */
const watchBody = (
  response: http.IncomingMessage,
  onError: (error: unknown) => KubeError
): Stream.Stream<Uint8Array, KubeError> =>
  Stream.asyncPush<Uint8Array, KubeError>(
    (emit) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let ended = false
          response.on("data", (chunk: Buffer) => emit.single(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)))
          response.on("end", () => {
            ended = true
            emit.end()
          })
          // A connection cut mid-body surfaces as an "aborted" ECONNRESET error.
          response.on("error", (error) => emit.fail(onError(error)))
          response.on("close", () => {
            if (!ended) emit.fail(onError(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
          })
        }),
        () => Effect.sync(() => response.destroy())
      ),
    { bufferSize: "unbounded" }
  )

const isStatus = (value: unknown): value is Status =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "Status"

/**
 * One line of a watch stream as an event. A line we cannot read fails the connection
 * as `Transport` rather than being skipped: the resuming watch then reconnects from
 * the last resourceVersion it saw, so the event behind the garbage is not lost.
 */
export const parseWatchLine = <A>(
  ctx: RequestContext,
  server: string,
  line: string
): Effect.Effect<RawWatchEvent<A> | undefined, KubeError> => {
  const garbled = (what: string) =>
    Effect.fail(new Transport({ reason: `the watch from ${server} (${describeRequest(ctx)}) sent ${what}` }))
  let parsed: { type?: unknown; object?: unknown }
  try {
    parsed = JSON.parse(line) as { type?: unknown; object?: unknown }
  } catch {
    return garbled("a line that is not JSON")
  }
  if (typeof parsed !== "object" || parsed === null) return garbled("a line that is not an event")
  const object = parsed.object as KubeObject | undefined
  switch (parsed.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED":
      if (typeof object !== "object" || object === null) return garbled(`a ${parsed.type} event without an object`)
      return Effect.succeed({ type: parsed.type, object: object as A })
    case "BOOKMARK": {
      const resourceVersion = object?.metadata?.resourceVersion
      return Effect.succeed(resourceVersion !== undefined ? { type: "BOOKMARK", resourceVersion } : undefined)
    }
    case "ERROR":
      return Effect.succeed({
        type: "ERROR",
        error: isStatus(parsed.object)
          ? fromStatus(ctx, parsed.object)
          : fromResponse(ctx, 500, JSON.stringify(parsed.object ?? null))
      })
    default:
      return garbled(`an event of unknown type ${JSON.stringify(parsed.type)}`)
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
): Effect.Effect<KubeClient.Service, KubeConfigError> => Effect.suspend(() => makeOver(kc, options, makeConnectionPools()))

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

    /** One call, its raw JSON answer parsed; timed out per attempt, retried while transient. */
    const call = (
      ctx: RequestContext,
      resource: ResourceType<unknown>,
      run: (family: Family, options: k8s.ConfigurationOptions) => Promise<unknown>,
      contentType?: k8s.PatchStrategy
    ): Effect.Effect<unknown, KubeError> =>
      Effect.flatMap(familyFor(resource), (family) => Effect.suspend(() => {
        const captured: { text?: string } = {}
        const attempt = Effect.tryPromise({
          try: (signal) => {
            const base: k8s.ConfigurationOptions = {
              middleware: [callMiddleware(signal, captured)],
              middlewareMergeStrategy: "append"
            }
            return run(family, contentType !== undefined ? k8s.setHeaderOptions("Content-Type", contentType, base) : base)
          },
          catch: (error): KubeError =>
            isApiException(error)
              ? fromResponse(ctx, error.code, captured.text ?? error.body, error.headers["retry-after"], error)
              : captured.text !== undefined
              // An answer arrived, and the typed API could not deserialise it.
              ? new Unexpected({
                reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body the client could not read`
              })
              : fromTransportError(ctx, server, error)
        })
        return attempt.pipe(Effect.flatMap(() => parseJson(ctx, server, captured.text)))
      }).pipe((self) => limited(ctx, self)))

    const named = (verb: string, resource: ResourceType<unknown>, namespace: string, name?: string): RequestContext => ({
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
        k8s.PatchStrategy.ServerSideApply
      ) as Effect.Effect<never, KubeError>
    }

    const get: KubeClientPrimitives["get"] = (resource, namespace, name) =>
      call(named("get", resource, namespace, name), resource, (family, opts) => family.get(namespace, name, opts)) as Effect.Effect<
        never,
        KubeError
      >

    const del: KubeClientPrimitives["delete"] = (resource, namespace, name) =>
      Effect.asVoid(
        call(named("delete", resource, namespace, name), resource, (family, opts) => family.delete(namespace, name, opts))
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
          const opening = yield* Effect.tryPromise({
            try: (signal) => openWatch(kc, pools, url, AbortSignal.any([signal, connection.signal])),
            catch: (error) => fromTransportError(ctx, server, error)
          }).pipe(
            Effect.flatMap((opened) =>
              opened.ok ? Effect.succeed(opened.response) : Effect.fail(fromResponse(ctx, opened.code, opened.text, opened.retryAfter))
            ),
            (self) => limited(ctx, self)
          )
          return watchBody(opening, (error) => fromTransportError(ctx, server, error)).pipe(
            Stream.decodeText(),
            Stream.splitLines,
            Stream.filter((line) => line.trim() !== ""),
            Stream.mapEffect((line) => parseWatchLine<A>(ctx, server, line)),
            Stream.filter((event): event is RawWatchEvent<A> => event !== undefined)
          )
        })
      )
    }

    return makeKubeClient(
      { apply, get, delete: del, list, watchFrom },
      options.reconnectSchedule !== undefined ? { reconnectSchedule: options.reconnectSchedule } : {}
    )
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
