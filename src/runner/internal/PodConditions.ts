/**
 * Writing what a Pod's routes are onto the Pod: the `RoutesProgrammed` condition
 * through `pods/status`, and the label the session Service selects it by with the
 * endpoints annotation. The last word wins: a write still being retried is dropped
 * for a newer one, and nothing is written when the Pod already says it (after a
 * restart, or when only the words of a host changed back). A write that fails is
 * retried until it lands or is superseded, and said.
 */
import { Clock, Effect, FiberMap, Schedule, type Scope } from "effect"
import { formatTime } from "../../domain/KubeEvents.js"
import { LABEL_SESSION_ID } from "../../domain/Manifests.js"
import type { Pod, PodCondition } from "../../domain/Objects.js"
import {
  ENDPOINTS_ANNOTATION,
  type PodRoutes,
  ROUTES_CONDITION,
  type RoutesCondition,
  routesCondition
} from "../../domain/PodRouting.js"
import type { Endpoint } from "../../domain/Routes.js"
import type { PodWrites } from "../../services/KubeClient.js"

/**
 * One condition the controller wrote on a Pod.
 *
 * @since 0.1.0
 * @category models
 */
export interface PodReport {
  readonly namespace: string
  readonly podName: string
  readonly condition: RoutesCondition
}

/** What the controller writes on its Pods. */
export interface ConditionWriter {
  /** Sets the Pod's condition from what its routes are, unless it already says so. */
  readonly report: (pod: Pod, routes: PodRoutes) => Effect.Effect<void>
  /**
   * Labels the Pod with its session id as the session Service selects it, and sets its
   * endpoints annotation, unless it already carries both.
   */
  readonly annotate: (pod: Pod, sessionId: string, endpoints: ReadonlyArray<Endpoint>) => Effect.Effect<void>
  /** Drops what is remembered of a Pod that is gone, and any write still pending for it. */
  readonly forget: (uid: string) => Effect.Effect<void>
}

/** A failed write is tried again soon, then less often; a newer word replaces it. */
const RETRY = Schedule.exponential("500 millis").pipe(Schedule.either(Schedule.spaced("30 seconds")))

const sameWords = (a: Pick<PodCondition, "status" | "reason" | "message">, b: RoutesCondition): boolean =>
  a.status === b.status && (a.reason ?? "") === (b.reason ?? "") && (a.message ?? "") === (b.message ?? "")

export const makeConditionWriter = (
  pods: PodWrites,
  onReport: ((report: PodReport) => Effect.Effect<void>) | undefined
): Effect.Effect<ConditionWriter, never, Scope.Scope> =>
  Effect.gen(function*() {
    const writes = yield* FiberMap.make<string>()
    const annotations = yield* FiberMap.make<string>()
    /** What each Pod was last made to say (or said when first seen). */
    const said = new Map<string, PodCondition>()
    const annotated = new Map<string, string>()

    const write = (pod: Pod, condition: PodCondition) => {
      const namespace = pod.metadata?.namespace ?? ""
      const name = pod.metadata?.name ?? ""
      return pods.patchStatus(namespace, name, {
        metadata: { uid: pod.metadata?.uid },
        status: { conditions: [condition] }
      }).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(`could not set ${ROUTES_CONDITION} on Pod ${namespace}/${name}: ${error.reason}`)
        ),
        // A Pod that is gone (or replaced under its name) needs no condition.
        Effect.retry({ schedule: RETRY, while: (error) => error._tag !== "NotFound" && error._tag !== "Conflict" }),
        Effect.zipRight(
          onReport === undefined
            ? Effect.void
            : onReport({ namespace, podName: name, condition: condition as RoutesCondition })
        ),
        Effect.ignore
      )
    }

    const report = (pod: Pod, routes: PodRoutes) =>
      Effect.gen(function*() {
        const uid = pod.metadata?.uid ?? ""
        const next = routesCondition(routes)
        const before = said.get(uid) ?? pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)
        if (before !== undefined && sameWords(before, next)) return
        const now = formatTime(yield* Clock.currentTimeMillis)
        const condition: PodCondition = {
          ...next,
          lastTransitionTime: before !== undefined && before.status === next.status && before.lastTransitionTime
            ? before.lastTransitionTime
            : now
        }
        said.set(uid, condition)
        yield* FiberMap.run(writes, uid, write(pod, condition))
      })

    const annotate = (pod: Pod, sessionId: string, endpoints: ReadonlyArray<Endpoint>) =>
      Effect.suspend(() => {
        const uid = pod.metadata?.uid ?? ""
        const text = JSON.stringify(endpoints)
        const before = annotated.get(uid) ?? pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION]
        if (before === text && pod.metadata?.labels?.[LABEL_SESSION_ID] === sessionId) return Effect.void
        annotated.set(uid, text)
        const namespace = pod.metadata?.namespace ?? ""
        const name = pod.metadata?.name ?? ""
        return FiberMap.run(
          annotations,
          uid,
          pods.patch(namespace, name, {
            metadata: {
              uid: pod.metadata?.uid,
              labels: { [LABEL_SESSION_ID]: sessionId },
              annotations: { [ENDPOINTS_ANNOTATION]: text }
            }
          }).pipe(
            Effect.tapError((error) =>
              Effect.logWarning(`could not set ${ENDPOINTS_ANNOTATION} on Pod ${namespace}/${name}: ${error.reason}`)
            ),
            Effect.retry({ schedule: RETRY, while: (error) => error._tag !== "NotFound" && error._tag !== "Conflict" }),
            Effect.ignore
          )
        )
      })

    const forget = (uid: string) =>
      Effect.suspend(() => {
        said.delete(uid)
        annotated.delete(uid)
        return Effect.zipRight(FiberMap.remove(writes, uid), FiberMap.remove(annotations, uid))
      })

    return { report, annotate, forget }
  })
