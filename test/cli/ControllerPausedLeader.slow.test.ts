/**
 * A leader paused past its renew deadline, as the review found it: two `session-routing
 * controller` processes against LocalCluster over HTTP, the leader's requests through a
 * proxy that tells them apart. The leader is stopped (SIGSTOP) with a renewal on the wire
 * and a condition write waiting to be tried again; by then the other replica leads,
 * has written that condition itself and routed a new Pod. Resumed, its timers all due at
 * once, the old leader must make no write at all: not the condition it was retrying, not
 * the new Pod's routing objects or condition.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Deferred, Duration, Effect, type Scope } from "effect"
import { readFile, writeFile } from "node:fs/promises"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { PORTS_ANNOTATION, ROUTES_CONDITION } from "../../src/domain/PodRouting.js"
import { PodResource } from "../../src/domain/Resources.js"
import { sessionPod } from "../support/SessionPods.js"
import { cliCluster, tempDir } from "./CliCluster.js"
import { startCli, stderrSays } from "./CliProcess.js"

const conditionLine = (pod: string, status: string) => (line: string) => {
  try {
    const parsed = JSON.parse(line) as { pod?: string; status?: string }
    return parsed.pod === pod && parsed.status === status
  } catch {
    return false
  }
}

interface Forwarded {
  readonly method: string
  readonly path: string
}

/**
 * An HTTP proxy to `target` on 127.0.0.1 that records every request, and can hold the
 * next Lease update (a renewal) until told to send it on.
 */
const recordingProxy = (target: string): Effect.Effect<
  {
    readonly url: string
    readonly requests: () => ReadonlyArray<Forwarded>
    /** Holds the next PUT of a Lease; `arrived` completes when it comes, `release` sends it on. */
    readonly holdNextRenewal: Effect.Effect<
      { readonly arrived: Effect.Effect<void>; readonly release: Effect.Effect<void> }
    >
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const upstream = new URL(target)
    const recorded: Array<Forwarded> = []
    let hold: { readonly arrived: () => void; readonly released: Promise<void> } | undefined
    const server = yield* Effect.acquireRelease(
      Effect.async<ReturnType<typeof createServer>>((resume) => {
        const server = createServer((req, res) => {
          const path = req.url ?? "/"
          recorded.push({ method: req.method ?? "", path })
          const forward = () => {
            const out = request(
              { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers)
                answer.pipe(res)
              }
            )
            out.on("error", () => res.destroy())
            req.pipe(out)
          }
          if (hold !== undefined && req.method === "PUT" && path.includes("/leases/")) {
            const held = hold
            hold = undefined
            held.arrived()
            void held.released.then(forward)
          } else {
            forward()
          }
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as AddressInfo).port
    return {
      url: `http://127.0.0.1:${port}`,
      requests: () => recorded,
      holdNextRenewal: Effect.gen(function*() {
        const arrived = yield* Deferred.make<void>()
        const released = yield* Deferred.make<void>()
        hold = {
          arrived: () => Deferred.unsafeDone(arrived, Effect.void),
          released: Effect.runPromise(Deferred.await(released))
        }
        return { arrived: Deferred.await(arrived), release: Deferred.succeed(released, undefined) }
      })
    }
  })

const isWrite = (request: Forwarded) => ["POST", "PUT", "PATCH", "DELETE"].includes(request.method)

describe("session-routing controller with a paused leader", () => {
  it.scopedLive(
    "makes no write once it runs again past its renew deadline, though its renewal sent before the pause is answered as a success",
    () =>
      Effect.gen(function*() {
        const cluster = yield* Effect.orDie(cliCluster({ ingress: { delay: Duration.millis(20) } }))
        const proxy = yield* recordingProxy(cluster.cluster.url)
        // The old leader's own kubeconfig reaches the cluster through the proxy.
        const proxied = join(yield* tempDir, "kubeconfig")
        const kubeconfig = yield* Effect.promise(() => readFile(cluster.kubeconfig, "utf8"))
        yield* Effect.promise(() => writeFile(proxied, kubeconfig.replaceAll(cluster.cluster.url, proxy.url)))
        expect(kubeconfig).toContain(cluster.cluster.url)
        const args = (path: string, identity: string) => [
          "controller",
          "--kubeconfig",
          path,
          "--identity",
          identity,
          "-o",
          "json"
        ]
        const old = yield* startCli(args(proxied, "replica-a"), cluster.env)
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, sessionPod("a-pod", "sa")))
        yield* Effect.orDie(old.stdoutLine(conditionLine("a-pod", "True")))
        const next = yield* startCli(args(cluster.kubeconfig, "replica-b"), cluster.env)
        yield* stderrSays(next, "is held by replica-a", Duration.seconds(20))

        // The old leader's next word, False for a ports annotation it cannot route, fails
        // with 503 and waits to be tried again.
        const refused = yield* cluster.cluster.faults.add({
          resource: PodResource,
          verbs: ["patch"],
          subresource: "status",
          action: Fault.respond(503)
        })
        const aPod = yield* Effect.orDie(cluster.cluster.store.get(PodResource, cluster.namespace, "a-pod"))
        yield* Effect.orDie(cluster.cluster.store.replace(PodResource, cluster.namespace, "a-pod", {
          ...aPod,
          metadata: { ...aPod.metadata, annotations: { ...aPod.metadata?.annotations, [PORTS_ANNOTATION]: "http" } }
        }))
        yield* stderrSays(old, "could not set session-routing.dev/RoutesProgrammed on Pod", Duration.seconds(20))
        // Stopped the moment its next renewal reaches the proxy, which sends it on only
        // then: the server writes it, and its answer waits in the stopped process's socket.
        const renewal = yield* proxy.holdNextRenewal
        yield* Effect.orDie(Effect.timeout(renewal.arrived, Duration.seconds(10)))
        old.child.kill("SIGSTOP")
        yield* renewal.release
        yield* cluster.cluster.faults.remove(refused)
        yield* stderrSays(next, "replica-b holds Lease", Duration.seconds(40))
        yield* Effect.orDie(next.stdoutLine(conditionLine("a-pod", "False")))
        yield* Effect.orDie(cluster.cluster.store.create(PodResource, cluster.namespace, sessionPod("b-pod", "sb")))
        yield* Effect.orDie(next.stdoutLine(conditionLine("b-pod", "True")))

        const before = proxy.requests().length
        old.child.kill("SIGCONT")
        yield* stderrSays(old, "routing stopped, standing again", Duration.seconds(10))
        // Long enough for the new Pod's publish and condition, which took the new leader
        // well under a second.
        yield* stderrSays(old, "is held by replica-b", Duration.seconds(10))
        yield* Effect.sleep(Duration.seconds(2))
        const written = proxy.requests().slice(before).filter((r) => isWrite(r) && !r.path.includes("/leases/"))
        expect(written).toEqual([])
        expect(old.stdout()).not.toContain("b-pod")
        const conditionOf = (name: string) =>
          Effect.map(
            Effect.orDie(cluster.cluster.store.get(PodResource, cluster.namespace, name)),
            (pod) => pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status
          )
        expect([yield* conditionOf("a-pod"), yield* conditionOf("b-pod")]).toEqual(["False", "True"])
      }),
    { timeout: 120_000 }
  )
})
