/**
 * The options the session commands share (`--kubeconfig`, `--context`, `-n/--namespace`,
 * `--mode`), declared once and spread into each subcommand's own options, and what
 * every session command does with them: read the configuration they override, say its
 * warnings, and run over the layers it picks. They are not put on the root command:
 * @effect/cli hands options that follow a subcommand's arguments to the parent only at
 * the very end of the line, so `render --mode none -o json` would fail with "unknown
 * argument '-o'". On the subcommand they go anywhere.
 */
import { Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import * as KubeClientLive from "../layers/KubeClientLive.js"
import * as RouterConfigLive from "../layers/RouterConfigLive.js"
import * as SessionRouting from "../layers/SessionRouting.js"
import { baseDomainOf, gatewayOf, modeOf, type SessionFootprint } from "../runner/SessionFootprint.js"
import type { KubeClient } from "../services/KubeClient.js"
import { RouterConfig, type RouterConfigError } from "../services/RouterConfig.js"
import type { RouterSetupError } from "../services/SessionRouter.js"
import type { CliError } from "./CliError.js"
import { asCliError } from "./present/Presenter.js"

/** The values of `--mode`, as the environment's SESSION_ROUTING_MODE takes them. */
const ROUTING_MODES: ReadonlyArray<RoutingMode> = ["ingress", "gateway", "none"]

/**
 * Options of the commands that change the routing configuration. `--namespace` is
 * plain text: it goes through the same validation as the environment, so a bad one
 * gets the same one-line message naming the flag and what would be valid.
 */
export const routingOptions = {
  namespace: Options.text("namespace").pipe(
    Options.withAlias("n"),
    Options.withPseudoName("NAMESPACE"),
    Options.withDescription(`Namespace of the session objects (overrides ${RouterConfigLive.ENV.sessionNamespace})`),
    Options.optional
  ),
  mode: Options.choice("mode", ROUTING_MODES).pipe(
    Options.withDescription(
      `Routing layer: an Ingress, Gateway API HTTPRoutes, or nothing (overrides ${RouterConfigLive.ENV.mode})`
    ),
    Options.optional
  )
} as const

/** Options of the commands that talk to a cluster (publish, status, unpublish). */
export const clusterOptions = {
  kubeconfig: Options.file("kubeconfig").pipe(
    Options.withPseudoName("PATH"),
    Options.withDescription("Path of the kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)"),
    Options.optional
  ),
  context: Options.text("context").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription("kubeconfig context to use (default: the current context)"),
    Options.optional
  )
} as const

/** Every shared option, for commands that both talk to a cluster and route. */
export const sharedOptions = { ...clusterOptions, ...routingOptions } as const

/** The parsed routing options. */
export interface RoutingOptions {
  readonly namespace: Option.Option<string>
  readonly mode: Option.Option<RoutingMode>
}

/** The parsed cluster options. */
export interface ClusterOptions {
  readonly kubeconfig: Option.Option<string>
  readonly context: Option.Option<string>
}

/** The flags that override the environment, each named as the person typed it. */
export const routerConfigOverrides = (options: RoutingOptions): RouterConfigLive.RouterConfigOverrides => ({
  ...Option.match(options.mode, {
    onNone: () => ({}),
    onSome: (value) => ({ mode: { value, key: "--mode" } })
  }),
  ...Option.match(options.namespace, {
    onNone: () => ({}),
    onSome: (value) => ({ sessionNamespace: { value, key: "--namespace" } })
  })
})

/** The configuration the environment gives, with the routing flags winning: read first, before any flag is checked. */
export const routerConfigFrom = (options: RoutingOptions): Effect.Effect<RouterConfig.Service, RouterConfigError> =>
  RouterConfigLive.fromEnv(routerConfigOverrides(options))

/** The configuration's warnings on stderr, one `warning:` line each. */
export const warnAbout = (config: RouterConfig.Service): Effect.Effect<void> =>
  Effect.forEach(config.warnings, (warning) => Console.error(`warning: ${warning}`), { discard: true })

/** The kubeconfig location the cluster flags name (unset ones: the default chain). */
export const kubeConfigOptions = (options: ClusterOptions): KubeClientLive.KubeConfigOptions => ({
  ...Option.match(options.kubeconfig, { onNone: () => ({}), onSome: (kubeconfigPath) => ({ kubeconfigPath }) }),
  ...Option.match(options.context, { onNone: () => ({}), onSome: (context) => ({ context }) })
})

/** The live `KubeClient` for the kubeconfig and context the flags name, its time limit `RouterConfig`'s. */
export const kubeClientLayer = (
  options: ClusterOptions
): Layer.Layer<KubeClient, KubeClientLive.KubeConfigError, RouterConfig> =>
  KubeClientLive.layerConfig(kubeConfigOptions(options))

