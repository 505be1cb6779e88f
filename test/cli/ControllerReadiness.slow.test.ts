/**
 * `/readyz` of `session-routing controller` as processes against LocalCluster over HTTP:
 * 200 while the replica leads or sees a live leader, and 503 again whenever it does
 * neither: a leader whose Lease calls fail past its renew deadline, and a follower whose
 * leader is gone while it cannot take the Lease.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Duration, Effect, Schedule } from "effect"
import { LeaseResource } from "../../src/domain/Resources.js"
import { cliCluster } from "./CliCluster.js"
import { type CliProcess, startCli, stderrSays } from "./CliProcess.js"

/** The base URL of the process's health endpoints, once it said where. */
const healthOf = (process: CliProcess) =>
  Effect.map(
    stderrSays(process, "metrics: http://", Duration.seconds(45)),
    (stderr) => /metrics: (http:\/\/\S+)\/metrics/.exec(stderr)![1]!
  )

const status = (url: string) => Effect.promise(() => fetch(url).then((answer) => answer.status))

/** Polls `url` until it answers `code`, for at most `within`; answers the last code seen. */
const answers = (url: string, code: number, within: Duration.DurationInput) =>
  status(url).pipe(
    Effect.filterOrFail((seen) => seen === code, (seen) => seen),
    Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(within))),
    Effect.merge
  )

const args = (kubeconfig: string, identity: string) => [
  "controller",
  "--kubeconfig",
  kubeconfig,
  "--identity",
  identity,
  "-o",
  "json",
  "--metrics-port",
  "0"
]

describe("session-routing controller's readiness", () => {
  it.scopedLive(
    "answers /readyz 503 once it lost the Lease with no leader live, and 200 again once it leads",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        const leader = yield* startCli(args(cluster.kubeconfig, "replica-a"), cluster.env)
        const health = yield* healthOf(leader)
        yield* stderrSays(leader, "replica-a holds Lease", Duration.seconds(20))
        expect(yield* answers(`${health}/readyz`, 200, Duration.seconds(2))).toBe(200)

        // Every Lease call fails: no renewal succeeds, and standing again it cannot read the Lease.
        const refused = yield* cluster.cluster.faults.add({ resource: LeaseResource, action: Fault.respond(503) })
        yield* stderrSays(leader, "routing stopped, standing again", Duration.seconds(20))
        expect(yield* answers(`${health}/readyz`, 503, Duration.seconds(2))).toBe(503)
        // Still 503 a retry period or two later: it neither leads nor sees a leader.
        yield* Effect.sleep(Duration.seconds(3))
        expect(yield* status(`${health}/readyz`)).toBe(503)
        expect(yield* status(`${health}/healthz`)).toBe(200)

        yield* cluster.cluster.faults.remove(refused)
        yield* stderrSays(leader, "replica-a holds Lease", Duration.seconds(20), 2)
        expect(yield* answers(`${health}/readyz`, 200, Duration.seconds(2))).toBe(200)
      }),
    { timeout: 90_000 }
  )

  it.scopedLive(
    "answers /readyz 503 on a follower once its leader is gone and it cannot take the Lease, and 200 once it leads",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        const leader = yield* startCli(args(cluster.kubeconfig, "replica-a"), cluster.env)
        yield* stderrSays(leader, "replica-a holds Lease", Duration.seconds(20))
        const follower = yield* startCli(args(cluster.kubeconfig, "replica-b"), cluster.env)
        const health = yield* healthOf(follower)
        yield* stderrSays(follower, "is held by replica-a", Duration.seconds(20))
        expect(yield* answers(`${health}/readyz`, 200, Duration.seconds(2))).toBe(200)

        // The leader dies without a word, and the follower can read the Lease but not take it.
        leader.child.kill("SIGKILL")
        yield* Effect.orDie(leader.ended())
        const refused = yield* cluster.cluster.faults.add({
          resource: LeaseResource,
          verbs: ["update"],
          action: Fault.respond(503)
        })
        // The Lease expires 15 s after the follower last saw it change, by its own clock.
        expect(yield* answers(`${health}/readyz`, 503, Duration.seconds(30))).toBe(503)
        expect(follower.stderr()).toContain(
          "leader election: no live leader on Lease telo-sessions/session-routing-controller: replica-a has not renewed it"
        )

        yield* cluster.cluster.faults.remove(refused)
        yield* stderrSays(follower, "replica-b holds Lease", Duration.seconds(20))
        expect(yield* answers(`${health}/readyz`, 200, Duration.seconds(2))).toBe(200)
      }),
    { timeout: 90_000 }
  )
})
