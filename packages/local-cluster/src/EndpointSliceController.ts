/**
 * LocalCluster's EndpointSlice controller, as kube-controller-manager runs it: for
 * each Service with a selector, one slice (labelled `kubernetes.io/service-name`,
 * owned by the Service) listing the Pods the selector matches that have an address,
 * `ready` from each Pod's Ready condition, ports from the Service's targetPorts.
 */
import { Duration, Effect, type Scope } from "effect"
import {
  apiVersionOf,
  type ContainerPort,
  type Endpoint,
  type EndpointPort,
  type EndpointSlice,
  type KubeObject,
  type Pod,
  type Service,
  type Status
} from "session-routing/kubernetes"
import { followWatch, keyOf, makeWorkQueue, splitKey } from "./Reconciler.js"
import { EndpointSliceResource, PodResource, ServiceResource } from "./ServedResources.js"
import { jsonEqual } from "./ServerSideApply.js"
import type { ClusterStore } from "./Store.js"

/** The label naming a slice's Service, which clients (and the data plane) select slices by. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name"
/** The label saying which controller keeps a slice; others leave such slices alone. */
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
export const CONTROLLER_NAME = "endpointslice-controller.k8s.io"

const labelSelectorOf = (selector: Readonly<Record<string, string>>): string =>
  Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(",")

/** Whether a Pod's Ready condition is True. */
export const isPodReady = (pod: Pod): boolean =>
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")

/** The Pod's port a Service targetPort names: a number as it is, a name through the containers' ports. */
const resolvePort = (pod: Pod, targetPort: number | string | undefined, protocol: string): number | undefined => {
  if (typeof targetPort === "number") return targetPort
  const ports: ReadonlyArray<ContainerPort> = (pod.spec?.containers ?? []).flatMap((c) => c.ports ?? [])
  return ports.find((p) => p.name === targetPort && (p.protocol ?? "TCP") === protocol)?.containerPort
}

// Pods that have ended, or have no address yet, are no endpoint at all.
const servable = (pod: Pod): boolean =>
  (pod.status?.podIP ?? "") !== "" && pod.status?.phase !== "Succeeded" && pod.status?.phase !== "Failed"

/** The slice content the controller wants for `service` over `pods` (its metadata aside). */
export const desiredSlice = (
  service: Service,
  pods: ReadonlyArray<Pod>
): Pick<EndpointSlice, "addressType" | "endpoints" | "ports"> => {
  const members = pods.filter(servable).sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
  const endpoints = members.map((pod): Endpoint => {
    const ready = isPodReady(pod) && pod.metadata?.deletionTimestamp === undefined
    return {
      addresses: [pod.status!.podIP!],
      conditions: { ready, serving: isPodReady(pod), terminating: pod.metadata?.deletionTimestamp !== undefined },
      targetRef: {
        kind: "Pod",
        namespace: pod.metadata?.namespace ?? "",
        name: pod.metadata?.name ?? "",
        uid: pod.metadata?.uid ?? ""
      },
      ...(pod.spec?.nodeName !== undefined ? { nodeName: pod.spec.nodeName } : {})
    }
  })
  // A named targetPort resolves per Pod; the controller would split Pods that disagree into slices, one is enough here.
  // Ports come from the Pods: a slice with no endpoints has none (read back as null, like its endpoints).
  const ports = members.length === 0 ? [] : (service.spec?.ports ?? []).flatMap((port): Array<EndpointPort> => {
    const protocol = port.protocol ?? "TCP"
    const resolved = resolvePort(members[0]!, port.targetPort ?? port.port, protocol)
    return resolved === undefined ? [] : [{ name: port.name ?? "", protocol, port: resolved }]
  })
  const ipv6 = (service.spec as { ipFamilies?: ReadonlyArray<string> } | undefined)?.ipFamilies?.[0] === "IPv6"
  return { addressType: ipv6 ? "IPv6" : "IPv4", endpoints, ports }
}

