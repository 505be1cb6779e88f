/**
 * The Prometheus text exposition of Effect metrics: types, labels, escaping and
 * cumulative histogram buckets, from metrics made for the test only.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, MetricBoundaries } from "effect"
import { prometheusText } from "../../src/layers/routingMetrics/PrometheusText.js"

describe("prometheusText", () => {
  it.effect("prints counters, gauges and histograms with their help, type and sorted series, and nothing else", () =>
    Effect.gen(function*() {
      const requests = Metric.counter("t1_requests_total", { description: "Requests\nby verb", incremental: true })
      yield* Metric.incrementBy(Metric.tagged(Metric.tagged(requests, "verb", "get"), "code", "200"), 2)
      yield* Metric.increment(Metric.tagged(Metric.tagged(requests, "verb", "apply"), "code", "none"))
      yield* Metric.set(Metric.tagged(Metric.gauge("t1_hosts"), "state", "say \"hi\"\\"), 3)
      const seconds = Metric.histogram("t1_seconds", MetricBoundaries.fromIterable([0.1, 1]), "Seconds")
      yield* Metric.update(seconds, 0.05)
      yield* Metric.update(seconds, 0.5)
      yield* Metric.update(seconds, 7)
      yield* Metric.increment(Metric.counter("t2_other_total"))

      expect(prometheusText(yield* Metric.snapshot, "t1_")).toBe(
        [
          "# TYPE t1_hosts gauge",
          "t1_hosts{state=\"say \\\"hi\\\"\\\\\"} 3",
          "# HELP t1_requests_total Requests\\nby verb",
          "# TYPE t1_requests_total counter",
          "t1_requests_total{code=\"200\",verb=\"get\"} 2",
          "t1_requests_total{code=\"none\",verb=\"apply\"} 1",
          "# HELP t1_seconds Seconds",
          "# TYPE t1_seconds histogram",
          "t1_seconds_bucket{le=\"0.1\"} 1",
          "t1_seconds_bucket{le=\"1\"} 2",
          "t1_seconds_bucket{le=\"+Inf\"} 3",
          "t1_seconds_sum 7.55",
          "t1_seconds_count 3",
          ""
        ].join("\n")
      )
    }))

  it.effect("prints nothing when no metric has the prefix", () =>
    Effect.map(Metric.snapshot, (pairs) => expect(prometheusText(pairs, "t3_")).toBe("")))
})
