/**
 * LocalCluster's simulated ingress controller: it claims the Ingresses of one
 * IngressClass and, after a delay, publishes an address in `status.loadBalancer`,
 * as ingress-nginx does with `--update-status`. In `never` mode it claims and stays
 * silent, which is the cluster where hosts 404 and nothing says why.
 */
import { Duration, Effect, type Scope } from "effect"
import { apiVersionOf, type Ingress, type IngressClass, type LoadBalancerIngress } from "session-routing/kubernetes"
import { makeRecorder } from "./ControllerEvents.js"
import { jsonEqual } from "./GatewayStatus.js"
import { type ControllerDelay, followWatch, keyOf, makeWorkQueue, splitKey } from "./Reconciler.js"
import { claimsIngress, DEFAULT_INGRESS_CLASS_ANNOTATION, type IngressClassSelector } from "./RouteTable.js"
import { IngressClassResource, IngressResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** The controller value an IngressClass names for LocalCluster's ingress controller. */
export const DEFAULT_INGRESS_CONTROLLER_NAME = "session-routing.dev/local-ingress"

/** How the simulated ingress controller behaves. */
export interface IngressControllerOptions {
  /** The IngressClass whose Ingresses it claims (`spec.ingressClassName`, or the legacy annotation). */
  readonly className: string
  /** `spec.controller` of its IngressClass; default `session-routing.dev/local-ingress`. */
  readonly controllerName?: string
  /** Also claim Ingresses that name no class, as the default class's controller does. Default false. */
  readonly defaultClass?: boolean
  /** What it publishes in `status.loadBalancer.ingress`; default `[{ ip: "127.0.0.1" }]`. */
  readonly addresses?: ReadonlyArray<LoadBalancerIngress>
  /** Wait before writing status, or `"never"` to never write it. Default 1 second. */
  readonly delay?: ControllerDelay
}

/** The `source.component` of the controller's Events, as ingress-nginx names itself in them. */
export const INGRESS_EVENT_COMPONENT = "nginx-ingress-controller"

/** The default delay: long enough to see `pending`, short enough for a demo. */
export const DEFAULT_INGRESS_DELAY = Duration.seconds(1)

const DEFAULT_ADDRESSES: ReadonlyArray<LoadBalancerIngress> = [{ ip: "127.0.0.1" }]

/**
 * The IngressClass object that names this controller, for LocalCluster to create so
 * that `kubectl get ingressclass` tells the same story the controller acts out.
 */
export const ingressClassFor = (options: IngressControllerOptions): IngressClass => ({
  apiVersion: apiVersionOf(IngressClassResource),
  kind: IngressClassResource.kind,
  metadata: {
    name: options.className,
    ...(options.defaultClass === true ? { annotations: { [DEFAULT_INGRESS_CLASS_ANNOTATION]: "true" } } : {})
  },
  spec: { controller: options.controllerName ?? DEFAULT_INGRESS_CONTROLLER_NAME }
})

const hasAddresses = (ingress: Ingress, addresses: ReadonlyArray<LoadBalancerIngress>): boolean =>
  jsonEqual(ingress.status?.loadBalancer?.ingress ?? [], addresses)

/**
 * Runs the controller in the current scope and returns once it is started; closing
 * the scope stops it. It reads and writes only through `store` (watch, get,
 * replaceStatus). Ingresses of other classes are never touched: an Ingress has no
 * rejection signal, so a controller that does not claim one simply says nothing.
 */
export const run = (store: ClusterStore, options: IngressControllerOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (options.delay === "never") {
      yield* Effect.logDebug(`ingress controller for class ${options.className}: never writes status`)
      return
    }
    const selector: IngressClassSelector = {
      className: options.className,
      ...(options.defaultClass !== undefined ? { defaultClass: options.defaultClass } : {})
    }
    const addresses = options.addresses ?? DEFAULT_ADDRESSES
    const fieldManager = options.controllerName ?? DEFAULT_INGRESS_CONTROLLER_NAME
    const recorder = yield* makeRecorder(store, INGRESS_EVENT_COMPONENT)

    const reconcile = (key: string) =>
      Effect.gen(function*() {
        const { name, namespace } = splitKey(key)
        const ingress = yield* store.get(IngressResource, namespace, name).pipe(
          // Deleted while we waited: there is nothing left to publish for.
          Effect.catchIf((status) => status.code === 404, () => Effect.succeed(undefined))
        )
        if (ingress === undefined || !claimsIngress(ingress, selector) || hasAddresses(ingress, addresses)) return
        // What ingress-nginx tells `kubectl describe ingress` when it takes an Ingress on.
        yield* recorder.record({
          resource: IngressResource,
          object: ingress,
          type: "Normal",
          reason: "Sync",
          message: "Scheduled for sync"
        })
        yield* store.replaceStatus(
          IngressResource,
          namespace,
          name,
          { ...ingress, status: { ...ingress.status, loadBalancer: { ingress: addresses } } },
          // managedFields then name the controller, as they do for a real one's status writes.
          { fieldManager }
        )
      })

    const queue = yield* makeWorkQueue({
      name: `ingress controller (${options.className})`,
      delay: options.delay ?? DEFAULT_INGRESS_DELAY,
      reconcile
    })

    yield* followWatch(store, IngressResource, (event) => {
      if (event.type !== "ADDED" && event.type !== "MODIFIED") return Effect.void
      const ingress = event.object as Ingress
      // Our own status write comes back as MODIFIED: already published, nothing to schedule.
      return claimsIngress(ingress, selector) && !hasAddresses(ingress, addresses)
        ? queue.enqueue(keyOf(ingress))
        : Effect.void
    }).pipe(Effect.forkScoped)
  })
