/**
 * What LocalCluster's API server counts, under kube-apiserver's own metric names and
 * label rules: requests by verb, resource and code, and the watches open now. Both
 * faces (HTTP and in-memory) record into one instance per cluster; `GET /metrics`
 * serves it as Prometheus text, and tests and benchmarks read it in process.
 */
import { Effect } from "effect"

/**
 * The verbs the apiserver reports: the HTTP method, except that a collection GET is
 * LIST (or WATCH with `watch=true`) and a PATCH with the apply content type is APPLY.
 * A DELETE of a collection stays DELETE (scope `namespace` or `cluster` tells it apart).
 * Methods it does not know are `other`.
 */
export type RequestVerb = "GET" | "LIST" | "WATCH" | "POST" | "PUT" | "PATCH" | "APPLY" | "DELETE" | "other"

/**
 * `resource` for a request naming an object (or a create), `namespace` for a
 * collection in a namespace, `cluster` for one across namespaces or of a
 * cluster-scoped type, and empty for paths that are not resources (discovery, /metrics).
 */
export type RequestScope = "resource" | "namespace" | "cluster" | ""

/** The labels of `apiserver_request_total` except `code`, in their real meaning. */
export interface RequestLabels {
  readonly verb: RequestVerb
  /** The `dryRun` query values, sorted and comma-joined, as the apiserver reports them (`All` or empty). */
  readonly dryRun: string
  /** API group; empty for the core group and for non-resource paths. */
  readonly group: string
  readonly version: string
  /** The plural (`ingresses`); empty for non-resource paths. */
  readonly resource: string
  /** `status` for the status subresource; for a non-resource path, the path itself (as the apiserver does). */
  readonly subresource: string
  readonly scope: RequestScope
  /** Always `apiserver`: LocalCluster has no aggregated servers. */
  readonly component: "apiserver"
}

/** One series of `apiserver_request_total`. `code` 0: the request ended with no answer (dropped, or the client left first). */
export interface RequestCount extends RequestLabels {
  readonly code: number
  readonly count: number
}

/** One series of `apiserver_longrunning_requests`: watches being served now. */
export interface LongRunningCount extends Omit<RequestLabels, "dryRun"> {
  readonly count: number
}

/** TCP connections of the HTTP face. */
export interface ConnectionCounts {
  /** Accepted since the server started (restarts included). */
  readonly accepted: number
  /** Open now. */
  readonly open: number
}

/** What the serving process itself has used, as every Go server exports it. */
export interface ProcessUsage {
  /** CPU, user and system, since the process started. */
  readonly cpuSeconds: number
  readonly residentBytes: number
}

/** Everything counted, at one instant. */
export interface MetricsSnapshot {
  readonly requests: ReadonlyArray<RequestCount>
  readonly longRunning: ReadonlyArray<LongRunningCount>
  readonly connections: ConnectionCounts
  /** Absent: not measured (a snapshot built by hand). */
  readonly process?: ProcessUsage
}

/** Which request series to add up; unset fields match any value. */
export type RequestFilter = Partial<Omit<RequestCount, "count">>

/** The counters of one cluster. */
export interface ClusterMetrics {
  readonly requests: Effect.Effect<ReadonlyArray<RequestCount>>
  readonly longRunning: Effect.Effect<ReadonlyArray<LongRunningCount>>
  readonly connections: Effect.Effect<ConnectionCounts>
  readonly snapshot: Effect.Effect<MetricsSnapshot>
  /** The sum of the request series that match `filter`. */
  readonly count: (filter?: RequestFilter) => Effect.Effect<number>
  /**
   * Waits until `check` returns something other than `undefined` for the counters,
   * tried now and after every change: a request counted as it ends (a watch when it
   * closes), so tests wait on it instead of sleeping.
   */
  readonly waitFor: <A>(check: (snapshot: MetricsSnapshot) => A | undefined) => Effect.Effect<A>
  /** The Prometheus text exposition (format 0.0.4) that `GET /metrics` serves. */
  readonly exposition: Effect.Effect<string>

  // Recording, for the faces. Synchronous: they run in Node's socket and response callbacks.

  /** Counts one request that ended with `code` (0: no answer was sent). */
  readonly recordRequest: (labels: RequestLabels, code: number) => void
  /** A long-running request (a watch) starts; call the returned function once when it ends. */
  readonly startLongRunning: (labels: RequestLabels) => () => void
  /** A TCP connection was accepted; call the returned function once when it closes. */
  readonly connectionAccepted: () => () => void
}

