import { describe, expect, it } from "@effect/vitest"
import { SessionCluster } from "@session-routing/local-cluster"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { publishMany } from "../../examples/manySessions.js"
import { RoutingLive } from "../../examples/runner.js"
import { IngressResource } from "../../src/domain/Resources.js"

describe("the example of a runner following many sessions", () => {
  it.live("reports every session's events through the live client, each host to its verdict", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const sc = yield* SessionCluster.make({ ingress: { delay: Duration.millis(50) }, dataPlane: false })
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-many-"))),
          (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
        )
        const kubeconfig = join(dir, "kubeconfig")
        yield* sc.cluster.writeKubeconfig(kubeconfig)
        const env = new Map([
          ["KUBECONFIG", kubeconfig],
          ["SESSION_ROUTING_BASE_DOMAIN", sc.baseDomain],
          ["SESSION_INGRESS_CLASS", sc.ingressClassName],
          ["SESSION_ROUTE_READY_TIMEOUT_MS", "10000"]
        ])
        const reported = yield* Effect.scoped(publishMany(40)).pipe(
          Effect.provide(RoutingLive.pipe(Layer.fresh)),
          Effect.withConfigProvider(ConfigProvider.fromMap(env, { pathDelim: "_" }))
        )
        expect(reported.size).toBe(40)
        for (const [sessionId, events] of reported) {
          const host = `8080-${sessionId}.${sc.baseDomain}`
          expect(events.map((event) => event.type === "route" ? `${event.host} ${event.state}` : event.type))
            .toEqual(["published", `${host} pending`, `${host} programmed`])
        }
        // Every session's objects were written: one Ingress each.
        const ingresses = yield* sc.cluster.store.list(IngressResource, sc.namespace)
        expect(ingresses.items).toHaveLength(40)
      })
    ))
})
