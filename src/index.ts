/**
 * session-routing's public face: what a runner needs to publish session routes, follow
 * them and read them back. Nothing here requires importing an internal path, and
 * nothing here loads the local cluster: that is its own package,
 * `@session-routing/local-cluster`. Controller mode is `session-routing/controller`; the
 * pure rules (objects, RBAC, verdicts, diagnosis) are `session-routing/manifests`; what
 * implementing a KubeClient takes is `session-routing/kubernetes`.
 */

// Programs.
/** Publish a session, stream (or report) its route events, read its status, unpublish it. */
export {
  InvalidSession,
  type PublishedSession,
  publishSession,
  reportSession,
  type SessionEvent,
  sessionStatus,
  unpublishSession
} from "./runner/SessionRunner.js"
/** Keep reporting a settled session's changes. */
export { type FollowedHost, type FollowOptions, followSession } from "./runner/FollowSession.js"
/** Whether this configuration can route sessions on the cluster, as `session-routing check` prints it. */
export { type CheckOptions, type CheckReport, type CheckResult, checkRouting } from "./runner/Check.js"
/**
 * The route-health watch alone, for routes published some other way: `watchRouteHealth`
 * as a Stream, `reportRouteHealth` handing each event to a callback on the caller's fiber.
 */
export { reportRouteHealth, type RouteHealthEvent, watchRouteHealth } from "./health/RouteHealth.js"

// The vocabulary of a session.
/** Session ids and ports. */
export { parsePorts, parseSessionId, type PortMapping, type Protocol } from "./domain/Session.js"
/** Hosts, endpoints and route states; the codes an unprogrammed host carries. */
export {
  type Endpoint,
  type PublishedRoute,
  type RouteState,
  type RoutingMode,
  UnprogrammedCode
} from "./domain/Routes.js"
/** The session a publish is for. */
export type { SessionSpec } from "./domain/Manifests.js"
/** The stable codes of a diagnosis at a deadline. */
export type { DiagnosisCode } from "./domain/Diagnosis.js"

// Services and their errors.
/** The Kubernetes API as session-routing uses it. */
export { KubeClient } from "./services/KubeClient.js"
/**
 * Every way a Kubernetes call fails, each with a reason a person can act on.
 *
 * @since 0.1.0
 * @category errors
 */
export * as KubeError from "./services/KubeError.js"
/** Routing configuration, and the error that lists every bad key. */
export { RouterConfig, RouterConfigError } from "./services/RouterConfig.js"
/** The routing layer of a session, which publishes and unpublishes, and its failures. */
export { PublishError, RouterSetupError, SessionRouter } from "./services/SessionRouter.js"
/** The one reader and judge of route status, and its failures (a status read, a watch refused). */
export { RouteReadError, RouteStatusSource, WatchUnavailable } from "./services/RouteStatusSource.js"
/** Kubernetes Events on the session Pod. */
export { EventRecorder } from "./services/EventRecorder.js"
/** Probes of a programmed host's public path (`SESSION_ROUTE_PROBE`). */
export { RouteProbe } from "./services/RouteProbe.js"

// Layers.
/**
 * What a runner provides once: the router of a mode with its status source, Event
 * recorder and route probe (`layerIngress`, `layerGateway`, `layerNone`, `layerConfig`,
 * `layerDetached`), and the `SessionRouting` type of the services it provides.
 *
 * @since 0.1.0
 * @category layers
 */
export * as SessionRouting from "./layers/SessionRouting.js"
/** The live KubeClient on @kubernetes/client-node, from a kubeconfig. */
export { KubeClientLive, KubeConfigError } from "./layers/KubeClientLive.js"
/**
 * RouterConfig from the environment (`layer`, `layerFromEnv`) or from values (`layerFrom`).
 *
 * @since 0.1.0
 * @category layers
 */
export * as RouterConfigLive from "./layers/RouterConfigLive.js"

// Observability.
/**
 * The span names, span attributes and metrics (Effect `Metric`s) session-routing records.
 *
 * @since 0.1.0
 * @category observability
 */
export * as Telemetry from "./services/Telemetry.js"
/**
 * The `session_routing_*` metrics as a Prometheus scrape: `prometheusText`, `httpApp`, and `layerRoute` for a runner's own router.
 *
 * @since 0.1.0
 * @category observability
 */
export * as RoutingMetrics from "./layers/RoutingMetrics.js"
/**
 * Span export set by the standard `OTEL_*` variables; OpenTelemetry is loaded only when they name an exporter.
 *
 * @since 0.1.0
 * @category observability
 */
export * as TracingExport from "./layers/TracingExport.js"
