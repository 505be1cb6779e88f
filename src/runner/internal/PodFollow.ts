/**
 * One Pod in controller mode: publish its session, follow its hosts for as long as
 * the Pod is routed, and keep the Pod's condition saying what they are. A publish
 * that fails is said on the Pod and tried again later; a route deleted under a live
 * Pod, and whatever else drifted by the resync, is applied again.
 */
import { type Duration, Effect, Either, FiberMap, Schedule, Stream } from "effect"
import type { Pod } from "../../domain/Objects.js"
import {
  ENDPOINTS_ANNOTATION,
  type PodHost,
  type PodRoutes,
  type PodSession,
  ROUTES_CONDITION,
  routesCondition
} from "../../domain/PodRouting.js"
import { PodResource } from "../../domain/Resources.js"
import { type Endpoint, type PublishedRoute, UnprogrammedCode } from "../../domain/Routes.js"
import { KubeClient } from "../../services/KubeClient.js"
import type { RouteProbe } from "../../services/RouteProbe.js"
import type { RouterConfig } from "../../services/RouterConfig.js"
import { SessionRouter } from "../../services/SessionRouter.js"
import type { SessionRouting } from "../../services/SessionRouting.js"
import { followSession } from "../FollowSession.js"
import { publishSession, type SessionEvent } from "../SessionRunner.js"
import type { ConditionWriter } from "./PodConditions.js"

/** A publish that failed is tried again soon, then at most every five minutes. */
const REPUBLISH = Schedule.exponential("2 seconds").pipe(Schedule.either(Schedule.spaced("5 minutes")))

/** Probes through each programmed host until enough in a row reach the session. */
export interface PodProbing {
  readonly probe: RouteProbe.Service
  readonly required: number
  readonly interval: Duration.Duration
}

/** Whether the Pod says its routes are programmed, for exactly these endpoints. */
const alreadyRouted = (pod: Pod, endpoints: ReadonlyArray<Endpoint>): boolean =>
  pod.status?.conditions?.some((c) => c.type === ROUTES_CONDITION && c.status === "True") === true &&
  pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION] === JSON.stringify(endpoints)

/** Whether a report only says the hosts are not judged yet. */
const provisional = (routes: PodRoutes): boolean => {
  const reason = routesCondition(routes).reason
  return reason === "RoutesPending" || reason === "ProbePending"
}

/** What a route event says of its host now; a host that leaves programmed starts its probes over. */
const heard = (host: PodHost, event: Extract<SessionEvent, { readonly type: "route" }>): PodHost => ({
  host: host.host,
  state: event.state,
  ...(event.reason !== undefined ? { reason: event.reason } : {}),
  ...(event.code !== undefined ? { code: event.code } : {}),
  ...(event.state === "programmed" && host.probe !== undefined ? { probe: host.probe } : {})
})

/**
 * Routes one Pod until interrupted: the Pod's fiber in the controller, replaced when
 * its ports change and interrupted when it goes.
 */
export const followPod = (
  session: PodSession,
  pod: Pod,
  writer: ConditionWriter,
  resync: Duration.Duration,
  probing: PodProbing | undefined
): Effect.Effect<never, never, KubeClient | SessionRouting | RouterConfig> => {
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
      yield* writer.annotate(pod, session.sessionId, published.endpoints)
      const fresh = (route: PublishedRoute): PodHost => ({
        host: route.host,
        state: "pending",
        ...(probing !== undefined ? { probe: { passed: 0, required: probing.required } } : {})
      })
      let hosts: ReadonlyArray<PodHost> = published.routes.map(fresh)
      // A Pod already True for these same endpoints (a new leader, a restart) keeps its
      // word until the hosts are judged again: a pass through "pending" would take every
      // routed Pod out of Ready at each handover.
      let keepWord = alreadyRouted(pod, published.endpoints)
      const report = Effect.suspend(() => {
        const routes = { _tag: "Hosts", hosts } as const
        if (keepWord && provisional(routes)) return Effect.void
        keepWord = false
        return writer.report(pod, routes)
      })
      const update = (name: string, change: (host: PodHost) => PodHost) =>
        Effect.suspend(() => {
          hosts = hosts.map((host) => (host.host === name ? change(host) : host))
          return report
        })
      yield* report
      yield* Effect.forkScoped(Effect.schedule(reapply, Schedule.spaced(resync)))
      const probes = yield* FiberMap.make<string>()
      /** Probes `route` until `required` probes in a row reach the session through it. */
      const proveHost = (route: PublishedRoute, settings: PodProbing) =>
        Effect.gen(function*() {
          let passed = 0
          while (passed < settings.required) {
            const outcome = yield* settings.probe.probe(session.sessionId, route)
            passed = outcome.ok ? passed + 1 : 0
            const probe = {
              passed,
              required: settings.required,
              ...(outcome.ok || outcome.reason === undefined ? {} : { reason: outcome.reason })
            }
            yield* update(route.host, (host) => ({ ...host, probe }))
            if (passed < settings.required) yield* Effect.sleep(settings.interval)
          }
        })
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
        Stream.runForEach((event) => {
          if (event.type !== "route") return Effect.void
          const route = published.routes.find((r) => r.host === event.host)
          if (route === undefined) return Effect.void
          const probe = probing === undefined
            ? Effect.void
            : event.state === "programmed"
            ? Effect.suspend(() => {
              // A host already proven stays so while it stays programmed.
              const known = hosts.find((host) => host.host === route.host)?.probe
              return known !== undefined && known.passed >= known.required
                ? Effect.void
                : FiberMap.run(probes, route.host, proveHost(route, probing), { onlyIfMissing: true })
            })
            : Effect.zipRight(
              FiberMap.remove(probes, route.host),
              update(route.host, (host) => ({ ...host, probe: { passed: 0, required: probing.required } }))
            )
          const report = Effect.zipRight(update(route.host, (host) => heard(host, event)), probe)
          return event.code === UnprogrammedCode.deleted ? Effect.zipRight(report, reapply) : report
        }),
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