const sameContent = (
  slice: EndpointSlice,
  wanted: Pick<EndpointSlice, "addressType" | "endpoints" | "ports">
): boolean =>
  slice.addressType === wanted.addressType &&
  jsonEqual(slice.endpoints ?? [], wanted.endpoints) &&
  jsonEqual(slice.ports ?? [], wanted.ports ?? [])

/**
 * Runs the controller in the current scope and returns once it is started. A Service
 * is reconciled whenever it, a Pod in its namespace or one of its slices changes.
 */
export const run = (store: ClusterStore): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const slicesOf = (namespace: string | undefined, name: string) =>
      store.list(EndpointSliceResource, namespace, {
        labelSelector: `${SERVICE_NAME_LABEL}=${name},${MANAGED_BY_LABEL}=${CONTROLLER_NAME}`
      })

    const reconcile = (key: string): Effect.Effect<void, Status> =>
      Effect.gen(function*() {
        const { name, namespace } = splitKey(key)
        const service = yield* store.get(ServiceResource, namespace, name).pipe(
          Effect.catchIf((status) => status.code === 404, () => Effect.succeed(undefined))
        )
        // A Service without a selector has slices its owner keeps; a deleted one's go with it (owner references).
        const selector = service?.spec?.selector ?? {}
        if (service === undefined || Object.keys(selector).length === 0) return
        const pods = yield* store.list(PodResource, namespace, { labelSelector: labelSelectorOf(selector) })
        const wanted = desiredSlice(service, pods.items)
        const [current, ...extra] = (yield* slicesOf(namespace, name)).items
        yield* Effect.forEach(
          extra,
          (slice) => store.delete(EndpointSliceResource, namespace, slice.metadata?.name ?? ""),
          { discard: true }
        )
        if (current !== undefined) {
          if (sameContent(current, wanted)) return
          const { endpoints: _e, ports: _p, ...rest } = current
          yield* store.replace(EndpointSliceResource, namespace, current.metadata?.name ?? "", {
            ...rest,
            apiVersion: apiVersionOf(EndpointSliceResource),
            kind: EndpointSliceResource.kind,
            ...wanted
          }, { fieldManager: CONTROLLER_NAME })
          return
        }
        yield* store.create(EndpointSliceResource, namespace, {
          apiVersion: apiVersionOf(EndpointSliceResource),
          kind: EndpointSliceResource.kind,
          metadata: {
            generateName: `${name}-`,
            labels: { ...service.metadata?.labels, [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: CONTROLLER_NAME },
            ownerReferences: [{
              apiVersion: "v1",
              kind: "Service",
              name,
              uid: service.metadata?.uid ?? "",
              controller: true,
              blockOwnerDeletion: true
            }]
          },
          ...wanted
        }, { fieldManager: CONTROLLER_NAME })
      })

    const queue = yield* makeWorkQueue({ name: "endpointslice controller", delay: Duration.zero, reconcile })

    // A Pod may enter or leave any selector in its namespace: every Service there is looked at again.
    const servicesIn = (namespace: string | undefined) =>
      store.list(ServiceResource, namespace).pipe(
        Effect.flatMap((list) => Effect.forEach(list.items, (s) => queue.enqueue(keyOf(s)), { discard: true })),
        Effect.catchAll(() => Effect.void)
      )

    yield* followWatch(store, ServiceResource, (event) =>
      event.type === "ERROR" || event.type === "BOOKMARK" ? Effect.void : queue.enqueue(keyOf(event.object))).pipe(
        Effect.forkScoped
      )
    yield* followWatch(store, PodResource, (event) =>
      event.type === "ERROR" || event.type === "BOOKMARK"
        ? Effect.void
        : servicesIn((event.object as KubeObject).metadata?.namespace)).pipe(Effect.forkScoped)
    yield* followWatch(store, EndpointSliceResource, (event) => {
      if (event.type === "ERROR" || event.type === "BOOKMARK") {
        return Effect.void
      }
      const service = event.object.metadata?.labels?.[SERVICE_NAME_LABEL]
      return service === undefined ? Effect.void : queue.enqueue(`${event.object.metadata?.namespace ?? ""}/${service}`)
    }).pipe(Effect.forkScoped)
  })
