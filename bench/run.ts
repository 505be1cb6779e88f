/**
 * The benchmark: how fast session-routing publishes and reads routes through the live
 * client over HTTP to LocalCluster, how fast a watch delivers changes, and what the
 * cluster's store costs in memory per session; then route health (bench/healthReport.ts),
 * the cluster's apply throughput and the default path at scale (bench/scale.ts). Each
 * measure has a target; the run exits 1 when one is missed. Run with `npm run bench` (loopback only);
 * `BENCH_CLUSTER=real` runs the scale and controller sections against the real control plane of
 * `npm run cluster:real` instead of LocalCluster (bench/realCluster.ts).
 */
import { NodeRuntime } from "@effect/platform-node"
import * as k8s from "@kubernetes/client-node"
import { LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Cause, Chunk, Clock, Duration, Effect, Exit, Fiber, Layer, Stream } from "effect"
import { IngressResource } from "../src/domain/Resources.js"
import type { PublishedRoute } from "../src/domain/Routes.js"
import { KubeClientLive } from "../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../src/layers/RouterConfigLive.js"
import * as SessionRouting from "../src/layers/SessionRouting.js"
import { KubeClient } from "../src/services/KubeClient.js"
import { RouteStatusSource } from "../src/services/RouteStatusSource.js"
import { SessionRouter } from "../src/services/SessionRouter.js"

import { applyThroughput } from "./applies.js"
import { controller } from "./controller.js"
import { footprint } from "./footprint.js"
import { routeHealth } from "./healthReport.js"
import { gc, percentile } from "./processStats.js"
import { benchCluster, scale } from "./scale.js"
import { startup } from "./startup.js"

const SESSIONS = 300
const WATCHED_CHANGES = 300
const MEMORY_SESSIONS = 2_000
/** The local cluster must apply at least this many session objects a second over HTTP. */
const APPLIES_PER_SECOND = 500

interface Result {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly target: number
}

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeNanos
    const value = yield* effect
    const end = yield* Clock.currentTimeNanos
    return { value, ms: Number(end - start) / 1e6 }
  })

const spec = (i: number) => ({
  sessionId: `bench${i}`,
  podName: `telo-run-bench${i}`,
  podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  ports: [
    { port: 8080, protocol: "tcp" as const },
    { port: 9090, protocol: "tcp" as const }
  ]
})

const program = Effect.scoped(
  Effect.gen(function*() {
    const results: Array<Result> = []
    const sc = yield* SessionCluster.make({ ingress: { delay: Duration.millis(10) }, dataPlane: false })
    const kc = new k8s.KubeConfig()
    kc.loadFromString(sc.cluster.kubeconfig())
    const layers = SessionRouting.layerIngress.pipe(
      Layer.provideMerge(KubeClientLive.layerFromKubeConfig(kc)),
      Layer.provideMerge(
        RouterConfigLive.layerFrom({
          sessionNamespace: sc.namespace,
          baseDomain: sc.baseDomain,
          ingressClassName: sc.ingressClassName
        })
      )
    )

    yield* Effect.gen(function*() {
      const router = yield* SessionRouter
      const source = yield* RouteStatusSource
      const kube = yield* KubeClient

      // Publish: one Service and one Ingress per session, in sequence, over HTTP.
      const publishTimes: Array<number> = []
      const published: Array<PublishedRoute> = []
      for (let i = 0; i < SESSIONS; i++) {
        const { ms, value } = yield* timed(router.publish(spec(i)))
        publishTimes.push(ms)
        published.push(value[0]!)
      }
      publishTimes.sort((a, b) => a - b)
      results.push({
        name: "publish p50 (Service + Ingress, HTTP)",
        value: percentile(publishTimes, 0.5),
        unit: "ms",
        target: 25
      })
      results.push({ name: "publish p99", value: percentile(publishTimes, 0.99), unit: "ms", target: 250 })

      // Verdict reads: what the health watch does on every poll.
      const readTimes: Array<number> = []
      for (let i = 0; i < SESSIONS; i++) {
        readTimes.push((yield* timed(source.read(`bench${i}`, published[i]!))).ms)
      }
      readTimes.sort((a, b) => a - b)
      results.push({ name: "verdict read p50 (HTTP)", value: percentile(readTimes, 0.5), unit: "ms", target: 10 })

      // Watch: changes delivered through the live watch stream.
      const watcher = yield* kube
        .watch(IngressResource, sc.namespace, { labelSelector: "bench=watch" })
        .pipe(Stream.take(WATCHED_CHANGES), Stream.runCollect, Effect.fork)
      const { ms: watchMs } = yield* timed(
        Effect.gen(function*() {
          for (let i = 0; i < WATCHED_CHANGES; i++) {
            yield* kube.apply(IngressResource, benchIngress(i, sc.namespace))
          }
          const seen = yield* Fiber.join(watcher)
          if (Chunk.size(seen) !== WATCHED_CHANGES) yield* Effect.dieMessage("the watch lost events")
        })
      )
      results.push({
        name: "watch: apply + deliver one change",
        value: watchMs / WATCHED_CHANGES,
        unit: "ms",
        target: 25
      })
    }).pipe(Effect.provide(layers))

    // Memory: the store's cost per published session (Service + Ingress), through the
    // in-memory face so that only the store's own objects are counted.
    const memory = yield* Effect.scoped(
      Effect.gen(function*() {
        const fresh = yield* SessionCluster.make({ ingress: false, gateway: false, dataPlane: false })
        const routing = SessionRouting.layerIngress.pipe(
          Layer.provide(LocalCluster.layerKubeClient(fresh.cluster)),
          Layer.provide(
            RouterConfigLive.layerFrom({ sessionNamespace: fresh.namespace, baseDomain: fresh.baseDomain })
          )
        )
        // The router is used inside the scope of its layer: released, it could publish nothing.
        return yield* Effect.provide(
          Effect.gen(function*() {
            const { publish } = yield* SessionRouter
            gc()
            const before = process.memoryUsage().heapUsed
            for (let i = 0; i < MEMORY_SESSIONS; i++) yield* publish(spec(i))
            gc()
            return (process.memoryUsage().heapUsed - before) / MEMORY_SESSIONS / 1024
          }),
          routing
        )
      })
    )
    results.push({ name: "store memory per session (in memory, heap)", value: memory, unit: "KiB", target: 64 })
    return results
  })
)

