/**
 * The fault matrix for `publish` and `publish --watch`, over HTTP against LocalCluster
 * with the live client: each fault once and persistent, asserting the exit status, the
 * class of the reason, a bound on the time it took, and the objects left. Faults on
 * the status reads start after the first read of every host, because faults that
 * begin after things worked are where a read failure used to pass for "unclaimed".
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, type FaultSpec, LocalCluster, type ServerLifecycle } from "@session-routing/local-cluster"
import { Effect } from "effect"
import { join } from "node:path"
import { IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import { jsonLines, tempDir } from "./CliCluster.js"
import {
  args,
  awaitRequests,
  classOf,
  FAULT_BOUND_MS,
  forbiddenOn,
  INGRESS_OBJECTS,
  LIMITS,
  matrixCluster,
  ONE_OFF,
  oneLine,
  PERSISTENT_TRANSIENT,
  PORTS,
  readErrorsOf,
  type Row,
  SESSION,
  sessionObjects,
  terminalOf,
  timedCli,
  UNAUTHORIZED
} from "./FaultMatrix.js"
import { runCli } from "./TestCli.js"

// ---------------------------------------------------------------------------
// publish: faults on every request to the session namespace, from the start
// ---------------------------------------------------------------------------

/** Faults a publish cannot get past: it exits 1 with one line and leaves nothing. */
const refusing: ReadonlyArray<Row> = [
  UNAUTHORIZED,
  { ...forbiddenOn(["patch"], "403 on write"), says: /forbidden.*"patch"/ },
  {
    name: "409 on write",
    action: Fault.respond(409, { message: "the object has been modified" }),
    verbs: ["patch"],
    says: /the object has been modified/
  },
  {
    name: "422 on write",
    action: Fault.respond(422, { message: "spec.rules: Invalid value" }),
    verbs: ["patch"],
    says: /spec\.rules: Invalid value/
  },
  ...PERSISTENT_TRANSIENT
]

describe("fault matrix: publish", () => {
  for (const row of refusing) {
    it.live(`exits 1 with one line and leaves nothing on ${row.name}`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* matrixCluster({ gateway: false })
          yield* cluster.cluster.faults.add({
            namespace: cluster.namespace,
            action: row.action,
            ...(row.verbs !== undefined ? { verbs: row.verbs } : {})
          })
          const result = yield* timedCli(args(cluster, "publish"), cluster.env)
          expect(result.exitCode).toBe(1)
          expect(result.stdout).toBe("")
          expect(oneLine(result)).toMatch(/^error: /)
          expect(oneLine(result)).toMatch(row.says)
          expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
          yield* cluster.cluster.faults.clear
          expect(yield* sessionObjects(cluster)).toEqual([])
        })
      ))
  }

  for (const row of ONE_OFF) {
    it.live(`rides out ${row.name} and publishes every object`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* matrixCluster({ gateway: false })
          yield* cluster.cluster.faults.add({ namespace: cluster.namespace, action: row.action, times: 1 })
          const result = yield* timedCli(args(cluster, "publish", "-o", "json"), cluster.env)
          expect(result.stderr).toBe("")
          expect(result.exitCode).toBe(0)
          expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
          expect(yield* sessionObjects(cluster)).toEqual(INGRESS_OBJECTS)
        })
      ))
  }

  it.live("exits 1 quickly on a server that is gone, and leaves nothing", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* matrixCluster({ gateway: false })
        yield* cluster.cluster.faults.server.stop
        const result = yield* timedCli(args(cluster, "publish"), cluster.env)
        expect(result.exitCode).toBe(1)
        expect(oneLine(result)).toMatch(/the connection was refused/)
        // Whichever request went first is named as the user's mode would: never a bare
        // "could not list the HTTPRoute objects" of a mode the user did not ask for.
        expect(oneLine(result)).toMatch(
          /^error: could not (check for HTTPRoute objects of session \S+ that a gateway-mode publish may have left|apply Service \S+): /
        )
        expect(result.tookMs).toBeLessThan(FAULT_BOUND_MS)
        expect(yield* sessionObjects(cluster)).toEqual([])
      })
    ))

  it.live("exits 1 in gateway mode on a cluster without the Gateway API, and leaves no Service behind", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* LocalCluster.make({ namespaces: ["telo-sessions"], gatewayApi: false })
        const kubeconfig = join(yield* tempDir, "kubeconfig")
        yield* cluster.writeKubeconfig(kubeconfig)
        const env = {
          ...LIMITS,
          SESSION_ROUTING_MODE: "gateway",
          SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me",
          SESSION_GATEWAY_NAME: "sessions"
        }
        const argv = [
          "publish",
          "--session",
          SESSION,
          "--pod",
          `telo-run-${SESSION}`,
          "--pod-uid",
          "u-1",
          ...PORTS,
          "--kubeconfig",
          kubeconfig
        ]
        const result = yield* runCli(argv, env)
        expect(result.exitCode).toBe(1)
        expect(result.stderr).toMatch(/install the Gateway API CRDs/)
        expect((yield* Effect.orDie(cluster.store.list(ServiceResource, "telo-sessions"))).items).toEqual([])
        expect((yield* Effect.orDie(cluster.store.list(IngressResource, "telo-sessions"))).items).toEqual([])
      })
    ))
})

