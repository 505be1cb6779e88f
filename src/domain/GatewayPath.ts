/**
 * The gateway half of the diagnosis: from the session's HTTPRoute to its Gateway, link
 * by link (the Gateway, its GatewayClass, their conditions, then the listeners), the
 * first that is broken, by its code. Pure: the route-status sources read the objects.
 */
import { quotedList, RoutingPath } from "./Diagnosis.js"
import {
  allowedRoutesFrom,
  hostnameMatches,
  listenerAdmitsNamespace,
  listenerSupportsHttpRoute,
  namespaceLabelsOf
} from "./GatewayListeners.js"
import type { Condition, Gateway, GatewayClass, GatewayListener } from "./Objects.js"
import { rejectionReason } from "./Routes.js"
import { printable } from "./Text.js"
import type { ParentTarget } from "./Verdict.js"

/** What the gateway diagnosis reads. */
export interface GatewayFacts {
  /** The Gateway (and listener) the routes attach to. */
  readonly target: ParentTarget
  /** The session namespace, where the routes live. */
  readonly routeNamespace: string
  /** Undefined: it does not exist. */
  readonly gateway: Gateway | undefined
  /** Undefined: it does not exist. */
  readonly gatewayClass: GatewayClass | undefined
  /** The session namespace's labels; needed only when a listener selects namespaces by label. */
  readonly routeNamespaceLabels?: Readonly<Record<string, string>>
}

/** Whether a listener of the Gateway admits namespaces by label, so the diagnosis needs the namespace's labels. */
export const gatewayNeedsNamespaceLabels = (gateway: Gateway): boolean =>
  (gateway.spec?.listeners ?? []).some((l) => allowedRoutesFrom(l) === "Selector")

/** The condition of `type`, when it describes the object's current generation (a stale one says nothing). */
const currentCondition = (
  conditions: ReadonlyArray<Condition> | undefined,
  type: string,
  generation: number | undefined
): Condition | undefined => {
  const found = conditions?.find((c) => c.type === type)
  return found !== undefined && (generation === undefined || (found.observedGeneration ?? generation) >= generation)
    ? found
    : undefined
}

/** A condition's reason and message, as a controller wrote them: bounded and printable. */
const saidBy = (c: Condition): string => printable(rejectionReason(c.reason, c.message))

const listenerLabel = (l: GatewayListener): string => `"${l.name}" (${l.protocol} ${l.hostname ?? "*"})`

/** `namespace/name` of the Gateway the routes attach to, for messages. */
const gatewayKey = (facts: GatewayFacts): string => `${facts.target.namespace}/${facts.target.name}`

/**
 * The first broken link from the Gateway up: it exists, its class exists and is
 * accepted, the Gateway is accepted and programmed. Undefined: all sound.
 */
const gatewayLinks = (facts: GatewayFacts, key: string): RoutingPath | undefined => {
  const { gateway, gatewayClass } = facts
  if (gateway === undefined) {
    return RoutingPath.broken(
      "GatewayNotFound",
      `Gateway ${key} does not exist: create it, or set SESSION_GATEWAY_NAME and SESSION_GATEWAY_NAMESPACE to an existing Gateway (kubectl get gateways -A)`
    )
  }
  const className = gateway.spec?.gatewayClassName ?? ""
  if (gatewayClass === undefined) {
    return RoutingPath.broken(
      "GatewayClassNotFound",
      `Gateway ${key} names GatewayClass "${className}", which does not exist: install the Gateway implementation that provides it, or set the Gateway's gatewayClassName to an installed class (kubectl get gatewayclasses)`
    )
  }
  const controller = gatewayClass.spec?.controllerName ?? ""
  const classAccepted = currentCondition(gatewayClass.status?.conditions, "Accepted", gatewayClass.metadata?.generation)
  if (classAccepted?.status !== "True") {
    return RoutingPath.broken(
      "GatewayClassNotAccepted",
      classAccepted?.status === "False"
        ? `GatewayClass "${className}" was refused by its controller "${controller}" (${
          saidBy(classAccepted)
        }): fix the class's parameters`
        : `GatewayClass "${className}" names controller "${controller}", and no controller has accepted it${
          classAccepted !== undefined ? ` (Accepted: Unknown, ${saidBy(classAccepted)})` : ""
        }: install or start the Gateway implementation whose controllerName is "${controller}"`
    )
  }
  const generation = gateway.metadata?.generation
  const accepted = currentCondition(gateway.status?.conditions, "Accepted", generation)
  if (accepted?.status !== "True") {
    return RoutingPath.broken(
      "GatewayNotAccepted",
      accepted?.status === "False"
        ? `Gateway ${key} was not accepted by "${controller}" (${
          saidBy(accepted)
        }): fix the Gateway's listeners or parameters`
        : `Gateway ${key} has not been accepted by "${controller}" yet${
          accepted !== undefined ? ` (Accepted: Unknown, ${saidBy(accepted)})` : " (no current Accepted condition)"
        }: check that the controller runs and look at its logs for this Gateway`
    )
  }
  const programmed = currentCondition(gateway.status?.conditions, "Programmed", generation)
  if (programmed?.status !== "True") {
    return RoutingPath.broken(
      "GatewayNotProgrammed",
      `Gateway ${key} is accepted but not Programmed${
        programmed !== undefined ? ` (${saidBy(programmed)})` : " (no current Programmed condition)"
      }: its data plane has no address or is not ready; look at the Gateway's status and the controller's logs`
    )
  }
  return undefined
}

