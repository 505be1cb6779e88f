/**
 * One Pod in controller mode: publish its session, follow its hosts for as long as
 * the Pod is routed, and keep the Pod's condition saying what they are. A publish
 * that fails is said on the Pod and tried again later; a route deleted under a live
 * Pod, and whatever else drifted by the resync, is applied again.
 */
import { type Duration, Effect, Either, Schedule, Stream } from "effect"
import type { Pod } from "../../domain/Objects.js"
import type { HostReport, PodSession } from "../../domain/PodRouting.js"
import { PodResource } from "../../domain/Resources.js"
import { UnprogrammedCode } from "../../domain/Routes.js"
import { KubeClient } from "../../services/KubeClient.js"
import type { RouterConfig } from "../../services/RouterConfig.js"
import { SessionRouter } from "../../services/SessionRouter.js"
import { followSession } from "../FollowSession.js"
import { publishSession, type SessionEvent } from "../SessionRunner.js"
import type { ConditionWriter } from "./PodConditions.js"

/** A publish that failed is tried again soon, then at most every five minutes. */
const REPUBLISH = Schedule.exponential("2 seconds").pipe(Schedule.either(Schedule.spaced("5 minutes")))

/** What a route event changes in the hosts as last heard of. */
const heard = (hosts: ReadonlyArray<HostReport>, event: SessionEvent): ReadonlyArray<HostReport> =>
  event.type !== "route"
    ? hosts
    : hosts.map((host) =>
      host.host !== event.host
        ? host
        : {
          host: host.host,
          state: event.state,
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
          ...(event.code !== undefined ? { code: event.code } : {})
        }
    )

/**
 * Routes one Pod until interrupted: the Pod's fiber in the controller, replaced when
 * its ports change and interrupted when it goes.
 */
export const followPod = (
  session: PodSession,
  pod: Pod,
  writer: ConditionWriter,
  resync: Duration.Duration
): Effect.Effect<never, never, KubeClient | SessionRouter | RouterConfig> => {
  const spec = { sessionId: session.sessionId, podName: session.podName, podUid: session.podUid, ports: session.ports }

  /** Applies the objects again, unless the Pod is gone (its objects then go with it). */
  const reapply = Effect.gen(function*() {
    const kube = yield* KubeClient
    const router = yield* SessionRouter
    const live = yield* Effect.either(kube.get(PodResource, session.namespace, session.podName))
    if (Either.isRight(live) && live.right.metadata?.uid !== session.podUid) return
    if (Either.isLeft(live) && live.left._tag === "NotFound") return
    yield* router.publish(spec)
  }).pipe(
    Effect.tapError((error) =>
      Effect.logWarning(`could not apply the objects of session ${session.sessionId} again: ${error.reason}`)
    ),
    Effect.ignore
  )

  const routeOnce = Effect.scoped(
    Effect.gen(function*() {
      const published = yield* publishSession(spec)
      yield* writer.annotate(pod, published.endpoints)
      let hosts: ReadonlyArray<HostReport> = published.routes.map((route) => ({ host: route.host, state: "pending" }))
      yield* writer.report(pod, { _tag: "Hosts", hosts })
      yield* Effect.forkScoped(Effect.schedule(reapply, Schedule.spaced(resync)))
      const followed = Stream.suspend(() =>
        followSession(
          session.sessionId,
          hosts.map((host) => {
            const route = published.routes.find((r) => r.host === host.host)!
            return { ...host, port: route.port }
          })
        )
      )
      return yield* Stream.concat(published.events, followed).pipe(
        Stream.runForEach((event) =>
          Effect.suspend(() => {
            const next = heard(hosts, event)
            if (next === hosts) return Effect.void
            hosts = next
            const report = writer.report(pod, { _tag: "Hosts", hosts })
            return event.type === "route" && event.code === UnprogrammedCode.deleted
              ? Effect.zipRight(report, reapply)
              : report
          })
        ),
        Effect.zipRight(Effect.never)
      )
    })
  )

  return routeOnce.pipe(
    Effect.tapError((error) => writer.report(pod, { _tag: "PublishFailed", reason: error.reason })),
    Effect.retry(REPUBLISH),
    Effect.orDie
  )
}
