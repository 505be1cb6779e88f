/**
 * The OpenTelemetry side of `TracingExport`, loaded only when spans are exported:
 * Effect's tracer over the Node SDK, batching spans to OTLP/HTTP (JSON) and, on
 * request, printing them on stdout.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor
} from "@opentelemetry/sdk-trace-base"
import type { Layer } from "effect"
import type { ExportTarget } from "../TracingExport.js"

/** The tracer layer for `target`; releasing it flushes the spans still buffered. */
export const layer = (target: ExportTarget): Layer.Layer<never> =>
  NodeSdk.layer(() => {
    const processors: Array<SpanProcessor> = []
    if (target.otlpUrl !== undefined) {
      processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: target.otlpUrl })))
    }
    if (target.console) processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()))
    return { resource: { serviceName: target.serviceName }, spanProcessor: processors }
  }) as Layer.Layer<never>