/**
 * The first broken link among the listeners (named by the section, carrying HTTPRoutes,
 * admitting the route's namespace, covering `host`), or the listeners that carry it.
 */
const listenerLinks = (
  facts: GatewayFacts,
  key: string,
  host: string
): RoutingPath | ReadonlyArray<GatewayListener> => {
  const { gateway, routeNamespace, target } = facts
  const listeners = gateway?.spec?.listeners ?? []
  const named = target.sectionName === undefined ? listeners : listeners.filter((l) => l.name === target.sectionName)
  if (named.length === 0) {
    return RoutingPath.broken(
      "NoMatchingParent",
      target.sectionName !== undefined
        ? `Gateway ${key} has no listener named "${target.sectionName}" (SESSION_GATEWAY_SECTION); its listeners are ${
          quotedList(listeners.map((l) => l.name)) || "none"
        }: set SESSION_GATEWAY_SECTION to one of them, or unset it`
        : `Gateway ${key} has no listeners: add one for HTTP or HTTPS`
    )
  }
  const http = named.filter(listenerSupportsHttpRoute)
  if (http.length === 0) {
    return RoutingPath.broken(
      "NotAllowedByListeners",
      `no listener of Gateway ${key} carries HTTPRoutes (${
        named.map(listenerLabel).join(", ")
      }): add an HTTP or HTTPS listener`
    )
  }
  const labels = namespaceLabelsOf(routeNamespace, facts.routeNamespaceLabels)
  const admitting = http.filter((l) => listenerAdmitsNamespace(l, target.namespace, routeNamespace, labels))
  if (admitting.length === 0) {
    const froms = http.map((l) => {
      const from = allowedRoutesFrom(l)
      const selector = l.allowedRoutes?.namespaces?.selector?.matchLabels ?? {}
      return from === "Selector"
        ? `"${l.name}": Selector ${Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(",") || "(no labels)"}`
        : `"${l.name}": ${from}`
    })
    return RoutingPath.broken(
      "NotAllowedByListeners",
      `no listener of Gateway ${key} admits HTTPRoutes from namespace "${routeNamespace}" (allowedRoutes.namespaces.from ${
        froms.join("; ")
      }; the Gateway is in namespace "${target.namespace}"): set allowedRoutes.namespaces.from to All, or to a Selector the namespace's labels match`
    )
  }
  const covering = admitting.filter((l) => l.hostname === undefined || hostnameMatches(l.hostname, host))
  if (covering.length === 0) {
    return RoutingPath.broken(
      "NoMatchingListenerHostname",
      `no listener of Gateway ${key} that admits namespace "${routeNamespace}" covers ${host} (listener hostnames: ${
        admitting.map((l) => l.hostname ?? "*").join(", ")
      }): add a listener for *.${host.split(".").slice(1).join(".")} or change SESSION_ROUTING_BASE_DOMAIN`
    )
  }
  return covering
}

/**
 * What to tell a person of `host` still pending at its deadline when nothing more is
 * known: the Gateway that should have accepted its HTTPRoute, and what it must allow.
 */
export const gatewayUnclaimedAdvice = (
  target: ParentTarget,
  routeNamespace: string,
  baseDomain: string,
  host: string
): string => {
  const gateway = `${target.namespace}/${target.name}${
    target.sectionName !== undefined ? ` (listener "${target.sectionName}")` : ""
  }`
  return `no Gateway controller accepted the HTTPRoute for ${host} on Gateway ${gateway}: check that the Gateway exists and is Programmed, that its listeners allow routes from namespace "${routeNamespace}" (allowedRoutes.namespaces.from defaults to Same), and that a listener hostname covers *.${baseDomain}`
}

/**
 * The first broken link on the way from the session's HTTPRoute for `host` to its Gateway.
 *
 * @since 0.1.0
 * @category rules
 */
export const gatewayPath = (facts: GatewayFacts, host: string): RoutingPath => {
  const key = gatewayKey(facts)
  const broken = gatewayLinks(facts, key)
  if (broken !== undefined) return broken
  const covering = listenerLinks(facts, key, host)
  if (!Array.isArray(covering)) return covering as RoutingPath
  const className = facts.gateway?.spec?.gatewayClassName ?? ""
  const controller = facts.gatewayClass?.spec?.controllerName ?? ""
  const routeNamespace = facts.routeNamespace
  const summary =
    `Gateway ${key} (GatewayClass "${className}", controller "${controller}") is Accepted and Programmed; listener ${
      covering.map(listenerLabel).join(", ")
    } admits the route`
  return RoutingPath.sound(summary, {
    code: "NoRouteStatus",
    message:
      `${summary}, but "${controller}" wrote no status for the HTTPRoute of ${host}: look at the controller's logs for this route, and check that it watches namespace "${routeNamespace}"`
  })
}
