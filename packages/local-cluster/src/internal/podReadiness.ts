/**
 * A Pod's readiness written as its kubelet reports it: Running, its address, and the
 * Ready and ContainersReady conditions True once a readiness probe passes, False
 * (with the kubelet's reason) once one fails, each told as the kubelet's Event about
 * the Pod. LocalCluster runs no kubelet, so the data plane writes this for the
 * workloads standing in for Pods.
 */
import { Clock, Effect } from "effect"
import { type PodCondition, type Status } from "session-routing/kubernetes"
import type { EventRecorder } from "../ControllerEvents.js"
import { kubeTime } from "../GatewayStatus.js"
import { PodResource } from "../ServedResources.js"
import type { ClusterStore } from "../Store.js"

/** The field manager of the status writes, as a kubelet's show in managedFields. */
export const KUBELET_MANAGER = "kubelet"

/** Marks the Pod ready at `ip`, or (undefined) not ready, keeping each condition's transition time while it holds. */
export const setPodReady = (
  store: ClusterStore,
  recorder: EventRecorder,
  pod: { readonly namespace: string; readonly name: string },
  ip: string | undefined
): Effect.Effect<void, Status> =>
  Effect.gen(function*() {
    const live = yield* store.get(PodResource, pod.namespace, pod.name)
    const now = kubeTime(yield* Clock.currentTimeMillis)
    const ready = ip !== undefined
    const status = ready ? "True" : "False"
    const before = live.status?.conditions ?? []
    const containers = (live.spec?.containers ?? []).map((c) => c.name).join(" ")
    const condition = (type: string): PodCondition => {
      const previous = before.find((c) => c.type === type)
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: previous?.status === status ? previous.lastTransitionTime ?? now : now,
        ...(ready ? {} : { reason: "ContainersNotReady", message: `containers with unready status: [${containers}]` })
      }
    }
    const others = before.filter((c) => c.type !== "Ready" && c.type !== "ContainersReady")
    const written = yield* store.replaceStatus(PodResource, pod.namespace, pod.name, {
      ...live,
      status: {
        ...live.status,
        phase: "Running",
        ...(ip !== undefined ? { podIP: ip, podIPs: [{ ip }] } : {}),
        conditions: [...others, condition("ContainersReady"), condition("Ready")]
      }
    }, { fieldManager: KUBELET_MANAGER })
    // What the kubelet reports of the same moments: the container started, or its readiness probe failed.
    yield* recorder.record(
      ready
        ? {
          resource: PodResource,
          object: written,
          type: "Normal",
          reason: "Started",
          message: `Started container ${containers}`
        }
        : {
          resource: PodResource,
          object: written,
          type: "Warning",
          reason: "Unhealthy",
          message: "Readiness probe failed: the workload standing in for the Pod was unregistered"
        }
    )
  })
