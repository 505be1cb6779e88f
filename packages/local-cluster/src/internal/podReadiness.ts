/**
 * A Pod's readiness written as its kubelet reports it: Running, its address, and the
 * ContainersReady and Ready conditions, Ready derived as pkg/kubelet/status/generate.go
 * derives it (the containers first, then every readiness gate's condition), each
 * container start or failed probe told as the kubelet's Event about the Pod. LocalCluster
 * runs no kubelet, so the data plane writes this for the workloads standing in for Pods,
 * and follows other writers' conditions on them as the kubelet's status sync does.
 */
import { Clock, Duration, Effect, type Scope } from "effect"
import { type Pod, type PodCondition, type Status } from "session-routing/kubernetes"
import type { EventRecorder } from "../ControllerEvents.js"
import { kubeTime } from "../GatewayStatus.js"
import { followWatch, keyOf, makeWorkQueue, splitKey } from "../Reconciler.js"
import { PodResource } from "../ServedResources.js"
import type { ClusterStore } from "../Store.js"
import { goQuote } from "./fieldErrors.js"

/** The field manager of the status writes, as a kubelet's show in managedFields. */
export const KUBELET_MANAGER = "kubelet"

/** The kubelet's reason for a Ready held False by a readiness gate while the containers are ready. */
export const READINESS_GATES_NOT_READY = "ReadinessGatesNotReady"

/** A condition's verdict: its status, and why when it is not True. */
export type Verdict = Pick<PodCondition, "status" | "reason" | "message">

/** The Pod, as the data plane names one. */
export interface PodKey {
  readonly namespace: string
  readonly name: string
}

/** ContainersReady as the kubelet words it: True, or False naming every container it waits for. */
export const containersReadyVerdict = (pod: Pod, ready: boolean): Verdict =>
  ready ? { status: "True" } : {
    status: "False",
    reason: "ContainersNotReady",
    message: `containers with unready status: [${(pod.spec?.containers ?? []).map((c) => c.name).join(" ")}]`
  }

/**
 * Ready as the kubelet derives it (`GeneratePodReadyCondition`): while the containers
 * are not ready, what ContainersReady says; then False while any readiness gate's
 * condition is missing or not True, every such gate named in the message; else True.
 * The gates' conditions are read from the Pod's status, where other writers set them.
 */
export const readyVerdict = (pod: Pod, containers: Verdict): Verdict => {
  if (containers.status !== "True") return containers
  const conditions = pod.status?.conditions ?? []
  const unready = (pod.spec?.readinessGates ?? []).flatMap(({ conditionType }) => {
    const condition = conditions.find((c) => c.type === conditionType)
    if (condition === undefined) {
      return [`corresponding condition of pod readiness gate ${goQuote(conditionType)} does not exist.`]
    }
    return condition.status === "True"
      ? []
      : [`the status of pod readiness gate ${goQuote(conditionType)} is not "True", but ${condition.status}`]
  })
  return unready.length === 0
    ? { status: "True" }
    : { status: "False", reason: READINESS_GATES_NOT_READY, message: unready.join(", ") }
}

/**
 * The Pod's conditions with the kubelet's own two written for containers that are
 * (or are not) ready: the others kept, ahead of the kubelet's as its status merge
 * puts them, and a condition whose status holds keeping its lastTransitionTime.
 */
export const withKubeletConditions = (
  pod: Pod,
  containersReady: boolean,
  now: string
): ReadonlyArray<PodCondition> => {
  const before = pod.status?.conditions ?? []
  const containers = containersReadyVerdict(pod, containersReady)
  const written = (type: string, verdict: Verdict): PodCondition => {
    const previous = before.find((c) => c.type === type)
    return {
      type,
      status: verdict.status,
      lastProbeTime: null,
      lastTransitionTime: previous?.status === verdict.status ? previous.lastTransitionTime ?? now : now,
      ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
      ...(verdict.message !== undefined ? { message: verdict.message } : {})
    }
  }
  return [
    ...before.filter((c) => c.type !== "Ready" && c.type !== "ContainersReady"),
    written("ContainersReady", containers),
    written("Ready", readyVerdict(pod, containers))
  ]
}