/** The `Content-Type` of the exposition, as client_golang serves it. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

// ---------------------------------------------------------------------------
// Labels, as the apiserver derives them from a request

/** What the labels of a resource request depend on. */
export interface ResourceRequest {
  readonly method: string
  /** The request's media type, lower-cased, without parameters. */
  readonly contentType: string
  /** A collection GET with `watch=true`. */
  readonly watch: boolean
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly dryRun: ReadonlyArray<string>
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])

/** The labels kube-apiserver gives a request for a resource path. */
export const resourceRequestLabels = (request: ResourceRequest): RequestLabels => {
  const method = request.method.toUpperCase()
  // CleanScope: a name or a create is `resource`, then a namespace, then the cluster.
  const scope: RequestScope = request.name !== undefined || method === "POST"
    ? "resource"
    : request.namespace !== undefined
    ? "namespace"
    : "cluster"
  const verb: RequestVerb = !KNOWN_METHODS.has(method)
    ? "other"
    : method === "GET" || method === "HEAD"
    ? scope === "resource" ? "GET" : request.watch ? "WATCH" : "LIST"
    : method === "PATCH" && request.contentType === "application/apply-patch+yaml"
    ? "APPLY"
    : (method as RequestVerb)
  return {
    verb,
    dryRun: [...new Set(request.dryRun)].sort().join(","),
    group: request.group,
    version: request.version,
    resource: request.resource,
    subresource: request.subresource ?? "",
    scope,
    component: "apiserver"
  }
}

/** The labels of a request for a path that is no resource (discovery, /version, /metrics): the path goes in `subresource`. */
export const nonResourceRequestLabels = (method: string, path: string): RequestLabels => {
  const upper = method.toUpperCase()
  return {
    verb: upper === "HEAD" ? "GET" : KNOWN_METHODS.has(upper) ? (upper as RequestVerb) : "other",
    dryRun: "",
    group: "",
    version: "",
    resource: "",
    subresource: path,
    scope: "",
    component: "apiserver"
  }
}

// ---------------------------------------------------------------------------
// Exposition

/** A label value in the text format: backslash, double quote and line feed escaped. */
export const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

/** A HELP text: backslash and line feed escaped. */
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

type Labels = ReadonlyArray<readonly [string, string]>

/** Label pairs sorted by name, as client_golang writes them. */
const labelSet = (labels: Labels): string =>
  labels.length === 0
    ? ""
    : `{${
      [...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
        .join(",")
    }}`

interface Family {
  readonly name: string
  readonly help: string
  readonly type: "counter" | "gauge"
  readonly series: ReadonlyArray<{ readonly labels: Labels; readonly value: number }>
}

const renderFamily = (family: Family): string => {
  const lines = family.series
    .map((s) => `${family.name}${labelSet(s.labels)} ${s.value}`)
    .sort()
  return [`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`, ...lines].join(
    "\n"
  )
}

const requestLabelPairs = (labels: Omit<RequestLabels, "dryRun"> & { readonly dryRun?: string }): Labels => [
  ["verb", labels.verb],
  ...(labels.dryRun !== undefined ? [["dry_run", labels.dryRun] as const] : []),
  ["group", labels.group],
  ["version", labels.version],
  ["resource", labels.resource],
  ["subresource", labels.subresource],
  ["scope", labels.scope],
  ["component", labels.component]
]

/** The text exposition of a snapshot. Families with no series are left out, as client_golang leaves out an empty vector. */
export const exposition = (snapshot: MetricsSnapshot): string => {
  const families: Array<Family> = [
    {
      name: "apiserver_request_total",
      help:
        "Requests the API server answered, by verb, dry run, group, version, resource, subresource, scope, component and HTTP status code.",
      type: "counter",
      series: snapshot.requests.map((r) => ({
        labels: [...requestLabelPairs(r), ["code", String(r.code)]],
        value: r.count
      }))
    },
    {
      name: "apiserver_longrunning_requests",
      help:
        "Long-running requests (watches) being served now, by verb, group, version, resource, subresource, scope and component.",
      type: "gauge",
      series: snapshot.longRunning.map((r) => ({ labels: requestLabelPairs(r), value: r.count }))
    },
    // These two are LocalCluster's own, not kube-apiserver's (whose Go server does not
    // count connections): they let a benchmark see whether a client reuses connections.
    {
      name: "apiserver_tcp_connections_accepted_total",
      help: "TCP connections the API server accepted (LocalCluster only; not a kube-apiserver metric).",
      type: "counter",
      series: [{ labels: [], value: snapshot.connections.accepted }]
    },
    {
      name: "apiserver_tcp_connections_open",
      help: "TCP connections to the API server open now (LocalCluster only; not a kube-apiserver metric).",
      type: "gauge",
      series: [{ labels: [], value: snapshot.connections.open }]
    },
    // The process collector's two most used series, as every Go server (kube-apiserver
    // included) exports them: what a benchmark reads to see the server's own cost.
    {
      name: "process_cpu_seconds_total",
      help: "Total user and system CPU time spent in seconds.",
      type: "counter",
      series: snapshot.process === undefined ? [] : [{ labels: [], value: snapshot.process.cpuSeconds }]
    },
    {
      name: "process_resident_memory_bytes",
      help: "Resident memory size in bytes.",
      type: "gauge",
      series: snapshot.process === undefined ? [] : [{ labels: [], value: snapshot.process.residentBytes }]
    }
  ]
  return `${families.filter((f) => f.series.length > 0).map(renderFamily).join("\n")}\n`
}

