/**
 * The configuration of session routing, as a service, and the error a bad one fails
 * with. `src/layers/RouterConfigLive.ts` builds it: `layer` from the environment
 * (every bad key reported in one message at start-up), `layerFrom` from values, for
 * tests and embedding runners.
 */
import { Context, Data } from "effect"
import type { GatewayRef, ManifestSettings } from "../domain/Manifests.js"
import type { RoutingMode } from "../domain/Routes.js"

export type { GatewayRef }

/**
 * The configuration's shape.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RouterConfig {
  export interface Service {
    readonly mode: RoutingMode
    /** Unset: nothing is published or watched, endpoints are host-less. */
    readonly baseDomain?: string
    readonly ingressClassName?: string
    /** TLS Secret the Ingress presents (ingress mode only; the Gateway owns TLS in gateway mode). */
    readonly tlsSecretName?: string
    /** Set exactly when `mode` is `gateway`. */
    readonly gateway?: GatewayRef
    /** How long a host may stay pending before it is reported `unprogrammed`. */
    readonly routeReadyTimeoutMs: number
    /** Poll interval while waiting. */
    readonly routePollIntervalMs: number
    /**
     * The most one Kubernetes API call may take, retries included; each attempt gets
     * half of it. Status reads while watching are also bounded by the route deadline.
     */
    readonly apiTimeoutMs: number
    /**
     * Where route health reads hosts' status: one shared watch of the routed kind
     * (`watch`), or a read per host per interval (`poll`, for clusters that grant no
     * list/watch, and the baseline the benchmark compares against).
     */
    readonly statusSource: "watch" | "poll"
    readonly sessionNamespace: string
    /** `app.kubernetes.io/managed-by` value. */
    readonly managedBy: string
    /** Record Kubernetes Events on the session Pod; only `false` turns them off. */
    readonly events?: boolean
    /**
     * Request each programmed host through the routing layer's published address
     * with this scheme; unset: no probe (and no EndpointSlice read).
     */
    readonly routeProbe?: "http" | "https"
    /** Where probes connect instead of the published address: an IP address or DNS name. */
    readonly routeProbeAddress?: string
    /** The port probes connect to; unset: 80 for http, 443 for https. */
    readonly routeProbePort?: number
    /** Things worth saying at start-up that are not errors (e.g. an ignored TLS secret). */
    readonly warnings: ReadonlyArray<string>
  }
}

/**
 * The routing configuration in context.
 *
 * @since 0.1.0
 * @category services
 */
export class RouterConfig extends Context.Tag("session-routing/RouterConfig")<RouterConfig, RouterConfig.Service>() {}

/** One bad setting: where it came from, what it held, and what would be valid. */
export interface ConfigProblem {
  /** The environment variable, CLI flag or field that holds the value (e.g. `SESSION_ROUTING_MODE`, `--namespace`). */
  readonly key: string
  /** The value as given; undefined when the problem is that the setting is missing. */
  readonly value: string | undefined
  /** What would be valid, phrased to follow "must be" or to stand alone when the value is missing. */
  readonly expected: string
}

/** One problem as a person reads it: `KEY="value" must be ...` or `KEY is not set: ...`. */
export const describeConfigProblem = (problem: ConfigProblem): string =>
  problem.value === undefined
    ? `${problem.key} is not set: ${problem.expected}`
    // JSON quoting keeps a value with spaces or a newline on one visible line.
    : `${problem.key}=${JSON.stringify(problem.value)} must be ${problem.expected}`

/**
 * The configuration is invalid: every bad setting at once, so one start-up shows them all.
 *
 * @since 0.1.0
 * @category errors
 */
export class RouterConfigError extends Data.TaggedError("RouterConfigError")<{
  readonly problems: ReadonlyArray<ConfigProblem>
}> {
  override get message(): string {
    return `invalid configuration: ${this.problems.map(describeConfigProblem).join("; ")}`
  }
}

/**
 * The settings the manifest builders need, or undefined without a base domain
 * (nothing has a host then, so nothing is built).
 */
export const manifestSettingsOf = (config: RouterConfig.Service): ManifestSettings | undefined =>
  config.baseDomain === undefined
    ? undefined
    : {
      sessionNamespace: config.sessionNamespace,
      managedBy: config.managedBy,
      baseDomain: config.baseDomain,
      ...(config.ingressClassName !== undefined ? { ingressClassName: config.ingressClassName } : {}),
      ...(config.tlsSecretName !== undefined ? { tlsSecretName: config.tlsSecretName } : {}),
      ...(config.gateway !== undefined ? { gateway: config.gateway } : {})
    }
