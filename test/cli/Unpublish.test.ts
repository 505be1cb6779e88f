/**
 * `session-routing unpublish` end to end over HTTP against LocalCluster: the
 * session's objects go, and asking again (nothing left) still succeeds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { HttpRouteResource, IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import { cliCluster, gatewayEnv } from "./CliCluster.js"
import { runCli } from "./TestCli.js"

const sessionId = "r2d2c3po"
const publishArgs = [
  "publish",
  "--session",
  sessionId,
  "--pod",
  `telo-run-${sessionId}`,
  "--pod-uid",
  "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
  "--port",
  "8080",
  "--port",
  "9090"
]

describe("session-routing unpublish", () => {
  it.live("deletes the Service and Ingress, exits 0, and exits 0 again when nothing is left", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k, "--watch"], cluster.env)).exitCode).toBe(0)
        const count = Effect.all([
          Effect.map(cluster.cluster.store.list(ServiceResource, cluster.namespace), (list) => list.items.length),
          Effect.map(cluster.cluster.store.list(IngressResource, cluster.namespace), (list) => list.items.length)
        ])
        expect(yield* count).toEqual([1, 1])

        const first = yield* runCli(["unpublish", "--session", sessionId, ...k], cluster.env)
        expect(first).toEqual({
          exitCode: 0,
          stdout: `Ingress ${cluster.namespace}/telo-run-${sessionId} deleted\n` +
            `Service ${cluster.namespace}/telo-run-${sessionId} deleted\n`,
          stderr: ""
        })
        expect(yield* count).toEqual([0, 0])

        const again = yield* runCli(["unpublish", "--session", sessionId, ...k], cluster.env)
        expect(again).toEqual({
          exitCode: 0,
          stdout: "",
          stderr:
            `note: session ${sessionId} has no routing objects in namespace ${cluster.namespace}: nothing to delete\n`
        })
      })
    ))

  it.live("deletes every HTTPRoute of the session in gateway mode, and leaves other sessions alone", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const env = gatewayEnv(cluster)
        const k = ["--kubeconfig", cluster.kubeconfig]
        expect((yield* runCli([...publishArgs, ...k], env)).exitCode).toBe(0)
        const other = [
          "publish",
          "--session",
          "other",
          "--pod",
          "telo-run-other",
          "--pod-uid",
          "u-1",
          "--port",
          "8080",
          ...k
        ]
        expect((yield* runCli(other, env)).exitCode).toBe(0)

        // With nothing of gateway mode's configuration: the objects are found by their labels.
        const result = yield* runCli(["unpublish", "--session", sessionId, ...k], {
          RUNNER_SESSION_NAMESPACE: cluster.namespace
        })
        expect(result).toEqual({
          exitCode: 0,
          stdout: [8080, 9090].map((port) => `HTTPRoute ${cluster.namespace}/telo-run-${sessionId}-${port} deleted\n`)
            .join("") + `Service ${cluster.namespace}/telo-run-${sessionId} deleted\n`,
          stderr: ""
        })
        const routes = yield* cluster.cluster.store.list(HttpRouteResource, cluster.namespace)
        expect(routes.items.map((route) => route.metadata?.name)).toEqual(["telo-run-other-8080"])
        const services = yield* cluster.cluster.store.list(ServiceResource, cluster.namespace)
        expect(services.items.map((service) => service.metadata?.name)).toEqual(["telo-run-other"])
      })
    ))

  // A cleanup script that forgot a variable must not see success with the objects still there.
  it.live("deletes a session's objects whatever the mode and base domain say: none, unset, or the other mode", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const k = ["--kubeconfig", cluster.kubeconfig]
        const count = Effect.all([
          Effect.map(cluster.cluster.store.list(ServiceResource, cluster.namespace), (list) => list.items.length),
          Effect.map(cluster.cluster.store.list(IngressResource, cluster.namespace), (list) => list.items.length)
        ])
        for (
          const [env, extra] of [
            [{ RUNNER_SESSION_NAMESPACE: cluster.namespace }, []],
            [{ ...cluster.env, SESSION_ROUTING_MODE: "none" }, []],
            [{ ...cluster.env }, ["--mode", "none"]]
          ] as const
        ) {
          expect((yield* runCli([...publishArgs, ...k], cluster.env)).exitCode).toBe(0)
          expect(yield* count).toEqual([1, 1])
          const result = yield* runCli(["unpublish", "--session", sessionId, ...k, ...extra], env)
          expect(result.exitCode, result.stderr).toBe(0)
          expect(yield* count).toEqual([0, 0])
        }
        // The other mode's --mode still finds the Ingress, as a router finds what the other mode left.
        expect((yield* runCli([...publishArgs, ...k], cluster.env)).exitCode).toBe(0)
        const other = yield* runCli(["unpublish", "--session", sessionId, ...k, "--mode", "gateway"], cluster.env)
        expect(other.exitCode, other.stderr).toBe(0)
        expect(yield* count).toEqual([0, 0])
      })
    ))
})
