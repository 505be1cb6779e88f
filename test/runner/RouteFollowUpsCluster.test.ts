/**
 * A session's Events and probes end to end, over HTTP with the live client against
 * LocalCluster (controllers, the EndpointSlice controller and the data plane, all on
 * 127.0.0.1): a host programmed and served, one programmed whose Pod serves nothing
 * (503, no ready endpoint), and what `kubectl events` and `kubectl describe pod` show.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Stream } from "effect"
import * as SessionCluster from "../../src/cluster/SessionCluster.js"
import { createSessionPod, type SessionPod } from "../../src/cluster/SessionPods.js"
import { judgeAnswer } from "../../src/domain/RouteProbe.js"
import { httpProbe } from "../../src/layers/internal/HttpProbe.js"
import { SessionRouter } from "../../src/layers/SessionRouterLayers.js"
import { publishSession, type SessionEvent } from "../../src/runner/SessionRunner.js"
import { kubectls, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"
import { loopbackServer } from "../support/LoopbackServer.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer } from "../support/RouterHarness.js"

/** A workload on 127.0.0.1 that answers every request with 200, for the scope; its port. */
const workload = Effect.map(loopbackServer((_, res) => res.end("hello")), (server) => server.port)

/** Publishes one port of `pod`'s session with probes on and returns every event until it settles. */
const publishProbed = (sc: SessionCluster.SessionCluster, pod: SessionPod, sessionId: string) =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* publishSession({
      sessionId,
      podName: pod.name,
      podUid: pod.uid,
      ports: [{ port: 8080, protocol: "tcp" }]
    })
    return yield* Stream.runCollect(session.events)
  })).pipe(
    Effect.provide(SessionRouter.layerConfig.pipe(
      Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
      Layer.provideMerge(routerConfigLayer(sc, {
        routeProbe: "http",
        routeProbeAddress: "127.0.0.1",
        routeProbePort: sc.dataPlane?.port ?? 0
      }))
    )),
    Effect.orDie,
    Effect.map((events): ReadonlyArray<SessionEvent> => [...events])
  )

const startCluster = SessionCluster.make({
  baseDomain: BASE_DOMAIN,
  ingress: { delay: Duration.millis(20) },
  gateway: { delay: Duration.millis(20) },
  controllerManager: true
}).pipe(Effect.orDie)

describe("a session's Events and probes over LocalCluster", () => {
  it.scopedLive(
    "reports a served host ok, a host whose Pod serves nothing 503 with no ready endpoint, and an unrouted host 404",
    () =>
      Effect.gen(function*() {
        const sc = yield* startCluster
        const plane = sc.dataPlane!
        const served = yield* Effect.orDie(
          createSessionPod(sc.cluster.store, { namespace: sc.namespace, sessionId: "served", ports: [8080] })
        )
        yield* Effect.orDie(plane.registerPod(served, { host: "127.0.0.1", port: yield* workload }))
        const idle = yield* Effect.orDie(
          createSessionPod(sc.cluster.store, { namespace: sc.namespace, sessionId: "idle", ports: [8080] })
        )

        const ok = yield* publishProbed(sc, served, "served")
        expect(ok.filter((e) => e.type !== "route" && e.type !== "published")).toEqual([
          { type: "probe", port: 8080, host: `8080-served.${BASE_DOMAIN}`, ok: true, status: 200 }
        ])

        const unserved = yield* publishProbed(sc, idle, "idle")
        const probe = unserved.find((e) => e.type === "probe")
        expect(probe).toMatchObject({
          type: "probe",
          port: 8080,
          host: `8080-idle.${BASE_DOMAIN}`,
          ok: false,
          status: 503
        })
        expect(unserved.find((e) => e.type === "endpoints")).toEqual({
          type: "endpoints",
          port: 8080,
          host: `8080-idle.${BASE_DOMAIN}`,
          ready: false,
          reason:
            "the session Pod is not Ready, or nothing listens on its port 8080: the Service has no ready endpoint for it, so the routing layer has nowhere to send traffic"
        })

        const target = {
          scheme: "http" as const,
          host: `8080-nobody.${BASE_DOMAIN}`,
          address: "127.0.0.1",
          port: plane.port
        }
        const unrouted = judgeAnswer(target, yield* httpProbe(target, Duration.seconds(5)))
        expect(unrouted).toMatchObject({ ok: false, status: 404 })
        expect(unrouted.reason).toContain("404 from the routing layer")
      }),
    { timeout: 30_000 }
  )

  describe("kubectl", () => {
    if (kubectls.length === 0) return requireKubectl()
    const kubectl = kubectls[0]!
    it.scopedLive(
      `${kubectl.name} shows the session's Events with kubectl events and describe pod`,
      () =>
        Effect.gen(function*() {
          const sc = yield* startCluster
          const pod = yield* Effect.orDie(
            createSessionPod(sc.cluster.store, { namespace: sc.namespace, sessionId: "seen", ports: [8080] })
          )
          yield* Effect.orDie(sc.dataPlane!.registerPod(pod, { host: "127.0.0.1", port: yield* workload }))
          yield* publishProbed(sc, pod, "seen")
          const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "session-events-")
          yield* Effect.orDie(sc.cluster.writeKubeconfig(kubeconfig))

          const events = yield* run("events", "-n", sc.namespace, "--for", `pod/${pod.name}`, "-o", "json")
          expect(events.code, events.stderr).toBe(0)
          const items = (JSON.parse(events.stdout) as { items: ReadonlyArray<Record<string, any>> }).items
          // The Pod's own Events (the kubelet's `Started`) are listed too; ours are those of session-routing.
          const ours = items
            .map((e) => [e.type, e.reason, e.involvedObject.name, e.source?.component ?? e.reportingComponent])
            .filter((row) => row[3] === "session-routing")
          expect(ours.sort()).toEqual([
            ["Normal", "RouteProgrammed", pod.name, "session-routing"],
            ["Normal", "RoutesPublished", pod.name, "session-routing"]
          ])

          const described = yield* run("describe", "pod", pod.name, "-n", sc.namespace)
          expect(described.code, described.stderr).toBe(0)
          // describe prints the Events table under its own heading: type, reason, and the note.
          expect(described.stdout).toMatch(
            /Events:[\s\S]*Normal\s+RoutesPublished[\s\S]*published 1 host of session seen via ingress/
          )
          expect(described.stdout).toMatch(
            /Normal\s+RouteProgrammed[\s\S]*8080-seen\.sessions\.localtest\.me \(port 8080\) is programmed/
          )
        }),
      { timeout: 60_000 }
    )
  })
})
