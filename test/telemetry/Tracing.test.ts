/**
 * The spans of one session over HTTP against LocalCluster, collected in memory: the
 * publish with its API requests under it, a span per host from publish to verdict
 * with an event per state change, and the unpublish with its own requests.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Effect, Layer, Metric, Stream } from "effect"
import type { PortMapping } from "../../src/domain/Session.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { publishSession, unpublishSession } from "../../src/runner/SessionRunner.js"
import { hosts } from "../../src/services/Telemetry.js"
import { type RecordedSpan, recordingTracer } from "../support/RecordingTracer.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer, startCluster } from "../support/RouterHarness.js"

const sessionId = "tr4ced"
const ports: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
]
const spec = { sessionId, podName: `telo-run-${sessionId}`, podUid: "7d1c7c43-5b7e-4c3e-9d59-2b5f7f0c1a11", ports }
const host = (port: number) => `${port}-${sessionId}.${BASE_DOMAIN}`
const hostsIn = (state: string) =>
  Effect.map(Metric.value(hosts.pipe(Metric.tagged("mode", "ingress"), Metric.tagged("state", state))), (g) => g.value)

/** What a request span says, in a form a test compares whole. */
const request = (span: RecordedSpan) => ({
  name: span.name,
  method: span.attributes.get("http.request.method"),
  resource: span.attributes.get("k8s.resource"),
  dryRun: span.attributes.get("k8s.dry_run") === true,
  status: span.attributes.get("http.response.status_code"),
  retries: span.attributes.get("http.request.resend_count"),
  kind: span.kind
})

describe("tracing", () => {
  it.live("traces a session's publish, its API requests, each host until its verdict, and its unpublish", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      const namespace = yield* Effect.scoped(
        Effect.gen(function*() {
          const sc = yield* startCluster({ gateway: false })
          // The Ingress's first write (its dry run) is refused once and sent again.
          yield* sc.cluster.faults.add({
            resource: "ingresses",
            verbs: ["patch"],
            action: Fault.respond(503),
            times: 1
          })
          const layers = SessionRouting.layerIngress.pipe(
            Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
            Layer.provideMerge(routerConfigLayer(sc, { routePollIntervalMs: 50 }))
          )
          yield* Effect.scoped(
            Effect.gen(function*() {
              const session = yield* publishSession(spec)
              yield* Stream.runDrain(session.events)
              // Settled, and still published while the session's scope is open.
              expect(yield* hostsIn("programmed")).toBe(2)
              yield* unpublishSession(sessionId)
            })
          ).pipe(Effect.provide(layers), recorder.traced)
          expect(yield* hostsIn("programmed")).toBe(0)
          return sc.namespace
        })
      )

      const [publish, ...otherPublishes] = recorder.named("session-routing.publish")
      expect(otherPublishes).toEqual([])
      expect(publish!.parentId).toBeUndefined()
      expect(publish!.ended).toBe("ok")
      expect(Object.fromEntries(publish!.attributes)).toEqual({
        "session.id": sessionId,
        "session.port_count": 3,
        "session.host_count": 2,
        "session_routing.mode": "ingress",
        "k8s.namespace.name": namespace
      })

      // Every write is checked by a dry run first; each API call is a client span under
      // the publish, with the server's last answer (201: the objects are new) and resends.
      const writes = recorder.childrenOf(publish!).filter((span) => span.name === "kube.apply").map(request)
      expect(writes).toEqual(
        [true, false].flatMap((dryRun) =>
          ["services", "ingresses.networking.k8s.io"].map((resource) => ({
            name: "kube.apply",
            method: "PATCH",
            resource,
            dryRun,
            status: 201,
            retries: dryRun && resource !== "services" ? 1 : 0,
            kind: "client"
          }))
        )
      )
      for (const span of recorder.childrenOf(publish!).filter((span) => span.name.startsWith("kube."))) {
        expect(span.attributes.get("k8s.namespace.name")).toBe(namespace)
        expect(span.traceId).toBe(publish!.traceId)
        expect(span.ended).toBe("ok")
      }

      // One span per routed host (the udp port has none), from publish to its verdict.
      const hosts = recorder.named("session-routing.host")
      expect(
        hosts.map((span) => ({
          parent: span.parentId,
          host: span.attributes.get("session.host"),
          port: span.attributes.get("session.port"),
          state: span.attributes.get("session_routing.route.state"),
          events: span.events.map((event) => event.name),
          ended: span.ended
        }))
      ).toEqual([8080, 9090].map((port) => ({
        parent: publish!.spanId,
        host: host(port),
        port,
        state: "programmed",
        events: ["pending", "programmed"],
        ended: "ok"
      })))

      // The shared status watch outlives this session: its connection is a trace of its own.
      const watches = recorder.named("kube.watch")
      expect(watches.length).toBeGreaterThan(0)
      expect(watches.map((span) => span.parentId)).toEqual(watches.map(() => undefined))

      const [unpublish, ...otherUnpublishes] = recorder.named("session-routing.unpublish")
      expect(otherUnpublishes).toEqual([])
      expect(unpublish!.parentId).toBeUndefined()
      expect(Object.fromEntries(unpublish!.attributes)).toEqual({
        "session.id": sessionId,
        "session_routing.mode": "ingress"
      })
      const removals = recorder.childrenOf(unpublish!).map(request)
      expect(removals.filter((span) => span.name === "kube.delete").map((span) => span.resource).toSorted()).toEqual([
        "ingresses.networking.k8s.io",
        "services"
      ])
    }))
})
