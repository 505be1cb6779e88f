/**
 * A session published with probes on over LocalCluster (controllers, the EndpointSlice
 * controller and the data plane, all on 127.0.0.1) and the live client, for the tests
 * of a session's Events and probes.
 */
import { SessionCluster, type SessionPod } from "@session-routing/local-cluster"
import { Duration, Effect, Layer, Stream } from "effect"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { publishSession, type SessionEvent } from "../../src/runner/SessionRunner.js"
import { loopbackServer } from "./LoopbackServer.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer } from "./RouterHarness.js"

/** A workload on 127.0.0.1 that answers every request with 200, for the scope; its port. */
export const workload = Effect.map(loopbackServer((_, res) => res.end("hello")), (server) => server.port)

/** Publishes one port of `pod`'s session with probes on and returns every event until it settles. */
export const publishProbed = (sc: SessionCluster.SessionCluster, pod: SessionPod, sessionId: string) =>
  Effect.scoped(Effect.gen(function*() {
    const session = yield* publishSession({
      sessionId,
      podName: pod.name,
      podUid: pod.uid,
      ports: [{ port: 8080, protocol: "tcp" }]
    })
    return yield* Stream.runCollect(session.events)
  })).pipe(
    Effect.provide(SessionRouting.layerConfig.pipe(
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

export const startCluster = SessionCluster.make({
  baseDomain: BASE_DOMAIN,
  ingress: { delay: Duration.millis(20) },
  gateway: { delay: Duration.millis(20) },
  controllerManager: true
}).pipe(Effect.orDie)
