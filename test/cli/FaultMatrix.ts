/**
 * What the fault-matrix tests share: a session cluster over HTTP with short time
 * limits, the objects a session left in the store, the class of a host's reason,
 * and a CLI run that reports how long it took.
 */
import { Fault, type FaultAction, type FaultSpec, SessionCluster } from "@session-routing/local-cluster"
import { Clock, Duration, Effect, Schedule } from "effect"
import { DIAGNOSIS_CODES } from "../../src/domain/Diagnosis.js"
import type { KubeObject } from "../../src/domain/Objects.js"
import { HttpRouteResource, IngressResource, type ResourceType, ServiceResource } from "../../src/domain/Resources.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { type CliCluster, cliCluster, jsonLines } from "./CliCluster.js"
import { type CliResult, runCli } from "./TestCli.js"

/** The time limits every matrix cell runs with: small, so that persistent faults end quickly. */
export const LIMITS = {
  SESSION_API_TIMEOUT_MS: "1000",
  SESSION_ROUTE_READY_TIMEOUT_MS: "1500",
  SESSION_ROUTE_POLL_INTERVAL_MS: "100",
  // A fault here hits every request, Event writes too; each cell asserts the route events
  // exactly, and the Events' own failures are tested in EventRecorderLive.test.ts.
  SESSION_ROUTING_EVENTS: "false"
} as const

/**
 * The most a persistent fault may cost one command: one API budget per call it cannot
 * skip (a publish's first call, the removal of what it created), with room for a
 * loaded machine. A hung server once cost 225 s.
 */
export const FAULT_BOUND_MS = 6_000

export const SESSION = "fltm4trx"
const POD = [`--pod`, `telo-run-${SESSION}`, `--pod-uid`, "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"]
export const PORTS = ["--port", "8080", "--port", "9090"]

/** A session cluster with the matrix's limits in its environment. */
export const matrixCluster = (options: SessionCluster.SessionClusterOptions = {}) =>
  Effect.map(cliCluster(options), (cluster): CliCluster => ({ ...cluster, env: { ...cluster.env, ...LIMITS } }))

/** The args of a command on this session against `cluster`. */
export const args = (
  cluster: CliCluster,
  command: "publish" | "status" | "unpublish",
  ...rest: ReadonlyArray<string>
) => [
  command,
  "--session",
  SESSION,
  ...(command === "publish" ? [...POD, ...PORTS] : []),
  "--kubeconfig",
  cluster.kubeconfig,
  ...rest
]

/** A CLI run and how long it took on the real clock. */
export const timedCli = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const result = yield* runCli(argv, env)
    return { ...result, tookMs: (yield* Clock.currentTimeMillis) - started }
  })

/** `kind/name` of every object the session has in the store, sorted. */
export const sessionObjects = (cluster: CliCluster): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const kinds: ReadonlyArray<ResourceType<KubeObject>> = [ServiceResource, IngressResource, HttpRouteResource]
    const names: Array<string> = []
    for (const resource of kinds) {
      const list = yield* Effect.orDie(cluster.cluster.store.list(resource, cluster.namespace))
      for (const item of list.items as ReadonlyArray<{ readonly metadata?: { readonly name?: string } }>) {
        const name = item.metadata?.name ?? ""
        if (name.startsWith(`telo-run-${SESSION}`)) names.push(`${resource.kind}/${name}`)
      }
    }
    return names.sort()
  })

/** What a session's objects are after a good publish in ingress mode. */
export const INGRESS_OBJECTS = [`Ingress/telo-run-${SESSION}`, `Service/telo-run-${SESSION}`]

/** A fault as the matrix names it, and what a person must be told of it. */
export interface Row {
  readonly name: string
  readonly action: FaultAction
  readonly verbs?: FaultSpec["verbs"]
  /** Unset: persistent. */
  readonly times?: number
  /** What the error line (or the host's reason) must say. */
  readonly says: RegExp
}

const once = (name: string, action: FaultAction): Row => ({ name: `${name} once`, action, times: 1, says: /./ })

