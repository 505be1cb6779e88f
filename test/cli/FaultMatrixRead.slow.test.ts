/**
 * The fault matrix for `status`, `unpublish` and `publish --follow`, over HTTP against
 * LocalCluster with the live client, on a session that was published and programmed
 * before the fault began: the exit status, the class of the reason, a bound on the
 * time it took, and the objects left.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Duration, Effect, Fiber } from "effect"
import { IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import { GONE_REASON } from "../../src/runner/FollowSession.js"
import type { CliCluster } from "./CliCluster.js"
import { jsonLines, settledInPortOrder } from "./CliCluster.js"
import {
  args,
  classOf,
  FAULT_BOUND_MS,
  forbiddenOn,
  INGRESS_OBJECTS,
  matrixCluster,
  ONE_OFF,
  oneLine,
  PERSISTENT_TRANSIENT,
  type Row,
  SESSION,
  sessionObjects,
  timedCli,
  UNAUTHORIZED
} from "./FaultMatrix.js"
import { runCli, streamingCli } from "./TestCli.js"

const persistent: ReadonlyArray<Row> = [
  UNAUTHORIZED,
  forbiddenOn(["get", "list"], "403 on read"),
  ...PERSISTENT_TRANSIENT
]

/** A cluster whose controller programs at once, with the session published and programmed on it. */
const published = Effect.gen(function*() {
  const cluster = yield* matrixCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })
  const result = yield* runCli(args(cluster, "publish", "--watch", "-o", "json"), cluster.env)
  expect(result.exitCode).toBe(0)
  expect(yield* sessionObjects(cluster)).toEqual(INGRESS_OBJECTS)
  return cluster
})

/** `command` against a server that stopped: one line naming the refusal, within the bound. */
const goneServer = (command: "status" | "unpublish") =>
  Effect.scoped(
    Effect.gen(function*() {
      const cluster = yield* published
      yield* cluster.cluster.faults.server.stop
      const result = yield* timedCli(args(cluster, command), cluster.env)
      expect(result.exitCode).toBe(1)
      expect(oneLine(result)).toMatch(/the connection was refused/)
      expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
    })
  )

const addFault = (cluster: CliCluster, row: Row) =>
  cluster.cluster.faults.add({
    namespace: cluster.namespace,
    action: row.action,
    ...(row.verbs !== undefined ? { verbs: row.verbs } : {}),
    ...(row.times !== undefined ? { times: row.times } : {})
  })

describe("fault matrix: status", () => {
  for (const row of persistent) {
    it.live(`exits 1 with the read failure in one line on ${row.name}`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* published
          yield* addFault(cluster, row)
          const result = yield* timedCli(args(cluster, "status", "-o", "json"), cluster.env)
          expect(result.exitCode).toBe(1)
          expect(result.stdout).toBe("")
          expect(oneLine(result)).toMatch(row.says)
          expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
        })
      ))
  }

  for (const row of ONE_OFF) {
    it.live(`reads through ${row.name} and reports every host programmed`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* published
          yield* addFault(cluster, row)
          const result = yield* timedCli(args(cluster, "status", "-o", "json"), cluster.env)
          expect(result.exitCode).toBe(0)
          expect(jsonLines(result.stdout).map(classOf)).toEqual(["programmed", "programmed"])
        })
      ))
  }

  // A status that could not be read is no verdict: a failure (1), never "unprogrammed" (3).
  it.live("reports hosts whose own status read fails as read failures, with one read-error, and exits 1", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* published
        // The session's routes are read (one GET of the Ingress), then every status read is refused.
        yield* cluster.cluster.faults.add({
          resource: IngressResource,
          verbs: ["get"],
          after: 1,
          action: Fault.forbid()
        })
        const result = yield* timedCli(args(cluster, "status", "-o", "json"), cluster.env)
        expect(result.exitCode).toBe(1)
        expect(oneLine(result)).toMatch(/^error: the route status of 8080-\S+, 9090-\S+ could not be read: /)
        const events = jsonLines(result.stdout)
        expect(events.filter((event) => event.type === "read-error")).toHaveLength(1)
        expect(events.filter((event) => event.type === "route").map(classOf)).toEqual(["read-failure", "read-failure"])
      })
    ))

  it.live("exits 1 quickly on a server that is gone", () => goneServer("status"))
})

