/**
 * How `session-routing controller` starts and stops, as a process against LocalCluster:
 * a session namespace that does not exist stops it at start with a line saying so, and
 * SIGINT or SIGTERM is a clean stop that hands the Lease on and exits 0.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Duration, Effect, Schedule } from "effect"
import type { Pod } from "../../src/domain/Objects.js"
import { SESSION_LABEL } from "../../src/domain/PodRouting.js"
import { LeaseResource, PodResource } from "../../src/domain/Resources.js"
import { cliCluster } from "./CliCluster.js"
import { type CliProcess, startCli } from "./CliProcess.js"

/** Waits until the process's stderr holds `text`. */
const stderrHolds = (proc: CliProcess, text: string) =>
  Effect.orDie(
    Effect.repeat(Effect.sync(() => proc.stderr()), {
      until: (err) => err.includes(text),
      schedule: Schedule.spaced(Duration.millis(50))
    }).pipe(Effect.timeout(Duration.seconds(20)))
  )

const labelledPod = (name: string, sessionId: string): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { [SESSION_LABEL]: sessionId } },
  spec: { containers: [{ name: "session", image: "registry.example/session:1", ports: [{ containerPort: 8080 }] }] }
})

describe("session-routing controller, starting and stopping", () => {
  // A list of Pods in a namespace that does not exist answers an empty list: without
  // the check at start the controller waited there in silence, routing nothing.
  it.scopedLive(
    "exits 1 at start, naming the session namespace and how to create it, when it does not exist",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster())
        const controller = yield* startCli(
          ["controller", "--kubeconfig", cluster.kubeconfig, "--no-leader-elect"],
          { ...cluster.env, RUNNER_SESSION_NAMESPACE: "no-such-sessions" }
        )
        expect(yield* Effect.orDie(controller.ended())).toEqual({ code: 1, signal: null })
        expect([controller.stdout(), controller.stderr()]).toEqual([
          "",
          "error: namespace \"no-such-sessions\" does not exist: create it (kubectl create namespace no-such-sessions), " +
          "or set RUNNER_SESSION_NAMESPACE / -n to the namespace of the session Pods\n"
        ])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "warns and routes when it may not read the session namespace",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        yield* cluster.cluster.faults.add({ resource: "namespaces", verbs: ["get"], action: Fault.forbid() })
        const controller = yield* startCli(
          ["controller", "--kubeconfig", cluster.kubeconfig, "--no-leader-elect"],
          cluster.env
        )
        yield* stderrHolds(controller, "warning: could not read namespace")
        expect(controller.stderr()).toContain(
          `warning: could not read namespace "${cluster.namespace}", starting anyway: `
        )
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, labelledPod("one-pod", "one")))
        const line = yield* Effect.orDie(controller.stdoutLine((text) => text.includes("RoutesProgrammed=True")))
        expect(line).toContain(`${cluster.namespace}/one-pod RoutesProgrammed=True`)
      }),
    { timeout: 60_000 }
  )

  // An orchestrator stops a controller with SIGTERM (Ctrl-C is SIGINT): a clean stop, so
  // the replica hands its Lease on at once and exits 0, as `cluster` does, not 143 or 130.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it.scopedLive(
      `releases its Lease and exits 0 on ${signal}`,
      () =>
        Effect.gen(function*() {
          const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
          const controller = yield* startCli(
            ["controller", "--kubeconfig", cluster.kubeconfig, "--identity", "replica-a"],
            cluster.env
          )
          yield* stderrHolds(controller, "replica-a holds Lease")
          controller.child.kill(signal)
          expect(yield* Effect.orDie(controller.ended())).toEqual({ code: 0, signal: null })
          expect(controller.stderr()).toContain(
            `${signal}: stopping the controller\n` +
              `leader election: replica-a stepped down and released Lease ${cluster.namespace}/session-routing-controller\n` +
              "controller stopped\n"
          )
          const lease = yield* Effect.orDie(
            cluster.cluster.store.get(LeaseResource, cluster.namespace, "session-routing-controller")
          )
          expect(lease.spec?.holderIdentity).toBe("")
        }),
      { timeout: 60_000 }
    )
  }
})
