/**
 * Why a host is still pending at its deadline: what its routing depends on (the
 * IngressClass; or the Gateway, its GatewayClass and its listeners), link by link, and
 * the first link that is broken, named by a stable code as rejection reasons are
 * (`IngressClassNotFound: ...`). Pure: the routers read the objects, `check` reuses it.
 */
import {
  allowedRoutesFrom,
  hostnameMatches,
  listenerAdmitsNamespace,
  listenerSupportsHttpRoute,
  namespaceLabelsOf
} from "./GatewayListeners.js"
import type { Condition, Gateway, GatewayClass, GatewayListener, IngressClass } from "./Objects.js"
import { rejectionReason, type Unprogrammed, UnprogrammedCode } from "./Routes.js"
import { printable } from "./Text.js"
import type { ParentTarget } from "./Verdict.js"

/**
 * A broken link: a stable code first (greppable, like a condition reason), then what to do.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cause {
  readonly code: DiagnosisCode
  readonly message: string
}

/**
 * Every code a diagnosis gives, in the order the links are read.
 *
 * @since 0.1.0
 * @category constants
 */
export const DIAGNOSIS_CODES = [
  "IngressClassNotFound",
  "NoDefaultIngressClass",
  "MultipleDefaultIngressClasses",
  "NoIngressStatus",
  "GatewayNotFound",
  "GatewayClassNotFound",
  "GatewayClassNotAccepted",
  "GatewayNotAccepted",
  "GatewayNotProgrammed",
  "NoMatchingParent",
  "NotAllowedByListeners",
  "NoMatchingListenerHostname",
  "NoRouteStatus"
] as const

/**
 * A diagnosis code.
 *
 * @since 0.1.0
 * @category models
 */
export type DiagnosisCode = (typeof DIAGNOSIS_CODES)[number]

/** `Code: message`, the shape every reason with a code has. */
export const causeReason = (cause: Cause): string => `${cause.code}: ${cause.message}`

/**
 * What the routing of a host depends on, as read: every link sound (then only the
 * controller's silence is left, `silence`), a broken link, or a link that could not be read.
 *
 * @since 0.1.0
 * @category models
 */
export type RoutingPath =
  | { readonly _tag: "Sound"; readonly summary: string; readonly silence: Cause }
  | { readonly _tag: "Broken"; readonly cause: Cause }
  | { readonly _tag: "Unread"; readonly what: string; readonly reason: string }

/**
 * Constructors for `RoutingPath`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const RoutingPath = {
  sound: (summary: string, silence: Cause): RoutingPath => ({ _tag: "Sound", summary, silence }),
  broken: (code: DiagnosisCode, message: string): RoutingPath => ({ _tag: "Broken", cause: { code, message } }),
  unread: (what: string, reason: string): RoutingPath => ({ _tag: "Unread", what, reason })
} as const

/**
 * The reason a host still pending at the deadline is reported with. A diagnosis that
 * could not be read never becomes the verdict: the generic `advice` stands, and says
 * what could not be read.
 */
export const deadlineReason = (path: RoutingPath, advice: string): string => {
  switch (path._tag) {
    case "Sound":
      return causeReason(path.silence)
    case "Broken":
      return causeReason(path.cause)
    case "Unread":
      return `${advice} (could not read ${path.what}: ${path.reason})`
  }
}

/** The host still pending at the deadline, as an unprogrammed one: `deadlineReason` with the link's code. */
export const atDeadline = (path: RoutingPath, advice: string): Unprogrammed => ({
  reason: deadlineReason(path, advice),
  code: path._tag === "Sound"
    ? path.silence.code
    : path._tag === "Broken"
    ? path.cause.code
    : UnprogrammedCode.unclaimed
})

const quotedList = (names: ReadonlyArray<string>): string => names.map((n) => `"${n}"`).join(", ")

// ---------------------------------------------------------------------------
// Ingress

/** The annotation that marks an IngressClass as the cluster's default. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"

/** Whether the class is marked default (the API server fills it into Ingresses that name no class). */
export const isDefaultIngressClass = (ingressClass: IngressClass): boolean =>
  ingressClass.metadata?.annotations?.[DEFAULT_INGRESS_CLASS_ANNOTATION] === "true"

/** What the ingress diagnosis reads. */
export interface IngressFacts {
  /** The session namespace. */
  readonly namespace: string
  /** The class the session Ingresses name (`SESSION_INGRESS_CLASS`); undefined: none. */
  readonly className: string | undefined
  /** Every IngressClass of the cluster. */
  readonly classes: ReadonlyArray<IngressClass>
}

/**
 * How each known ingress controller comes to write an address into Ingress status,
 * by the prefix of its IngressClass `spec.controller`. Most publish nothing until
 * told which Service or address fronts them.
 */
