/**
 * A small HTTP server that serves `RoutingMetrics` at `/metrics` (and, for the
 * controller, `/healthz` and `/readyz`), for a process that has no endpoint of its own
 * (the CLI's `--metrics-port`). It binds 127.0.0.1 unless
 * told otherwise: metrics name sessions' namespaces and are not for the whole network.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, type Scope } from "effect"
import { createServer } from "node:http"
import { httpApp } from "../layers/RoutingMetrics.js"
import { DEFAULT_METRICS_HOST } from "../services/Telemetry.js"

/** Where to listen. Port 0 takes any free port. */
export interface MetricsServerOptions {
  readonly port: number
  /** Default `127.0.0.1`. */
  readonly host?: string
  /**
   * Also serve `/healthz` (200 while the process runs) and `/readyz` (200 when `ready`
   * says so, else 503), as a Deployment's probes ask.
   */
  readonly health?: { readonly ready: Effect.Effect<boolean> }
}

/** Serves `/metrics` until the scope closes; succeeds with the URL it is reachable at once it listens. */
export const serve = (
  options: MetricsServerOptions
): Effect.Effect<{ readonly url: string }, ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* NodeHttpServer.make(() => createServer(), {
      port: options.port,
      host: options.host ?? DEFAULT_METRICS_HOST
    })
    const metrics = HttpRouter.empty.pipe(HttpRouter.get("/metrics", httpApp))
    const health = options.health
    yield* server.serve(
      health === undefined ? metrics : metrics.pipe(
        HttpRouter.get("/healthz", HttpServerResponse.text("ok\n")),
        HttpRouter.get(
          "/readyz",
          Effect.map(
            health.ready,
            (ready) => ready ? HttpServerResponse.text("ok\n") : HttpServerResponse.text("not ready\n", { status: 503 })
          )
        )
      )
    )
    const address = server.address
    if (address._tag === "UnixAddress") return { url: `unix:${address.path}` }
    const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    return { url: `http://${host}:${address.port}/metrics` }
  })