// ---------------------------------------------------------------------------
// publish --watch: faults on the status reads, after the source's first reads
// ---------------------------------------------------------------------------

/** Persistent read faults: every host ends a read failure with the fault's own words, never "unclaimed". */
const unreadable: ReadonlyArray<Row> = [UNAUTHORIZED, forbiddenOn(undefined, "403"), ...PERSISTENT_TRANSIENT]

/**
 * Where each status source reads, so a fault can start after its first reads: the
 * polling source GETs the Ingress (once per host), the watching source lists it
 * once and opens one watch, then checks liveness with a list.
 */
const SOURCES = {
  poll: { verbs: ["get"], firstReads: 2 },
  watch: { verbs: ["list", "watch"], firstReads: 2 }
} as const satisfies Record<string, { readonly verbs: FaultSpec["verbs"]; readonly firstReads: number }>

type Source = keyof typeof SOURCES

const silentCluster = (source: Source) =>
  Effect.map(matrixCluster({ ingress: { delay: "never" }, gateway: false }), (cluster) => ({
    ...cluster,
    env: { ...cluster.env, SESSION_ROUTE_STATUS_SOURCE: source }
  }))

/** `publish --watch -o json` with a silent controller and `row` on the source's reads after its first ones. */
const watchUnder = (row: Row, source: Source) =>
  Effect.gen(function*() {
    const cluster = yield* silentCluster(source)
    // Publish reads no Ingress: the first of these requests are the source's own.
    yield* cluster.cluster.faults.add({
      resource: IngressResource,
      verbs: SOURCES[source].verbs,
      after: SOURCES[source].firstReads,
      action: row.action,
      ...(row.times !== undefined ? { times: row.times } : {})
    })
    const result = yield* timedCli(args(cluster, "publish", "--watch", "-o", "json"), cluster.env)
    return { cluster, result }
  })

/** `publish --watch -o json` with a silent controller, and `outage` done to the server after the source's first reads. */
const watchAcross = <E>(source: Source, outage: (server: ServerLifecycle) => Effect.Effect<void, E>) =>
  Effect.gen(function*() {
    const cluster = yield* silentCluster(source)
    const watch = yield* Effect.fork(timedCli(args(cluster, "publish", "--watch", "-o", "json"), cluster.env))
    yield* awaitRequests(
      cluster,
      { resource: IngressResource, verbs: SOURCES[source].verbs },
      SOURCES[source].firstReads
    )
    yield* outage(cluster.cluster.faults.server)
    return yield* watch.await.pipe(Effect.flatten)
  })

