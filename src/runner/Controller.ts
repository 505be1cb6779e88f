/**
 * Controller mode: routes for every session Pod a label selects, whoever started it.
 * One watch of the Pods; per Pod one fiber that publishes its session (the same
 * all-or-nothing publish as the runner's), follows its hosts, and writes what they
 * are as the Pod's `session-routing.dev/RoutesProgrammed` condition. A Pod whose
 * ports change is published again (the publish removes what a dropped port no longer
 * needs); a deleted Pod's fiber stops, and its owner references let the cluster
 * collect its objects. A route deleted under it is put back.
 */
import { Data, Duration, Effect, Either, FiberMap, Schedule, Stream } from "effect"
import { type Occurrence, podReference } from "../domain/KubeEvents.js"
import { LABEL_SESSION_ID } from "../domain/Manifests.js"
import type { Pod } from "../domain/Objects.js"
import {
  type PodSession,
  podSession,
  ROUTES_CONDITION,
  samePorts,
  SESSION_LABEL,
  shardOf
} from "../domain/PodRouting.js"
import { PodResource } from "../domain/Resources.js"
import { EventRecorder, noEvents } from "../services/EventRecorder.js"
import { KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { RouteProbe } from "../services/RouteProbe.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { SessionRouter } from "../services/SessionRouter.js"
import type { SessionRouting } from "../services/SessionRouting.js"
import { withGuardedWrites } from "./controller/GuardedWrites.js"
import {
  InvalidLeaderElectionSettings,
  isLeadershipLost,
  type LeaderElectionSettings,
  type Leadership,
  type LeadershipChange,
  runElected
} from "./controller/LeaderElection.js"
import { findOtherShardCount, shardLeaseName } from "./controller/ShardLeases.js"
import { makeConditionWriter, type PodReport } from "./internal/PodConditions.js"
import { followPod } from "./internal/PodFollow.js"

/**
 * How the controller picks its Pods.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControllerOptions {
  /** The label whose value is the session id. Default `session-routing.dev/session`. */
  readonly sessionLabel?: string
  /** Route only the sessions of shard `index` of `count` (by `shardOf`); unset: every session. */
  readonly shard?: { readonly count: number; readonly index: number }
  /** How often every Pod's objects are applied again, to put back what drifted. Default 10 minutes. */
  readonly resync?: Duration.DurationInput
  /**
   * With probes on (`SESSION_ROUTE_PROBE`), how many probes in a row must reach the
   * session through a programmed host before it counts. Default 3, as the Gateway API
   * conformance suite asks.
   */
  readonly probeSuccesses?: number
  /** Pause between two probes of a host. Default 1 second. */
  readonly probeInterval?: Duration.DurationInput
  /** Told each Pod report as it is written (for logs). */
  readonly onReport?: (report: PodReport) => Effect.Effect<void>
  /**
   * Route only while this replica holds a Lease in the session namespace, so several
   * replicas can run and one routes; unset: route at once (run one replica only).
   */
  readonly leaderElection?: ControllerElection
}

/**
 * How a replica stands for leadership: its identity, and the Lease's timing (client-go's
 * defaults: 15 s lease, 10 s renew deadline, 2 s retry period).
 *
 * @since 0.1.0
 * @category models
 */
export interface ControllerElection extends Omit<LeaderElectionSettings, "namespace" | "name"> {
  /**
   * Default `session-routing-controller`, `session-routing-controller-shard-<index>-of-<count>`
   * when sharded; with the default, the replica refuses to start while a live Lease of
   * another shard count exists in the namespace.
   */
  readonly leaseName?: string
  /** Told each change of leadership (for logs and readiness). */
  readonly onChange?: (change: LeadershipChange) => Effect.Effect<void>
}

/**
 * The Lease a controller replica stands for.
 *
 * @since 0.1.0
 * @category rules
 */
