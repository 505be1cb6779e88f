/**
 * Loading a kubeconfig the way kubectl does (an explicit path, KUBECONFIG with its
 * merge rules, ~/.kube/config, or the in-cluster service account) and checking that
 * its context names a cluster the live client can talk to, with errors that name the
 * file and context at fault.
 */
import type * as k8s from "@kubernetes/client-node"
import { Config, Data, Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * The kubeconfig could not be found, read, or does not describe a usable cluster.
 *
 * @since 0.1.0
 * @category errors
 */
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

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"

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
  return message !== undefined && message !== ""
    ? `it is not a valid kubeconfig: ${message}`
    : "it is not a valid kubeconfig"
}

const loadFile = (kc: k8s.KubeConfig, file: string): Effect.Effect<void, KubeConfigError> =>
  Effect.try({
    try: () => kc.loadFromFile(file),
    catch: (error) =>
      configError(`could not load the kubeconfig ${file}: ${describeLoadFailure(error)}`, { path: file })
  })

interface Loaded {
  readonly kc: k8s.KubeConfig
  /** Where it came from, for messages. */
  readonly source: string
  readonly path?: string
}

/**
 * client-node, loaded when a kubeconfig is first read: its index pulls in every typed
 * API and model (a noticeable start-up time and memory), which a process that never talks to a
 * cluster (`--version`, `render`, a runner still starting) should not pay for.
 */
const clientNode = Effect.promise(() => import("@kubernetes/client-node"))

const loadFromChain = (options: KubeConfigOptions): Effect.Effect<Loaded, KubeConfigError> =>
  Effect.gen(function*() {
    const k8s = yield* clientNode
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
export const validate = (kc: k8s.KubeConfig, source: string, file?: string): Effect.Effect<string, KubeConfigError> =>
  Effect.gen(function*() {
    const name = kc.getCurrentContext()
    const fields = { path: file, context: name }
    const context = name ? kc.getContextObject(name) : null
    if (!name) return yield* configError(`${source} has no current-context: pass a context`, fields)
    if (context === null) {
      return yield* configError(
        `${source} has no context "${name}" (it has: ${kc.getContexts().map((c) => c.name).join(", ") || "none"})`,
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
        `cluster "${cluster.name}" in ${source} has server "${
          shownServer(cluster.server)
        }", which is not an http(s) URL`,
        fields
      )
    }
    // A plain-HTTP server (`kubectl proxy`'s http://127.0.0.1:8001) is accepted as it is,
    // as kubectl accepts it: `clientNodeView` keeps client-node from refusing it.
    return cluster.server.replace(/\/+$/, "")
  })

/**
 * The kubeconfig as client-node must see it to apply its credentials to a request.
 * client-node 1.4.0 refuses to build an agent for a plain-HTTP server unless its
 * cluster entry sets insecure-skip-tls-verify ("HTTP protocol is not allowed when
 * skipTLSVerify is not set or false"), a setting that means nothing without TLS and that
 * kubectl does not ask for. For such a server the view reads the current cluster with
 * it set, and everything else (users, exec plugins, authenticators) from `kc` itself;
 * `kc` is left as it was. Any other kubeconfig is returned as it is.
 */
export const clientNodeView = (kc: k8s.KubeConfig): k8s.KubeConfig => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null || cluster.skipTLSVerify || !cluster.server.startsWith("http:")) return kc
  const seen = { ...cluster, skipTLSVerify: true }
  // client-node's methods reach the cluster through `this.getCurrentCluster()`, and keep
  // no private fields, so a view over the instance works for every one of them.
  const view = Object.create(kc) as k8s.KubeConfig
  view.getCurrentCluster = () => seen
  return view
}

/** Whether `hostname` (as a URL gives it) is this machine: what goes to it never crosses a network. */
const isLoopback = (hostname: string): boolean => {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase()
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host)
}

/**
 * The warning for a kubeconfig whose requests would carry credentials unencrypted: a
 * plain-HTTP server that is not this machine, and a user with a token, a password, or
 * a plugin or auth provider that supplies a token. Undefined otherwise. kubectl sends
 * them all the same, and so does this client; the line says what travels in clear. A
 * client certificate is never sent without TLS, so it is not one of them.
 */
export const clearTextCredentialsWarning = (kc: k8s.KubeConfig): string | undefined => {
  const cluster = kc.getCurrentCluster()
  if (cluster === null || !URL.canParse(cluster.server)) return undefined
  const url = new URL(cluster.server)
  if (url.protocol !== "http:" || isLoopback(url.hostname)) return undefined
  const user = kc.getCurrentUser()
  const carried = [
    ...(user?.token !== undefined && user.token !== "" ? ["a bearer token"] : []),
    ...(user?.username !== undefined || user?.password !== undefined || url.username !== "" || url.password !== ""
      ? ["a user name and password"]
      : []),
    ...(user?.exec !== undefined ? ["the token of its exec credential plugin"] : []),
    ...(user?.authProvider !== undefined ? ["the token of its auth provider"] : [])
  ]
  if (carried.length === 0) return undefined
  return `cluster "${cluster.name}" is served over plain HTTP (${shownServer(cluster.server)}), so every request ` +
    `carries ${carried.join(" and ")} unencrypted across the network; use the server's https address, or ` +
    `kubectl proxy on this machine`
}

/**
 * The server URL as every message shows it: without the user and password a URL may
 * carry (`https://admin:secret@host`), which would otherwise reach errors, events and
 * Kubernetes Events readable by anyone who can list them.
 */
export const shownServer = (server: string): string => {
  // Not a URL: still drop whatever comes before an "@", as a URL's userinfo would.
  if (!URL.canParse(server)) return server.replace(/^([^/]*\/\/)?[^@/]*@/, "$1")
  const url = new URL(server)
  if (url.username === "" && url.password === "") return server
  url.username = ""
  url.password = ""
  return url.toString().replace(/\/+$/, "")
}

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
