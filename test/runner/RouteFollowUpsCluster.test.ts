/**
 * A session's Events and probes end to end, over HTTP with the live client against
 * LocalCluster (controllers, the EndpointSlice controller and the data plane, all on
 * 127.0.0.1): a host programmed and served, one programmed whose Pod serves nothing
 * (503, no ready endpoint). What kubectl shows of them is in RouteFollowUpsKubectl.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { createSessionPod, SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Layer } from "effect"
import { EventV1Resource } from "../../src/domain/Resources.js"
import { judgeAnswer } from "../../src/domain/RouteProbe.js"
import { httpProbe } from "../../src/layers/routeProbe/HttpProbe.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { publishSession } from "../../src/runner/SessionRunner.js"
import { publishProbed, startCluster, workload } from "../support/ProbedSession.js"
import { BASE_DOMAIN, kubeClientLayer, routerConfigLayer } from "../support/RouterHarness.js"

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

  it.scopedLive(
    "records the publish of a session whose runner stops following it before any verdict",
    () =>
      Effect.gen(function*() {
        // Controllers that take a minute: no verdict comes while the session is followed.
        const sc = yield* SessionCluster.make({ baseDomain: BASE_DOMAIN, ingress: { delay: Duration.minutes(1) } })
          .pipe(
            Effect.orDie
          )
        const pod = yield* Effect.orDie(
          createSessionPod(sc.cluster.store, { namespace: sc.namespace, sessionId: "brief", ports: [8080] })
        )
        // Published and left at once, as `publish` without --watch does.
        yield* Effect.scoped(
          publishSession({
            sessionId: "brief",
            podName: pod.name,
            podUid: pod.uid,
            ports: [{ port: 8080, protocol: "tcp" }]
          })
        ).pipe(
          Effect.provide(SessionRouting.layerConfig.pipe(
            Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
            Layer.provideMerge(routerConfigLayer(sc))
          )),
          Effect.orDie
        )
        const events = yield* Effect.orDie(sc.cluster.store.list(EventV1Resource, sc.namespace))
        expect(events.items.map((e) => [e.reason, e.regarding?.name, e.note])).toEqual([[
          "RoutesPublished",
          pod.name,
          `published 1 host of session brief via ingress: 8080-brief.${BASE_DOMAIN}; none settled after 0.0 s`
        ]])
      }),
    { timeout: 30_000 }
  )
})
