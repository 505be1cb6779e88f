/**
 * Keep-alive connection pools for the live client: client-node builds a fresh agent
 * (with the kubeconfig's CA, client certificate and TLS settings) each time it applies
 * the credentials to a request; that agent is swapped for one from a pool keyed by the
 * same TLS settings, so calls and watches reuse connections and a rotated certificate
 * gets a pool of its own.
 */
import { createHash } from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"

/**
 * Calls in flight at once, and connections a call pool opens: a bound on what a burst
 * (thousands of sessions published at once) costs the API server. The client admits
 * calls up to it and queues the rest itself, so no call waits inside the agent.
 */
export const MAX_CALL_SOCKETS = 32
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
 * builds a new agent each time it applies the credentials (`applyToHTTPSOptions`)
 * carrying the kubeconfig's CA, client certificate and TLS settings, so each request
 * opened its own connection. Here the agent it built picks a pooled one with the very
 * same TLS options (keyed by a digest of them), so credentials read per request (a
 * rotated certificate, a refreshed token in the headers) still apply.
 */
export interface ConnectionPools {
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

export const makeConnectionPools = (): ConnectionPools => {
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
