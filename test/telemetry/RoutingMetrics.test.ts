/**
 * The scrape a runner mounts on its own server: `RoutingMetrics.layerRoute` added to an
 * `HttpLayerRouter` served on 127.0.0.1 answers with the session_routing_* metrics.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Metric } from "effect"
import { createServer } from "node:http"
import { layerRoute } from "../../src/layers/RoutingMetrics.js"
import { watchRelists } from "../../src/services/Telemetry.js"

describe("RoutingMetrics.layerRoute", () => {
  it.live("serves the scrape at the path it is given on the runner's own router", () =>
    Effect.scoped(
      Effect.gen(function*() {
        yield* Metric.increment(Metric.tagged(watchRelists, "resource", "httproutes.gateway.networking.k8s.io"))
        const served = HttpLayerRouter.serve(layerRoute("/internal/metrics")).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
        )
        const context = yield* Layer.build(served)
        const address = (yield* Effect.provide(HttpServer.HttpServer, Layer.succeedContext(context))).address
        if (address._tag !== "TcpAddress") return expect.fail("not a TCP address")
        const response = yield* Effect.promise(() => fetch(`http://127.0.0.1:${address.port}/internal/metrics`))
        expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
        expect((yield* Effect.promise(() => response.text())).split("\n")).toContain(
          "session_routing_watch_relists_total{resource=\"httproutes.gateway.networking.k8s.io\"} 1"
        )
      })
    ))
})
