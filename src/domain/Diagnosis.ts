/**
 * Why a host is still pending at its deadline: what its routing depends on, link by
 * link, and the first link that is broken, named by a stable code as rejection reasons
 * are (`IngressClassNotFound: ...`). The codes, the path and the ingress half are here;
 * the gateway half is `GatewayPath.ts`. Pure: the route-status sources read the
 * objects, `check` reuses it.
 */
import type { IngressClass } from "./Objects.js"
import { type Unprogrammed, UnprogrammedCode } from "./Routes.js"

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

export const quotedList = (names: ReadonlyArray<string>): string => names.map((n) => `"${n}"`).join(", ")

/** What a host of mode `none` is told at its deadline: nothing was ever published for it. */
export const ROUTING_OFF_ADVICE =
  "session routing is off (SESSION_ROUTING_MODE=none, or no base domain): nothing publishes this host"

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

/**
 * What to tell a person of a session Ingress still pending at its deadline when nothing
 * more is known: who should have claimed it, and what such a controller needs to write status.
 */
export const ingressUnclaimedAdvice = (namespace: string, className: string | undefined): string =>
  `no ingress controller claimed the session Ingress${
    className !== undefined
      ? ` of class "${className}"`
      : " (no ingressClassName is configured, so only a default IngressClass's controller would)"
  } in namespace "${namespace}": check that an ingress controller for that class is running and watching the namespace, and that it publishes status (ingress-nginx needs --update-status, Traefik an ingressEndpoint, Kong and APISIX a publishService)`

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