const conditionOf = (pod: Pod, type: string): PodCondition | undefined =>
  (pod.status?.conditions ?? []).find((c) => c.type === type)

/**
 * Whether the kubelet would write the Pod's Ready again for its readiness gates
 * (`NeedToReconcilePodReadiness`): the Pod has gates, the kubelet has reported on it,
 * and Ready's status or message is not what its containers and gates now say.
 */
export const readinessOutOfDate = (pod: Pod): boolean => {
  if ((pod.spec?.readinessGates ?? []).length === 0) return false
  const ready = conditionOf(pod, "Ready")
  const containers = conditionOf(pod, "ContainersReady")
  if (ready === undefined || containers === undefined) return false
  const expected = readyVerdict(pod, containersReadyVerdict(pod, containers.status === "True"))
  return ready.status !== expected.status || (ready.message ?? "") !== (expected.message ?? "")
}

/**
 * A kubelet status write: read the Pod, derive its status, write it back on the
 * version read. A write another writer made in between is a 409, and the kubelet
 * reads again, so it never writes over a condition it did not see.
 */
const writeStatus = (
  store: ClusterStore,
  pod: PodKey,
  status: (live: Pod, now: string) => NonNullable<Pod["status"]>
): Effect.Effect<Pod, Status> =>
  Effect.gen(function*() {
    const live = yield* store.get(PodResource, pod.namespace, pod.name)
    const now = kubeTime(yield* Clock.currentTimeMillis)
    return yield* store.replaceStatus(PodResource, pod.namespace, pod.name, { ...live, status: status(live, now) }, {
      fieldManager: KUBELET_MANAGER
    })
  }).pipe(Effect.retry({ while: (status) => status.code === 409, times: 5 }))

/** Marks the Pod's containers ready at `ip`, or (undefined) not ready, keeping each condition's transition time while it holds. */
export const setPodReady = (
  store: ClusterStore,
  recorder: EventRecorder,
  pod: PodKey,
  ip: string | undefined
): Effect.Effect<void, Status> =>
  Effect.gen(function*() {
    const written = yield* writeStatus(store, pod, (live, now) => ({
      ...live.status,
      phase: "Running",
      ...(ip !== undefined ? { podIP: ip, podIPs: [{ ip }] } : {}),
      conditions: withKubeletConditions(live, ip !== undefined, now)
    }))
    const containers = (written.spec?.containers ?? []).map((c) => c.name).join(" ")
    // What the kubelet reports of the same moments: the container started, or its readiness probe failed.
    yield* recorder.record(
      ip !== undefined
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

/** Writes the Pod's Ready again from its containers and gates, if it no longer says what they say. */
const syncReadiness = (store: ClusterStore, key: string): Effect.Effect<void, Status> =>
  Effect.gen(function*() {
    const { name, namespace } = splitKey(key)
    const pod = yield* store.get(PodResource, namespace, name).pipe(
      Effect.catchIf((status) => status.code === 404, () => Effect.succeed(undefined))
    )
    if (pod === undefined || !readinessOutOfDate(pod)) return
    yield* writeStatus(store, { namespace: namespace ?? "", name }, (live, now) => ({
      ...live.status,
      conditions: withKubeletConditions(live, conditionOf(live, "ContainersReady")?.status === "True", now)
    }))
  })

/**
 * Follows every Pod for the life of the scope, as the kubelet's status sync does for
 * readiness gates: when another writer sets (or changes) a gate's condition through
 * the Pod's status, a Pod whose Ready no longer agrees has it written again at once,
 * and no Event is recorded, since no container changed.
 */
export const followReadinessGates = (store: ClusterStore): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* makeWorkQueue({
      name: "kubelet readiness gates",
      delay: Duration.zero,
      reconcile: (key) => syncReadiness(store, key)
    })
    yield* followWatch(
      store,
      PodResource,
      (event) =>
        (event.type === "ADDED" || event.type === "MODIFIED") && readinessOutOfDate(event.object as Pod)
          ? queue.enqueue(keyOf(event.object))
          : Effect.void
    ).pipe(Effect.forkScoped)
  })
