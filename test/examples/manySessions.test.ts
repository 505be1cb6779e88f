import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { publishMany } from "../../examples/manySessions.js"
import { RoutingLive } from "../../examples/runner.js"
import { IngressResource } from "../../src/domain/Resources.js"
import { runnerEnvironment } from "../support/RunnerEnvironment.js"

describe("the example of a runner following many sessions", () => {
  it.live("reports every session's events through the live client, each host to its verdict", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { config, sc } = yield* runnerEnvironment({ SESSION_ROUTE_READY_TIMEOUT_MS: "10000" })
        const reported = yield* Effect.scoped(publishMany(40)).pipe(
          Effect.provide(RoutingLive.pipe(Layer.fresh)),
          Effect.withConfigProvider(config)
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
