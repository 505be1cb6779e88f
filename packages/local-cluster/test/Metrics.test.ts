/**
 * LocalCluster counts what it serves as kube-apiserver does: `apiserver_request_total`
 * by the apiserver's verb, scope and code rules, for both faces into one set of
 * counters, served as Prometheus text on /metrics; and (ours) its TCP connections.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as http from "node:http"
import { KubeClient } from "session-routing/kubernetes"
import { Fault } from "../src/Faults.js"
import { LocalCluster } from "../src/LocalCluster.js"
import {
  escapeLabelValue,
  exposition,
  type MetricsSnapshot,
  nonResourceRequestLabels,
  type RequestCount,
  type ResourceRequest,
  resourceRequestLabels
} from "../src/Metrics.js"
import { IngressResource, ServiceResource } from "../src/ServedResources.js"
import { ingress, NS, service } from "./ClusterFixtures.js"
import { call, lineReader, send } from "./WireFixtures.js"

const ING = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`

const ingresses = {
  group: "networking.k8s.io",
  version: "v1",
  resource: "ingresses",
  subresource: "",
  component: "apiserver",
  dryRun: ""
} as const
const services = { ...ingresses, group: "", resource: "services" } as const

const series = (
  labels: Pick<RequestCount, "verb" | "scope" | "code"> & Partial<RequestCount>,
  count = 1,
  base: Pick<RequestCount, "group" | "version" | "resource" | "subresource" | "component" | "dryRun"> = ingresses
): RequestCount => ({ ...base, ...labels, count })

// ---------------------------------------------------------------------------
// A parser for the text exposition format, strict about every line's shape

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

interface Parsed {
  readonly help: Map<string, string>
  readonly type: Map<string, string>
  readonly samples: Array<Sample>
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*"
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/y

const unescape = (value: string) => value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c))

const parseLabels = (text: string): Record<string, string> => {
  const labels: Record<string, string> = {}
  let at = 0
  while (at < text.length) {
    LABEL.lastIndex = at
    const match = LABEL.exec(text)
    if (match === null) throw new Error(`bad label at ${at} in {${text}}`)
    if (match[1]! in labels) throw new Error(`label ${match[1]} repeated`)
    labels[match[1]!] = unescape(match[2]!)
    at = LABEL.lastIndex
    if (at < text.length) {
      if (text[at] !== ",") throw new Error(`expected a comma at ${at} in {${text}}`)
      at++
    }
  }
  return labels
}

const parseExposition = (text: string): Parsed => {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a line feed")
  const parsed: Parsed = { help: new Map(), type: new Map(), samples: [] }
  for (const line of text.slice(0, -1).split("\n")) {
    const help = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line)
    const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge)$`).exec(line)
    const sample = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)$`).exec(line)
    if (help !== null) parsed.help.set(help[1]!, help[2]!)
    else if (type !== null) {
      // TYPE comes once per family, before its samples.
      if (parsed.type.has(type[1]!) || parsed.samples.some((s) => s.name === type[1])) {
        throw new Error(`misplaced TYPE: ${line}`)
      }
      parsed.type.set(type[1]!, type[2]!)
    } else if (sample !== null) {
      if (!parsed.type.has(sample[1]!) || !parsed.help.has(sample[1]!)) {
        throw new Error(`a sample without HELP and TYPE: ${line}`)
      }
      parsed.samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? ""), value: Number(sample[3]) })
    } else {
      throw new Error(`not a line of the text format: ${JSON.stringify(line)}`)
    }
  }
  return parsed
}

/** The request series as the exposition states them, for comparison with the structured counts. */
const requestSamples = (parsed: Parsed): Array<RequestCount> =>
  parsed.samples.filter((s) => s.name === "apiserver_request_total").map(({ labels, value }) => ({
    verb: labels.verb as RequestCount["verb"],
    dryRun: labels.dry_run!,
    group: labels.group!,
    version: labels.version!,
    resource: labels.resource!,
    subresource: labels.subresource!,
    scope: labels.scope as RequestCount["scope"],
    component: labels.component as "apiserver",
    code: Number(labels.code),
    count: value
  }))

