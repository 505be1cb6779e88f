/**
 * The local cluster's apply throughput: server-side applies of session objects
 * (each session's Service and its HTTPRoutes, as the gateway router writes them)
 * over HTTP through the live client, many in flight, against LocalCluster in its own
 * process. Reports applies per second and the cluster process's CPU per apply.
 */
import * as k8s from "@kubernetes/client-node"
import { Clock, Effect } from "effect"
import { buildSessionObjects, type ManifestSettings } from "../src/domain/Manifests.js"
import type { KubeObject } from "../src/domain/Objects.js"
import { HttpRouteResource, type ResourceType, ServiceResource } from "../src/domain/Resources.js"
import { KubeClientLive } from "../src/layers/KubeClientLive.js"
import { KubeClient } from "../src/services/KubeClient.js"
import { clusterProcess } from "./health.js"

/** Sessions applied; each is a Service and three HTTPRoutes. */
const SESSIONS = 500
/** Applies in flight at once, as a runner publishing a burst of sessions has. */
const IN_FLIGHT = 32

export interface ApplyThroughput {
  readonly applies: number
  readonly perSecond: number
  readonly clusterCpuPerApplyMs: number
}

/** The cluster process's CPU so far (user + system), ms, from its /metrics. */
const clusterCpuMs = (server: string) =>
  Effect.promise(async () => {
    const text = await (await fetch(`${server}/metrics`)).text()
    const match = /^process_cpu_seconds_total\s+([0-9.e+]+)$/m.exec(text)
    return match === null ? Number.NaN : Number(match[1]) * 1_000
  })

export const applyThroughput = (nodeFlags: ReadonlyArray<string> = []): Effect.Effect<ApplyThroughput> =>
  Effect.scoped(
    Effect.gen(function*() {
      const { info } = yield* clusterProcess(new Map(), { nodeFlags })
      const kc = new k8s.KubeConfig()
      kc.loadFromString(info.kubeconfig)
      const settings: ManifestSettings = {
        sessionNamespace: info.namespace,
        managedBy: "session-routing-bench",
        baseDomain: info.baseDomain,
        gateway: info.gateway
      }
      const objects = Array.from({ length: SESSIONS }, (_, i) =>
        buildSessionObjects("gateway", settings, {
          sessionId: `a${i}`,
          podName: `telo-run-a${i}`,
          podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          ports: [8080, 8081, 8082].map((port) => ({ port, protocol: "tcp" as const }))
        })).flat()
      return yield* Effect.gen(function*() {
        const kube = yield* KubeClient
        const apply = (object: KubeObject) =>
          object.kind === "Service"
            ? kube.apply(ServiceResource as ResourceType<KubeObject>, object)
            : kube.apply(HttpRouteResource as ResourceType<KubeObject>, object)
        // One warm-up round trip: connections and the first request's setup are not the cluster's speed.
        yield* apply(objects[0]!)
        const cpuBefore = yield* clusterCpuMs(info.server)
        const start = yield* Clock.currentTimeMillis
        yield* Effect.forEach(objects.slice(1), apply, { concurrency: IN_FLIGHT, discard: true })
        const ms = (yield* Clock.currentTimeMillis) - start
        const cpu = (yield* clusterCpuMs(info.server)) - cpuBefore
        const applies = objects.length - 1
        return { applies, perSecond: (applies / ms) * 1_000, clusterCpuPerApplyMs: cpu / applies }
      }).pipe(Effect.provide(KubeClientLive.layerFromKubeConfig(kc)), Effect.orDie)
    })
  )
