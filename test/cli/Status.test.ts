/**
 * `session-routing status` end to end over HTTP against LocalCluster: one read of
 * each host the cluster holds, in publish's event shapes, and an exit status that
 * is 0 only when every host is programmed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { cliCluster, gatewayEnv, jsonLines } from "./CliCluster.js"
import { runCli } from "./TestCli.js"

const sessionId = "k3v9q2"
const publishArgs = [
  "publish",
  "--session",
  sessionId,
  "--pod",
  `telo-run-${sessionId}`,
  "--pod-uid",
  "8d0f0f5e-1b7a-4f0e-9c33-5f1f3c2b9a10",
  "--port",
  "8080",
  "--port",
  "9090"
]
const hostOf = (port: number) => `${port}-${sessionId}.sessions.localtest.me`

describe("session-routing status", () => {
  it.live("reports every host programmed and exits 0 once the controller has programmed them", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k, "--watch"], cluster.env)).exitCode).toBe(0)
        const result = yield* runCli(["status", "--session", sessionId, ...k, "-o", "json"], cluster.env)
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(0)
        expect(jsonLines(result.stdout)).toEqual([
          { type: "route", port: 8080, host: hostOf(8080), state: "programmed" },
          { type: "route", port: 9090, host: hostOf(9090), state: "programmed" }
        ])
      })
    ))

  it.live("exits 3 while hosts are still pending, saying since when, one plain line each off a terminal", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k], cluster.env)).exitCode).toBe(0)
        const result = yield* runCli(["status", "--session", sessionId, ...k], cluster.env).pipe(
          Effect.provideService(StdoutTerminal, { isTTY: false, columns: () => undefined })
        )
        expect(result).toMatchObject({ exitCode: 3, stderr: "" })
        const since = "published \\d+ s ago; unprogrammed if still pending 10 s after"
        expect(result.stdout).toMatch(
          new RegExp(`^${hostOf(8080)} pending: ${since}\\n${hostOf(9090)} pending: ${since}\\n$`)
        )
      })
    ))

  it.live("reports a host pending past the route deadline as unprogrammed with its diagnosis, as a watch would", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        const env = { ...cluster.env, SESSION_INGRESS_CLASS: "absent" }
        expect((yield* runCli([...publishArgs, ...k], env)).exitCode).toBe(0)
        const result = yield* runCli(["status", "--session", sessionId, ...k, "-o", "json"], {
          ...env,
          SESSION_ROUTE_READY_TIMEOUT_MS: "1"
        })
        expect(result.exitCode).toBe(3)
        expect(jsonLines(result.stdout).map((event) => event.type === "route" && [event.port, event.state, event.code]))
          .toEqual([[8080, "unprogrammed", "IngressClassNotFound"], [9090, "unprogrammed", "IngressClassNotFound"]])
      })
    ))

  // The objects say how the session was published: no mode, Gateway or base domain is asked for.
  it.live("reads a session published in gateway mode with none of gateway mode's settings", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: { delay: Duration.millis(50) } })
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k, "--watch"], gatewayEnv(cluster))).exitCode).toBe(0)
        const result = yield* runCli(["status", "--session", sessionId, ...k, "-o", "json"], {
          RUNNER_SESSION_NAMESPACE: cluster.namespace
        })
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(0)
        expect(jsonLines(result.stdout)).toEqual([
          { type: "route", port: 8080, host: hostOf(8080), state: "programmed" },
          { type: "route", port: 9090, host: hostOf(9090), state: "programmed" }
        ])
      })
    ))

  it.live("reports a host whose Gateway listener refuses it as unprogrammed, and exits 3", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({
          ingress: false,
          gateway: { delay: Duration.millis(50), gatewayNamespace: "gateways", allowedRoutes: "Same" }
        })
        const env = gatewayEnv(cluster)
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, "--port", "7070", ...k, "--watch"], env)).exitCode).toBe(3)
        const result = yield* runCli(["status", "--session", sessionId, ...k, "-o", "json"], env)
        const reason =
          `NotAllowedByListeners: no listener of Gateway gateways/sessions admits HTTPRoutes from namespace "${cluster.namespace}" (allowedRoutes.namespaces.from: Same)`
        expect(result.exitCode).toBe(3)
        expect(jsonLines(result.stdout)).toEqual([7070, 8080, 9090].map((port) => ({
          type: "route",
          port,
          host: hostOf(port),
          state: "unprogrammed",
          reason,
          code: "NotAllowedByListeners"
        })))
      })
    ))

  // A script checking a session that is not there must not read success.
  it.live("exits 1 with one line for a session with no routing objects", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const result = yield* runCli([
          "status",
          "--session",
          sessionId,
          "--kubeconfig",
          cluster.kubeconfig,
          "-o",
          "json"
        ], cluster.env)
        expect(result).toEqual({
          exitCode: 1,
          stdout: "",
          stderr:
            `error: session ${sessionId} has no routing objects in namespace ${cluster.namespace} (no Service, Ingress or HTTPRoute labelled telo.run/session-id=${sessionId}): was it published there?\n`
        })
      })
    ))

  it.live("reads the hosts back from the cluster, so a port a reload dropped is no longer reported", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k], cluster.env)).exitCode).toBe(0)
        // The reload keeps 9090 only; status runs in another process's shoes, from the Ingress.
        const reload = [
          "publish",
          "--session",
          sessionId,
          "--pod",
          `telo-run-${sessionId}`,
          "--pod-uid",
          "8d0f0f5e-1b7a-4f0e-9c33-5f1f3c2b9a10",
          "--port",
          "9090"
        ]
        expect((yield* runCli([...reload, ...k], cluster.env)).exitCode).toBe(0)
        const result = yield* runCli(["status", "--session", sessionId, ...k, "-o", "json"], cluster.env)
        expect(jsonLines(result.stdout)).toMatchObject([{
          type: "route",
          port: 9090,
          host: hostOf(9090),
          state: "pending"
        }])
        expect(result.exitCode).toBe(3)
      })
    ))
})
