/**
 * The options the session commands share (`--kubeconfig`, `--context`, `-n/--namespace`,
 * `--mode`), declared once and spread into each subcommand's own options. They are
 * not put on the root command: @effect/cli hands options that follow a subcommand's
 * arguments to the parent only at the very end of the line, so `render --mode none
 * -o json` would fail with "unknown argument '-o'". On the subcommand they go anywhere.
 */
import { Options } from "@effect/cli"
import { Layer, Option } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import * as KubeClientLive from "../layers/KubeClientLive.js"
import * as RouterConfigLive from "../layers/RouterConfigLive.js"
import { SessionRouter } from "../layers/SessionRouter.js"
import type { KubeClient } from "../services/KubeClient.js"
import { RouterConfig } from "../services/RouterConfig.js"
import type { RouterSetupError } from "../services/SessionRouter.js"

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

/** The kubeconfig location the cluster flags name (unset ones: the default chain). */
export const kubeConfigOptions = (options: ClusterOptions): KubeClientLive.KubeConfigOptions => ({
  ...Option.match(options.kubeconfig, { onNone: () => ({}), onSome: (kubeconfigPath) => ({ kubeconfigPath }) }),
  ...Option.match(options.context, { onNone: () => ({}), onSome: (context) => ({ context }) })
})

/** The live `KubeClient` for the kubeconfig and context the flags name. */
export const kubeClientLayer = (options: ClusterOptions): Layer.Layer<KubeClient, KubeClientLive.KubeConfigError> =>
  KubeClientLive.layer(kubeConfigOptions(options))

/**
 * Whether a configuration routes anything, hence needs a cluster: mode `none` and a
 * missing base domain both publish nothing (`SessionRouter.layerConfig` picks the
 * none layer for them).
 */
export const routesSessions = (config: RouterConfig.Service): boolean =>
  config.mode !== "none" && config.baseDomain !== undefined

/**
 * `RouterConfig` (already read and validated) and the `SessionRouter` it picks, over
 * the live `KubeClient`. A configuration that routes nothing gets the none layer
 * without loading a kubeconfig, so `publish --mode none` works with no cluster.
 */
export const sessionLayer = (
  options: ClusterOptions,
  config: RouterConfig.Service
): Layer.Layer<SessionRouter | RouterConfig, KubeClientLive.KubeConfigError | RouterSetupError> => {
  const configLayer = Layer.succeed(RouterConfig, config)
  const router = routesSessions(config)
    ? SessionRouter.layerConfig.pipe(Layer.provide(kubeClientLayer(options)))
    : SessionRouter.layerNone
  return Layer.provideMerge(router, configLayer)
}
