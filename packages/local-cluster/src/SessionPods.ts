/**
 * Session Pods in LocalCluster: the Pod a runner would have started for a session,
 * labelled so the session Service selects it, for the demo and the tests that need
 * Events to regard a real object and EndpointSlices to list a real endpoint.
 */
import { Effect } from "effect"
import { type Pod, type Status } from "session-routing/kubernetes"
import { LABEL_SESSION_ID, sessionObjectName } from "session-routing/manifests"
import { PodResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** The Pod as the routing objects own it. */
export interface SessionPod {
  readonly namespace: string
  readonly name: string
  readonly uid: string
}

/** Creates `telo-run-<session>` with one container listening on `ports`; it is not Ready until a workload serves it. */
export const createSessionPod = (
  store: ClusterStore,
  options: { readonly namespace: string; readonly sessionId: string; readonly ports: ReadonlyArray<number> }
): Effect.Effect<SessionPod, Status> =>
  Effect.map(
    store.create(
      PodResource,
      options.namespace,
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: sessionObjectName(options.sessionId), labels: { [LABEL_SESSION_ID]: options.sessionId } },
        spec: {
          containers: [{
            name: "session",
            image: "registry.example/session:1",
            ports: options.ports.map((port) => ({ name: `p${port}`, containerPort: port, protocol: "TCP" as const }))
          }]
        }
      } satisfies Pod
    ),
    (pod) => ({ namespace: options.namespace, name: pod.metadata?.name ?? "", uid: pod.metadata?.uid ?? "" })
  )
