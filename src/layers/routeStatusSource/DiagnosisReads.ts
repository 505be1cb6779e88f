/**
 * The reads behind a diagnosis (the IngressClasses; the Gateway, its GatewayClass, the
 * session namespace), each bounded and worded for the reason a person reads, and each
 * mode's diagnosis over them. A read that fails stops the diagnosis with what could not
 * be read, and never becomes a verdict. Route health reaches it through the status
 * source at a deadline, `check` through the router: one analysis for both.
 */
import { Duration, Effect } from "effect"
import { type IngressFacts, ingressPath, RoutingPath } from "../../domain/Diagnosis.js"
import { durationInWords } from "../../domain/Durations.js"
import { type GatewayFacts, gatewayNeedsNamespaceLabels, gatewayPath } from "../../domain/GatewayPath.js"
import {
  GatewayClassResource,
  GatewayResource,
  IngressClassResource,
  NamespaceResource
} from "../../domain/Resources.js"
import type { PublishedRoute } from "../../domain/Routes.js"
import type { ParentTarget } from "../../domain/Verdict.js"
import type { KubeClient } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"

/**
 * The most one diagnosis read may take. A diagnosis runs when a host's deadline has
 * come: its reason must not wait the whole API budget on a server that stopped answering.
 */
export const DIAGNOSIS_READ_TIMEOUT = Duration.seconds(5)

/** A read the diagnosis needed and did not get. */
export interface Unread {
  readonly what: string
  readonly reason: string
}

/** One read, bounded; `NotFound` is an answer (undefined), anything else is `Unread`. */
const read = <A>(what: string, effect: Effect.Effect<A, KubeError>): Effect.Effect<A | undefined, Unread> =>
  effect.pipe(
    Effect.catchTag("NotFound", () => Effect.succeed(undefined)),
    Effect.mapError((error): Unread => ({ what, reason: error.reason })),
    Effect.timeoutFail({
      duration: DIAGNOSIS_READ_TIMEOUT,
      onTimeout: (): Unread => ({
        what,
        reason: `no answer within ${durationInWords(Duration.toMillis(DIAGNOSIS_READ_TIMEOUT))}`
      })
    })
  )

/** Each host's routing path from one set of reads (hosts of a session share their objects), or the read that stopped it. */
export const pathsFrom = <F>(
  facts: Effect.Effect<F, Unread>,
  path: (facts: F, host: string) => RoutingPath
): Effect.Effect<(host: string) => RoutingPath> =>
  facts.pipe(
    Effect.map((f) => (host: string) => path(f, host)),
    Effect.catchAll((unread) => Effect.succeed(() => RoutingPath.unread(unread.what, unread.reason)))
  )

/** The IngressClasses, for the ingress diagnosis. */
export const readIngressFacts = (
  kube: KubeClient.Service,
  namespace: string,
  className: string | undefined
): Effect.Effect<IngressFacts, Unread> =>
  read("the IngressClasses", kube.list(IngressClassResource, "")).pipe(
    Effect.map((list) => ({ namespace, className, classes: list?.items ?? [] }))
  )

/** The Gateway, its GatewayClass and (when a listener selects by label) the session namespace. */
export const readGatewayFacts = (
  kube: KubeClient.Service,
  target: ParentTarget,
  routeNamespace: string
): Effect.Effect<GatewayFacts, Unread> =>
  Effect.gen(function*() {
    const facts = { target, routeNamespace, gateway: undefined, gatewayClass: undefined }
    const gateway = yield* read(
      `Gateway ${target.namespace}/${target.name}`,
      kube.get(GatewayResource, target.namespace, target.name)
    )
    if (gateway === undefined) return facts
    const className = gateway.spec?.gatewayClassName ?? ""
    const gatewayClass = yield* read(`GatewayClass "${className}"`, kube.get(GatewayClassResource, "", className))
    if (gatewayClass === undefined || !gatewayNeedsNamespaceLabels(gateway)) return { ...facts, gateway, gatewayClass }
    const namespace = yield* read(`Namespace "${routeNamespace}"`, kube.get(NamespaceResource, "", routeNamespace))
    return { ...facts, gateway, gatewayClass, routeNamespaceLabels: namespace?.metadata?.labels ?? {} }
  })

/**
 * Reads what a session's routing depends on, once for all its hosts, and gives each
 * host's path: every link sound, the first broken one, or what could not be read. Each
 * read is bounded; it never fails.
 */
export type Diagnose = (sessionId: string) => Effect.Effect<(route: PublishedRoute) => RoutingPath>

/** The ingress diagnosis: the IngressClasses, against the class the session Ingresses name. */
export const ingressDiagnosis =
  (kube: KubeClient.Service, namespace: string, className: string | undefined): Diagnose => () =>
    Effect.map(
      pathsFrom(readIngressFacts(kube, namespace, className), (facts) => ingressPath(facts)),
      (path) => (route) => path(route.host)
    )

/** The gateway diagnosis: the Gateway the routes attach to, its class, and the session namespace when needed. */
export const gatewayDiagnosis =
  (kube: KubeClient.Service, target: ParentTarget, routeNamespace: string): Diagnose => () =>
    Effect.map(
      pathsFrom(readGatewayFacts(kube, target, routeNamespace), gatewayPath),
      (path) => (route) => path(route.host)
    )
