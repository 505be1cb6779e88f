/**
 * Controller mode end to end: the controller runs with the live client over HTTP
 * against LocalCluster, Pods are created, changed and deleted in the cluster as a
 * runner in any language would, and what the controller did is read back from the
 * cluster: the routing objects, and the condition and annotation on each Pod.
 */
import { describe, expect, it } from "@effect/vitest"
import { type LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Layer } from "effect"
import { LABEL_SESSION_ID } from "../../src/domain/Manifests.js"
import type { Pod, PodCondition } from "../../src/domain/Objects.js"
import {
  ENDPOINTS_ANNOTATION,
  PORTS_ANNOTATION,
  ROUTES_CONDITION,
  SESSION_LABEL,
  shardOf
} from "../../src/domain/PodRouting.js"
import {
  EventV1Resource,
  HttpRouteResource,
  IngressResource,
  PodResource,
  ServiceResource
} from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { type ControllerOptions, runController } from "../../src/runner/Controller.js"
import { workload } from "../support/ProbedSession.js"
import {
  BASE_DOMAIN,
  eventually,
  kubeClientLayer,
  routerConfigLayer,
  type TestConfig
} from "../support/RouterHarness.js"
import { routesConditionOf as conditionOf, sessionPod } from "../support/SessionPods.js"

/** A cluster whose controllers program routes at once, and the controller running against it over HTTP. */
const withController = (
  options: {
    readonly mode?: "ingress" | "gateway"
    readonly config?: TestConfig | ((sc: SessionCluster.SessionCluster) => TestConfig)
    readonly gc?: boolean
    readonly dataPlane?: boolean
    readonly controller?: ControllerOptions
    readonly controllerDelay?: Duration.Duration
    /** Runs once the cluster is up, before the controller starts. */
    readonly before?: (sc: SessionCluster.SessionCluster) => Effect.Effect<unknown>
  } = {}
) =>
  Effect.gen(function*() {
    const sc = yield* Effect.orDie(SessionCluster.make({
      baseDomain: BASE_DOMAIN,
      ingress: { delay: options.controllerDelay ?? Duration.millis(20) },
      gateway: { delay: options.controllerDelay ?? Duration.millis(20) },
      dataPlane: options.dataPlane ?? false,
      controllerManager: options.gc ?? false
    }))
    if (options.before !== undefined) yield* options.before(sc)
    const config = typeof options.config === "function" ? options.config(sc) : options.config
    const layer = SessionRouting.layerConfig.pipe(
      Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
      Layer.provideMerge(routerConfigLayer(sc, {
        mode: options.mode ?? "ingress",
        routeReadyTimeoutMs: 1_500,
        ...config
      }))
    )
    const fiber = yield* Effect.forkScoped(Effect.provide(runController(options.controller), layer))
    return { sc, fiber }
  })

const readPod = (cluster: LocalCluster.Service, namespace: string, name: string) =>
  Effect.orDie(cluster.store.get(PodResource, namespace, name))

const create = (cluster: LocalCluster.Service, namespace: string, pod: Pod) =>
  Effect.orDie(cluster.store.create(PodResource, namespace, pod))

