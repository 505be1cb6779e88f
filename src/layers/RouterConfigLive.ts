/**
 * Builds `RouterConfig`: from the environment through Effect `Config` (`layer`,
 * `layerFromEnv` with overrides such as CLI flags), or from values (`layerFrom`).
 * Every source goes through one validation that collects all bad settings, so a
 * start-up names every one of them in a single message.
 */
import { Config, ConfigError, Effect, Either, Layer } from "effect"
import { MAX_SESSION_ID_LENGTH } from "../domain/Session.js"
import { RouterConfig, RouterConfigError } from "../services/RouterConfig.js"
import { MAX_BASE_DOMAIN_LENGTH } from "./routerConfig/ConfigRules.js"
import {
  DEFAULTS,
  ENV,
  envKeys,
  fieldKeys,
  type RouterConfigValues,
  type Setting,
  type Sourced,
  type SourcedValues
} from "./routerConfig/Settings.js"
import { validate } from "./routerConfig/Validation.js"

export { MAX_BASE_DOMAIN_LENGTH, MAX_SESSION_ID_LENGTH, validate }
export {
  DEFAULTS,
  ENV,
  envKeys,
  fieldKeys,
  type KeyNames,
  type RouterConfigValues,
  type Setting,
  type Sourced,
  type SourcedValues
} from "./routerConfig/Settings.js"

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

/** A setting with no default: unset, it stays undefined. */
const optional = (read: Config.Config<Sourced>, description: string): Config.Config<Sourced | undefined> =>
  read.pipe(Config.withDefault(undefined), Config.withDescription(description))

/** A setting with a default, which is named by the variable so that a problem with it says what to set. */
const defaulted = (name: string, fallback: string | number, description: string): Config.Config<Sourced> =>
  variable(name).pipe(Config.withDefault<Sourced>({ value: fallback, key: name }), Config.withDescription(description))

/**
 * The environment, read but not yet validated. Values stay raw here so that one
 * validation pass (shared with `make`) can report every bad key at once: a failing
 * `Config.integer` would stop at the first bad number and lose the rest.
 */
export const config: Config.Config<SourcedValues> = Config.all({
  mode: defaulted(ENV.mode, DEFAULTS.mode, "Routing layer that publishes session hosts: ingress, gateway or none"),
  baseDomain: optional(
    variableOr(ENV.baseDomain, ENV.legacyBaseDomain),
    `Base domain of session hosts (<port>-<session>.<domain>); unset: nothing is published. Falls back to ${ENV.legacyBaseDomain}`
  ),
  ingressClassName: optional(
    variable(ENV.ingressClassName),
    "ingressClassName of session Ingresses; unset: the cluster's default class"
  ),
  tlsSecretName: optional(
    variableOr(ENV.tlsSecretName, ENV.legacyTlsSecretName),
    `TLS Secret the session Ingress presents (ignored in gateway mode). Falls back to ${ENV.legacyTlsSecretName}`
  ),
  gatewayName: optional(variable(ENV.gatewayName), "Gateway the HTTPRoutes attach to; required in gateway mode"),
  gatewayNamespace: optional(
    variable(ENV.gatewayNamespace),
    "Namespace of that Gateway; unset: the session namespace"
  ),
  gatewaySection: optional(
    variable(ENV.gatewaySection),
    "Listener (sectionName) of that Gateway the HTTPRoutes attach to; unset: every listener"
  ),
  routeReadyTimeoutMs: defaulted(
    ENV.routeReadyTimeoutMs,
    DEFAULTS.routeReadyTimeoutMs,
    "Milliseconds a host may stay pending before it is reported unprogrammed"
  ),
  routePollIntervalMs: defaulted(
    ENV.routePollIntervalMs,
    DEFAULTS.routePollIntervalMs,
    "Milliseconds between status reads while a host is pending"
  ),
  apiTimeoutMs: defaulted(
    ENV.apiTimeoutMs,
    DEFAULTS.apiTimeoutMs,
    "Milliseconds one Kubernetes API call may take, retries included; each attempt gets half"
  ),
  statusSource: defaulted(
    ENV.statusSource,
    DEFAULTS.statusSource,
    "Where route health reads status: watch (one shared watch per kind) or poll (a read per host)"
  ),
  sessionNamespace: defaulted(
    ENV.sessionNamespace,
    DEFAULTS.sessionNamespace,
    "Namespace of the session Pods and their routing objects"
  ),
  managedBy: defaulted(
    ENV.managedBy,
    DEFAULTS.managedBy,
    "Value of the app.kubernetes.io/managed-by label on every object"
  ),
  events: defaulted(
    ENV.events,
    "true",
    "Record Kubernetes Events (RoutesPublished, RouteProgrammed, ...) on the session Pod: true or false"
  ),
  routeProbe: defaulted(
    ENV.routeProbe,
    DEFAULTS.routeProbe,
    "Request each programmed host through the published address: off, http or https"
  ),
  routeProbeAddress: optional(
    variable(ENV.routeProbeAddress),
    "IP address or DNS name probes connect to; unset: the address the routing layer published"
  ),
  routeProbePort: optional(
    variable(ENV.routeProbePort),
    "Port probes connect to; unset: 80 for http, 443 for https"
  )
})

// ---------------------------------------------------------------------------
// Constructors and layers
// ---------------------------------------------------------------------------

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
