/**
 * Session Pods as a runner in any language would create them for controller mode, and
 * what the controller wrote back on them.
 */
import type { Pod, PodCondition } from "../../src/domain/Objects.js"
import { PORTS_ANNOTATION, ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"

/** A Pod with the session label, its ports declared (8080 unless given) or annotated. */
export const sessionPod = (
  name: string,
  sessionId: string,
  options: { readonly ports?: ReadonlyArray<number>; readonly annotation?: string } = {}
): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    labels: { [SESSION_LABEL]: sessionId },
    ...(options.annotation !== undefined ? { annotations: { [PORTS_ANNOTATION]: options.annotation } } : {})
  },
  spec: {
    containers: [{
      name: "session",
      image: "registry.example/session:1",
      ports: (options.ports ?? [8080]).map((port) => ({ containerPort: port, protocol: "TCP" as const }))
    }]
  }
})

/** The controller's condition on the Pod, if it wrote one. */
export const routesConditionOf = (pod: Pod): PodCondition | undefined =>
  pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)