describe("controller mode over HTTP", () => {
  it.scopedLive(
    "routes a labelled Pod's declared ports and sets its condition True with its endpoints",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController()
        yield* create(sc.cluster, sc.namespace, sessionPod("alpha-pod", "alpha", { ports: [8080, 9090] }))
        const pod = yield* eventually(
          readPod(sc.cluster, sc.namespace, "alpha-pod"),
          (p) => conditionOf(p)?.status === "True"
        )
        expect(conditionOf(pod)).toMatchObject({
          status: "True",
          reason: "RoutesProgrammed",
          message: `every host is programmed: 8080-alpha.${BASE_DOMAIN}, 9090-alpha.${BASE_DOMAIN}`
        })
        expect(JSON.parse(pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION] ?? "[]")).toEqual([
          { host: `8080-alpha.${BASE_DOMAIN}`, port: 8080, protocol: "tcp", url: `https://8080-alpha.${BASE_DOMAIN}` },
          { host: `9090-alpha.${BASE_DOMAIN}`, port: 9090, protocol: "tcp", url: `https://9090-alpha.${BASE_DOMAIN}` }
        ])
        // The label the session Service selects its Pod by.
        expect(pod.metadata?.labels?.[LABEL_SESSION_ID]).toBe("alpha")
        const ingress = yield* Effect.orDie(sc.cluster.store.get(IngressResource, sc.namespace, "telo-run-alpha"))
        expect(ingress.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Pod", name: "alpha-pod" })
        expect(ingress.metadata?.ownerReferences?.[0]?.uid).toBe(pod.metadata?.uid)
      }),
    { timeout: 30_000 }
  )

  it.scopedLive("takes the ports from the annotation over the declared ones", () =>
    Effect.gen(function*() {
      const { sc } = yield* withController({ mode: "gateway" })
      yield* create(
        sc.cluster,
        sc.namespace,
        sessionPod("beta-pod", "beta", { ports: [80], annotation: "8080,5000/udp" })
      )
      yield* eventually(readPod(sc.cluster, sc.namespace, "beta-pod"), (p) => conditionOf(p)?.status === "True")
      const routes = yield* Effect.orDie(sc.cluster.store.list(HttpRouteResource, sc.namespace))
      expect(routes.items.map((r) => r.metadata?.name)).toEqual(["telo-run-beta-8080"])
    }), { timeout: 30_000 })

  it.scopedLive(
    "sets the condition False with the diagnosis code when the IngressClass does not exist",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController({ config: { ingressClassName: "missing" } })
        yield* create(sc.cluster, sc.namespace, sessionPod("gamma-pod", "gamma", { ports: [8080] }))
        const pod = yield* eventually(
          readPod(sc.cluster, sc.namespace, "gamma-pod"),
          (p) => conditionOf(p)?.status === "False"
        )
        expect(conditionOf(pod)?.reason).toBe("IngressClassNotFound")
        expect(conditionOf(pod)?.message).toContain(`8080-gamma.${BASE_DOMAIN}: IngressClassNotFound`)
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "publishes again when the ports change, removing what a dropped port no longer needs",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController({ mode: "gateway" })
        yield* create(sc.cluster, sc.namespace, sessionPod("delta-pod", "delta", { annotation: "8080,9090,7070" }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "delta-pod"), (p) => conditionOf(p)?.status === "True")
        const pod = yield* readPod(sc.cluster, sc.namespace, "delta-pod")
        yield* Effect.orDie(sc.cluster.store.replace(PodResource, sc.namespace, "delta-pod", {
          ...pod,
          metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [PORTS_ANNOTATION]: "9090" } }
        }))
        const names = yield* eventually(
          Effect.map(
            Effect.orDie(sc.cluster.store.list(HttpRouteResource, sc.namespace)),
            (list) => list.items.map((r) => r.metadata?.name)
          ),
          (list) => list.length === 1
        )
        expect(names).toEqual(["telo-run-delta-9090"])
        const after = yield* eventually(
          readPod(sc.cluster, sc.namespace, "delta-pod"),
          (p) => conditionOf(p)?.message === `every host is programmed: 9090-delta.${BASE_DOMAIN}`
        )
        expect(conditionOf(after)?.status).toBe("True")
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "says what is wrong with a Pod's annotation on the Pod, and keeps routing the others",
    () =>
      Effect.gen(function*() {
        const { fiber, sc } = yield* withController()
        yield* create(sc.cluster, sc.namespace, sessionPod("bad-pod", "bad", { annotation: "8080,http" }))
        yield* create(sc.cluster, sc.namespace, sessionPod("good-pod", "good", { ports: [8080] }))
        const bad = yield* eventually(readPod(sc.cluster, sc.namespace, "bad-pod"), (p) => conditionOf(p) !== undefined)
        expect(conditionOf(bad)).toMatchObject({
          status: "False",
          reason: "InvalidPortsAnnotation",
          message:
            `Pod ${sc.namespace}/bad-pod: annotation ${PORTS_ANNOTATION}="8080,http": port "http" is not of the form` +
            ` PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)`
        })
        yield* eventually(readPod(sc.cluster, sc.namespace, "good-pod"), (p) => conditionOf(p)?.status === "True")
        const events = yield* eventually(
          Effect.orDie(sc.cluster.store.list(EventV1Resource, sc.namespace)),
          (list) => list.items.some((e) => e.reason === "InvalidPortsAnnotation")
        )
        expect(events.items.find((e) => e.reason === "InvalidPortsAnnotation")).toMatchObject({
          type: "Warning",
          regarding: { kind: "Pod", name: "bad-pod" }
        })
        expect(fiber.unsafePoll()).toBeNull()
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "routes a session for one Pod at a time, and for the next once the first is gone",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController()
        yield* create(sc.cluster, sc.namespace, sessionPod("first-pod", "shared", { ports: [8080] }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "first-pod"), (p) => conditionOf(p)?.status === "True")
        yield* create(sc.cluster, sc.namespace, sessionPod("second-pod", "shared", { ports: [8080] }))
        const second = yield* eventually(
          readPod(sc.cluster, sc.namespace, "second-pod"),
          (p) => conditionOf(p) !== undefined
        )
        expect(conditionOf(second)).toMatchObject({ status: "False", reason: "SessionTaken" })
        expect(conditionOf(second)?.message).toContain("first-pod")

        yield* Effect.orDie(sc.cluster.store.delete(PodResource, sc.namespace, "first-pod"))
        yield* eventually(readPod(sc.cluster, sc.namespace, "second-pod"), (p) => conditionOf(p)?.status === "True")
        const ingress = yield* eventually(
          Effect.orDie(sc.cluster.store.get(IngressResource, sc.namespace, "telo-run-shared")),
          (i) => i.metadata?.ownerReferences?.[0]?.name === "second-pod"
        )
        expect(ingress.metadata?.ownerReferences).toHaveLength(1)
      }),
    { timeout: 30_000 }
  )

  /** Changes a Pod's labels as `kubectl label --overwrite` would; `undefined` removes one. */
  const relabel = (
    sc: SessionCluster.SessionCluster,
    name: string,
    labels: Readonly<Record<string, string | undefined>>
  ) =>
    Effect.gen(function*() {
      const pod = yield* readPod(sc.cluster, sc.namespace, name)
      const next = { ...pod.metadata?.labels, ...labels }
      for (const [key, value] of Object.entries(labels)) if (value === undefined) delete next[key]
      yield* Effect.orDie(sc.cluster.store.replace(PodResource, sc.namespace, name, {
        ...pod,
        metadata: { ...pod.metadata, labels: next as Record<string, string> }
      }))
    })

  const objectNames = (sc: SessionCluster.SessionCluster) =>
    Effect.gen(function*() {
      const services = yield* Effect.orDie(sc.cluster.store.list(ServiceResource, sc.namespace))
      const ingresses = yield* Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace))
      // A list's items carry no kind.
      return [
        ...services.items.map((o) => `Service/${o.metadata?.name}`),
        ...ingresses.items.map((o) => `Ingress/${o.metadata?.name}`)
      ].sort()
    })

  it.scopedLive(
    "forgets the old session of a Pod relabelled to another id, and routes the new one (a warm pool's reuse)",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController()
        yield* create(sc.cluster, sc.namespace, sessionPod("pool-pod", "aaa", { ports: [8080] }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "pool-pod"), (p) => conditionOf(p)?.status === "True")
        yield* relabel(sc, "pool-pod", { [SESSION_LABEL]: "bbb" })
        const pod = yield* eventually(
          readPod(sc.cluster, sc.namespace, "pool-pod"),
          (p) => conditionOf(p)?.status === "True" && conditionOf(p)?.message?.includes("bbb") === true
        )
        expect(pod.metadata?.labels?.[LABEL_SESSION_ID]).toBe("bbb")
        expect(pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION]).toContain(`8080-bbb.${BASE_DOMAIN}`)
        // Whoever held session aaa's URL no longer reaches this Pod: its objects are gone.
        expect(yield* eventually(objectNames(sc), (names) => names.length === 2)).toEqual([
          "Ingress/telo-run-bbb",
          "Service/telo-run-bbb"
        ])
        // And the id is free: a new Pod of session aaa is routed, not told it is taken.
        yield* create(sc.cluster, sc.namespace, sessionPod("next-pod", "aaa", { ports: [8080] }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "next-pod"), (p) => conditionOf(p)?.status === "True")
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "unpublishes a Pod whose session label is taken off, unmarks it, and says so on its condition",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController()
        yield* create(sc.cluster, sc.namespace, sessionPod("kept-pod", "kept", { ports: [8080] }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "kept-pod"), (p) => conditionOf(p)?.status === "True")
        yield* relabel(sc, "kept-pod", { [SESSION_LABEL]: undefined })
        const pod = yield* eventually(
          readPod(sc.cluster, sc.namespace, "kept-pod"),
          (p) => conditionOf(p)?.status === "False" && p.metadata?.labels?.[LABEL_SESSION_ID] === undefined
        )
        expect(conditionOf(pod)).toMatchObject({ reason: "SessionLabelRemoved" })
        expect(conditionOf(pod)?.message).toContain(`the label ${SESSION_LABEL} was removed: session kept`)
        expect(pod.metadata?.annotations?.[ENDPOINTS_ANNOTATION]).toBeUndefined()
        expect(yield* eventually(objectNames(sc), (names) => names.length === 0)).toEqual([])
        // A later Pod of the session has the Service to itself.
        yield* create(sc.cluster, sc.namespace, sessionPod("later-pod", "kept", { ports: [8080] }))
        yield* eventually(readPod(sc.cluster, sc.namespace, "later-pod"), (p) => conditionOf(p)?.status === "True")
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "of two Pods with one id, keeps it with the one that carries its mark, whichever is listed first",
    () =>
      Effect.gen(function*() {
        // b-pod was routed before the controller started (a restart, a handover); a-pod is listed first.
        const b = sessionPod("b-pod", "twin", { ports: [8080] })
        const { sc } = yield* withController({
          before: (sc) =>
            Effect.zipRight(
              create(sc.cluster, sc.namespace, sessionPod("a-pod", "twin", { ports: [8080] })),
              create(sc.cluster, sc.namespace, {
                ...b,
                metadata: { ...b.metadata, labels: { ...b.metadata?.labels, [LABEL_SESSION_ID]: "twin" } }
              })
            )
        })
        yield* eventually(readPod(sc.cluster, sc.namespace, "b-pod"), (p) => conditionOf(p)?.status === "True")
        const a = yield* eventually(readPod(sc.cluster, sc.namespace, "a-pod"), (p) => conditionOf(p) !== undefined)
        expect(conditionOf(a)).toMatchObject({ status: "False", reason: "SessionTaken" })
        expect(conditionOf(a)?.message).toContain("b-pod")
        const ingress = yield* Effect.orDie(sc.cluster.store.get(IngressResource, sc.namespace, "telo-run-twin"))
        expect(ingress.metadata?.ownerReferences?.map((o) => o.name)).toEqual(["b-pod"])
        // A Pod made from the routed one's manifest, its mark copied, loses the mark: the
        // session Service would select it too.
        const copy = yield* readPod(sc.cluster, sc.namespace, "b-pod")
        yield* create(sc.cluster, sc.namespace, {
          ...sessionPod("c-pod", "twin", { ports: [8080] }),
          metadata: { name: "c-pod", labels: copy.metadata?.labels ?? {} }
        })
        const c = yield* eventually(
          readPod(sc.cluster, sc.namespace, "c-pod"),
          (p) => conditionOf(p) !== undefined && p.metadata?.labels?.[LABEL_SESSION_ID] === undefined
        )
        expect(conditionOf(c)).toMatchObject({ status: "False", reason: "SessionTaken" })
        expect(conditionOf(yield* readPod(sc.cluster, sc.namespace, "b-pod"))?.status).toBe("True")
      }),
    { timeout: 30_000 }
  )

  it.scopedLive("puts back a route deleted under a live Pod", () =>
    Effect.gen(function*() {
      const { sc } = yield* withController({ mode: "gateway" })
      yield* create(sc.cluster, sc.namespace, sessionPod("eps-pod", "eps", { ports: [8080] }))
      yield* eventually(readPod(sc.cluster, sc.namespace, "eps-pod"), (p) => conditionOf(p)?.status === "True")
      const before = yield* Effect.orDie(sc.cluster.store.get(HttpRouteResource, sc.namespace, "telo-run-eps-8080"))
      yield* Effect.orDie(sc.cluster.store.delete(HttpRouteResource, sc.namespace, "telo-run-eps-8080"))
      const after = yield* eventually(
        Effect.either(sc.cluster.store.get(HttpRouteResource, sc.namespace, "telo-run-eps-8080")),
        (read) => read._tag === "Right" && read.right.metadata?.uid !== before.metadata?.uid
      )
      expect(after._tag).toBe("Right")
      yield* eventually(readPod(sc.cluster, sc.namespace, "eps-pod"), (p) => conditionOf(p)?.status === "True")
    }), { timeout: 30_000 })

  it.scopedLive("puts its condition back when another writer overwrites it", () =>
    Effect.gen(function*() {
      const { sc } = yield* withController()
      yield* create(sc.cluster, sc.namespace, sessionPod("theta-pod", "theta", { ports: [8080] }))
      const routed = yield* eventually(
        readPod(sc.cluster, sc.namespace, "theta-pod"),
        (p) => conditionOf(p)?.status === "True"
      )
      // What a request of a replica gone since, landing late, would leave.
      const stale: PodCondition = {
        type: ROUTES_CONDITION,
        status: "Unknown",
        reason: "RoutesPending",
        message: "0 of 1 hosts programmed"
      }
      const others = routed.status?.conditions?.filter((c) => c.type !== ROUTES_CONDITION) ?? []
      yield* Effect.orDie(sc.cluster.store.replaceStatus(PodResource, sc.namespace, "theta-pod", {
        ...routed,
        status: { ...routed.status, conditions: [...others, stale] }
      }))
      const back = yield* eventually(
        readPod(sc.cluster, sc.namespace, "theta-pod"),
        (p) => conditionOf(p)?.status === "True"
      )
      expect(conditionOf(back)).toEqual(conditionOf(routed))
    }), { timeout: 30_000 })

  it.scopedLive("stops routing a deleted Pod, whose objects the cluster collects", () =>
    Effect.gen(function*() {
      const { sc } = yield* withController({ gc: true })
      yield* create(sc.cluster, sc.namespace, sessionPod("zeta-pod", "zeta", { ports: [8080] }))
      yield* eventually(readPod(sc.cluster, sc.namespace, "zeta-pod"), (p) => conditionOf(p)?.status === "True")
      yield* Effect.orDie(sc.cluster.store.delete(PodResource, sc.namespace, "zeta-pod"))
      const left = yield* eventually(
        Effect.map(Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace)), (list) => list.items.length),
        (count) => count === 0
      )
      expect(left).toBe(0)
      // Nothing puts the collected objects back.
      yield* Effect.sleep(Duration.millis(500))
      const still = yield* Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace))
      expect(still.items).toEqual([])
    }), { timeout: 30_000 })

  it.scopedLive(
    "with probes on, counts a host only once probes in a row reach the session through it",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController({
          dataPlane: true,
          // The EndpointSlice controller: without it the Service has no ready endpoint to probe.
          gc: true,
          config: (sc) => ({ routeProbe: "http", routeProbeAddress: "127.0.0.1", routeProbePort: sc.dataPlane!.port }),
          controller: { probeSuccesses: 3, probeInterval: Duration.millis(100) }
        })
        const plane = sc.dataPlane!
        yield* create(sc.cluster, sc.namespace, sessionPod("served-pod", "served", { ports: [8080] }))
        yield* Effect.orDie(plane.registerPod(
          { namespace: sc.namespace, name: "served-pod" },
          { host: "127.0.0.1", port: yield* workload }
        ))
        yield* create(sc.cluster, sc.namespace, sessionPod("idle-pod", "idle", { ports: [8080] }))

        const seen = new Set<string>()
        const proven = yield* eventually(
          Effect.tap(readPod(sc.cluster, sc.namespace, "served-pod"), (p) =>
            Effect.sync(() => {
              const c = conditionOf(p)
              if (c !== undefined) seen.add(`${c.status} ${c.reason}`)
            })),
          (p) => conditionOf(p)?.status === "True"
        )
        expect(conditionOf(proven)?.reason).toBe("RoutesProgrammed")
        // Programmed, then three probes: it was Unknown while they ran.
        expect([...seen]).toContain("Unknown ProbePending")

        const idle = yield* eventually(
          readPod(sc.cluster, sc.namespace, "idle-pod"),
          (p) => conditionOf(p)?.reason === "ProbePending" && (conditionOf(p)?.message ?? "").includes("503")
        )
        expect(conditionOf(idle)).toMatchObject({ status: "Unknown", reason: "ProbePending" })
        expect(conditionOf(idle)?.message).toContain(
          `8080-idle.${BASE_DOMAIN}: 0 of 3 probes in a row reached it; the last:`
        )
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "keeps a Pod that gates on the condition out of Ready until its routes are programmed",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController({ dataPlane: true, gc: true, controllerDelay: Duration.seconds(1) })
        const gated: Pod = {
          ...sessionPod("gated-pod", "gated", { ports: [8080] }),
          spec: {
            ...sessionPod("gated-pod", "gated", { ports: [8080] }).spec!,
            readinessGates: [{ conditionType: ROUTES_CONDITION }]
          }
        }
        yield* create(sc.cluster, sc.namespace, gated)
        yield* Effect.orDie(sc.dataPlane!.registerPod(
          { namespace: sc.namespace, name: "gated-pod" },
          { host: "127.0.0.1", port: yield* workload }
        ))
        const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === "Ready")
        // The containers are ready, the routes are not: the gate holds Ready False.
        const held = yield* eventually(
          readPod(sc.cluster, sc.namespace, "gated-pod"),
          (p) => ready(p)?.reason === "ReadinessGatesNotReady"
        )
        expect(ready(held)?.status).toBe("False")
        expect(conditionOf(held)?.status).not.toBe("True")
        const open = yield* eventually(
          readPod(sc.cluster, sc.namespace, "gated-pod"),
          (p) => ready(p)?.status === "True"
        )
        expect(conditionOf(open)?.status).toBe("True")
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "with shards, routes only the sessions of its own shard and leaves the others untouched",
    () =>
      Effect.gen(function*() {
        const { sc } = yield* withController({ controller: { shard: { count: 2, index: 0 } } })
        const ids = ["s-one", "s-two", "s-three", "s-four", "s-five", "s-six"]
        const mine = ids.filter((id) => shardOf(id, 2) === 0)
        expect(mine.length).toBeGreaterThan(0)
        expect(mine.length).toBeLessThan(ids.length)
        for (const id of ids) yield* create(sc.cluster, sc.namespace, sessionPod(`${id}-pod`, id, { ports: [8080] }))
        for (const id of mine) {
          yield* eventually(readPod(sc.cluster, sc.namespace, `${id}-pod`), (p) => conditionOf(p)?.status === "True")
        }
        // Another shard's Pods get nothing from this one: no condition, no objects.
        yield* Effect.sleep(Duration.millis(300))
        for (const id of ids.filter((id) => !mine.includes(id))) {
          expect(conditionOf(yield* readPod(sc.cluster, sc.namespace, `${id}-pod`))).toBeUndefined()
        }
        const ingresses = yield* Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace))
        expect(ingresses.items.map((i) => i.metadata?.name).sort()).toEqual(mine.map((id) => `telo-run-${id}`).sort())
      }),
    { timeout: 30_000 }
  )
})
