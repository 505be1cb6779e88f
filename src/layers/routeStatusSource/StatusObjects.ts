/**
 * Where a routing mode keeps its hosts' status and how it is judged (the routed kind,
 * namespace, selector, object names, the verdict rule of `src/domain/Verdict.ts` and
 * what it needs besides the object), what its routing depends on and what to say of a
 * host still pending at its deadline: all derived from `RouterConfig`, so a status
 * source knows them without asking the router. The one read of a host's object is here
 * too, made by the polling and the watching source alike.
 */
import { Duration, Effect } from "effect"
import { ingressUnclaimedAdvice, ROUTING_OFF_ADVICE } from "../../domain/Diagnosis.js"
import { gatewayUnclaimedAdvice } from "../../domain/GatewayPath.js"
import { type GatewayRef, httpRouteName, managedBySelector, sessionObjectName } from "../../domain/Manifests.js"
import type { HttpRoute, Ingress } from "../../domain/Objects.js"
import {
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressResource,
  type ResourceType
} from "../../domain/Resources.js"
import type { PublishedRoute, RouteVerdict, RoutingMode } from "../../domain/Routes.js"
import { httpRouteVerdict, ingressVerdict, type ParentTarget } from "../../domain/Verdict.js"
import type { KubeClient } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import type { RouterConfig } from "../../services/RouterConfig.js"
import { RouteReadError } from "../../services/RouteStatusSource.js"
import { type Diagnose, gatewayDiagnosis, ingressDiagnosis } from "./DiagnosisReads.js"

/** The kinds whose objects carry a host's status. */
export type StatusObject = Ingress | HttpRoute

/** What a verdict rule knows besides the object: the controller of the Gateway, once learned. */
export interface VerdictContext {
  readonly controllerName?: string
}

/**
 * Where the cluster keeps the status of a mode's hosts, for a source that watches the
 * objects or reads them one by one.
 */
export interface StatusObjects {
  /** The routed kind: Ingresses or HTTPRoutes. */
  readonly resource: ResourceType<Ingress> | ResourceType<HttpRoute>
  readonly namespace: string
  /** Selects every object of this runner in the namespace (`app.kubernetes.io/managed-by=...`). */
  readonly selector: string
  /** The object that carries `route`'s status. */
  readonly objectName: (sessionId: string, route: PublishedRoute) => string
  /**
   * The verdict on `route` from its object as it is (undefined: absent), given what
   * `context` last read: a pure rule of `src/domain/Verdict.ts`, so a source judges
   * what it holds without another read.
   */
  readonly verdict: (object: StatusObject | undefined, route: PublishedRoute, context: VerdictContext) => RouteVerdict
  /**
   * Reads what `verdict` needs besides the object (the Gateway's controller name), best
   * effort: it never fails. A watching source reads it when it syncs and again on its
   * liveness interval, so that a verdict from the cache never waits on a request; a
   * polling source with each read.
   */
  readonly context: Effect.Effect<VerdictContext>
}

/** What one status read answers: the verdict, and whether the object was there. */
export interface StatusRead {
  readonly verdict: RouteVerdict
  readonly present: boolean
}

/** The session Ingresses of the runner: one per session, carrying the status of all its hosts. */
export const ingressObjects = (namespace: string, managedBy: string): StatusObjects => ({
  resource: IngressResource,
  namespace,
  selector: managedBySelector(managedBy),
  objectName: (sessionId) => sessionObjectName(sessionId),
  verdict: (object) => ingressVerdict(object as Ingress | undefined),
  context: Effect.succeed({})
})

/** How long a learned Gateway controller name is trusted before it is read again. */
const CONTROLLER_NAME_TTL = Duration.minutes(5)

/**
 * The controller that owns our Gateway: with it, entries other controllers left for
 * the same parent cannot decide the verdict. Reading it is best effort (the Gateway
 * may not exist yet, or RBAC may not cover it), and a failure here must never turn
 * into a route read error. One lookup is in flight at a time and every host of a burst
 * shares it; a name learned is kept for a few minutes (a Gateway rarely changes
 * class), a failed lookup is tried again by the next verdict.
 */
const controllerNameOf = (
  kube: KubeClient.Service,
  gateway: GatewayRef
): Effect.Effect<Effect.Effect<VerdictContext>> =>
  Effect.map(
    Effect.cachedInvalidateWithTTL(
      Effect.gen(function*() {
        const gw = yield* kube.get(GatewayResource, gateway.namespace, gateway.name)
        const className = gw.spec?.gatewayClassName
        if (className === undefined) return undefined
        const gatewayClass = yield* kube.get(GatewayClassResource, "", className)
        return gatewayClass.spec?.controllerName
      }).pipe(Effect.orElseSucceed((): string | undefined => undefined)),
      CONTROLLER_NAME_TTL
    ),
    ([cached, forget]) =>
      cached.pipe(
        Effect.tap((name) => (name === undefined ? forget : Effect.void)),
        Effect.map((owner): VerdictContext => (owner !== undefined ? { controllerName: owner } : {}))
      )
  )

/** The parent the session HTTPRoutes attach to, as configured. */
export const parentTarget = (gateway: GatewayRef): ParentTarget => ({
  namespace: gateway.namespace,
  name: gateway.name,
  ...(gateway.sectionName !== undefined ? { sectionName: gateway.sectionName } : {})
})

