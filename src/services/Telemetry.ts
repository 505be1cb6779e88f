/**
 * What session-routing reports about itself: the names of its spans and their
 * attributes, and its metrics (Effect `Metric`s in the process's registry). One place,
 * so the layers that record them, the endpoint that serves them and docs/telemetry.md agree.
 */
import { Effect, Metric, MetricBoundaries, MetricLabel, type Tracer } from "effect"

/** Every metric name starts with this; the Prometheus endpoint serves exactly these. */
export const METRIC_PREFIX = "session_routing_"

/** The address the metrics endpoint binds unless told otherwise: this host only. */
export const DEFAULT_METRICS_HOST = "127.0.0.1"

/** Span names. */
export const SpanName = {
  /** One `publishSession`: validation, the router's writes, and starting the hosts' health. */
  publish: "session-routing.publish",
  /** One `unpublishSession`. */
  unpublish: "session-routing.unpublish",
  /** One host from publish to its verdict, with an event per state change. */
  host: "session-routing.host",
  /** One Kubernetes API call, retries included: `kube.apply`, `kube.get`, `kube.delete`, `kube.list`, `kube.watch`. */
  kubeRequest: (verb: string): string => `kube.${verb}`
} as const

/**
 * Effect's own tracer, which a fiber has unless a layer installs another (an
 * OpenTelemetry exporter, `TracingExport`, a test's recorder). It keeps its spans
 * nowhere: no processor, no exporter. A span made for it is CPU and heap for nobody,
 * and at thousands of sessions a second they were a fifth of the runner's CPU.
 */
const builtInTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** Whether spans made for `tracer` are kept nowhere: it is Effect's built-in one. */
export const keepsNoSpans = (tracer: Tracer.Tracer): boolean => tracer === builtInTracer

/**
 * Runs `traced` when this fiber's spans go somewhere (a tracer other than Effect's
 * own is installed), and `untraced` when they would be kept nowhere.
 */
export const whenTraced = <A, E, R>(
  traced: () => Effect.Effect<A, E, R>,
  untraced: () => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.flatMap(Effect.tracer, (tracer) => keepsNoSpans(tracer) ? untraced() : traced())

/** `Effect.withSpan`, made only when the span goes somewhere (`whenTraced`); `options` is read only then. */
export const withSpanWhenTraced =
  (name: string, options: () => Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    whenTraced(() => Effect.withSpan(self, name, options()), () => self)

/** Span attribute keys, OpenTelemetry's own where one exists. */
export const SpanAttribute = {
  sessionId: "session.id",
  mode: "session_routing.mode",
  namespace: "k8s.namespace.name",
  portCount: "session.port_count",
  hostCount: "session.host_count",
  host: "session.host",
  port: "session.port",
  state: "session_routing.route.state",
  reason: "session_routing.route.reason",
  method: "http.request.method",
  verb: "k8s.verb",
  resource: "k8s.resource",
  name: "k8s.object.name",
  dryRun: "k8s.dry_run",
  statusCode: "http.response.status_code",
  retryCount: "http.request.resend_count"
} as const

/**
 * Seconds, 0.05 to 102.4 doubling (then +Inf): a controller answers in well under a
 * second or in tens of seconds, and the route deadline defaults to 60 s.
 */
const slowBoundaries = MetricBoundaries.exponential({ start: 0.05, factor: 2, count: 13 })

/**
 * Seconds, 0.005 to 20.48 doubling (then +Inf): a publish is a handful of API calls,
 * slower only when retried, and each call's budget defaults to 20 s.
 */
const callBoundaries = MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 14 })

/** Time from the start of a publish to a host's `programmed` verdict (labels: mode). */
export const publishToProgrammed = Metric.histogram(
  `${METRIC_PREFIX}publish_to_programmed_seconds`,
  slowBoundaries,
  "Seconds from the start of a publish until a controller programmed the host"
)

/** Hosts of the sessions this process published and still holds, each once, by last reported state (labels: mode, state). */
export const hosts = Metric.gauge(`${METRIC_PREFIX}hosts`, {
  description: "Hosts of the sessions this process published and still holds, by their last reported state"
})

/** Kubernetes API requests, one per attempt (labels: verb, resource, code; code `none` when no answer came). */
export const apiRequests = Metric.counter(`${METRIC_PREFIX}api_requests_total`, {
  description: "Kubernetes API requests by verb, resource and HTTP status (none: no answer)",
  incremental: true
})

