/**
 * The probe's schedule and its address, on TestClock with scripted answers; and the
 * live request through LocalCluster's data plane on 127.0.0.1: a host programmed and
 * served, one programmed with no ready endpoint (503), one the data plane does not route (404).
 */
import { describe, expect, it } from "@effect/vitest"
import { LocalCluster, makeCertificateAuthority } from "@session-routing/local-cluster"
import { Duration, Effect, Fiber, Layer, Ref, TestClock } from "effect"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import type { Ingress, Namespace } from "../../src/domain/Objects.js"
import { IngressResource, NamespaceResource } from "../../src/domain/Resources.js"
import { judgeAnswer, type ProbeAnswer, type ProbeTarget } from "../../src/domain/RouteProbe.js"
import { httpProbe } from "../../src/layers/routeProbe/HttpProbe.js"
import * as RouteProbeLive from "../../src/layers/RouteProbeLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { loopbackServer } from "../support/LoopbackServer.js"

const NS = "telo-sessions"
const route = { host: "8080-s1.sessions.localtest.me", port: 8080 }

/** A probe whose requests answer `answers` in turn (the last one repeats), and the targets it was asked for. */
const scripted = (answers: ReadonlyArray<ProbeAnswer>, config: RouterConfigLive.RouterConfigValues) =>
  Effect.gen(function*() {
    const cluster = yield* LocalCluster.makeInMemory()
    yield* Effect.orDie(cluster.store.create(NamespaceResource, undefined, { metadata: { name: NS } } as Namespace))
    const asked = yield* Ref.make<ReadonlyArray<ProbeTarget>>([])
    const request = (target: ProbeTarget) =>
      Ref.modify(asked, (seen) => [answers[Math.min(seen.length, answers.length - 1)]!, [...seen, target]])
    const probe = yield* RouteProbeLive.makeWith(request).pipe(
      Effect.provide(Layer.merge(
        LocalCluster.layerKubeClient(cluster),
        Layer.orDie(
          RouterConfigLive.layerFrom({ sessionNamespace: NS, baseDomain: "sessions.localtest.me", ...config })
        )
      ))
    )
    return { cluster, probe, asked: Ref.get(asked) }
  })

describe("RouteProbeLive on TestClock", () => {
  it.scoped("asks again a second later while the routing layer still answers 404, and reports the answer that served", () =>
    Effect.gen(function*() {
      const { probe, asked } = yield* scripted(
        [{ _tag: "Answered", status: 404 }, { _tag: "Answered", status: 200 }],
        { routeProbe: "http", routeProbeAddress: "127.0.0.1" }
      )
      const fiber = yield* Effect.fork(probe.probe("s1", route))
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* Fiber.join(fiber)).toEqual({ ok: true, status: 200 })
      expect(yield* asked).toEqual([
        { scheme: "http", host: route.host, address: "127.0.0.1", port: 80, addressFrom: "config" },
        { scheme: "http", host: route.host, address: "127.0.0.1", port: 80, addressFrom: "config" }
      ])
    }))

  it.scoped("stops after five attempts and reports the last failure", () =>
    Effect.gen(function*() {
      const { probe, asked } = yield* scripted([{ _tag: "Answered", status: 503 }], {
        routeProbe: "https",
        routeProbeAddress: "127.0.0.1",
        routeProbePort: 8443
      })
      const fiber = yield* Effect.fork(probe.probe("s1", route))
      yield* TestClock.adjust(Duration.seconds(10))
      const outcome = yield* Fiber.join(fiber)
      expect(outcome).toMatchObject({ ok: false, status: 503 })
      expect(outcome.reason).toMatch(/^https:\/\/8080-s1\.sessions\.localtest\.me via 127\.0\.0\.1:8443: 503: /)
      expect(yield* asked).toHaveLength(5)
    }))

  it.scoped("reads the address the Ingress controller published, and says so when there is none", () =>
    Effect.gen(function*() {
      const { cluster, probe, asked } = yield* scripted([{ _tag: "Answered", status: 200 }], { routeProbe: "http" })
      const missing = yield* probe.probe("s1", route)
      expect(missing.ok).toBe(false)
      expect(missing.reason).toMatch(
        /^could not read the published address \(Ingress telo-sessions\/telo-run-s1 status\.loadBalancer\.ingress\): /
      )
      const ingress: Ingress = {
        metadata: { name: "telo-run-s1" },
        spec: {
          rules: [{
            host: route.host,
            http: {
              paths: [{
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "telo-run-s1", port: { number: 8080 } } }
              }]
            }
          }]
        }
      }
      const created = yield* Effect.orDie(cluster.store.create(IngressResource, NS, ingress))
      expect((yield* probe.probe("s1", route)).reason).toBe(
        "the routing layer published no address (Ingress telo-sessions/telo-run-s1 status.loadBalancer.ingress is empty): set SESSION_ROUTE_PROBE_ADDRESS to where it serves"
      )
      yield* Effect.orDie(
        cluster.store.replaceStatus(IngressResource, NS, "telo-run-s1", {
          ...created,
          status: { loadBalancer: { ingress: [{ ip: "127.0.0.2" }] } }
        })
      )
      expect(yield* probe.probe("s1", route)).toEqual({ ok: true, status: 200 })
      expect((yield* asked).map((t) => t.address)).toEqual(["127.0.0.2"])
    }))
})