describe("fault matrix: unpublish", () => {
  for (const row of persistent) {
    it.live(`exits 1 within its time limit on ${row.name}, naming what it left`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* published
          yield* addFault(cluster, row)
          const result = yield* timedCli(args(cluster, "unpublish"), cluster.env)
          expect(result.exitCode).toBe(1)
          expect(oneLine(result)).toMatch(row.says)
          expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
          yield* cluster.cluster.faults.clear
          // Whatever is left is named: every remaining object, or the kinds it could not list.
          for (const object of yield* sessionObjects(cluster)) {
            const [kind, name] = object.split("/")
            expect(oneLine(result)).toMatch(new RegExp(`${kind} [^ ]*${name}|the session's ${kind} objects`))
          }
        })
      ))
  }

  for (const row of ONE_OFF) {
    it.live(`removes everything through ${row.name}`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* published
          yield* addFault(cluster, row)
          const result = yield* timedCli(args(cluster, "unpublish"), cluster.env)
          expect(result.stderr).toBe("")
          expect(result.exitCode).toBe(0)
          expect(yield* sessionObjects(cluster)).toEqual([])
        })
      ))
  }

  it.live("names the Service it could not remove when listing Services is forbidden, and removes the Ingress", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* published
        yield* cluster.cluster.faults.add({ resource: ServiceResource, verbs: ["list"], action: Fault.forbid() })
        const result = yield* runCli(args(cluster, "unpublish"), cluster.env)
        expect(result.exitCode).toBe(1)
        expect(oneLine(result)).toMatch(/the session's Service objects \(could not list them: .*forbidden/)
        yield* cluster.cluster.faults.clear
        expect(yield* sessionObjects(cluster)).toEqual([`Service/telo-run-${SESSION}`])
      })
    ))

  it.live("exits 1 quickly on a server that is gone", () => goneServer("unpublish"))
})

describe("fault matrix: publish --follow", () => {
  /** Starts `publish --follow` and waits until both hosts are programmed. */
  const following = Effect.gen(function*() {
    const cluster = yield* matrixCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })
    const cli = yield* streamingCli(args(cluster, "publish", "--follow", "-o", "json"), cluster.env)
    const watched = settledInPortOrder(yield* cli.next(5))
    expect(watched.slice(3).map(classOf)).toEqual(["programmed", "programmed"])
    return { cluster, cli }
  })

  /** After the outage: deleting the Ingress is still seen, so following carried on. */
  const stillFollowing = (cluster: CliCluster, cli: Effect.Effect.Success<typeof following>["cli"]) =>
    Effect.gen(function*() {
      yield* Effect.orDie(cluster.cluster.store.delete(IngressResource, cluster.namespace, `telo-run-${SESSION}`))
      const gone = yield* cli.next(2)
      expect(gone.map((event) => event.type === "route" && event.reason)).toEqual([GONE_REASON, GONE_REASON])
      yield* Fiber.interrupt(cli.fiber)
    })

  const followed = ["503 persistent", "hang persistent", "403 on read"].map((name) =>
    persistent.find((row) => row.name === name)!
  )
  for (const row of followed) {
    it.live(`reports ${row.name} as one read-error within the read limit, keeps the hosts, and carries on`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const { cli, cluster } = yield* following
          const id = yield* addFault(cluster, row)
          // One interval, plus one read's limit, plus room for a loaded machine.
          const [readError] = yield* cli.next(1, FAULT_BOUND_MS)
          expect(readError?.type).toBe("read-error")
          expect(readError?.type === "read-error" && readError.reason).toMatch(row.says)
          yield* cluster.cluster.faults.remove(id)
          // The hosts did not change meanwhile: nothing but the read-error was printed.
          expect(yield* cli.pending).toEqual([])
          yield* stillFollowing(cluster, cli)
        })
      ))
  }

  it.live("reports a server that dies as one read-error, and follows again once it restarts", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { cli, cluster } = yield* following
        yield* cluster.cluster.faults.server.stop
        const [readError] = yield* cli.next(1, FAULT_BOUND_MS)
        // Whichever request meets the stop first says it: a new one is refused, one in
        // flight at that instant (the liveness list, a watch reconnecting) is reset.
        expect(readError?.type === "read-error" && readError.reason).toMatch(/the connection was (refused|reset)/)
        yield* cluster.cluster.faults.server.restart
        yield* stillFollowing(cluster, cli)
      })
    ))
})
