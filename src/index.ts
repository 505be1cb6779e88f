/**
 * session-routing's public face: everything a runner needs to publish session
 * routes and watch them. Nothing here requires importing an internal path, and
 * nothing here loads the local cluster: that is its own package,
 * `@session-routing/local-cluster`. What implementing a KubeClient takes is in
 * `session-routing/kubernetes`.
 */

// Domain: the pure vocabulary.
/** Session ids and ports: parsing and the rules every derived name must satisfy. */
export {
  parsePorts,
  parsePortSpec,
  parseSessionId,
  type PortMapping,
  type Protocol,
  type SessionId
} from "./domain/Session.js"
/** Hosts, endpoints, route states and verdicts. */
export {
  type Endpoint,
  endpointsFor,
  hostForPort,
  type HostReport,
  type PublishedRoute,
  reportOf,
  type RouteHold,
  type RouteState,
  RouteVerdict,
  type RoutingMode,
  Unprogrammed,
  UnprogrammedCode
} from "./domain/Routes.js"
/** The objects a session publishes, as plain JSON. */
export {
  buildSessionHttpRoutes,
  buildSessionIngress,
  buildSessionObjects,
  buildSessionService,
  type GatewayRef,
  LABEL_SESSION_ID,
  type ManifestSettings,
  sessionObjectName,
  type SessionSpec
} from "./domain/Manifests.js"
/** What an Ingress's or HTTPRoute's status says about its host. */
export { httpRouteVerdict, ingressVerdict } from "./domain/Verdict.js"
/** The least-privilege RBAC objects for a configuration, as `render --rbac` prints them. */
export {
  clusterRules,
  RBAC_NAME,
  rbacManifest,
  rbacObjectName,
  type RbacSettings,
  sessionRules
} from "./domain/RbacManifest.js"

// Services: Tags and their errors.
/** The Kubernetes API as session-routing uses it. */
export { KubeClient, type WatchEvent, withoutTransientRetry } from "./services/KubeClient.js"
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
/** The one reader and judge of route status: its kinds, and its failures (a status read, a watch refused). */
export {
  RouteReadError,
  RouteStatusSource,
  type StatusSourceKind,
  WatchUnavailable
} from "./services/RouteStatusSource.js"

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
/** Kubernetes Events on the session Pod: the recorder, its live layer, and the reasons it records. */
export { EventReason } from "./domain/KubeEvents.js"
export { EventRecorderLive } from "./layers/EventRecorderLive.js"
export { EventRecorder } from "./services/EventRecorder.js"
/** Probes of a programmed host's public path (`SESSION_ROUTE_PROBE`), and the follow-up events they add. */
export { RouteProbeLive } from "./layers/RouteProbeLive.js"
export type { FollowUpEvent } from "./runner/RouteFollowUps.js"
export { RouteProbe } from "./services/RouteProbe.js"
/** The live KubeClient on @kubernetes/client-node, from a kubeconfig. */
export { KubeClientLive, KubeConfigError } from "./layers/KubeClientLive.js"
/**
 * RouterConfig from the environment (`layer`, `layerFromEnv`) or from values (`layerFrom`).
 *
 * @since 0.1.0
 * @category layers
 */
export * as RouterConfigLive from "./layers/RouterConfigLive.js"

// Health and the runner program.
/**
 * The route-health watch: `watchRouteHealth` as a Stream, `reportRouteHealth` as an
 * Effect that hands each event to a callback on the caller's fiber (the lean form
 * for a runner that follows hundreds of sessions at once).
 */
export { reportRouteHealth, type RouteHealthEvent, watchRouteHealth } from "./health/RouteHealth.js"
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

export { type FollowedHost, type FollowOptions, followSession, GONE_REASON } from "./runner/FollowSession.js"
/** Whether this configuration can route sessions on the cluster: a list of checks, as `session-routing check` prints them. */
export {
  type CheckOptions,
  type CheckReport,
  type CheckResult,
  checkRouting,
  type CheckStatus
} from "./runner/Check.js"
/** Why a host is still pending at its deadline: the first broken link of its routing, with a stable code. */
/** Controller mode: routes for every labelled session Pod, its condition on the Pod, one leader of many replicas. */
export {
  ENDPOINTS_ANNOTATION,
  type PodHost,
  type PodProblem,
  type PodRoutes,
  type PodSession,
  podSession,
  PORTS_ANNOTATION,
  ROUTES_CONDITION,
  routesCondition,
  SESSION_LABEL,
  shardOf
} from "./domain/PodRouting.js"
export {
  InvalidLeaderElectionSettings,
  type LeaderElectionSettings,
  type LeadershipChange,
  LeadershipLost
} from "./layers/internal/controller/LeaderElection.js"
export {
  type ControllerElection,
  controllerLeaseName,
  type ControllerOptions,
  ControllerSetupError,
  type PodReport,
  runController
} from "./runner/Controller.js"

export { type Cause, DIAGNOSIS_CODES, type DiagnosisCode, ingressPath, RoutingPath } from "./domain/Diagnosis.js"
export { gatewayPath } from "./domain/GatewayPath.js"

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
