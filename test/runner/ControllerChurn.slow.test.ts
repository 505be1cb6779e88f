/**
 * Controller mode under churn: 500 session Pods created with bounded concurrency while
 * every third is deleted shortly after its creation, and the controller restarted
 * midway. At the end every survivor is routed and True, no deleted Pod's session keeps
 * a Service or an Ingress, and no Pod that was True ever said anything else.
 */
import { describe, expect, it } from "@effect/vitest"
import { SessionCluster } from "@session-routing/local-cluster"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Schedule, Stream } from "effect"
import { sessionObjectName } from "../../src/domain/Manifests.js"
import type { Pod } from "../../src/domain/Objects.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"
import { IngressResource, PodResource, ServiceResource } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { runController } from "../../src/runner/Controller.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer } from "../support/RouterHarness.js"

const PODS = 500
const CREATES_AT_ONCE = 16
const CREATE_EVERY = Duration.millis(10)
/** The controller is restarted once this many Pods have been created. */
const RESTART_AFTER = 250

const sessionId = (i: number) => `churn-${String(i).padStart(3, "0")}`
const podName = (i: number) => `${sessionId(i)}-pod`
const deleted = (i: number) => i % 3 === 0
/** Spread over 0 to 390 ms, so a deletion lands before, during or after the Pod's publish. */
const deleteAfter = (i: number) => Duration.millis((i * 37) % 400)

const sessionPod = (i: number): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: podName(i), labels: { [SESSION_LABEL]: sessionId(i) } },
  spec: {
    containers: [{
      name: "session",
      image: "registry.example/session:1",
      ports: [{ containerPort: 8080, protocol: "TCP" }]
    }]
  }
})

const statusOf = (pod: Pod): string =>
  pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status ?? "absent"

/**
 * Repeats `read` until `holds`, for up to `limit` of real time: 500 Pods over HTTP take
 * far longer to settle than the few seconds of the harness's `eventually`.
 */
const eventuallyWithin = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  holds: (a: A) => boolean,
  limit: Duration.Duration
): Effect.Effect<A, E | string, R> =>
  read.pipe(
    Effect.filterOrFail(holds, (a) =>
      `condition not met within ${Duration.format(limit)}; last value: ${JSON.stringify(a, null, 1).slice(0, 4_000)}`),
    Effect.retry({
      schedule: Schedule.spaced(Duration.millis(250)).pipe(Schedule.upTo(limit)),
      while: (e) =>
        typeof e === "string"
    })
  )

/** The names in `actual` and not in `expected`, and the other way round, each cut to a few. */
const difference = (actual: ReadonlyArray<string>, expected: ReadonlySet<string>) => ({
  extra: actual.filter((name) => !expected.has(name)).slice(0, 10),
  missing: [...expected].filter((name) => !actual.includes(name)).slice(0, 10)
})

