/**
 * Builds `RouterConfig`: from the environment through Effect `Config` (`layer`,
 * `layerFromEnv` with overrides such as CLI flags), or from values (`layerFrom`).
 * Every source goes through one validation that collects all bad settings, so a
 * start-up names every one of them in a single message.
 */
import { Config, ConfigError, Effect, Either, Layer } from "effect"
import type { RoutingMode } from "../domain/Routes.js"
import { MAX_SESSION_ID_LENGTH } from "../domain/Session.js"
import { type ConfigProblem, RouterConfig, RouterConfigError } from "../services/RouterConfig.js"
import {
  baseDomainRule,
  booleanRule,
  labelValueRule,
  MAX_BASE_DOMAIN_LENGTH,
  millisecondsRule,
  modeRule,
  namespaceRule,
  objectNameRule,
  portRule,
  probeAddressRule,
  probeRule,
  type Rule,
  sectionRule,
  statusSourceRule
} from "./internal/routerConfig/ConfigRules.js"

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
} as const satisfies {
  readonly mode: RoutingMode
  readonly routeReadyTimeoutMs: number
  readonly routePollIntervalMs: number
  readonly apiTimeoutMs: number
  readonly statusSource: "watch" | "poll"
  readonly sessionNamespace: string
  readonly managedBy: string
  readonly events: boolean
  readonly routeProbe: "off" | "http" | "https"
}

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

/**
 * Values that win over the environment, each with the key to name in a problem,
 * e.g. `{ sessionNamespace: { value: "dev", key: "--namespace" } }` from a CLI flag.
 */
export type RouterConfigOverrides = SourcedValues

// ---------------------------------------------------------------------------
// Reading the environment
// ---------------------------------------------------------------------------

/**
 * One variable. A blank value counts as unset: deployment templates commonly render
 * an unset value as `""`, and treating that as a bad domain would refuse a sane setup.
 */
const variable = (name: string): Config.Config<Sourced> =>
  Config.string(name).pipe(
    Config.mapOrFail((value) =>
      value.trim() === ""
        ? Either.left(ConfigError.MissingData([], `${name} is blank`))
        : Either.right<Sourced>({ value, key: name })
    )
  )

/** The newer variable, else the older spelling; the result names whichever was read. */
const variableOr = (name: string, legacy: string): Config.Config<Sourced> =>
  variable(name).pipe(Config.orElseIf({ if: ConfigError.isMissingDataOnly, orElse: () => variable(legacy) }))

const defaultOf = (key: string, value: string | number): Sourced => ({ value, key })

/**
 * The environment, read but not yet validated. Values stay raw here so that one
 * validation pass (shared with `make`) can report every bad key at once: a failing
 * `Config.integer` would stop at the first bad number and lose the rest.
 */
