/**
 * `session-routing controller` as processes: the real binary against LocalCluster over
 * HTTP. One replica routes a labelled Pod and serves its health; two replicas elect
 * one leader, and when the leader is killed without a word the other takes over
 * within the Lease's duration and routes what came meanwhile.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { ROUTES_CONDITION } from "../../src/domain/PodRouting.js"
import { LeaseResource, PodResource } from "../../src/domain/Resources.js"
import { sessionPod } from "../support/SessionPods.js"
import { cliCluster } from "./CliCluster.js"
import { startCli } from "./CliProcess.js"

const programmedLine = (pod: string) => (line: string) => {
  try {
    const parsed = JSON.parse(line) as { pod?: string; status?: string }
    return parsed.pod === pod && parsed.status === "True"
  } catch {
    return false
  }
}

describe("session-routing controller", () => {
  it.scopedLive(
    "routes a labelled Pod, prints the condition it wrote, and serves /healthz and /readyz",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        const controller = yield* startCli(
          ["controller", "--kubeconfig", cluster.kubeconfig, "--no-leader-elect", "-o", "json", "--metrics-port", "0"],
          cluster.env
        )
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, sessionPod("one-pod", "one")))
        const line = yield* Effect.orDie(controller.stdoutLine(programmedLine("one-pod")))
        expect(JSON.parse(line)).toEqual({
          type: "condition",
          namespace: cluster.namespace,
          pod: "one-pod",
          condition: ROUTES_CONDITION,
          status: "True",
          reason: "RoutesProgrammed",
          message: `every host is programmed: 8080-one.${cluster.baseDomain}`
        })
        const metrics = /metrics: (http:\/\/\S+)\/metrics/.exec(controller.stderr())
        expect(metrics).not.toBeNull()
        const base = metrics![1]!
        const health = yield* Effect.promise(() => fetch(`${base}/healthz`))
        const ready = yield* Effect.promise(() => fetch(`${base}/readyz`))
        expect([health.status, ready.status]).toEqual([200, 200])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "elects one leader of two; the other takes over within the Lease's duration once it is killed",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        const args = (identity: string) => [
          "controller",
          "--kubeconfig",
          cluster.kubeconfig,
          "--identity",
          identity,
          "-o",
          "json"
        ]
        const first = yield* startCli(args("replica-a"), cluster.env)
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, sessionPod("a-pod", "sa")))
        yield* Effect.orDie(first.stdoutLine(programmedLine("a-pod")))
        const second = yield* startCli(args("replica-b"), cluster.env)
        // The second waits: it sees the Lease held, and writes nothing.
        yield* Effect.orDie(
          Effect.repeat(Effect.sync(() => second.stderr()), {
            until: (text) => text.includes("is held by replica-a"),
            schedule: Schedule.spaced(Duration.millis(50))
          }).pipe(Effect.timeout(Duration.seconds(20)))
        )
        expect(second.stdout()).toBe("")

        const killedAt = Date.now()
        first.child.kill("SIGKILL")
        yield* Effect.orDie(first.ended())
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, sessionPod("b-pod", "sb")))
        yield* Effect.orDie(second.stdoutLine(programmedLine("b-pod"), Duration.seconds(40)))
        const tookOver = Date.now() - killedAt
        // Not before the Lease (15 s) could have expired, and well within one more retry round.
        expect(tookOver).toBeGreaterThanOrEqual(13_000)
        expect(tookOver).toBeLessThan(30_000)
        const lease = yield* Effect.orDie(
          cluster.cluster.store.get(LeaseResource, cluster.namespace, "session-routing-controller")
        )
        expect(lease.spec).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 })
        // The Pod routed before the handover keeps its condition; the new leader rewrote nothing that held.
        const a = yield* Effect.orDie(cluster.cluster.store.get(PodResource, cluster.namespace, "a-pod"))
        expect(a.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status).toBe("True")
        expect(second.stdout()).not.toContain("a-pod")
      }),
    { timeout: 90_000 }
  )
})
