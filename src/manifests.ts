/**
 * `session-routing/manifests`: the rules session-routing applies, as pure functions of
 * their arguments: the objects a session publishes and their names, the RBAC a
 * configuration needs, what an Ingress's or HTTPRoute's status says about a host, why a
 * host is still pending at its deadline, and the events a host's state becomes. For a
 * runner that renders or checks them itself; publishing needs none of it.
 *
 * @example
 * ```ts
 * // buildSessionObjects from this entry
 * const objects = buildSessionObjects("ingress", {
 *   sessionNamespace: "telo-sessions",
 *   baseDomain: "sessions.example.com",
 *   ingressClassName: "nginx",
 *   managedBy: "session-routing"
 * }, {
 *   sessionId: "hzyayvabgyvz",
 *   podName: "telo-run-hzyayvabgyvz",
 *   podUid: "3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13",
 *   ports: [{ port: 8080, protocol: "tcp" }]
 * })
 * ```
 */

/** Session ids and port specs. */
export { parsePortSpec, type SessionId } from "./domain/Session.js"
/** Hosts, endpoints, verdicts and what a host's state is reported as. */
export {
  endpointsFor,
  GONE_REASON,
  hostForPort,
  type HostReport,
  reportOf,
  type RouteHold,
  RouteVerdict,
  Unprogrammed
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
  sessionObjectName
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
/** Why a host is still pending at its deadline: the first broken link of its routing, with a stable code. */
export { type Cause, DIAGNOSIS_CODES, ingressPath, RoutingPath } from "./domain/Diagnosis.js"
export { gatewayPath } from "./domain/GatewayPath.js"
/** The reasons of the Events recorded on a session Pod. */
export { EventReason } from "./domain/KubeEvents.js"
