/**
 * The real control plane for the benchmarks (`BENCH_CLUSTER=real`): the one `npm run
 * cluster:real` starts (test/control-plane: etcd, kube-apiserver, its controllers, kwok's
 * Pods, Traefik writing the status), in a process of its own, fresh for each run. Beside
 * it, what the bench needs of it: its admin client over HTTPS, the CPU of kube-apiserver
 * and etcd from /proc, session Pods made Running by kwok, and an independent watch of the
 * session Ingresses that times each one's appearance and Traefik's status write.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import type * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { startControlPlaneProcess } from "../test/control-plane/ControlPlaneProcess.js"
import type { ClusterInfo } from "./health.js"
import { instantMs } from "./processStats.js"
import { statusWritten } from "./statusWritten.js"
import { authorization, call, type Endpoint, endpointOf, transport } from "./transport.js"

/** utime + stime of a process, ms, from /proc (clock ticks of 10 ms); NaN once it is gone. */
export const processCpuMs = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

/**
 * The processes of the control plane whose work directory is `workDir`, by program name:
 * the control plane gives each component's arguments paths in that directory.
 */
const componentPids = (workDir: string): ReadonlyMap<string, number> => {
  const found = new Map<string, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let argv: Array<string>
    try {
      argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
    } catch {
      continue
    }
    if (!argv.some((arg) => arg.includes(workDir))) continue
    found.set(path.basename(argv[0] ?? ""), Number(entry))
  }
  return found
}

/** A real control plane, started for the scope. */
export interface RealCluster {
  readonly info: ClusterInfo
  /** The admin kubeconfig's file. */
  readonly kubeconfig: string
  readonly endpoint: Endpoint
  /** kube-apiserver's and etcd's process ids. */
  readonly serverPids: { readonly apiServer: number; readonly etcd: number }
  /** kube-apiserver's and etcd's CPU so far, ms. */
  readonly serverCpuMs: () => { readonly apiServer: number; readonly etcd: number }
}

/** A first build of the control plane takes minutes; a built one starts in seconds. */
const START_WITHIN_MS = 45 * 60_000

/** Starts a fresh control plane (test/control-plane/main.ts in its own process); stopped with the scope. */
export const realControlPlane: Effect.Effect<RealCluster, never, import("effect").Scope.Scope> = Effect.gen(
  function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "session-routing-bench-real-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const kubeconfig = path.join(dir, "kubeconfig")
    const started = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startControlPlaneProcess(["--kubeconfig", kubeconfig], {
          startWithin: START_WITHIN_MS,
          onStderr: (chunk) => {
            // Its progress is noise here; what it says when a component dies is not.
            for (const line of chunk.split("\n")) {
              if (line.startsWith("cluster:real:")) process.stderr.write(`  ${line}\n`)
            }
          }
        })
      ),
      (cp) => Effect.promise(() => cp.stop())
    )
    const workDir = path.dirname(started.info.logs)
    const pids = componentPids(workDir)
    const apiServer = pids.get("kube-apiserver")
    const etcd = pids.get("etcd")
    if (apiServer === undefined || etcd === undefined) {
      return yield* Effect.dieMessage(`found no kube-apiserver or etcd process working in ${workDir}`)
    }
    const text = fs.readFileSync(kubeconfig, "utf8")
    const kc = new k8s.KubeConfig()
    kc.loadFromString(text)
    const [gatewayNamespace, gatewayName] = started.info.gateway.split("/") as [string, string]
    return {
      info: {
        kubeconfig: text,
        server: started.info.server,
        namespace: started.info.namespace,
        baseDomain: started.info["base-domain"],
        ingressClassName: started.info["ingress-class"],
        gateway: { namespace: gatewayNamespace, name: gatewayName }
      },
      kubeconfig,
      endpoint: endpointOf(kc),
      serverPids: { apiServer, etcd },
      serverCpuMs: () => ({ apiServer: processCpuMs(apiServer), etcd: processCpuMs(etcd) })
    } satisfies RealCluster
  }
)

/** The one Node of the control plane, whose Pods kwok runs. */
const NODE_NAME = "kwok-node"
const CREATE_SOCKETS = 32

/**
 * Creates `names` as Pods bound to kwok's Node (no scheduling to wait for), each with
 * `labels(name)`, and waits until kwok has them all Running; answers their uids in order.
 * A session's objects name their Pod as owner by uid: against a made-up one the garbage
 * collector would delete them as soon as they are written.
 */