/** Watch connections opened again after one ended (labels: resource). */
export const watchRestarts = Metric.counter(`${METRIC_PREFIX}watch_restarts_total`, {
  description: "Watch connections reopened after the previous one ended",
  incremental: true
})

/** Lists a watch made again after its first: 410 Expired, or a failure that lost its place (labels: resource). */
export const watchRelists = Metric.counter(`${METRIC_PREFIX}watch_relists_total`, {
  description: "Lists a resuming watch made after its first",
  incremental: true
})

/**
 * Names the shared status watch keeps in its cache: an object it holds, or one that a
 * host waits for and that does not exist yet (labels: resource).
 */
export const statusCacheEntries = Metric.gauge(`${METRIC_PREFIX}status_cache_entries`, {
  description: "Objects the shared route-status watch holds, and names hosts wait on before their object exists"
})

/** Sessions (or single hosts) waiting on the shared status watch for their next change (labels: resource). */
export const statusWaiters = Metric.gauge(`${METRIC_PREFIX}status_waiters`, {
  description: "Sessions or hosts waiting on the shared route-status watch for a change"
})

/** How long `SessionRouter.publish` took (labels: mode, result `ok` or `error`). */
export const publishDuration = Metric.histogram(
  `${METRIC_PREFIX}publish_duration_seconds`,
  callBoundaries,
  "Seconds one publish took, dry runs and writes included"
)

/** `read-error` events reported: one per watch or per streak of failed reads while following (labels: mode). */
export const readErrors = Metric.counter(`${METRIC_PREFIX}read_errors_total`, {
  description: "Route status read failures reported (one per watch, or per streak while following)",
  incremental: true
})

/** The code label of a request: its HTTP status, or `none` when no answer came. */
export const codeLabel = (
  code: number | undefined
): string => (code === undefined || code === 0 ? "none" : String(code))

/**
 * Occurrences the Event recorder handled, by outcome (label `outcome`): `written` (a create
 * or a series patch sent and answered), `aggregated` (folded into an Event already written
 * or queued, so no request of its own), `filtered` (over an object's spam budget), `dropped`
 * (the queue was full), `failed` (a write the API refused or did not answer).
 */
export const eventsRecorded = Metric.counter(`${METRIC_PREFIX}events_total`, {
  description: "Kubernetes Events the recorder handled, by outcome (written, aggregated, filtered, dropped, failed)",
  incremental: true
})

/** One label array per (metric, labels), kept for as long as the metric lives. */
const labelArrays = new WeakMap<object, Map<string, ReadonlyArray<MetricLabel.MetricLabel>>>()

const labelsFor = (metric: object, labels: ReadonlyArray<readonly [string, string]>) => {
  let byKey = labelArrays.get(metric)
  if (byKey === undefined) {
    byKey = new Map()
    labelArrays.set(metric, byKey)
  }
  const key = labels.map(([name, value]) => `${name}=${value}`).join("\u0000")
  let array = byKey.get(key)
  if (array === undefined) {
    array = labels.map(([name, value]) => MetricLabel.make(name, value))
    byKey.set(key, array)
  }
  return array
}

/**
 * Updates `metric`'s series for `labels` now (a counter adds, a histogram records), for
 * code already inside an `Effect.sync`. Effect finds a series by the identity of its
 * label array; `Metric.tagged` makes a new array, a new key and a registry lookup on
 * every update, which showed in the runner's profile. One array per series, made once
 * here, is found at once.
 */
export const unsafeUpdateSeries = <In>(
  metric: Metric.Metric<any, In, any>,
  labels: ReadonlyArray<readonly [string, string]>,
  value: In
): void => metric.unsafeUpdate(value, labelsFor(metric, labels))

/** Moves a gauge's series for `labels` by `by` now, as `unsafeUpdateSeries` does. */
export const unsafeModifySeries = (
  gauge: Metric.Metric.Gauge<number>,
  labels: ReadonlyArray<readonly [string, string]>,
  by: number
): void => gauge.unsafeModify(by, labelsFor(gauge, labels))

/** `unsafeUpdateSeries` as an effect. */
export const updateSeries = <In>(
  metric: Metric.Metric<any, In, any>,
  labels: ReadonlyArray<readonly [string, string]>,
  value: In
): Effect.Effect<void> => Effect.sync(() => unsafeUpdateSeries(metric, labels, value))

/** `unsafeModifySeries` as an effect. */
export const modifySeries = (
  gauge: Metric.Metric.Gauge<number>,
  labels: ReadonlyArray<readonly [string, string]>,
  by: number
): Effect.Effect<void> => Effect.sync(() => unsafeModifySeries(gauge, labels, by))