for (const source of ["poll", "watch"] as const) {
  describe(`fault matrix: publish --watch on the ${source} source`, () => {
    // A watch refused for good falls back to polling, which reads the status: that case is below.
    for (const row of unreadable.filter((row) => source === "poll" || row.name !== "403")) {
      it.live(`reports every host as a read failure, never unclaimed, on ${row.name} after the first reads`, () =>
        Effect.scoped(
          Effect.gen(function*() {
            const { cluster, result } = yield* watchUnder(row, source)
            // A status that could not be read to the end is a failure, not a verdict.
            expect(result.exitCode).toBe(1)
            expect(result.stderr).toMatch(/^error: the route status of 8080-\S+, 9090-\S+ could not be read: /m)
            const terminal = terminalOf(result)
            expect(terminal.map((event) => event.port).sort()).toEqual([8080, 9090])
            for (const event of terminal) {
              expect(classOf(event)).toBe("read-failure")
              expect(event.reason).toMatch(row.says)
            }
            expect(readErrorsOf(result)).toHaveLength(1)
            // The route deadline bounds the watch, whatever the reads do.
            expect(result.tookMs).toBeLessThan(Number(LIMITS.SESSION_ROUTE_READY_TIMEOUT_MS) + FAULT_BOUND_MS)
            yield* cluster.cluster.faults.clear
            expect(yield* sessionObjects(cluster)).toEqual(INGRESS_OBJECTS)
          })
        ))
    }

    for (const row of ONE_OFF) {
      it.live(`keeps the unclaimed advice after ${row.name}: the last thing the cluster said was a real answer`, () =>
        Effect.scoped(
          Effect.gen(function*() {
            const { result } = yield* watchUnder(row, source)
            expect(result.exitCode).toBe(3)
            const terminal = terminalOf(result)
            expect(terminal).toHaveLength(2)
            for (const event of terminal) expect(classOf(event)).toBe("unclaimed")
          })
        ))
    }

    if (source === "watch") {
      it.live("falls back to polling, saying so once, when listing or watching is forbidden after it started", () =>
        Effect.scoped(
          Effect.gen(function*() {
            const { result } = yield* watchUnder(forbiddenOn(undefined, "403"), "watch")
            expect(result.exitCode).toBe(3)
            // The polls read the status fine: nobody claimed the hosts, and that is the truth.
            for (const event of terminalOf(result)) expect(classOf(event)).toBe("unclaimed")
            const notices = result.stderr.split("\n").filter((line) => line.includes("route status is polled instead"))
            expect(notices).toHaveLength(1)
            expect(notices[0]).toMatch(
              /cannot list and watch ingresses\.networking\.k8s\.io in namespace "telo-sessions": .*forbidden/
            )
          })
        ))
    }

    it.live("reports a server that dies mid-watch as a read failure for every host, within the deadline, and exits 1", () =>
      Effect.scoped(
        Effect.gen(function*() {
          const result = yield* watchAcross(source, (server) => server.stop)
          expect(result.exitCode).toBe(1)
          const terminal = terminalOf(result)
          expect(terminal).toHaveLength(2)
          for (const event of terminal) {
            expect(classOf(event)).toBe("read-failure")
            expect(event.reason).toMatch(/refused|reset|closed before the answer/)
          }
          expect(readErrorsOf(result)).toHaveLength(1)
        })
      ))

    it.live("keeps the unclaimed advice when the server restarts mid-watch and answers again before the deadline", () =>
      Effect.scoped(
        Effect.gen(function*() {
          const result = yield* watchAcross(source, (server) => Effect.zipRight(server.stop, server.restart))
          expect(result.exitCode).toBe(3)
          for (const event of terminalOf(result)) expect(classOf(event)).toBe("unclaimed")
          // The watch saw the outage or not, depending on timing, but never mixed the hosts.
          expect(readErrorsOf(result).length).toBeLessThanOrEqual(1)
        })
      ))

    it.live("programs every host through one-off faults when a controller does its job", () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* matrixCluster({ gateway: false })
          yield* cluster.cluster.faults.add({ namespace: cluster.namespace, action: Fault.respond(503), times: 2 })
          const result = yield* runCli(args(cluster, "publish", "--watch", "-o", "json"), {
            ...cluster.env,
            SESSION_ROUTE_STATUS_SOURCE: source
          })
          expect(result.stderr).toBe("")
          expect(result.exitCode).toBe(0)
          expect(jsonLines(result.stdout).filter((event) => event.type === "route" && event.state === "programmed"))
            .toHaveLength(2)
        })
      ))
  })
}