export const runningPods = (
  endpoint: Endpoint,
  namespace: string,
  names: ReadonlyArray<string>,
  labels: (name: string) => Readonly<Record<string, string>> = () => ({})
) =>
  Effect.gen(function*() {
    const agent = transport(endpoint.server, endpoint.tls).agent({ keepAlive: true, maxSockets: CREATE_SOCKETS })
    const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`
    const uids = yield* Effect.promise(() =>
      Promise.all(names.map(async (name) => {
        for (let attempt = 1;; attempt++) {
          const answer = await call(endpoint, agent, "POST", collection, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name, labels: labels(name) },
            spec: {
              nodeName: NODE_NAME,
              containers: [{ name: "session", image: "registry.example/session:1" }]
            }
          })
          if (answer.code < 300) return String(answer.body.metadata.uid)
          if (attempt === 10 || (answer.code !== 0 && answer.code !== 429 && answer.code < 500)) {
            throw new Error(`creating Pod ${name}: ${answer.code} ${JSON.stringify(answer.body).slice(0, 300)}`)
          }
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
        }
      }))
    )
    const running = Effect.promise(() => call(endpoint, agent, "GET", collection)).pipe(
      Effect.map((answer) =>
        (answer.body.items as Array<{ status?: { phase?: string } }>).filter((pod) => pod.status?.phase === "Running")
          .length
      )
    )
    yield* Effect.sleep("250 millis").pipe(
      Effect.zipRight(running),
      Effect.repeat({ until: (n) => n >= names.length }),
      Effect.timeoutFail({
        duration: "120 seconds",
        onTimeout: () => new Error(`kwok did not run the ${names.length} Pods in 120 s`)
      }),
      Effect.orDie
    )
    agent.destroy()
    return uids
  })

/** A bound on one watch line: a routed object is a few KiB. */
const MAX_WATCH_LINE = 1024 * 1024

/**
 * What the independent watch saw of each Ingress, by `Ingress/<name>`: when it first
 * appeared, and when its status first carried an address (`instantMs`).
 */
export interface IngressTimes {
  readonly added: Map<string, number>
  readonly written: Map<string, number>
}

/**
 * A watch of the collection at `path` (a query of its own allowed) over bare
 * node:http(s), open (its headers received) when it succeeds; each event goes to
 * `onEvent` with the instant its line arrived. A real API server ends a watch now and
 * then (a slow reader, its own timeout): it is opened again from the last
 * resourceVersion seen, so no change is missed, and counted in `restarts`. Closed with
 * the scope.
 */
export const watchCollection = (
  endpoint: Endpoint,
  path: string,
  onEvent: (event: { readonly type: string; readonly object: any }, at: number) => void
) =>
  Effect.acquireRelease(
    Effect.async<{ readonly close: () => void; readonly restarts: () => number }, string>((resume) => {
      const { agent: agentOf, request: httpRequest } = transport(endpoint.server, endpoint.tls)
      const agent = agentOf({ keepAlive: false })
      let lastVersion = ""
      let restarts = 0
      let closed = false
      let current: http.ClientRequest | undefined
      const open = (first: boolean) => {
        const from = lastVersion === "" ? "" : `&resourceVersion=${encodeURIComponent(lastVersion)}`
        const again = () => {
          if (closed) return
          restarts++
          setTimeout(() => open(false), 100)
        }
        current = httpRequest(
          `${endpoint.server}${path}${path.includes("?") ? "&" : "?"}watch=1${from}`,
          { agent, headers: { accept: "application/json", ...authorization(endpoint) } },
          (response) => {
            if (response.statusCode !== 200) {
              response.resume()
              if (first) return resume(Effect.fail(`the watch of ${path} answered ${response.statusCode}`))
              // Too old a version (410): from now on, as a fresh watch sees it.
              lastVersion = ""
              return again()
            }
            response.on("error", () => {})
            response.on("end", again)
            const lines = readline.createInterface({ input: response })
            lines.on("error", () => {})
            lines.on("line", (line) => {
              if (line.length > MAX_WATCH_LINE) return
              const at = instantMs()
              const event = JSON.parse(line) as { type: string; object: any }
              if (event.type === "ERROR") {
                lastVersion = ""
                return
              }
              lastVersion = String(event.object?.metadata?.resourceVersion ?? lastVersion)
              onEvent(event, at)
            })
            if (first) resume(Effect.succeed({ close: () => current?.destroy(), restarts: () => restarts }))
          }
        )
        current.on("error", (error) => {
          if (first) resume(Effect.fail(`the watch of ${path} failed: ${error.message}`))
          else again()
        })
        current.end()
      }
      open(true)
    }),
    (watch) => Effect.sync(watch.close)
  ).pipe(Effect.orDie)

/**
 * An independent watch of the namespace's Ingresses, open when it succeeds; closed with
 * the scope. It stands where LocalCluster's process prints each status write: a real
 * controller's write is seen here, as any other watcher sees it.
 */
export const watchIngresses = (endpoint: Endpoint, namespace: string, times: IngressTimes) =>
  watchCollection(
    endpoint,
    `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/ingresses`,
    (event, at) => {
      if (event.type !== "ADDED" && event.type !== "MODIFIED") return
      const key = `Ingress/${event.object?.metadata?.name}`
      if (!times.added.has(key)) times.added.set(key, at)
      if (!times.written.has(key) && statusWritten("Ingress", event.object)) times.written.set(key, at)
    }
  )

/**
 * `apiserver_request_total` from kube-apiserver's /metrics, summed by verb: every
 * client's requests (Traefik, kwok and the controllers' too), not only the runner's.
 */
export const serverRequestsByVerb = (endpoint: Endpoint) =>
  Effect.promise(async () => {
    const agent = transport(endpoint.server, endpoint.tls).agent({ keepAlive: false })
    const answer = await call(endpoint, agent, "GET", "/metrics")
    agent.destroy()
    const byVerb: Record<string, number> = {}
    for (const line of String(answer.body).split("\n")) {
      const match = /^apiserver_request_total\{([^}]*)\}\s+([0-9.e+]+)$/.exec(line)
      if (match === null) continue
      const verb = (/(?:^|,)verb="([^"]*)"/.exec(match[1]!)?.[1] ?? "?").toLowerCase()
      byVerb[verb] = (byVerb[verb] ?? 0) + Number(match[2])
    }
    return byVerb
  })
