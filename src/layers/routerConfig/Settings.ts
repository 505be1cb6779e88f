/**
 * The settings of RouterConfig: the environment variable and the default of each, and
 * their raw values before validation, each carrying the key (variable, flag or field)
 * a problem with it must name.
 */
import type { RoutingMode } from "../../domain/Routes.js"

/** The environment variable of each setting. `legacy*` names are read when the newer one is unset. */
export const ENV = {
  mode: "SESSION_ROUTING_MODE",
  baseDomain: "SESSION_ROUTING_BASE_DOMAIN",
  legacyBaseDomain: "SESSION_INGRESS_BASE_DOMAIN",
  ingressClassName: "SESSION_INGRESS_CLASS",
  tlsSecretName: "SESSION_ROUTING_TLS_SECRET",
  legacyTlsSecretName: "SESSION_INGRESS_TLS_SECRET",
  gatewayName: "SESSION_GATEWAY_NAME",
  gatewayNamespace: "SESSION_GATEWAY_NAMESPACE",
  gatewaySection: "SESSION_GATEWAY_SECTION",
  routeReadyTimeoutMs: "SESSION_ROUTE_READY_TIMEOUT_MS",
  routePollIntervalMs: "SESSION_ROUTE_POLL_INTERVAL_MS",
  apiTimeoutMs: "SESSION_API_TIMEOUT_MS",
  statusSource: "SESSION_ROUTE_STATUS_SOURCE",
  sessionNamespace: "RUNNER_SESSION_NAMESPACE",
  managedBy: "RUNNER_MANAGED_BY",
  events: "SESSION_ROUTING_EVENTS",
  routeProbe: "SESSION_ROUTE_PROBE",
  routeProbeAddress: "SESSION_ROUTE_PROBE_ADDRESS",
  routeProbePort: "SESSION_ROUTE_PROBE_PORT"
} as const

/** Defaults of the settings that have one (the gateway namespace defaults to the session namespace). */
export const DEFAULTS = {
  mode: "ingress",
  routeReadyTimeoutMs: 60_000,
  routePollIntervalMs: 2_000,
  apiTimeoutMs: 20_000,
  statusSource: "watch",
  sessionNamespace: "telo-sessions",
  managedBy: "telo-k8s-runner",
  events: true,
  routeProbe: "off"
} as const satisfies RouterConfigValues

/** Settings as a runner or a test gives them, before validation; absent ones take their default. */
export interface RouterConfigValues {
  readonly mode?: RoutingMode
  readonly baseDomain?: string
  readonly ingressClassName?: string
  readonly tlsSecretName?: string
  /** Required when `mode` is `gateway`. */
  readonly gatewayName?: string
  /** Defaults to the session namespace. */
  readonly gatewayNamespace?: string
  readonly gatewaySection?: string
  readonly routeReadyTimeoutMs?: number
  readonly routePollIntervalMs?: number
  readonly apiTimeoutMs?: number
  readonly statusSource?: "watch" | "poll"
  readonly sessionNamespace?: string
  readonly managedBy?: string
  /** Record Kubernetes Events on the session Pod; default true. */
  readonly events?: boolean
  /** Probe programmed hosts over http or https; default off. */
  readonly routeProbe?: "off" | "http" | "https"
  /** An IP address or DNS name probes connect to instead of the published address. */
  readonly routeProbeAddress?: string
  /** The port probes connect to; default 80 (http) or 443 (https). */
  readonly routeProbePort?: number
}

/** The name of one setting. */
export type Setting = keyof RouterConfigValues

/** A raw value and the key that supplied it, so a problem names the variable or flag a person must fix. */
export interface Sourced {
  readonly value: string | number | boolean
  readonly key: string
}

/** Raw settings from any mix of sources, each carrying its key. */
export type SourcedValues = { readonly [K in Setting]?: Sourced | undefined }

/** The key a setting is named by when it is absent, per source. */
export type KeyNames = { readonly [K in Setting]: string }

/** Settings named by their environment variables. */
export const envKeys: KeyNames = {
  mode: ENV.mode,
  baseDomain: ENV.baseDomain,
  ingressClassName: ENV.ingressClassName,
  tlsSecretName: ENV.tlsSecretName,
  gatewayName: ENV.gatewayName,
  gatewayNamespace: ENV.gatewayNamespace,
  gatewaySection: ENV.gatewaySection,
  routeReadyTimeoutMs: ENV.routeReadyTimeoutMs,
  routePollIntervalMs: ENV.routePollIntervalMs,
  apiTimeoutMs: ENV.apiTimeoutMs,
  statusSource: ENV.statusSource,
  sessionNamespace: ENV.sessionNamespace,
  managedBy: ENV.managedBy,
  events: ENV.events,
  routeProbe: ENV.routeProbe,
  routeProbeAddress: ENV.routeProbeAddress,
  routeProbePort: ENV.routeProbePort
}

/** Settings named by their field names, for values given in code. */
export const fieldKeys: KeyNames = {
  mode: "mode",
  baseDomain: "baseDomain",
  ingressClassName: "ingressClassName",
  tlsSecretName: "tlsSecretName",
  gatewayName: "gatewayName",
  gatewayNamespace: "gatewayNamespace",
  gatewaySection: "gatewaySection",
  routeReadyTimeoutMs: "routeReadyTimeoutMs",
  routePollIntervalMs: "routePollIntervalMs",
  apiTimeoutMs: "apiTimeoutMs",
  statusSource: "statusSource",
  sessionNamespace: "sessionNamespace",
  managedBy: "managedBy",
  events: "events",
  routeProbe: "routeProbe",
  routeProbeAddress: "routeProbeAddress",
  routeProbePort: "routeProbePort"
}
