/**
 * Writing what a Pod's routes are onto the Pod: the `RoutesProgrammed` condition
 * through `pods/status`, and the label the session Service selects it by with the
 * endpoints annotation. The last word wins: a write still being retried is dropped
 * for a newer one, and nothing is written when the Pod already says it (after a
 * restart, or when only the words of a host changed back). A write that fails is
 * retried until it lands or is superseded, and said. A request already sent is let
 * finish before the next one to the same Pod goes: the server applies a request whose
 * caller gave up, so an older word cut off on the wire could land after the newer.
 */
import { Clock, Effect, Fiber, FiberMap, Option, Schedule, type Scope } from "effect"
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
import type { KubeError } from "../../services/KubeError.js"

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
  /**
   * Takes the session id label and the endpoints annotation off a Pod that is no
   * longer routed (or never was, for this id), so that no session Service selects it.
   * Nothing is written when it carries neither.
   */
  readonly unmark: (pod: Pod) => Effect.Effect<void>
  /**
   * Hears the Pod as the watch saw it. When it says other than its last word while no
   * write of ours is under way, and the change is not the echo of one of our writes,
   * someone else wrote it (or a request of a replica gone since landed late), and the
   * word is written again.
   */
  readonly observe: (pod: Pod) => Effect.Effect<void>
  /**
   * Reports `routes` on a Pod that has left the watch (its session label taken off) and
   * unmarks it; what is remembered of it is dropped once both writes are done.
   */
  readonly release: (pod: Pod, routes: PodRoutes) => Effect.Effect<void>
  /** Drops what is remembered of a Pod that is gone, and any write still pending for it. */
  readonly forget: (uid: string) => Effect.Effect<void>
}

/** How many of the resource versions our own writes made are remembered per Pod. */
const ECHOES = 4

/** A failed write is tried again soon, then less often; a newer word replaces it. */
const RETRY = Schedule.exponential("500 millis").pipe(Schedule.either(Schedule.spaced("30 seconds")))

/** One kind of write to each Pod: one at a time, the newest last. */
interface PodWriteLine {
  /**
   * Runs `write` for the Pod `uid` in place of its write still waiting (for a retry, or
   * its turn), once that one's request on the wire, if any, has its answer.
   */
  readonly run: (uid: string, write: Effect.Effect<void>) => Effect.Effect<void>
  /** One request of a write: stopping the write while it is out waits for its answer. */
  readonly sent: <A, E>(request: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Stops the Pod's write without waiting for the answer to a request on the wire. */
  readonly drop: (uid: string) => Effect.Effect<void>
  /** Whether a write to the Pod is under way. */
  readonly busy: (uid: string) => boolean
  /** Waits until no write to the Pod is under way. */
  readonly settled: (uid: string) => Effect.Effect<void>
}

const makeWriteLine: Effect.Effect<PodWriteLine, never, Scope.Scope> = Effect.gen(function*() {
  const writes = yield* FiberMap.make<string>()
  // Made after the map, so closing the scope interrupts the requests first (the client
  // cancels them) and the writes waiting on them then end.
  const scope = yield* Effect.scope
  const current = (uid: string) => Effect.option(FiberMap.get(writes, uid))
  return {
    run: (uid, write) =>
      Effect.flatMap(current(uid), (before) =>
        FiberMap.run(
          writes,
          uid,
          Option.match(before, {
            onNone: () => write,
            // Uninterruptible, so a write replaced while it waits still waits: of a
            // chain of words, never two are on the wire.
            onSome: (fiber) => Effect.zipRight(Effect.uninterruptible(Fiber.await(fiber)), write)
          })
        )),
    // On a fiber of its own, so the request keeps the client's time limits (which
    // interrupt it) while the write waiting for it cannot be interrupted.
    sent: (request) =>
      Effect.flatMap(Effect.forkIn(request, scope), (fiber) => Effect.uninterruptible(Fiber.join(fiber))),
    drop: (uid) =>
      Effect.flatMap(current(uid), Option.match({ onNone: () => Effect.void, onSome: Fiber.interruptFork })),
    busy: (uid) => FiberMap.unsafeHas(writes, uid),
    settled: (uid) => Effect.flatMap(current(uid), Option.match({ onNone: () => Effect.void, onSome: Fiber.await }))
  }
})

const routesConditionOf = (pod: Pod): PodCondition | undefined =>
  pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)

type Words = Pick<PodCondition, "status" | "reason" | "message">

const sameWords = (a: Words, b: Words): boolean =>
  a.status === b.status && (a.reason ?? "") === (b.reason ?? "") && (a.message ?? "") === (b.message ?? "")

