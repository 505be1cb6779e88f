/**
 * The options every command shares (`--kubeconfig`, `--context`, `-n/--namespace`,
 * `--mode`), declared once and spread into each subcommand's own options. They are
 * not put on the root command: @effect/cli hands options that follow a subcommand's
 * arguments to the parent only at the very end of the line, so `render --mode none
 * -o json` would fail with "unknown argument '-o'". On the subcommand they go anywhere.
 */
import { Options } from "@effect/cli"
import { type Layer, Option } from "effect"
import * as RouterConfigLive from "../layers/RouterConfigLive.js"
import type { RouterConfig, RouterConfigError } from "../services/RouterConfig.js"

/**
 * Options of the commands that change the routing configuration. `--mode` and
 * `--namespace` are plain text, not `Options.choice`: their values go through the same
 * validation as the environment, so a bad one gets the same one-line message naming
 * the flag and what would be valid.
 */
export const routingOptions = {
  namespace: Options.text("namespace").pipe(
    Options.withAlias("n"),
    Options.withDescription(`Namespace of the session objects (overrides ${RouterConfigLive.ENV.sessionNamespace})`),
    Options.optional
  ),
  mode: Options.text("mode").pipe(
    Options.withDescription(`Routing layer: ingress, gateway or none (overrides ${RouterConfigLive.ENV.mode})`),
    Options.optional
  )
} as const

/** Options of the commands that talk to a cluster (publish, status, unpublish). */
export const clusterOptions = {
  kubeconfig: Options.file("kubeconfig").pipe(
    Options.withDescription("Path of the kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)"),
    Options.optional
  ),
  context: Options.text("context").pipe(
    Options.withDescription("kubeconfig context to use (default: the current context)"),
    Options.optional
  )
} as const

/** Every shared option, for commands that both talk to a cluster and route. */
export const globalOptions = { ...clusterOptions, ...routingOptions } as const

/** The parsed routing options. */
export interface RoutingOptions {
  readonly namespace: Option.Option<string>
  readonly mode: Option.Option<string>
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

/** `RouterConfig` from the environment with the routing flags winning. */
export const routerConfigLayer = (options: RoutingOptions): Layer.Layer<RouterConfig, RouterConfigError> =>
  RouterConfigLive.layerFromEnv(routerConfigOverrides(options))
