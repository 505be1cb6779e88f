/**
 * `session-routing/controller`: controller mode as a library. `runController` routes
 * every labelled session Pod of the namespace and reports on each through its
 * `RoutesProgrammed` condition, one leader among replicas; the rules it applies (the
 * session a Pod declares, the condition a set of hosts gives, the shard a session falls
 * in) are here too, for a runner in Effect that labels its own Pods.
 *
 * @example
 * ```ts
 * // runController from here; KubeClientLive, RouterConfigLive, SessionRouting from the main entry
 * const layer = SessionRouting.layerConfig.pipe(
 *   Layer.provideMerge(KubeClientLive.layerConfig()),
 *   Layer.provideMerge(RouterConfigLive.layer)
 * )
 * Effect.runFork(Effect.provide(runController({ leaderElection: { identity: "controller-0" } }), layer))
 * ```
 */

/** The controller program, its options and the failures it can start with. */
export {
  type ControllerElection,
  controllerLeaseName,
  type ControllerOptions,
  ControllerSetupError,
  type PodReport,
  runController
} from "./runner/Controller.js"
/** What a Pod declares and what the controller writes back on it. */
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
/** Leader election on a Lease: its settings, what the leader is told, and the loss of the Lease. */
export {
  InvalidLeaderElectionSettings,
  type LeaderElectionSettings,
  type LeadershipChange,
  LeadershipLost
} from "./runner/controller/LeaderElection.js"
