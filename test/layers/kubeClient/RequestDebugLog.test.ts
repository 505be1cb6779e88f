/**
 * At debug level the live client says what it does, over HTTP against LocalCluster: one
 * line per API call (method, path with its query, status, duration, retries), each
 * list and (re)connection of a watch, and which router and status source a run uses.
 * No line carries the kubeconfig's token; at the default level there is none at all.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Fault, LocalCluster } from "@session-routing/local-cluster"
import { Effect, HashMap, Layer, Logger, LogLevel, Schedule, Stream } from "effect"
import type { Ingress } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../../../src/layers/RouterConfigLive.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"

const NS = "debugging"
const TOKEN = "a-token-no-log-line-may-carry"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** Every line logged, with its annotations, at `level` and above. */
const capturing = (level: LogLevel.LogLevel) => {
  const lines: Array<Line> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    lines.push({
      level: logLevel.label,
      message: [message].flat().map(String).join(" "),
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return {
    lines,
    layer: Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(level))
  }
}

const ingress = (name: string): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: NS, labels: { app: "debugged" } },
  spec: {
    rules: [{
      host: `${name}.example.test`,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] }
    }]
  }
})

/** LocalCluster with its kubeconfig's user holding `TOKEN`, and the live client on it. */
const setup = Effect.gen(function*() {
  const cluster = yield* LocalCluster.make({ namespaces: [NS] })
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server: cluster.url, skipTLSVerify: true }],
    users: [{ name: "u", token: TOKEN }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  const client = yield* KubeClientLive.make(kc, {
    retrySchedule: Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
  })
  return { cluster, client, kc }
})

const debugLines = (lines: ReadonlyArray<Line>) => lines.filter((line) => line.level === "DEBUG")

describe("the live client's debug lines", () => {
  it.scopedLive("log each request with its method, path and query, status, duration and retries", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      yield* client.apply(IngressResource, ingress("web"))
      const log = capturing(LogLevel.Debug)
      yield* Effect.provide(
        Effect.gen(function*() {
          yield* client.get(IngressResource, NS, "web")
          yield* client.list(IngressResource, NS, { labelSelector: "app=debugged" })
          // One 503, then the answer: the line says the call was sent again.
          yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.respond(503), times: 1 })
          yield* client.get(IngressResource, NS, "web")
        }),
        log.layer
      )
      const lines = debugLines(log.lines)
      const path = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`
      expect(lines.map((line) => line.message.replace(/ in \d+ ms/, " in N ms"))).toEqual([
        `GET ${path}/web: 200 in N ms`,
        `GET ${path}?limit=500&labelSelector=app%3Ddebugged: 200 in N ms`,
        `GET ${path}/web: 200 in N ms, 1 retry`
      ])
      expect(lines[2]!.annotations).toEqual({
        method: "GET",
        path: `${path}/web`,
        status: "200",
        durationMs: expect.any(Number),
        retries: 1,
        verb: "get",
        resource: "ingresses.networking.k8s.io"
      })
      for (const line of log.lines) expect(JSON.stringify(line)).not.toContain(TOKEN)
    }))

  it.scopedLive("log a call that failed with the status it ended on", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const log = capturing(LogLevel.Debug)
      yield* Effect.provide(Effect.flip(client.get(IngressResource, NS, "missing")), log.layer)
      expect(debugLines(log.lines).map((line) => line.message.replace(/ in \d+ ms/, " in N ms"))).toEqual([
        `GET /apis/networking.k8s.io/v1/namespaces/${NS}/ingresses/missing: 404 NotFound in N ms`
      ])
    }))

  it.scopedLive("log nothing at the default level", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const log = capturing(LogLevel.Info)
      yield* Effect.provide(
        Effect.zipRight(client.apply(IngressResource, ingress("quiet")), client.get(IngressResource, NS, "quiet")),
        log.layer
      )
      expect(log.lines).toEqual([])
    }))

  it.scopedLive("log a watch's list, its connection, and each reconnection with why", () =>
    Effect.gen(function*() {
      const { client, cluster } = yield* setup
      yield* client.apply(IngressResource, ingress("watched"))
      // The first watch connection is cut before it sends anything: the watch reconnects from where it was.
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["watch"], action: Fault.cutWatch(0), times: 1 })
      const log = capturing(LogLevel.Debug)
      yield* Effect.provide(
        Effect.gen(function*() {
          const events = client.watch(IngressResource, NS)
          // The list's ADDED, then the object changed after the reconnection.
          yield* Effect.fork(
            Effect.delay(
              client.apply(IngressResource, {
                ...ingress("watched"),
                metadata: { ...ingress("watched").metadata, labels: { app: "changed" } }
              }),
              "300 millis"
            )
          )
          yield* Stream.runDrain(Stream.take(events, 2))
        }),
        log.layer
      )
      const watchLines = debugLines(log.lines).map((line) => line.message).filter((m) => m.startsWith("watch of "))
      const watch = `watch of ingresses.networking.k8s.io in namespace "${NS}"`
      expect(watchLines[0]).toBe(`${watch}: listing`)
      expect(watchLines[1]).toMatch(new RegExp(`^${watch}: connecting from resourceVersion \\d+$`))
      expect(watchLines[2]).toMatch(
        new RegExp(
          `^${watch}: reconnecting from resourceVersion \\d+ \\(the last connection closed without sending anything\\)$`
        )
      )
      // The connection itself is a request with its own line.
      expect(
        debugLines(log.lines).some((line) =>
          /^GET \/apis\/networking\.k8s\.io\/v1\/namespaces\/debugging\/ingresses\?watch=true&.*: 200 in \d+ ms$/.test(
            line.message
          )
        )
      ).toBe(true)
    }))

  it.scopedLive("say which router and which status source a run uses", () =>
    Effect.gen(function*() {
      const { kc } = yield* setup
      const log = capturing(LogLevel.Debug)
      const config = Layer.orDie(
        RouterConfigLive.layerFrom({ baseDomain: "sessions.example.test", sessionNamespace: NS })
      )
      yield* Effect.provide(
        Effect.void,
        SessionRouting.layerConfig.pipe(
          Layer.provideMerge(Layer.merge(config, KubeClientLive.layerFromKubeConfig(kc))),
          Layer.provide(log.layer)
        )
      )
      expect(debugLines(log.lines).map((line) => line.message).filter((m) => /^(routing|route status):/.test(m)))
        .toEqual([
          "routing: the ingress router, as the configured mode says",
          "route status: the shared watch for ingress mode (status source \"watch\")"
        ])
    }))
})