export const controllerLeaseName = (shard: ControllerOptions["shard"]): string =>
  shard === undefined ? shardLeaseName(1, 0) : shardLeaseName(shard.count, shard.index)

/**
 * The controller cannot run with this client.
 *
 * @since 0.1.0
 * @category errors
 */
export class ControllerSetupError extends Data.TaggedError("ControllerSetupError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** An unpublish of a session no Pod holds any more is tried a few times, then said. */
const UNPUBLISH_RETRY = Schedule.exponential("500 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/** A restarted Pod watch starts from what was seen, so a Pod deleted meanwhile is still seen to go. */
const WATCH_RESTART = Schedule.exponential("1 second").pipe(Schedule.either(Schedule.spaced("30 seconds")))

interface Routed {
  readonly session: PodSession
}

/**
 * Runs the controller until interrupted: watches the session namespace's Pods that
 * carry the session label and routes each, with `leaderElection` only while this
 * replica holds the Lease. Fails only when the client cannot write Pods (or Leases),
 * the election's settings are unsafe, or (default Lease name) a live Lease of the same
 * controller with another shard count exists; a watch that breaks is started again from
 * what it had seen, and a lost Lease is stood for again.
 *
 * @since 0.1.0
 * @category programs
 */
export const runController = (
  options: ControllerOptions = {}
): Effect.Effect<
  never,
  ControllerSetupError | InvalidLeaderElectionSettings,
  KubeClient | SessionRouting | RouterConfig
> =>
  Effect.gen(function*() {
    const election = options.leaderElection
    if (election === undefined) return yield* routeAll(options)
    const kube = yield* KubeClient
    const config = yield* RouterConfig
    if (kube.leases === undefined) {
      return yield* new ControllerSetupError({
        reason: "this KubeClient cannot write Leases, so the controller could not elect a leader"
      })
    }
    const { leaseName, onChange, ...timing } = election
    const settings: LeaderElectionSettings = {
      ...timing,
      namespace: config.sessionNamespace,
      name: leaseName ?? controllerLeaseName(options.shard)
    }
    if (leaseName === undefined) {
      const other = yield* findOtherShardCount(kube, config.sessionNamespace, options.shard?.count ?? 1)
      if (other !== undefined) return yield* new ControllerSetupError({ reason: other.line })
    }
    // A lost Lease interrupts the routing at once; the replica then stands again. Every
    // write of the routing asks the election first whether this replica still leads.
    const lead = (leadership: Leadership) => withGuardedWrites(leadership)(routeAll(options))
    return yield* runElected(kube.leases, settings, lead, onChange).pipe(
      Effect.retry({ while: isLeadershipLost }),
      Effect.catchTag("LeadershipLost", (lost) => Effect.die(lost))
    )
  })

const routeAll = (
  options: ControllerOptions
): Effect.Effect<never, ControllerSetupError, KubeClient | SessionRouting | RouterConfig> =>
  Effect.scoped(
    Effect.gen(function*() {
      const kube = yield* KubeClient
      const config = yield* RouterConfig
      if (kube.pods === undefined) {
        return yield* new ControllerSetupError({
          reason: "this KubeClient cannot patch Pods, so the controller could not write their condition"
        })
      }
      const label = options.sessionLabel ?? SESSION_LABEL
      const namespace = config.sessionNamespace
      const events = yield* EventRecorder
      const recorder = events === noEvents ? undefined : events
      const writer = yield* makeConditionWriter(kube.pods, options.onReport)
      const fibers = yield* FiberMap.make<string>()
      const routed = new Map<string, Routed>()
      const owners = new Map<string, string>()
      const seen = new Map<string, Pod>()
      const resync = Duration.decode(options.resync ?? Duration.minutes(10))
      const probe = yield* RouteProbe
      const probing = config.routeProbe !== undefined
        ? {
          probe,
          required: options.probeSuccesses ?? 3,
          interval: Duration.decode(options.probeInterval ?? Duration.seconds(1))
        }
        : undefined

      const warn = (pod: Pod, reason: string, note: string) =>
        recorder === undefined ? Effect.void : recorder.record(podOccurrence(pod, reason, note))

      /** The live Pod, other than `uid`, labelled for `sessionId` that carries the id's mark, if any. */
      const marked = (sessionId: string, uid: string): Pod | undefined =>
        [...seen.values()].find((pod) =>
          pod.metadata?.uid !== uid && pod.metadata?.deletionTimestamp === undefined &&
          pod.metadata?.labels?.[label] === sessionId && pod.metadata?.labels?.[LABEL_SESSION_ID] === sessionId
        )

      /**
       * Stops routing a Pod and releases its session id. A Pod that lives on (relabelled,
       * its label taken off, its ports made invalid) has its session unpublished, as the
       * garbage collector would not take its objects; a deleted one's objects are the
       * collector's, unless a Pod waits for the id: they are deleted first, or the
       * waiting Pod's publish would find them owned by another Pod and refuse.
       */
      const forget = (
        uid: string,
        how: "gone" | "lives"
      ): Effect.Effect<void, never, KubeClient | SessionRouting | RouterConfig> =>
        Effect.gen(function*() {
          const was = routed.get(uid)
          routed.delete(uid)
          yield* FiberMap.remove(fibers, uid)
          if (was === undefined || owners.get(was.session.sessionId) !== uid) return
          const sessionId = was.session.sessionId
          owners.delete(sessionId)
          const waiting = marked(sessionId, uid) ?? [...seen.values()].find((pod) =>
            pod.metadata?.uid !== uid && pod.metadata?.deletionTimestamp === undefined &&
            pod.metadata?.labels?.[label] === sessionId
          )
          if (how === "lives" || waiting !== undefined) yield* unpublish(sessionId)
          if (waiting !== undefined) yield* reconcile(waiting)
        })

      const unpublish = (sessionId: string) =>
        Effect.flatMap(SessionRouter, (router) => router.unpublish(sessionId)).pipe(
          Effect.retry(UNPUBLISH_RETRY),
          Effect.catchAll((error) =>
            Effect.logWarning(`could not unpublish session ${sessionId}, whose Pod no longer holds it: ${error.reason}`)
          )
        )

      const ours = (sessionId: string) =>
        options.shard === undefined || shardOf(sessionId, options.shard.count) === options.shard.index

      const reconcile = (pod: Pod): Effect.Effect<void, never, KubeClient | SessionRouting | RouterConfig> =>
        Effect.gen(function*() {
          const uid = pod.metadata?.uid ?? ""
          if (pod.metadata?.deletionTimestamp !== undefined) {
            return yield* Effect.zipRight(forget(uid, "gone"), writer.forget(uid))
          }
          const declared = podSession(pod, label)
          if (Either.isLeft(declared)) {
            yield* forget(uid, "lives")
            if (!ours(pod.metadata?.labels?.[label] ?? "")) {
              return
            }
            const problem = declared.left
            yield* writer.report(pod, { _tag: "Invalid", problem })
            yield* writer.unmark(pod)
            return yield* warn(pod, problem.code, problem.message)
          }
          const session = declared.right
          const before = routed.get(uid)
          // Another session id on a routed Pod (a warm pool handing it to the next user):
          // the old session is forgotten, its objects deleted, before the new one is routed.
          if (before !== undefined && before.session.sessionId !== session.sessionId) yield* forget(uid, "lives")
          if (!ours(session.sessionId)) return yield* forget(uid, "lives")
          // Of two Pods with one id, the one that carries its mark (routed before a
          // restart or a handover) keeps it, whichever the watch lists first.
          if (!owners.has(session.sessionId) && pod.metadata?.labels?.[LABEL_SESSION_ID] !== session.sessionId) {
            const holder = marked(session.sessionId, uid)
            if (holder !== undefined) yield* reconcile(holder)
          }
          const owner = owners.get(session.sessionId)
          if (owner !== undefined && owner !== uid && routed.has(owner)) {
            yield* forget(uid, "lives")
            const byPod = routed.get(owner)!.session.podName
            yield* writer.report(pod, { _tag: "Taken", sessionId: session.sessionId, byPod })
            // Or the session's Service would select it too.
            return yield* writer.unmark(pod)
          }
          const current = routed.get(uid)
          if (current !== undefined && samePorts(current.session.ports, session.ports)) return
          routed.set(uid, { session })
          owners.set(session.sessionId, uid)
          // A Pod gated on the condition has no ready endpoint until the condition is True, so
          // a probe through its routes could only ever get a 503: the gate waits for programmed.
          const gated = pod.spec?.readinessGates?.some((gate) => gate.conditionType === ROUTES_CONDITION) === true
          yield* FiberMap.run(fibers, uid, followPod(session, pod, writer, resync, gated ? undefined : probing))
        })

      /**
       * A Pod the watch no longer selects: deleted, or its session label taken off (the
       * watch says DELETED for both). A routed Pod is read to tell which: one that lives
       * has its session unpublished and is told so on its condition.
       */
      const left = (pod: Pod): Effect.Effect<void, never, KubeClient | SessionRouting | RouterConfig> =>
        Effect.gen(function*() {
          const uid = pod.metadata?.uid ?? ""
          const was = routed.get(uid)
          if (was !== undefined) {
            const name = pod.metadata?.name ?? ""
            const now = yield* Effect.either(kube.get(PodResource, namespace, name))
            if (Either.isLeft(now) && now.left._tag !== "NotFound") {
              yield* Effect.logWarning(
                `could not read Pod ${namespace}/${name}, which left the watch, to tell whether its session label ` +
                  `was taken off; taking it as deleted: ${now.left.reason}`
              )
            }
            const lives = Either.isRight(now) && now.right.metadata?.uid === uid &&
              now.right.metadata?.deletionTimestamp === undefined &&
              now.right.metadata?.labels?.[label] === undefined
            if (lives) {
              yield* forget(uid, "lives")
              return yield* writer.release(now.right, {
                _tag: "LabelRemoved",
                sessionId: was.session.sessionId,
                label
              })
            }
          }
          yield* Effect.zipRight(forget(uid, "gone"), writer.forget(uid))
        })

      const watchPods = Stream.suspend(() =>
        kube.watch(PodResource, namespace, { labelSelector: label, known: [...seen.values()] })
      ).pipe(
        Stream.runForEachChunk((events) =>
          Effect.suspend(() => {
            // Every Pod of the chunk (a whole list, after a start) is seen before any is
            // routed, so that the marked one of two Pods with one id is known to be there.
            for (const event of events) {
              const uid = event.object.metadata?.uid ?? ""
              if (event.type === "DELETED") seen.delete(uid)
              else seen.set(uid, event.object)
            }
            return Effect.forEach(events, (event) =>
              event.type === "DELETED"
                ? left(event.object)
                : Effect.zipRight(writer.observe(event.object), reconcile(event.object)), { discard: true })
          })
        ),
        Effect.tapError((error: KubeError) =>
          Effect.logWarning(`the watch of Pods in namespace "${namespace}" broke, starting it again: ${error.reason}`)
        ),
        // The schedule never ends: the watch is started again for as long as the controller runs.
        Effect.retry(WATCH_RESTART),
        Effect.orDie
      )
      return yield* Effect.zipRight(watchPods, Effect.never)
    })
  )

const podOccurrence = (pod: Pod, reason: string, note: string): Occurrence => ({
  regarding: podReference(pod.metadata?.namespace ?? "", pod.metadata?.name ?? "", pod.metadata?.uid ?? ""),
  type: "Warning",
  reason: reason as Occurrence["reason"],
  note,
  action: "Route"
})

export type { PodReport } from "./internal/PodConditions.js"