/** Series in one order whatever order their fields were written in. */
const byKey = (counts: ReadonlyArray<RequestCount>) => {
  const key = (c: RequestCount) => JSON.stringify(Object.entries(c).sort(([a], [b]) => (a < b ? -1 : 1)))
  return [...counts].sort((a, b) => (key(a) < key(b) ? -1 : 1))
}

// ---------------------------------------------------------------------------

describe("Metrics labels", () => {
  it("names verbs and scopes as the apiserver does", () => {
    const base: Omit<ResourceRequest, "method"> = {
      contentType: "application/json",
      watch: false,
      group: "networking.k8s.io",
      version: "v1",
      resource: "ingresses",
      namespace: NS,
      name: undefined,
      subresource: undefined,
      dryRun: []
    }
    const labels = (over: Partial<ResourceRequest> & { readonly method: string }) => {
      const l = resourceRequestLabels({ ...base, ...over })
      return `${l.verb} ${l.scope} ${l.subresource} ${l.dryRun}`
    }
    expect(labels({ method: "GET" })).toBe("LIST namespace  ")
    expect(labels({ method: "GET", watch: true })).toBe("WATCH namespace  ")
    expect(labels({ method: "GET", namespace: undefined })).toBe("LIST cluster  ")
    expect(labels({ method: "GET", name: "web" })).toBe("GET resource  ")
    expect(labels({ method: "POST", dryRun: ["All"] })).toBe("POST resource  All")
    expect(labels({ method: "PATCH", name: "web", contentType: "application/apply-patch+yaml" })).toBe(
      "APPLY resource  "
    )
    expect(labels({ method: "PATCH", name: "web", contentType: "application/merge-patch+json", subresource: "status" }))
      .toBe("PATCH resource status ")
    expect(labels({ method: "PUT", name: "web", dryRun: ["All", "All"] })).toBe("PUT resource  All")
    // A deletecollection is a DELETE whose scope is not `resource`.
    expect(labels({ method: "DELETE" })).toBe("DELETE namespace  ")
    expect(labels({ method: "OPTIONS" })).toBe("other namespace  ")
    expect(nonResourceRequestLabels("GET", "/apis")).toEqual({
      verb: "GET",
      dryRun: "",
      group: "",
      version: "",
      resource: "",
      subresource: "/apis",
      scope: "",
      component: "apiserver"
    })
  })

  it("escapes label values so that the exposition reads back to the same values", () => {
    const awkward = "a\\b \"quoted\"\nnext"
    expect(escapeLabelValue(awkward)).toBe("a\\\\b \\\"quoted\\\"\\nnext")
    const snapshot: MetricsSnapshot = {
      requests: [{ ...nonResourceRequestLabels("GET", awkward), code: 404, count: 2 }],
      longRunning: [],
      connections: { accepted: 3, open: 1 }
    }
    const parsed = parseExposition(exposition(snapshot))
    expect(requestSamples(parsed)).toEqual(snapshot.requests)
    expect(parsed.type.get("apiserver_request_total")).toBe("counter")
    expect(parsed.samples.filter((s) => s.name.startsWith("apiserver_tcp"))).toEqual([
      { name: "apiserver_tcp_connections_accepted_total", labels: {}, value: 3 },
      { name: "apiserver_tcp_connections_open", labels: {}, value: 1 }
    ])
    // A family with no series is left out, HELP and TYPE included, as client_golang does.
    expect(parsed.type.has("apiserver_longrunning_requests")).toBe(false)
  })
})