export const makeConditionWriter = (
  pods: PodWrites,
  onReport: ((report: PodReport) => Effect.Effect<void>) | undefined
): Effect.Effect<ConditionWriter, never, Scope.Scope> =>
  Effect.gen(function*() {
    const writes = yield* makeWriteLine
    const annotations = yield* makeWriteLine
    const scope = yield* Effect.scope
    /** What each Pod was last made to say (or already said when first told). */
    const said = new Map<string, PodCondition>()
    /** What the watch last saw each Pod say, newer than the Pod a report is given. */
    const heard = new Map<string, PodCondition | undefined>()
    /** The resource versions the answers to our latest writes carried, per Pod. */
    const echoes = new Map<string, Array<string>>()
    const annotated = new Map<string, string>()

    const remember = (uid: string, answer: Pod) =>
      Effect.sync(() => {
        const version = answer.metadata?.resourceVersion
        if (version === undefined) return
        const known = echoes.get(uid) ?? []
        known.push(version)
        if (known.length > ECHOES) known.shift()
        echoes.set(uid, known)
      })

    /**
     * One write of `what` on `pod` through `line`, tried until it lands (its answer's
     * version remembered as ours) or the Pod is gone or replaced under its name, which
     * then needs nothing of ours; each failure said. A patch naming the old Pod's uid is
     * refused 422 (`metadata.uid`: field is immutable), and nothing refused as invalid
     * lands by being sent again.
     */
    const land = (line: PodWriteLine, pod: Pod, what: string, request: Effect.Effect<Pod, KubeError>) => {
      const namespace = pod.metadata?.namespace ?? ""
      const name = pod.metadata?.name ?? ""
      return line.sent(request).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(`could not set ${what} on Pod ${namespace}/${name}: ${error.reason}`)
        ),
        Effect.retry({
          schedule: RETRY,
          while: (error) => error._tag !== "NotFound" && error._tag !== "Conflict" && error._tag !== "Invalid"
        }),
        Effect.flatMap((answer) => remember(pod.metadata?.uid ?? "", answer))
      )
    }

    const write = (pod: Pod, condition: PodCondition) => {
      const namespace = pod.metadata?.namespace ?? ""
      const name = pod.metadata?.name ?? ""
      const patch = { metadata: { uid: pod.metadata?.uid }, status: { conditions: [condition] } }
      return land(writes, pod, ROUTES_CONDITION, pods.patchStatus(namespace, name, patch)).pipe(
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
        const before = said.get(uid) ?? (heard.has(uid) ? heard.get(uid) : routesConditionOf(pod))
        if (before !== undefined && sameWords(before, next)) return void said.set(uid, before)
        const now = formatTime(yield* Clock.currentTimeMillis)
        const condition: PodCondition = {
          ...next,
          lastTransitionTime: before !== undefined && before.status === next.status && before.lastTransitionTime
            ? before.lastTransitionTime
            : now
        }
        said.set(uid, condition)
        yield* writes.run(uid, write(pod, condition))
      })

    /** Sets (or, with nulls, takes off) the session id label and the endpoints annotation. */
    const mark = (pod: Pod, sessionId: string | null, endpoints: string | null) => {
      const patch = {
        metadata: {
          uid: pod.metadata?.uid,
          labels: { [LABEL_SESSION_ID]: sessionId },
          annotations: { [ENDPOINTS_ANNOTATION]: endpoints }
        }
      }
      const request = pods.patch(pod.metadata?.namespace ?? "", pod.metadata?.name ?? "", patch)
      return annotations.run(
        pod.metadata?.uid ?? "",
        Effect.ignore(land(annotations, pod, ENDPOINTS_ANNOTATION, request))
      )
    }

    const annotate = (pod: Pod, sessionId: string, endpoints: ReadonlyArray<Endpoint>) =>
      Effect.suspend(() => {
        const uid = pod.metadata?.uid ?? ""
        const text = JSON.stringify(endpoints)
        const before = annotated.get(uid) ?? pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION]
        if (before === text && pod.metadata?.labels?.[LABEL_SESSION_ID] === sessionId) return Effect.void
        annotated.set(uid, text)
        return mark(pod, sessionId, text)
      })

    const unmark = (pod: Pod) =>
      Effect.suspend(() => {
        const uid = pod.metadata?.uid ?? ""
        const marked = annotated.has(uid) || pod.metadata?.labels?.[LABEL_SESSION_ID] !== undefined ||
          pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION] !== undefined
        annotated.delete(uid)
        return marked ? mark(pod, null, null) : Effect.void
      })

    const observe = (pod: Pod) =>
      Effect.suspend(() => {
        const uid = pod.metadata?.uid ?? ""
        const now = routesConditionOf(pod)
        heard.set(uid, now)
        const word = said.get(uid)
        if (word === undefined || pod.metadata?.deletionTimestamp !== undefined) return Effect.void
        if (writes.busy(uid) || (now !== undefined && sameWords(now, word))) return Effect.void
        const version = pod.metadata?.resourceVersion
        if (version !== undefined && echoes.get(uid)?.includes(version) === true) return Effect.void
        return writes.run(uid, write(pod, word))
      })

    const drop = (uid: string) => {
      said.delete(uid)
      heard.delete(uid)
      echoes.delete(uid)
      annotated.delete(uid)
    }

    const release = (pod: Pod, routes: PodRoutes) =>
      Effect.gen(function*() {
        const uid = pod.metadata?.uid ?? ""
        yield* report(pod, routes)
        yield* unmark(pod)
        const word = said.get(uid)
        // Nothing more is heard of the Pod; unless it is routed again meanwhile (a new word).
        yield* Effect.forkIn(
          Effect.zipRight(
            Effect.zipRight(writes.settled(uid), annotations.settled(uid)),
            Effect.sync(() => (said.get(uid) === word ? drop(uid) : undefined))
          ),
          scope
        )
      })

    const forget = (uid: string) =>
      Effect.suspend(() => {
        drop(uid)
        return Effect.zipRight(writes.drop(uid), annotations.drop(uid))
      })

    return { report, annotate, unmark, observe, release, forget }
  })