export const config: Config.Config<SourcedValues> = Config.all({
  mode: variable(ENV.mode).pipe(
    Config.withDefault(defaultOf(ENV.mode, DEFAULTS.mode)),
    Config.withDescription("Routing layer that publishes session hosts: ingress, gateway or none")
  ),
  baseDomain: variableOr(ENV.baseDomain, ENV.legacyBaseDomain).pipe(
    Config.withDefault(undefined),
    Config.withDescription(
      `Base domain of session hosts (<port>-<session>.<domain>); unset: nothing is published. Falls back to ${ENV.legacyBaseDomain}`
    )
  ),
  ingressClassName: variable(ENV.ingressClassName).pipe(
    Config.withDefault(undefined),
    Config.withDescription("ingressClassName of session Ingresses; unset: the cluster's default class")
  ),
  tlsSecretName: variableOr(ENV.tlsSecretName, ENV.legacyTlsSecretName).pipe(
    Config.withDefault(undefined),
    Config.withDescription(
      `TLS Secret the session Ingress presents (ignored in gateway mode). Falls back to ${ENV.legacyTlsSecretName}`
    )
  ),
  gatewayName: variable(ENV.gatewayName).pipe(
    Config.withDefault(undefined),
    Config.withDescription("Gateway the HTTPRoutes attach to; required in gateway mode")
  ),
  gatewayNamespace: variable(ENV.gatewayNamespace).pipe(
    Config.withDefault(undefined),
    Config.withDescription("Namespace of that Gateway; unset: the session namespace")
  ),
  gatewaySection: variable(ENV.gatewaySection).pipe(
    Config.withDefault(undefined),
    Config.withDescription("Listener (sectionName) of that Gateway the HTTPRoutes attach to; unset: every listener")
  ),
  routeReadyTimeoutMs: variable(ENV.routeReadyTimeoutMs).pipe(
    Config.withDefault(defaultOf(ENV.routeReadyTimeoutMs, DEFAULTS.routeReadyTimeoutMs)),
    Config.withDescription("Milliseconds a host may stay pending before it is reported unprogrammed")
  ),
  routePollIntervalMs: variable(ENV.routePollIntervalMs).pipe(
    Config.withDefault(defaultOf(ENV.routePollIntervalMs, DEFAULTS.routePollIntervalMs)),
    Config.withDescription("Milliseconds between status reads while a host is pending")
  ),
  apiTimeoutMs: variable(ENV.apiTimeoutMs).pipe(
    Config.withDefault(defaultOf(ENV.apiTimeoutMs, DEFAULTS.apiTimeoutMs)),
    Config.withDescription("Milliseconds one Kubernetes API call may take, retries included; each attempt gets half")
  ),
  statusSource: variable(ENV.statusSource).pipe(
    Config.withDefault(defaultOf(ENV.statusSource, DEFAULTS.statusSource)),
    Config.withDescription(
      "Where route health reads status: watch (one shared watch per kind) or poll (a read per host)"
    )
  ),
  sessionNamespace: variable(ENV.sessionNamespace).pipe(
    Config.withDefault(defaultOf(ENV.sessionNamespace, DEFAULTS.sessionNamespace)),
    Config.withDescription("Namespace of the session Pods and their routing objects")
  ),
  managedBy: variable(ENV.managedBy).pipe(
    Config.withDefault(defaultOf(ENV.managedBy, DEFAULTS.managedBy)),
    Config.withDescription("Value of the app.kubernetes.io/managed-by label on every object")
  ),
  events: variable(ENV.events).pipe(
    Config.withDefault(defaultOf(ENV.events, "true")),
    Config.withDescription(
      "Record Kubernetes Events (RoutesPublished, RouteProgrammed, ...) on the session Pod: true or false"
    )
  ),
  routeProbe: variable(ENV.routeProbe).pipe(
    Config.withDefault(defaultOf(ENV.routeProbe, DEFAULTS.routeProbe)),
    Config.withDescription("Request each programmed host through the published address: off, http or https")
  ),
  routeProbeAddress: variable(ENV.routeProbeAddress).pipe(
    Config.withDefault(undefined),
    Config.withDescription("IP address or DNS name probes connect to; unset: the address the routing layer published")
  ),
  routeProbePort: variable(ENV.routeProbePort).pipe(
    Config.withDefault(undefined),
    Config.withDescription("Port probes connect to; unset: 80 for http, 443 for https")
  )
})

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

export { MAX_BASE_DOMAIN_LENGTH, MAX_SESSION_ID_LENGTH }

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

/**
 * Validates raw settings into the service, or fails with every problem at once.
 * `keys` names the settings that are absent (the missing Gateway name must say
 * which variable, or which field, to set).
 */
