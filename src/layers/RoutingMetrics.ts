/**
 * session-routing's metrics as a Prometheus scrape: the text of every
 * `session_routing_*` metric in the process, an `HttpApp` that answers with it, and a
 * layer that adds it to a runner's own `HttpLayerRouter`.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, type Layer, Metric } from "effect"
import { METRIC_PREFIX } from "../services/Telemetry.js"
import { PROMETHEUS_CONTENT_TYPE, prometheusText as encode } from "./routingMetrics/PrometheusText.js"

export { PROMETHEUS_CONTENT_TYPE }

/** Every `session_routing_*` metric now, in the Prometheus text format. */
export const prometheusText: Effect.Effect<string> = Effect.map(
  Metric.snapshot,
  (pairs) => encode(pairs, METRIC_PREFIX)
)

/** The scrape as an HTTP response: mount it at `/metrics` on any `@effect/platform` server. */
export const httpApp: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.map(
  prometheusText,
  (text) => HttpServerResponse.text(text, { contentType: PROMETHEUS_CONTENT_TYPE })
)

/** Adds `GET <path>` (default `/metrics`) answering with the scrape to the runner's `HttpLayerRouter`. */
export const layerRoute = (path: `/${string}` = "/metrics"): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> =>
  HttpLayerRouter.add("GET", path, httpApp)
