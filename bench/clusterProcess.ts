/**
 * LocalCluster in its own process for the route-health benchmark, so that the
 * runner's CPU and heap are measured alone, as against a real API server. It prints
 * one JSON line with its kubeconfig and server. Its controllers start when a line
 * `go` arrives on stdin (so that every session is published and watched first) and
 * write status `argv[2]` ms after they see an object; each first status write of a
 * routed object is printed (`{"wrote": "<kind>/<name>", "at": <epoch ms>}`), so the
 * bench measures each verdict's lag from the controller's write.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Deferred, Duration, Effect, Stream } from "effect"
import * as GatewayController from "../src/cluster/GatewayController.js"
import * as IngressController from "../src/cluster/IngressController.js"
import * as SessionCluster from "../src/cluster/SessionCluster.js"
import type { HttpRoute, Ingress } from "../src/domain/Objects.js"
import { HttpRouteResource, IngressResource } from "../src/domain/Resources.js"
import { statusWritten } from "./statusWritten.js"

const delayMs = Number(process.argv[2] ?? "1000")

const program = Effect.scoped(
  Effect.gen(function*() {
    const sc = yield* SessionCluster.make({ ingress: false, gateway: false, dataPlane: false })
    const startControllers = Effect.all([
      IngressController.run(sc.cluster.store, { className: sc.ingressClassName, delay: Duration.millis(delayMs) }),
      GatewayController.run(sc.cluster.store, {
        gatewayClassName: sc.gateway.className,
        delay: Duration.millis(delayMs)
      })
    ], { discard: true })
    const go = yield* Deferred.make<void>()
    process.stdin.on("data", (chunk) => {
      if (String(chunk).includes("go")) Effect.runSync(Deferred.succeed(go, undefined))
    })
    yield* Deferred.await(go).pipe(Effect.zipRight(startControllers), Effect.forkScoped)
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
            process.stdout.write(`${JSON.stringify({ wrote: key, at: Date.now() })}\n`)
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