export const validate = (
  given: SourcedValues,
  keys: KeyNames = envKeys
): Either.Either<RouterConfig.Service, RouterConfigError> => {
  const problems: Array<ConfigProblem> = []
  const check = <A>(sourced: Sourced | undefined, rule: Rule<A>): A | undefined => {
    if (sourced === undefined) return undefined
    const result = rule(sourced.value)
    if (Either.isLeft(result)) {
      problems.push({ key: sourced.key, value: String(sourced.value), expected: result.left })
      return undefined
    }
    return result.right
  }

  // Every setting is checked, whatever the mode: a bad value is reported even where
  // it would be ignored, so switching modes later does not uncover it.
  const mode = check(given.mode, modeRule) ?? (given.mode === undefined ? DEFAULTS.mode : undefined)
  const baseDomain = check(given.baseDomain, baseDomainRule)
  const ingressClassName = check(given.ingressClassName, objectNameRule("an IngressClass name (DNS-1123 subdomain)"))
  const tlsSecretName = check(given.tlsSecretName, objectNameRule("a Secret name (DNS-1123 subdomain)"))
  const gatewayName = check(given.gatewayName, objectNameRule("a Gateway name (DNS-1123 subdomain)"))
  const gatewayNamespace = check(given.gatewayNamespace, namespaceRule)
  const gatewaySection = check(given.gatewaySection, sectionRule)
  const routeReadyTimeoutMs = check(given.routeReadyTimeoutMs, millisecondsRule) ?? DEFAULTS.routeReadyTimeoutMs
  const routePollIntervalMs = check(given.routePollIntervalMs, millisecondsRule) ?? DEFAULTS.routePollIntervalMs
  const apiTimeoutMs = check(given.apiTimeoutMs, millisecondsRule) ?? DEFAULTS.apiTimeoutMs
  const statusSource = check(given.statusSource, statusSourceRule) ?? DEFAULTS.statusSource
  const sessionNamespace = check(given.sessionNamespace, namespaceRule) ?? DEFAULTS.sessionNamespace
  const managedBy = check(given.managedBy, labelValueRule) ?? DEFAULTS.managedBy
  const events = check(given.events, booleanRule) ?? DEFAULTS.events
  const routeProbe = check(given.routeProbe, probeRule) ?? DEFAULTS.routeProbe
  const routeProbeAddress = check(given.routeProbeAddress, probeAddressRule(ENV.routeProbePort))
  const routeProbePort = check(given.routeProbePort, portRule)

  if (mode === "gateway" && given.gatewayName === undefined) {
    problems.push({
      key: keys.gatewayName,
      value: undefined,
      expected: `set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; ${
        given.mode?.key ?? keys.mode
      }=gateway)`
    })
  }

  const warnings: Array<string> = []
  if (mode === "gateway") {
    // TLS terminates on the Gateway's listener in gateway mode; an HTTPRoute has
    // nowhere to carry a certificate, so the setting cannot take effect.
    if (given.tlsSecretName !== undefined) {
      warnings.push(
        `${given.tlsSecretName.key} is ignored in gateway mode: TLS is configured on the Gateway's listener, not on HTTPRoutes`
      )
    }
    if (given.ingressClassName !== undefined) {
      warnings.push(`${given.ingressClassName.key} is ignored in gateway mode: no Ingress is published`)
    }
  }

  if (problems.length > 0 || mode === undefined) return Either.left(new RouterConfigError({ problems }))

  const service: RouterConfig.Service = {
    mode,
    ...(baseDomain !== undefined ? { baseDomain } : {}),
    ...(mode !== "gateway" && ingressClassName !== undefined ? { ingressClassName } : {}),
    ...(mode !== "gateway" && tlsSecretName !== undefined ? { tlsSecretName } : {}),
    ...(mode === "gateway" && gatewayName !== undefined
      ? {
        gateway: {
          name: gatewayName,
          namespace: gatewayNamespace ?? sessionNamespace,
          ...(gatewaySection !== undefined ? { sectionName: gatewaySection } : {})
        }
      }
      : {}),
    routeReadyTimeoutMs,
    routePollIntervalMs,
    apiTimeoutMs,
    statusSource,
    sessionNamespace,
    managedBy,
    // Only the exception is spelled out: a configuration without `events` records them.
    ...(events ? {} : { events: false }),
    ...(routeProbe !== "off" ? { routeProbe } : {}),
    ...(routeProbe !== "off" && routeProbeAddress !== undefined ? { routeProbeAddress } : {}),
    ...(routeProbe !== "off" && routeProbePort !== undefined ? { routeProbePort } : {}),
    warnings
  }
  return Either.right(service)
}

/** Raw values from code, named by their field names. */
const sourcedFromValues = (values: RouterConfigValues): SourcedValues => {
  const out: Partial<Record<Setting, Sourced>> = {}
  for (const setting of Object.keys(fieldKeys) as Array<Setting>) {
    const value = values[setting]
    if (value !== undefined) out[setting] = { value, key: fieldKeys[setting] }
  }
  return out
}

/** Later sources win; an override left undefined keeps the earlier value. */
const overlay = (base: SourcedValues, overrides: RouterConfigOverrides): SourcedValues => {
  const out: Partial<Record<Setting, Sourced | undefined>> = { ...base }
  for (const setting of Object.keys(overrides) as Array<Setting>) {
    const value = overrides[setting]
    if (value !== undefined) out[setting] = value
  }
  return out
}

// ---------------------------------------------------------------------------
// Constructors and layers
// ---------------------------------------------------------------------------

/** The configuration from values, validated like the environment; problems name the fields. */
export const make = (values: RouterConfigValues): Effect.Effect<RouterConfig.Service, RouterConfigError> =>
  Effect.suspend(() => validate(sourcedFromValues(values), fieldKeys))

/**
 * The configuration from the current `ConfigProvider` (the environment by default),
 * with `overrides` (e.g. CLI flags) winning over it.
 */
export const fromEnv = (
  overrides: RouterConfigOverrides = {}
): Effect.Effect<RouterConfig.Service, RouterConfigError> =>
  config.pipe(
    // The reads above cannot fail on a value (every check happens in `validate`);
    // a failure here is a provider that could not be read at all.
    Effect.mapError(
      (error) =>
        new RouterConfigError({ problems: [{ key: "environment", value: undefined, expected: String(error) }] })
    ),
    Effect.flatMap((env) => validate(overlay(env, overrides), envKeys))
  )

/** `RouterConfig` from the environment. */
export const layer: Layer.Layer<RouterConfig, RouterConfigError> = Layer.effect(RouterConfig, fromEnv())

/** `RouterConfig` from the environment, with `overrides` winning (the CLI's `--mode` and `--namespace`). */
export const layerFromEnv = (overrides: RouterConfigOverrides = {}): Layer.Layer<RouterConfig, RouterConfigError> =>
  Layer.effect(RouterConfig, fromEnv(overrides))

/** `RouterConfig` from values, for tests and runners that configure in code. */
export const layerFrom = (values: RouterConfigValues = {}): Layer.Layer<RouterConfig, RouterConfigError> =>
  Layer.effect(RouterConfig, make(values))
