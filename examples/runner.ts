/**
 * How an Effect runner embeds session routing: provide a KubeClient, RouterConfig and
 * the SessionRouting layer, publish a session, and consume its events. The README shows
 * this file; a test runs it, so it cannot rot.
 */
import { Console, Effect, Layer, Stream } from "effect"
import { KubeClientLive, publishSession, RouterConfigLive, type SessionEvent, SessionRouting } from "session-routing"

/** Publishes one session and logs every event until each host is settled. */
export const program = Effect.scoped(
  Effect.gen(function*() {
    const session = yield* publishSession({
      sessionId: "hzyayvabgyvz",
      podName: "telo-run-hzyayvabgyvz",
      podUid: "3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13",
      ports: [
        { port: 8080, protocol: "tcp" },
        { port: 5000, protocol: "udp" }
      ]
    })
    yield* Console.log(`endpoints: ${session.endpoints.map((e) => e.url ?? `${e.port}/${e.protocol}`).join(", ")}`)
    // The stream ends once every host is programmed or unprogrammed.
    return yield* Stream.runCollect(session.events.pipe(Stream.tap((event) => Console.log(JSON.stringify(event)))))
  })
).pipe(Effect.map((events): ReadonlyArray<SessionEvent> => [...events]))

/**
 * The layers a runner provides: the routing the environment names (router, status
 * source, Events, probes), over the live client (kubeconfig from the default chain) and the configuration from the environment.
 */
export const RoutingLive = SessionRouting.layerConfig.pipe(
  Layer.provideMerge(KubeClientLive.layerConfig()),
  Layer.provideMerge(RouterConfigLive.layer)
)

/** What a runner's main would do. */
export const main = program.pipe(Effect.provide(RoutingLive))