/**
 * The session HTTPRoutes of the runner, one per tcp port, judged by their entry for
 * `gateway`; the Gateway's controller name is looked up through `kube`, with a cache
 * of its own.
 */
export const httpRouteObjects = (
  kube: KubeClient.Service,
  namespace: string,
  managedBy: string,
  gateway: GatewayRef
): Effect.Effect<StatusObjects> =>
  Effect.map(controllerNameOf(kube, gateway), (context) => {
    const target = parentTarget(gateway)
    return {
      resource: HttpRouteResource,
      namespace,
      selector: managedBySelector(managedBy),
      objectName: (sessionId, route) => httpRouteName(sessionId, route.port),
      verdict: (object, _route, known) => httpRouteVerdict(object as HttpRoute | undefined, { target, ...known }),
      context
    }
  })

/** The object that carries a host's status, or undefined when it does not exist. */
export const getStatusObject = (
  kube: KubeClient.Service,
  objects: StatusObjects,
  name: string
): Effect.Effect<StatusObject | undefined, KubeError> =>
  // The union of two resource types is not itself a ResourceType the client's
  // generic signature accepts; each member is.
  kube.get(objects.resource as ResourceType<StatusObject>, objects.namespace, name).pipe(
    Effect.map((object): StatusObject | undefined => object),
    // Not there (yet, or deleted by a reload racing this read): nothing has claimed it.
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/**
 * One read of the object that carries `route`'s status, through `read`, judged by the
 * mode's rule. A failed read is a `RouteReadError`, never a verdict; an absent object
 * is judged without its context (nothing to read ahead for it).
 */
export const readStatus = (
  objects: StatusObjects,
  read: (name: string) => Effect.Effect<StatusObject | undefined, KubeError>
) =>
(sessionId: string, route: PublishedRoute): Effect.Effect<StatusRead, RouteReadError> =>
  read(objects.objectName(sessionId, route)).pipe(
    Effect.mapError((error) => new RouteReadError({ route, error })),
    Effect.flatMap((object) =>
      object === undefined
        ? Effect.succeed<StatusRead>({ verdict: objects.verdict(undefined, route, {}), present: false })
        : Effect.map(objects.context, (known): StatusRead => ({
          verdict: objects.verdict(object, route, known),
          present: true
        }))
    )
  )

/**
 * The status side of a routing mode: where its hosts' status lives, what its routing
 * depends on, and what to say of a host still pending at its deadline.
 */
export interface ModeStatus {
  /** Unset: nothing is published (mode `none`), so there is nothing to read. */
  readonly objects?: StatusObjects
  /** Unset: nothing to diagnose (mode `none`). */
  readonly diagnose?: Diagnose
  /** What to tell a person when a host is still pending at the deadline and nothing more is known. */
  readonly unclaimedReason: (route: PublishedRoute) => string
}

/** The status side of a mode that publishes: there are objects to read and a routing to diagnose. */
export interface PublishedStatus extends ModeStatus {
  readonly objects: StatusObjects
  readonly diagnose: Diagnose
}

/** Mode `none`: nothing is published, so nothing is read or diagnosed. */
export const noneStatus: ModeStatus = { unclaimedReason: () => ROUTING_OFF_ADVICE }

/** Ingress mode: the session Ingresses, and the IngressClass that should claim them. */
export const ingressStatus = (
  kube: KubeClient.Service,
  namespace: string,
  managedBy: string,
  className: string | undefined
): PublishedStatus => {
  const unclaimed = ingressUnclaimedAdvice(namespace, className)
  return {
    objects: ingressObjects(namespace, managedBy),
    diagnose: ingressDiagnosis(kube, namespace, className),
    unclaimedReason: () => unclaimed
  }
}

/** Gateway mode: the session HTTPRoutes, and the Gateway they attach to. */
export const gatewayStatus = (
  kube: KubeClient.Service,
  namespace: string,
  managedBy: string,
  baseDomain: string,
  gateway: GatewayRef
): Effect.Effect<PublishedStatus> =>
  Effect.map(httpRouteObjects(kube, namespace, managedBy, gateway), (objects): PublishedStatus => {
    const target = parentTarget(gateway)
    return {
      objects,
      diagnose: gatewayDiagnosis(kube, target, namespace),
      unclaimedReason: (route) => gatewayUnclaimedAdvice(target, namespace, baseDomain, route.host)
    }
  })

/** The mode `config` routes in: none without a base domain, whatever the mode says (nothing has a host). */
export const configuredMode = (config: RouterConfig.Service): RoutingMode =>
  config.baseDomain === undefined ? "none" : config.mode

/**
 * The status side of `mode` (by default the one `config` routes in) under `config`.
 * Without a base domain, or in gateway mode without a Gateway, nothing can be published
 * (the router refuses to start), so nothing is read.
 */
export const modeStatus = (
  kube: KubeClient.Service,
  config: RouterConfig.Service,
  mode: RoutingMode = configuredMode(config)
): Effect.Effect<ModeStatus> => {
  const { baseDomain, gateway, managedBy, sessionNamespace } = config
  if (baseDomain === undefined) return Effect.succeed(noneStatus)
  switch (mode) {
    case "ingress":
      return Effect.succeed(ingressStatus(kube, sessionNamespace, managedBy, config.ingressClassName))
    case "gateway":
      return gateway === undefined
        ? Effect.succeed(noneStatus)
        : gatewayStatus(kube, sessionNamespace, managedBy, baseDomain, gateway)
    case "none":
      return Effect.succeed(noneStatus)
  }
}
