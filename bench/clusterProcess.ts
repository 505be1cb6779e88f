/**
 * LocalCluster in its own process for the benchmarks, so that the runner's CPU and
 * heap are measured alone, as against a real API server. It prints one JSON line with
 * its kubeconfig and server. Its controllers write status `argv[2]` ms after they see
 * an object; with `argv[3]` `on-go` (the default) they start when a line `go` arrives
 * on stdin (so that every session is published and watched first), with `at-once` the
 * cluster is built as `session-routing cluster` builds it, controllers and all. Each
 * first status write of a routed object is printed (`{"wrote": "<kind>/<name>", "at":
 * <ms>}`, on the machine's monotonic clock: `instantMs`), so the bench measures each
 * verdict's lag from the controller's write; a line `cpu` is answered with the process's
 * own CPU so far (`{"cpu": <ms>}`). It ends when its stdin closes: a bench that died
 * leaves no cluster behind.
 */
import { NodeRuntime } from "@effect/platform-node"
import { GatewayController, IngressController, SessionCluster } from "@session-routing/local-cluster"
import { Deferred, Duration, Effect, Exit, Stream } from "effect"
import * as readline from "node:readline"
import { type HttpRoute, HttpRouteResource, type Ingress, IngressResource } from "session-routing/kubernetes"
import { instantMs } from "./processStats.js"
import { statusWritten } from "./statusWritten.js"

const delay = Duration.millis(Number(process.argv[2] ?? "1000"))
const atOnce = process.argv[3] === "at-once"

const program = Effect.scoped(
  Effect.gen(function*() {
    const sc = yield* (atOnce
      ? SessionCluster.make({ ingress: { delay }, gateway: { delay }, dataPlane: false })
      : SessionCluster.make({ ingress: false, gateway: false, dataPlane: false }))
    const go = yield* Deferred.make<void>()
    readline.createInterface({ input: process.stdin })
      .on("line", (line) => {
        if (line === "go") Deferred.unsafeDone(go, Exit.void)
        if (line === "cpu") {
          const { system, user } = process.cpuUsage()
          process.stdout.write(`${JSON.stringify({ cpu: (user + system) / 1_000 })}\n`)
        }
      })
      .on("close", () => process.exit(0))
    if (!atOnce) {
      const startControllers = Effect.all([
        IngressController.run(sc.cluster.store, { className: sc.ingressClassName, delay }),
        GatewayController.run(sc.cluster.store, { gatewayClassName: sc.gateway.className, delay })
      ], { discard: true })
      yield* Deferred.await(go).pipe(Effect.zipRight(startControllers), Effect.forkScoped)
    }
    process.stdout.write(
      `${
        JSON.stringify({
          kubeconfig: sc.cluster.kubeconfig(),
          server: sc.cluster.url,
          namespace: sc.namespace,
          baseDomain: sc.baseDomain,
          ingressClassName: sc.ingressClassName,
          gateway: sc.gateway
        })
      }\n`
    )
    const written = new Set<string>()
    const follow = (resource: typeof IngressResource | typeof HttpRouteResource, kind: "Ingress" | "HTTPRoute") =>
      sc.cluster.store.watch(resource, sc.namespace).pipe(
        Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event.type !== "ADDED" && event.type !== "MODIFIED") return
            const object = event.object as Ingress | HttpRoute
            const key = `${kind}/${object.metadata?.name}`
            if (written.has(key) || !statusWritten(kind, object)) return
            written.add(key)
            process.stdout.write(`${JSON.stringify({ wrote: key, at: instantMs() })}\n`)
          })
        ),
        Effect.orDie
      )
    yield* Effect.all([follow(IngressResource, "Ingress"), follow(HttpRouteResource, "HTTPRoute")], {
      concurrency: "unbounded",
      discard: true
    })
  })
)

NodeRuntime.runMain(program)