describe("Metrics over HTTP", () => {
  it.scopedLive("counts a list, a get, an apply, a watch, a 404 and an injected 503 with the apiserver's labels", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      const { url, metrics } = cluster
      const applied = yield* send(
        url,
        "PATCH",
        `${ING}/web?fieldManager=metrics-test`,
        ingress("web"),
        "application/apply-patch+yaml"
      )
      expect(applied.status).toBe(201)
      expect((yield* call(url, `${ING}/web`)).status).toBe(200)
      expect((yield* call(url, ING)).status).toBe(200)
      expect((yield* call(url, `${ING}/missing`)).status).toBe(404)
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.respond(503), times: 1 })
      expect((yield* call(url, ING)).status).toBe(503)

      // A watch is counted when it ends; while it runs it is a long-running request.
      const controller = new AbortController()
      const first = yield* Effect.promise(async () => {
        const response = await fetch(`${url}${ING}?watch=true`, { signal: controller.signal })
        return lineReader(response)()
      })
      expect(JSON.parse(first!).type).toBe("ADDED")
      yield* metrics.waitFor((s) => s.longRunning.find((r) => r.verb === "WATCH" && r.count === 1))
      controller.abort()
      yield* metrics.waitFor((s) => s.requests.find((r) => r.verb === "WATCH"))

      expect(byKey(yield* metrics.requests)).toEqual(byKey([
        series({ verb: "APPLY", scope: "resource", code: 201 }),
        series({ verb: "GET", scope: "resource", code: 200 }),
        series({ verb: "LIST", scope: "namespace", code: 200 }),
        series({ verb: "GET", scope: "resource", code: 404 }),
        series({ verb: "LIST", scope: "namespace", code: 503 }),
        series({ verb: "WATCH", scope: "namespace", code: 200 })
      ]))
      expect((yield* metrics.longRunning).map((r) => [r.verb, r.resource, r.count])).toEqual([[
        "WATCH",
        "ingresses",
        0
      ]])
      expect(yield* metrics.count({ resource: "ingresses", verb: "LIST" })).toBe(2)
    }))

  it.scopedLive("serves the counters on /metrics in the text format, the same series as in process", () =>
    Effect.gen(function*() {
      const { url, metrics } = yield* LocalCluster.make({ namespaces: [NS] })
      yield* send(url, "POST", `/api/v1/namespaces/${NS}/services?dryRun=All`, service("web"))
      yield* call(url, "/apis")
      yield* call(url, "/apis/networking.k8s.io/v1/namespaces/demo/frobs")
      yield* metrics.waitFor((s) => s.requests.length === 3 ? true : undefined)
      const answer = yield* call(url, "/metrics")
      expect(answer.status).toBe(200)
      expect(answer.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
      const parsed = parseExposition(answer.text)
      expect(byKey(requestSamples(parsed))).toEqual(byKey([
        series({ verb: "POST", scope: "resource", code: 201, dryRun: "All" }, 1, services),
        { ...nonResourceRequestLabels("GET", "/apis"), code: 200, count: 1 },
        // A path nothing serves is counted by its path, as a non-resource request.
        { ...nonResourceRequestLabels("GET", "/apis/networking.k8s.io/v1/namespaces/demo/frobs"), code: 404, count: 1 }
      ]))
      expect(parsed.type.get("apiserver_request_total")).toBe("counter")
      expect(parsed.type.get("apiserver_tcp_connections_accepted_total")).toBe("counter")
      expect(parsed.type.get("apiserver_tcp_connections_open")).toBe("gauge")
      // The server's own cost, as the process collector of every Go server exports it.
      expect(parsed.type.get("process_cpu_seconds_total")).toBe("counter")
      expect(parsed.type.get("process_resident_memory_bytes")).toBe("gauge")
      const own = (name: string) => parsed.samples.find((s) => s.name === name)?.value ?? 0
      expect(own("process_cpu_seconds_total")).toBeGreaterThan(0)
      expect(own("process_resident_memory_bytes")).toBeGreaterThan(1_000_000)
      // The scrape itself is counted once it has been answered, as the apiserver counts /metrics.
      const after = yield* metrics.waitFor((s) => s.requests.find((r) => r.subresource === "/metrics"))
      expect(after).toEqual({ ...nonResourceRequestLabels("GET", "/metrics"), code: 200, count: 1 })
    }))

  it.scopedLive("counts TCP connections accepted and open, so a client that reuses them can be told apart", () =>
    Effect.gen(function*() {
      const { metrics, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const get = (agent: http.Agent | false) =>
        Effect.async<number>((resume) => {
          http.get(`${url}/version`, { agent }, (response) => {
            response.resume()
            response.on("end", () => resume(Effect.succeed(response.statusCode ?? 0)))
          })
        })
      // Without an agent every request has a connection of its own...
      for (let i = 0; i < 3; i++) expect(yield* get(false)).toBe(200)
      yield* metrics.waitFor((s) => (s.connections.accepted === 3 ? true : undefined))
      // ...with a keep-alive agent five sequential requests share one.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      for (let i = 0; i < 5; i++) expect(yield* get(agent)).toBe(200)
      expect((yield* metrics.connections).accepted).toBe(4)
      expect((yield* metrics.connections).open).toBeGreaterThanOrEqual(1)
      agent.destroy()
      expect(yield* metrics.waitFor((s) => (s.connections.open === 0 ? s.connections : undefined))).toEqual({
        accepted: 4,
        open: 0
      })
      expect(yield* metrics.count({ subresource: "/version", code: 200 })).toBe(8)
    }))
})