describe("the live probe request", () => {
  it.live("reports a refused connection on 127.0.0.1", () =>
    Effect.gen(function*() {
      // Port 1 on loopback: nothing listens there on a test machine.
      const refused = yield* httpProbe(
        { scheme: "http", host: route.host, address: "127.0.0.1", port: 1 },
        Duration.seconds(2)
      )
      expect(refused).toEqual({ _tag: "Refused" })
    }))

  it.live("names the certificate's names when it does not cover the host, and sends it no request, over TLS on 127.0.0.1", () =>
    Effect.scoped(Effect.gen(function*() {
      let requests = 0
      const ca = yield* makeCertificateAuthority("probe-test-ca")
      const serving = yield* ca.serving
      const port = yield* Effect.acquireRelease(
        Effect.async<Https.Server>((resume) => {
          const server = Https.createServer({ cert: serving.cert, key: serving.key }, (_, res) => {
            requests += 1
            res.end("hi")
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.sync(() => {
            server.closeAllConnections()
            server.close()
          })
      ).pipe(Effect.map((server) => (server.address() as AddressInfo).port))
      const answer = yield* httpProbe(
        { scheme: "https", host: route.host, address: "127.0.0.1", port },
        Duration.seconds(5)
      )
      expect(answer._tag).toBe("Tls")
      // Both failures: a CA the system does not trust, and names that do not cover the host.
      expect(answer._tag === "Tls" && answer.message).toMatch(/; Hostname\/IP does not match certificate.s altnames/)
      expect(answer._tag === "Tls" && answer.certificateNames).toEqual(
        expect.arrayContaining(["127.0.0.1", "localhost"])
      )
      // Checked after the handshake, before the request: the server never saw one.
      expect(requests).toBe(0)
    })))

  it.live("reads a workload's endless answer only to its status line, and closes the connection", () =>
    Effect.gen(function*() {
      const written = { bytes: 0, closed: false }
      const { port } = yield* loopbackServer((_, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.on("close", () => (written.closed = true))
        const chunk = Buffer.alloc(64 * 1024, "z")
        const pump = () => {
          while (!written.closed) {
            written.bytes += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
        }
        pump()
      })
      const answer = yield* httpProbe(
        { scheme: "http", host: route.host, address: "127.0.0.1", port },
        Duration.seconds(5)
      )
      expect(answer).toEqual({ _tag: "Answered", status: 200 })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(written.closed).toBe(true)
      expect(written.bytes).toBeLessThan(16 * 1024 * 1024)
    }).pipe(Effect.scoped))

  it.live("never connects to a loopback, link-local or metadata address a status names", () =>
    Effect.gen(function*() {
      let connections = 0
      const { port, server } = yield* loopbackServer((_, res) => res.end("ok"))
      server.on("connection", () => (connections += 1))
      const fromStatus = (address: string) =>
        httpProbe({ scheme: "http", host: route.host, address, port, addressFrom: "status" }, Duration.seconds(2))
      expect(yield* fromStatus("127.0.0.1")).toEqual({
        _tag: "Disallowed",
        address: "127.0.0.1",
        why: "a loopback address"
      })
      expect((yield* fromStatus("localhost"))._tag).toBe("Disallowed")
      expect((yield* fromStatus("::ffff:127.0.0.1"))._tag).toBe("Disallowed")
      expect(yield* fromStatus("169.254.169.254")).toEqual({
        _tag: "Disallowed",
        address: "169.254.169.254",
        why: "a link-local address (cloud metadata services live there)"
      })
      expect((yield* fromStatus("fe80::1"))._tag).toBe("Disallowed")
      expect(connections).toBe(0)
      // Named by the operator, the same loopback address is probed.
      expect(
        yield* httpProbe(
          { scheme: "http", host: route.host, address: "127.0.0.1", port, addressFrom: "config" },
          Duration.seconds(2)
        )
      ).toEqual({ _tag: "Answered", status: 200 })
    }).pipe(Effect.scoped))

  it("says why an address from a status was not probed, and how to probe it anyway", () => {
    const target = { scheme: "http", host: route.host, address: "127.0.0.1", port: 80, addressFrom: "status" } as const
    expect(judgeAnswer(target, { _tag: "Disallowed", address: "127.0.0.1", why: "a loopback address" }).reason).toBe(
      `http://${route.host} via 127.0.0.1:80: not probed: 127.0.0.1 is a loopback address, and an address taken ` +
        "from a status is never probed there; set SESSION_ROUTE_PROBE_ADDRESS to probe it anyway"
    )
  })
})