/** Credentials refused, on every request. */
export const UNAUTHORIZED: Row = { name: "401", action: Fault.respond(401), says: /refused the credentials \(401\)/ }

/** 403 on `verbs`, in the authorizer's words. */
export const forbiddenOn = (verbs: FaultSpec["verbs"], name: string): Row => ({
  name,
  action: Fault.forbid(),
  ...(verbs !== undefined ? { verbs } : {}),
  says: /forbidden/
})

/** Faults a retry would ride out if they stopped, made persistent: throttling, 5xx, resets and hangs. */
export const PERSISTENT_TRANSIENT: ReadonlyArray<Row> = [
  { name: "429 persistent", action: Fault.throttle(1), says: /throttling requests \(429\)/ },
  { name: "500 persistent", action: Fault.respond(500), says: /\(500/ },
  { name: "502 persistent", action: Fault.respond(502), says: /\(502/ },
  { name: "503 persistent", action: Fault.respond(503), says: /\(503/ },
  { name: "504 persistent", action: Fault.respond(504), says: /\(504/ },
  { name: "reset persistent", action: Fault.reset, says: /reset|closed before the answer/ },
  { name: "hang persistent", action: Fault.hang, says: /no answer within/ }
]

/** The same faults, once each: the next attempt gets through. */
export const ONE_OFF: ReadonlyArray<Row> = [
  once("429", Fault.throttle(0)),
  once("500", Fault.respond(500)),
  once("502", Fault.respond(502)),
  once("503", Fault.respond(503)),
  once("504", Fault.respond(504)),
  once("reset", Fault.reset),
  once("hang", Fault.hang)
]

/** The class of a host's terminal reason. */
export type ReasonClass = "programmed" | "read-failure" | "unclaimed" | "rejected"

export const classOf = (event: SessionEvent): ReasonClass | undefined => {
  if (event.type !== "route" || event.state === "pending") return undefined
  if (event.state === "programmed") return "programmed"
  const reason = event.reason ?? ""
  if (reason.startsWith("route status could not be read: ")) return "read-failure"
  // The cluster answered and nothing programmed the host: its diagnosis, or the generic
  // advice when the diagnosis could not be read.
  if (
    reason.startsWith("no ingress controller claimed") || reason.startsWith("no Gateway controller accepted") ||
    DIAGNOSIS_CODES.some((code) => reason.startsWith(`${code}: `))
  ) {
    return "unclaimed"
  }
  return "rejected"
}

/** The terminal events of a watch's output, by host. */
export const terminalOf = (result: CliResult): ReadonlyArray<SessionEvent & { readonly type: "route" }> =>
  jsonLines(result.stdout).filter(
    (event): event is SessionEvent & { readonly type: "route" } => event.type === "route" && event.state !== "pending"
  )

/** Every `read-error` event of a run's output. */
export const readErrorsOf = (result: CliResult) =>
  jsonLines(result.stdout).filter((event) => event.type === "read-error")

/**
 * Waits until the cluster has served `count` more requests matching `target`: a
 * one-use-per-request tripwire (zero latency) that is gone once they came.
 */
export const awaitRequests = (cluster: CliCluster, target: Omit<FaultSpec, "action" | "times">, count: number) =>
  Effect.gen(function*() {
    const id = yield* cluster.cluster.faults.add({ ...target, action: Fault.latency(Duration.zero), times: count })
    yield* cluster.cluster.faults.active.pipe(
      Effect.map((faults) => faults.some((fault) => fault.id === id)),
      Effect.repeat({ schedule: Schedule.spaced(Duration.millis(5)), while: (present) => present }),
      Effect.timeoutFail({ duration: Duration.seconds(10), onTimeout: () => new Error(`${count} requests never came`) })
    )
  })

/** The stderr of a failed command: exactly one line. */
export const oneLine = (result: CliResult): string => {
  const lines = result.stderr.split("\n").filter((line) => line !== "")
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${JSON.stringify(result.stderr)}`)
  return lines[0]!
}