const benchIngress = (i: number, namespace: string) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: `watch-${i}`, namespace, labels: { bench: "watch" } },
  spec: {
    rules: [
      {
        host: `w${i}.bench.localtest.me`,
        http: {
          paths: [{
            path: "/",
            pathType: "Prefix" as const,
            backend: { service: { name: "svc", port: { number: 80 } } }
          }]
        }
      }
    ]
  }
})

/** Prints each measure against its target; true when every one was met. */
const report = (results: ReadonlyArray<Result>): boolean => {
  let met = true
  for (const r of results) {
    const ok = r.value <= r.target
    met &&= ok
    console.log(`${ok ? "ok  " : "MISS"} ${r.name}: ${r.value.toFixed(2)} ${r.unit} (target <= ${r.target} ${r.unit})`)
  }
  return met
}

/** The local cluster's own speed: server-side applies per second over HTTP. */
const clusterApplies = Effect.map(applyThroughput(), (measured) => {
  const ok = measured.perSecond >= APPLIES_PER_SECOND
  console.log(
    `\n${ok ? "ok  " : "MISS"} local cluster: ${
      measured.perSecond.toFixed(0)
    } server-side applies/s over HTTP (target >= ${APPLIES_PER_SECOND}), ` +
      `${measured.applies} session objects, the cluster process at ${
        measured.clusterCpuPerApplyMs.toFixed(2)
      } ms CPU per apply`
  )
  return ok
})

/**
 * The sections `BENCH_ONLY` names (comma-separated: publish, health, applies, scale, startup,
 * footprint, controller), or
 * all of them. Each answers whether its targets were met.
 */
const sections: ReadonlyArray<readonly [string, Effect.Effect<boolean, unknown>]> = [
  ["publish", Effect.map(program, report)],
  ["health", routeHealth],
  ["applies", clusterApplies],
  ["scale", scale],
  ["startup", startup],
  ["footprint", footprint],
  ["controller", controller]
]
const only = (process.env.BENCH_ONLY ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "")
const unknown = only.filter((name) => !sections.some(([section]) => section === name))
if (unknown.length > 0) {
  console.error(
    `BENCH_ONLY names ${unknown.join(", ")}, which is no section; the sections are ${
      sections.map(([name]) => name).join(", ")
    }`
  )
  process.exit(2)
}

const cluster = benchCluster(process.env.BENCH_CLUSTER)
if (cluster._tag === "Left") {
  console.error(cluster.left)
  process.exit(2)
}

Effect.forEach(sections.filter(([name]) => only.length === 0 || only.includes(name)), ([, section]) => section).pipe(
  Effect.map((met) => {
    if (met.includes(false)) process.exitCode = 1
  }),
  // Stopped by an interruption from within (not a signal), the run measured only part of
  // what it should: runMain would end it with status 0.
  Effect.onExit((exit) =>
    Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
      ? Effect.sync(() => {
        console.error("the bench was interrupted before every section ran: its targets are not met")
        process.exitCode = 1
      })
      : Effect.void
  ),
  NodeRuntime.runMain
)