// ---------------------------------------------------------------------------
// The counters

const keyOf = (labels: RequestLabels): string =>
  JSON.stringify([
    labels.verb,
    labels.dryRun,
    labels.group,
    labels.version,
    labels.resource,
    labels.subresource,
    labels.scope,
    labels.component
  ])

const matches = (count: RequestCount, filter: RequestFilter): boolean =>
  (Object.keys(filter) as Array<keyof RequestFilter>).every((key) =>
    filter[key] === undefined || filter[key] === count[key]
  )

const processUsage = (): ProcessUsage => {
  const { system, user } = process.cpuUsage()
  return { cpuSeconds: (user + system) / 1e6, residentBytes: process.memoryUsage.rss() }
}

/** Fresh counters, all zero. */
export const makeMetrics: Effect.Effect<ClusterMetrics> = Effect.sync(() => {
  const requests = new Map<string, { labels: RequestLabels; code: number; count: number }>()
  const longRunning = new Map<string, { labels: Omit<RequestLabels, "dryRun">; count: number }>()
  const connections = { accepted: 0, open: 0 }
  const waiters = new Set<() => void>()

  const changed = () => {
    for (const wake of [...waiters]) wake()
  }

  const snapshotNow = (): MetricsSnapshot => ({
    requests: [...requests.values()].map(({ code, count, labels }) => ({ ...labels, code, count })),
    longRunning: [...longRunning.values()].map(({ count, labels }) => ({ ...labels, count })),
    connections: { ...connections },
    process: processUsage()
  })

  /** Runs `f` at most once, however often it is called: a close reported twice must not count twice. */
  const once = (f: () => void) => {
    let done = false
    return () => {
      if (done) return
      done = true
      f()
    }
  }

  const snapshot = Effect.sync(snapshotNow)
  return {
    snapshot,
    requests: Effect.map(snapshot, (s) => s.requests),
    longRunning: Effect.map(snapshot, (s) => s.longRunning),
    connections: Effect.map(snapshot, (s) => s.connections),
    count: (filter = {}) =>
      Effect.map(snapshot, (s) => s.requests.filter((r) => matches(r, filter)).reduce((sum, r) => sum + r.count, 0)),
    waitFor: <A>(check: (snapshot: MetricsSnapshot) => A | undefined) =>
      Effect.async<A>((resume) => {
        const first = check(snapshotNow())
        if (first !== undefined) {
          resume(Effect.succeed(first))
          return
        }
        const wake = () => {
          const found = check(snapshotNow())
          if (found === undefined) return
          waiters.delete(wake)
          resume(Effect.succeed(found))
        }
        waiters.add(wake)
        return Effect.sync(() => waiters.delete(wake))
      }),
    exposition: Effect.map(snapshot, exposition),
    recordRequest: (labels, code) => {
      const key = `${keyOf(labels)}:${code}`
      const entry = requests.get(key)
      if (entry !== undefined) entry.count++
      else requests.set(key, { labels, code, count: 1 })
      changed()
    },
    startLongRunning: (labels) => {
      const { dryRun: _dryRun, ...rest } = labels
      const key = keyOf({ ...labels, dryRun: "" })
      const entry = longRunning.get(key) ?? { labels: rest, count: 0 }
      longRunning.set(key, entry)
      entry.count++
      changed()
      return once(() => {
        entry.count--
        changed()
      })
    },
    connectionAccepted: () => {
      connections.accepted++
      connections.open++
      changed()
      return once(() => {
        connections.open--
        changed()
      })
    }
  }
})
