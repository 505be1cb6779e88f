/**
 * Validation of raw settings into `RouterConfig.Service`: every setting through its
 * rule, whatever the mode, so that one pass collects every bad key; then what the
 * mode needs, what it ignores, and the service holding only what the mode uses.
 */
import { Either } from "effect"
import type { RoutingMode } from "../../domain/Routes.js"
import { type ConfigProblem, type RouterConfig, RouterConfigError } from "../../services/RouterConfig.js"
import {
  baseDomainRule,
  booleanRule,
  labelValueRule,
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
} from "./ConfigRules.js"
import { DEFAULTS, ENV, envKeys, type KeyNames, type Sourced, type SourcedValues } from "./Settings.js"

/**
 * Each given setting through its rule, every refusal added to `problems`; absent (or
 * refused) ones take their default. Every setting is checked, whatever the mode: a bad
 * value is reported even where it would be ignored, so switching modes later does not
 * uncover it.
 */
const checkEach = (given: SourcedValues, problems: Array<ConfigProblem>) => {
  const check = <A>(sourced: Sourced | undefined, rule: Rule<A>): A | undefined => {
    if (sourced === undefined) return undefined
    const result = rule(sourced.value)
    if (Either.isLeft(result)) {
      problems.push({ key: sourced.key, value: String(sourced.value), expected: result.left })
      return undefined
    }
    return result.right
  }
  return {
    mode: check(given.mode, modeRule) ?? (given.mode === undefined ? DEFAULTS.mode : undefined),
    baseDomain: check(given.baseDomain, baseDomainRule),
    ingressClassName: check(given.ingressClassName, objectNameRule("an IngressClass name (DNS-1123 subdomain)")),
    tlsSecretName: check(given.tlsSecretName, objectNameRule("a Secret name (DNS-1123 subdomain)")),
    gatewayName: check(given.gatewayName, objectNameRule("a Gateway name (DNS-1123 subdomain)")),
    gatewayNamespace: check(given.gatewayNamespace, namespaceRule),
    gatewaySection: check(given.gatewaySection, sectionRule),
    routeReadyTimeoutMs: check(given.routeReadyTimeoutMs, millisecondsRule) ?? DEFAULTS.routeReadyTimeoutMs,
    routePollIntervalMs: check(given.routePollIntervalMs, millisecondsRule) ?? DEFAULTS.routePollIntervalMs,
    apiTimeoutMs: check(given.apiTimeoutMs, millisecondsRule) ?? DEFAULTS.apiTimeoutMs,
    statusSource: check(given.statusSource, statusSourceRule) ?? DEFAULTS.statusSource,
    sessionNamespace: check(given.sessionNamespace, namespaceRule) ?? DEFAULTS.sessionNamespace,
    managedBy: check(given.managedBy, labelValueRule) ?? DEFAULTS.managedBy,
    events: check(given.events, booleanRule) ?? DEFAULTS.events,
    routeProbe: check(given.routeProbe, probeRule) ?? DEFAULTS.routeProbe,
    routeProbeAddress: check(given.routeProbeAddress, probeAddressRule(ENV.routeProbePort)),
    routeProbePort: check(given.routeProbePort, portRule)
  }
}

/** The settings as their rules read them. */
type Checked = ReturnType<typeof checkEach>

/** Gateway mode without a Gateway name: the problem names the key to set, and what chose the mode. */
const missingGateway = (
  given: SourcedValues,
  mode: RoutingMode | undefined,
  keys: KeyNames
): ReadonlyArray<ConfigProblem> =>
  mode === "gateway" && given.gatewayName === undefined
    ? [{
      key: keys.gatewayName,
      value: undefined,
      expected: `set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; ${
        given.mode?.key ?? keys.mode
      }=gateway)`
    }]
    : []

/** The settings given that gateway mode cannot use, as start-up warnings. */
const ignoredByMode = (given: SourcedValues, mode: RoutingMode | undefined): Array<string> => {
  const warnings: Array<string> = []
  if (mode !== "gateway") return warnings
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
  return warnings
}

/** The service of valid settings: what its mode does not use is left out. */
const serviceOf = (
  values: Checked & { readonly mode: RoutingMode },
  warnings: ReadonlyArray<string>
): RouterConfig.Service => {
  const { events, gatewayName, ingressClassName, mode, routeProbe, tlsSecretName } = values
  return {
    mode,
    ...(values.baseDomain !== undefined ? { baseDomain: values.baseDomain } : {}),
    ...(mode !== "gateway" && ingressClassName !== undefined ? { ingressClassName } : {}),
    ...(mode !== "gateway" && tlsSecretName !== undefined ? { tlsSecretName } : {}),
    ...(mode === "gateway" && gatewayName !== undefined
      ? {
        gateway: {
          name: gatewayName,
          namespace: values.gatewayNamespace ?? values.sessionNamespace,
          ...(values.gatewaySection !== undefined ? { sectionName: values.gatewaySection } : {})
        }
      }
      : {}),
    routeReadyTimeoutMs: values.routeReadyTimeoutMs,
    routePollIntervalMs: values.routePollIntervalMs,
    apiTimeoutMs: values.apiTimeoutMs,
    statusSource: values.statusSource,
    sessionNamespace: values.sessionNamespace,
    managedBy: values.managedBy,
    // Only the exception is spelled out: a configuration without `events` records them.
    ...(events ? {} : { events: false }),
    ...(routeProbe !== "off" ? { routeProbe } : {}),
    ...(routeProbe !== "off" && values.routeProbeAddress !== undefined
      ? { routeProbeAddress: values.routeProbeAddress }
      : {}),
    ...(routeProbe !== "off" && values.routeProbePort !== undefined ? { routeProbePort: values.routeProbePort } : {}),
    warnings
  }
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
  const values = checkEach(given, problems)
  problems.push(...missingGateway(given, values.mode, keys))
  const warnings = ignoredByMode(given, values.mode)
  const { mode } = values
  if (problems.length > 0 || mode === undefined) return Either.left(new RouterConfigError({ problems }))
  return Either.right(serviceOf({ ...values, mode }, warnings))
}