const INGRESS_CONTROLLER_ADVICE: ReadonlyArray<readonly [prefix: string, advice: string]> = [
  [
    "k8s.io/ingress-nginx",
    "ingress-nginx writes status only with --update-status (on by default), from its elected leader, every --status-update-interval (60 s), with the address of --publish-service or --publish-status-address: check that its pods run, that --controller-class matches and --watch-namespace includes this namespace"
  ],
  [
    "nginx.org/ingress-controller",
    "NGINX Ingress Controller writes status only with -report-ingress-status and an -external-service (or -ingresslink, or -external-status-address): check those flags and that it watches this namespace"
  ],
  [
    "traefik.io/ingress-controller",
    "Traefik writes Ingress status only when providers.kubernetesIngress.ingressEndpoint (ip, hostname or publishedService) is set: set it, and check that Traefik watches this namespace"
  ],
  [
    "haproxy.org/ingress-controller",
    "the HAProxy Kubernetes Ingress Controller writes status only with --publish-service naming the Service that fronts it: set it, and check that it watches this namespace"
  ],
  [
    "haproxy-ingress.github.io/controller",
    "HAProxy Ingress writes status only with --publish-service (or publish-address): set it, and check that it watches this namespace"
  ],
  [
    "ingress-controllers.konghq.com/kong",
    "Kong writes Ingress status only with a publish service (--publish-service, CONTROLLER_PUBLISH_SERVICE) and --update-status: set them, and check that it watches this namespace"
  ],
  [
    "apisix.apache.org/apisix-ingress-controller",
    "the APISIX ingress controller writes status only with ingressPublishService (or ingressStatusAddress): set it, and check that it watches this namespace"
  ],
  [
    "projectcontour.io/",
    "Contour writes status from its Envoy Service (--envoy-service-name and --envoy-service-namespace) or --ingress-status-address: check them, and that Contour serves this class (--ingress-class-name)"
  ],
  [
    "istio.io/ingress-controller",
    "Istio writes Ingress status only with meshConfig.ingressControllerMode set and meshConfig.ingressService naming its gateway Service: check them"
  ],
  [
    "ingress.k8s.aws/alb",
    "the AWS Load Balancer Controller writes the load balancer's name once it is provisioned (minutes): check its logs for subnet discovery, certificate or IAM errors"
  ]
]

/** What to check when the controller of `controller` wrote no address, known controllers by name. */
export const ingressControllerAdvice = (controller: string): string =>
  INGRESS_CONTROLLER_ADVICE.find(([prefix]) => controller.startsWith(prefix))?.[1] ??
    `check that the controller "${controller}" is running, watches this namespace, and is configured to publish an address in Ingress status (most controllers need the Service or address that fronts them named)`

const soundIngressClass = (ingressClass: IngressClass, namespace: string, asDefault: boolean): RoutingPath => {
  const name = ingressClass.metadata?.name ?? ""
  const controller = ingressClass.spec?.controller ?? ""
  const described = `IngressClass "${name}"${asDefault ? " (the default)" : ""}, controller "${controller}"`
  return RoutingPath.sound(described, {
    code: "NoIngressStatus",
    message:
      `${described}, exists, but no address was written to the session Ingress's status in namespace "${namespace}": ${
        ingressControllerAdvice(controller)
      }`
  })
}

/**
 * The first broken link of an Ingress's routing, or the controller's silence when none is.
 *
 * @since 0.1.0
 * @category rules
 */
export const ingressPath = (facts: IngressFacts): RoutingPath => {
  const names = facts.classes.map((c) => c.metadata?.name ?? "")
  const existing = names.length > 0 ? `the cluster has ${quotedList(names)}` : "the cluster has no IngressClass at all"
  if (facts.className !== undefined) {
    const named = facts.classes.find((c) => c.metadata?.name === facts.className)
    if (named !== undefined) return soundIngressClass(named, facts.namespace, false)
    return RoutingPath.broken(
      "IngressClassNotFound",
      `the session Ingress names IngressClass "${facts.className}", which does not exist (${existing}): set SESSION_INGRESS_CLASS to a class the cluster has, or install the ingress controller that provides "${facts.className}"`
    )
  }
  const defaults = facts.classes.filter(isDefaultIngressClass)
  if (defaults.length === 1) return soundIngressClass(defaults[0]!, facts.namespace, true)
  if (defaults.length === 0) {
    return RoutingPath.broken(
      "NoDefaultIngressClass",
      `no ingressClassName is configured and no IngressClass is marked default (${existing}), so no controller claims the session Ingress: set SESSION_INGRESS_CLASS, or annotate one class ${DEFAULT_INGRESS_CLASS_ANNOTATION}="true"`
    )
  }
  return RoutingPath.broken(
    "MultipleDefaultIngressClasses",
    `no ingressClassName is configured and ${defaults.length} IngressClasses are marked default (${
      quotedList(defaults.map((c) => c.metadata?.name ?? ""))
    }), so which controller claims the session Ingress is ambiguous: set SESSION_INGRESS_CLASS to one of them, or leave one default`
  )
}

// ---------------------------------------------------------------------------
// Gateway

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

/**
 * The first broken link on the way from the session's HTTPRoute for `host` to its Gateway.
 *
 * @since 0.1.0
 * @category rules
 */
export const gatewayPath = (facts: GatewayFacts, host: string): RoutingPath => {
  const { gateway, gatewayClass, routeNamespace, target } = facts
  const key = `${target.namespace}/${target.name}`
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
  const listeners = gateway.spec?.listeners ?? []
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
