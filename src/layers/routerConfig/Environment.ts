/**
 * A configuration written back as the environment that reads as it: what a manifest
 * sets so that a process in the cluster configures itself as this one did.
 */
import type { RouterConfig } from "../../services/RouterConfig.js"
import { DEFAULTS, ENV } from "./Settings.js"

/** One variable and its value. */
export interface EnvironmentVariable {
  readonly name: string
  readonly value: string
}

/**
 * The variables that read back as `config` (its warnings aside: it holds nothing its
 * mode ignores). The mode, the namespace, the status source and the probe are always
 * written, since the grants rendered beside them were derived from them: a default that
 * changed in a later release must not leave the process doing what its Role does not
 * allow. Every other setting is written when set and not its default.
 */
export const environmentOf = (config: RouterConfig.Service): ReadonlyArray<EnvironmentVariable> => {
  const variables: Array<EnvironmentVariable> = []
  const set = (name: string, value: string | number | undefined) => {
    if (value !== undefined) variables.push({ name, value: String(value) })
  }
  const unlessDefault = <A extends string | number | boolean>(name: string, value: A, fallback: A) => {
    if (value !== fallback) set(name, String(value))
  }
  set(ENV.mode, config.mode)
  set(ENV.sessionNamespace, config.sessionNamespace)
  set(ENV.baseDomain, config.baseDomain)
  set(ENV.ingressClassName, config.ingressClassName)
  set(ENV.tlsSecretName, config.tlsSecretName)
  set(ENV.gatewayName, config.gateway?.name)
  set(ENV.gatewayNamespace, config.gateway?.namespace)
  set(ENV.gatewaySection, config.gateway?.sectionName)
  set(ENV.statusSource, config.statusSource)
  set(ENV.routeProbe, config.routeProbe ?? "off")
  set(ENV.routeProbeAddress, config.routeProbeAddress)
  set(ENV.routeProbePort, config.routeProbePort)
  unlessDefault(ENV.events, config.events !== false, DEFAULTS.events)
  unlessDefault(ENV.managedBy, config.managedBy, DEFAULTS.managedBy)
  unlessDefault(ENV.routeReadyTimeoutMs, config.routeReadyTimeoutMs, DEFAULTS.routeReadyTimeoutMs)
  unlessDefault(ENV.routePollIntervalMs, config.routePollIntervalMs, DEFAULTS.routePollIntervalMs)
  unlessDefault(ENV.apiTimeoutMs, config.apiTimeoutMs, DEFAULTS.apiTimeoutMs)
  return variables
}