describe("Metrics of the in-memory face", () => {
  it.scopedLive("counts the in-memory client's calls in the same counters, under the verbs HTTP would use", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      const kube = yield* Effect.provide(KubeClient, LocalCluster.layerKubeClient(cluster))
      yield* kube.apply(IngressResource, { ...ingress("web"), metadata: { name: "web", namespace: NS } })
      yield* kube.apply(IngressResource, { ...ingress("web"), metadata: { name: "web", namespace: NS } })
      yield* kube.get(IngressResource, NS, "web")
      yield* kube.list(IngressResource, NS)
      expect((yield* Effect.flip(kube.get(ServiceResource, NS, "missing")))._tag).toBe("NotFound")
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["list"], action: Fault.respond(503), times: 1 })
      expect((yield* Effect.flip(kube.list(IngressResource, NS)))._tag).toBe("Unavailable")
      const events = yield* Stream.runCollect(
        Stream.take(kube.watchFrom(IngressResource, NS, { resourceVersion: "0" }), 1)
      )
      expect(events.length).toBe(1)
      // Over HTTP too: the same counters, whichever face served the call.
      expect((yield* call(cluster.url, `${ING}/web`)).status).toBe(200)
      yield* cluster.metrics.waitFor((s) => s.requests.find((r) => r.verb === "GET" && r.code === 200 && r.count === 2))

      expect(byKey(yield* cluster.metrics.requests)).toEqual(byKey([
        series({ verb: "APPLY", scope: "resource", code: 201 }),
        series({ verb: "APPLY", scope: "resource", code: 200 }),
        series({ verb: "GET", scope: "resource", code: 200 }, 2),
        series({ verb: "LIST", scope: "namespace", code: 200 }),
        series({ verb: "GET", scope: "resource", code: 404 }, 1, services),
        series({ verb: "LIST", scope: "namespace", code: 503 }),
        series({ verb: "WATCH", scope: "namespace", code: 200 })
      ]))
      // The in-memory face opens no connections.
      expect((yield* cluster.metrics.connections).accepted).toBe(1)
    }))

  it.scopedLive("counts a call whose connection a fault dropped with code 0, and a refused one not at all", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.makeInMemory({ namespaces: [NS] })
      const kube = yield* Effect.provide(KubeClient, LocalCluster.layerKubeClient(cluster))
      yield* cluster.faults.add({ resource: IngressResource, verbs: ["get"], action: Fault.reset, times: 1 })
      expect((yield* Effect.flip(kube.get(IngressResource, NS, "web")))._tag).toBe("Transport")
      yield* cluster.faults.server.stop
      expect((yield* Effect.flip(kube.get(IngressResource, NS, "web")))._tag).toBe("Transport")
      expect(yield* cluster.metrics.requests).toEqual([series({ verb: "GET", scope: "resource", code: 0 })])
    }))
})
