/**
 * What the CLI's end-to-end tests share: a SessionCluster.SessionCluster served over HTTP on
 * 127.0.0.1, a kubeconfig for it written to a temporary file, and the environment the
 * CLI reads, so each test runs the real binary path against a real socket.
 */
import { SessionCluster } from "@session-routing/local-cluster"
import { Effect, type Scope } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Endpoint } from "../../src/domain/Routes.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"

/** A running cluster and the flags and environment that reach it. */
export interface CliCluster extends SessionCluster.SessionCluster {
  /** Path of the kubeconfig the test wrote. */
  readonly kubeconfig: string
  /** The environment for ingress mode on this cluster, quick enough for a test. */
  readonly env: Readonly<Record<string, string>>
}

/** A temporary directory, removed with the scope. */
export const tempDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-cli-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Starts the cluster (no data plane: these tests read status, not traffic) and writes its kubeconfig. */
export const cliCluster = (
  options: SessionCluster.SessionClusterOptions = {}
): Effect.Effect<CliCluster, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const session = yield* SessionCluster.make({ dataPlane: false, ...options })
    const kubeconfig = join(yield* tempDir, "kubeconfig")
    yield* session.cluster.writeKubeconfig(kubeconfig)
    return {
      ...session,
      kubeconfig,
      env: {
        SESSION_ROUTING_BASE_DOMAIN: session.baseDomain,
        SESSION_INGRESS_CLASS: session.ingressClassName,
        RUNNER_SESSION_NAMESPACE: session.namespace,
        SESSION_ROUTE_READY_TIMEOUT_MS: "10000",
        SESSION_ROUTE_POLL_INTERVAL_MS: "50"
      }
    }
  })

/** The environment for gateway mode on this cluster: its Gateway, and no ingress class (gateway mode warns about one). */
export const gatewayEnv = (cluster: CliCluster): Readonly<Record<string, string>> => {
  const { SESSION_INGRESS_CLASS: _ignored, ...env } = cluster.env
  return {
    ...env,
    SESSION_ROUTING_MODE: "gateway",
    SESSION_GATEWAY_NAME: cluster.gateway.name,
    SESSION_GATEWAY_NAMESPACE: cluster.gateway.namespace
  }
}

/** Parses stdout as JSON lines. */
export const jsonLines = (stdout: string): ReadonlyArray<SessionEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SessionEvent)

/**
 * The events with the terminal ones sorted by port: hosts settle on their own fibers,
 * so two that settle on the same poll come in no promised order. Everything up to
 * the last `pending` keeps its order, which is the contract.
 */
export const settledInPortOrder = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<SessionEvent> => {
  const lastPending = events.findLastIndex((event) => event.type === "route" && event.state === "pending")
  const head = events.slice(0, lastPending + 1)
  const tail = events
    .slice(lastPending + 1)
    .toSorted((a, b) => (a.type === "route" ? a.port : 0) - (b.type === "route" ? b.port : 0))
  return [...head, ...tail]
}

/** The endpoint a routed tcp port gets. */
export const tcpEndpoint = (host: string, port: number): Endpoint => ({
  host,
  port,
  protocol: "tcp",
  url: `https://${host}`
})