describe("controller mode under churn", () => {
  it.scopedLive(
    "routes every surviving Pod and leaves nothing of the deleted ones across a restart midway",
    () =>
      Effect.gen(function*() {
        const sc = yield* Effect.orDie(SessionCluster.make({
          baseDomain: BASE_DOMAIN,
          ingress: { delay: Duration.millis(20) },
          gateway: { delay: Duration.millis(20) },
          dataPlane: false,
          // The garbage collector: a deleted Pod's objects go by their owner references.
          controllerManager: true
        }))
        const store = sc.cluster.store
        const layer = SessionRouting.layerConfig.pipe(
          Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
          Layer.provideMerge(routerConfigLayer(sc, { mode: "ingress", routeReadyTimeoutMs: 1_500 }))
        )
        const controller = Effect.forkScoped(Effect.provide(runController(), layer))

        // Every condition each Pod is seen to carry, in order, straight from the store: a
        // Pod that was True and then said Unknown or False in between is a flap.
        const last = new Map<string, string>()
        const flaps: Array<string> = []
        const watchErrors: Array<unknown> = []
        yield* Effect.forkScoped(
          store.watch(PodResource, sc.namespace).pipe(
            Stream.orDie,
            Stream.runForEach((event) =>
              Effect.sync(() => {
                if (event.type === "ERROR") return void watchErrors.push(event.object)
                if (event.type !== "ADDED" && event.type !== "MODIFIED") return
                const pod = event.object as Pod
                const name = pod.metadata?.name ?? ""
                const now = statusOf(pod)
                if (last.get(name) === "True" && now !== "True") {
                  // What replaced True, and why: a flap seen once must be explainable from the report.
                  const said = pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)
                  flaps.push(`${name}: True -> ${now} (${said?.reason}: ${said?.message})`)
                }
                last.set(name, now)
              })
            )
          )
        )

        const first = yield* controller
        const half = yield* Deferred.make<void>()
        // At most one creation every 10 ms: unpaced, the 500 Pods exist within two seconds,
        // before any is True, and a restart then would not show that routed Pods stay True.
        // Paced, the restart falls among creations, deletions and publishes in flight.
        const churn = Stream.range(0, PODS - 1).pipe(
          Stream.schedule(Schedule.spaced(CREATE_EVERY)),
          Stream.mapEffect((i) =>
            Effect.gen(function*() {
              yield* Effect.orDie(store.create(PodResource, sc.namespace, sessionPod(i)))
              if (i === RESTART_AFTER) yield* Deferred.succeed(half, undefined)
              if (!deleted(i)) return
              yield* Effect.sleep(deleteAfter(i))
              yield* Effect.orDie(store.delete(PodResource, sc.namespace, podName(i)))
            }), { concurrency: CREATES_AT_ONCE }),
          Stream.runDrain
        )
        const restart = Effect.gen(function*() {
          yield* Deferred.await(half)
          const trueAtRestart = [...last.values()].filter((s) => s === "True").length
          yield* Fiber.interrupt(first)
          const second = yield* controller
          return { second, trueAtRestart }
        })
        const [, { second, trueAtRestart }] = yield* Effect.all([churn, restart], { concurrency: 2 })
        // The restart is only worth its name if some Pods were already routed when it came.
        expect(trueAtRestart).toBeGreaterThan(0)

        const survivors = Array.from({ length: PODS }, (_, i) => i).filter((i) => !deleted(i))
        const survivingPods = new Set(survivors.map(podName))
        const survivingObjects = new Set(survivors.map((i) => sessionObjectName(sessionId(i))))
        const read = Effect.gen(function*() {
          const pods = (yield* Effect.orDie(store.list(PodResource, sc.namespace))).items
          const services = (yield* Effect.orDie(store.list(ServiceResource, sc.namespace))).items
          const ingresses = (yield* Effect.orDie(store.list(IngressResource, sc.namespace))).items
          const names = (items: ReadonlyArray<{ readonly metadata?: { readonly name?: string } }>) =>
            items.map((item) => item.metadata?.name ?? "")
          return {
            pods: difference(names(pods), survivingPods),
            notTrue: pods.filter((p) => statusOf(p) !== "True").map((p) => `${p.metadata?.name}: ${statusOf(p)}`)
              .slice(0, 10),
            services: difference(names(services), survivingObjects),
            ingresses: difference(names(ingresses), survivingObjects),
            ingressCount: ingresses.length
          }
        })
        const settled = {
          pods: { extra: [], missing: [] },
          notTrue: [],
          services: { extra: [], missing: [] },
          ingresses: { extra: [], missing: [] },
          ingressCount: survivors.length
        }
        const end = yield* eventuallyWithin(
          read,
          (state) => JSON.stringify(state) === JSON.stringify(settled),
          Duration.seconds(120)
        )
        expect(end).toEqual(settled)
        // Nothing puts a collected object back, and no survivor leaves True afterwards.
        yield* Effect.sleep(Duration.seconds(1))
        expect(yield* read).toEqual(settled)
        expect(flaps).toEqual([])
        expect(watchErrors).toEqual([])
        expect(Exit.isInterrupted(yield* Fiber.await(first))).toBe(true)
        expect(second.unsafePoll()).toBeNull()
      }),
    { timeout: 180_000 }
  )
})