/**
 * The configuration for a command that reads or deletes what a session already has
 * (`status`, `unpublish`): the environment and the namespace flag, as mode `none`, so
 * nothing a publish needs (a base domain, a Gateway) is asked for. What the session was
 * published with, its objects say (`configFromObjects`).
 */
export const objectsConfig = (options: RoutingOptions): Effect.Effect<RouterConfig.Service, RouterConfigError> =>
  RouterConfigLive.fromEnv({
    ...routerConfigOverrides({ namespace: options.namespace, mode: Option.none() }),
    mode: { value: "none", key: "--mode" }
  })

/**
 * The mode the flags or the environment name (`--mode`, else `SESSION_ROUTING_MODE`,
 * else the default), without what that mode would need: for a command that only looks
 * at what a session already has. Read after `objectsConfig`, which has said what is
 * wrong with the environment, if anything.
 */
export const configuredMode = (options: RoutingOptions): Effect.Effect<RoutingMode> =>
  Option.match(options.mode, {
    onSome: Effect.succeed,
    onNone: () =>
      Effect.map(Effect.orDie(RouterConfigLive.config), (raw) => {
        const value = String(raw.mode?.value ?? "")
        return ROUTING_MODES.find((mode) => mode === value) ?? RouterConfigLive.DEFAULTS.mode
      })
  })

/**
 * The configuration that reads the session's hosts as its objects were published: their
 * mode (or `--mode`), the Gateway its HTTPRoutes attach to, and the base domain of their
 * hosts, over whatever else the environment says (the ingress class, the time limits).
 */
export const configFromObjects = (
  options: RoutingOptions,
  footprint: SessionFootprint
): Effect.Effect<RouterConfig.Service, RouterConfigError> => {
  const mode = Option.getOrElse(Option.filter(options.mode, (m) => m !== "none"), () => modeOf(footprint))
  const gateway = gatewayOf(footprint)
  const baseDomain = baseDomainOf(footprint)
  const fromObjects = (value: string) => ({ value, key: "the session's objects" })
  return RouterConfigLive.fromEnv({
    ...routerConfigOverrides({ namespace: options.namespace, mode: Option.none() }),
    mode: { value: mode, key: Option.isSome(options.mode) ? "--mode" : "the session's objects" },
    ...(baseDomain !== undefined ? { baseDomain: fromObjects(baseDomain) } : {}),
    ...(mode === "gateway" && gateway !== undefined
      ? {
        gatewayName: fromObjects(gateway.name),
        gatewayNamespace: fromObjects(gateway.namespace),
        ...(gateway.sectionName !== undefined ? { gatewaySection: fromObjects(gateway.sectionName) } : {})
      }
      : {})
  })
}

/**
 * `KubeClient` for the flags' kubeconfig over `config` (whose API time limit bounds its
 * calls), and `config` itself: what reading a session's objects needs.
 */
export const objectsLayer = (
  options: ClusterOptions,
  config: RouterConfig.Service
): Layer.Layer<KubeClient | RouterConfig, KubeClientLive.KubeConfigError> =>
  Layer.provideMerge(kubeClientLayer(options), Layer.succeed(RouterConfig, config))

/**
 * Whether a configuration routes anything, hence needs a cluster: mode `none` and a
 * missing base domain both publish nothing (`SessionRouting.layerConfig` picks the
 * none layer for them).
 */
export const routesSessions = (config: RouterConfig.Service): boolean =>
  config.mode !== "none" && config.baseDomain !== undefined

/** What `publish` and `render` say when no base domain is set: the variable to set. */
export const noBaseDomainNote =
  `note: nothing is published without a base domain: set ${RouterConfigLive.ENV.baseDomain} (e.g. sessions.example.com)`

/**
 * `RouterConfig` (already read and validated) and the routing it picks, over the live
 * `KubeClient`. A configuration that routes nothing gets the detached none layer
 * without loading a kubeconfig, so `publish --mode none` works with no cluster.
 */
export const sessionLayer = (
  options: ClusterOptions,
  config: RouterConfig.Service
): Layer.Layer<SessionRouting.SessionRouting | RouterConfig, KubeClientLive.KubeConfigError | RouterSetupError> => {
  const configLayer = Layer.succeed(RouterConfig, config)
  const router = routesSessions(config)
    ? SessionRouting.layerConfig.pipe(Layer.provide(kubeClientLayer(options)))
    : SessionRouting.layerDetached
  return Layer.provideMerge(router, configLayer)
}

/**
 * Runs a session program over `sessionLayer(options, config)`, any failure (the
 * kubeconfig, the routing layer, the program's own) as the CLI's one line.
 */
export const withSessionLayer =
  (options: ClusterOptions, config: RouterConfig.Service) =>
  <A, E extends { readonly message: string }, R>(
    self: Effect.Effect<A, E, R>
  ): Effect.Effect<A, CliError, Exclude<R, SessionRouting.SessionRouting | RouterConfig>> =>
    self.pipe(Effect.provide(sessionLayer(options, config)), Effect.mapError(asCliError))
