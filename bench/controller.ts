/**
 * Controller mode at scale: `session-routing controller` as a user runs it (the installed
 * CLI binary of the packed package, its own process, every default, no leader election)
 * against a fresh cluster: LocalCluster in its own process, controllers writing status 5 s
 * after each object (`BENCH_CLUSTER=local`, the default), or the real control plane with
 * Traefik writing the status (`BENCH_CLUSTER=real`). 1,000 session Pods of three ports are
 * created at once; a watch of the Pods, as a kubelet has one, times each from its ADDED to
 * its condition True, and a watch of the Ingresses times the controller's own status delay
 * (against LocalCluster, its set delay). The floor beside it: the same Pods' objects
 * published at once over bare node:http (bench/barePublish.ts) in a fresh cluster of the
 * same kind.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import type * as http from "node:http"
import * as path from "node:path"
import * as readline from "node:readline"
import { sessionObjectName } from "../src/domain/Manifests.js"
import type { Pod } from "../src/domain/Objects.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../src/domain/PodRouting.js"
import * as RouterConfigLive from "../src/layers/RouterConfigLive.js"
import { RouterConfig } from "../src/services/RouterConfig.js"
import { barePublish } from "./barePublish.js"
import {
  clusterProcess,
  difference,
  kubeconfigFile,
  measuredEnv,
  requestsByVerb,
  SCALE_CONTROLLER_DELAY_MS
} from "./health.js"
import { type ClusterInfo, type ClusterProcess } from "./health.js"
import { type Check, printChecks, verbs } from "./healthReport.js"
import { type InstalledScripts, installedScripts } from "./installed.js"
import { percentile, shownMs } from "./processStats.js"
import {
  type IngressTimes,
  realControlPlane,
  runningPods,
  serverRequestsByVerb,
  watchCollection,
  watchIngresses
} from "./realCluster.js"
import { type BenchCluster, benchCluster } from "./scale.js"
import { authorization, type Endpoint, endpointOf, transport } from "./transport.js"

const PODS = 1_000
/** As bench/scaleRunner.ts publishes its sessions: 8080, 8081 and 8082. */
const PORTS = [8080, 8081, 8082] as const
/** Requests in flight while creating the Pods: enough to keep the cluster busy. */
const CREATE_SOCKETS = 32
/**
 * How long after the last create the bench waits for every Pod to end True. Traefik writes
 * statuses at about five a second (its client's rate limit): against the real control plane
 * the last of 1,000 Ingresses has its status some 200 s after the first.
 */
const settleTimeoutMs = (kind: BenchCluster) => kind === "real" ? 600_000 : 180_000
/** A create refused with 429 or 5xx is tried again, at most this many times. */
const CREATE_ATTEMPTS = 10
/** Lines of the controller's stderr (its logs) shown; the rest are only counted. */
const CONTROLLER_LINES_SHOWN = 5

/**
 * Each Pod as the watch saw it: when it appeared, when it first carried the condition
 * (the controller had published), when the condition first read True, and its last status.
 */
interface Seen {
  added: number
  conditionAt: number | undefined
  trueAt: number | undefined
  status: string | undefined
}

const sessionPod = (name: string, sessionId: string): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { [SESSION_LABEL]: sessionId } },
  spec: {
    containers: [{
      name: "session",
      image: "registry.example/session:1",
      ports: PORTS.map((containerPort) => ({ containerPort }))
    }]
  }
})

const podsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`

/**
 * A watch of the session Pods over bare node:http(s) (bench/realCluster.ts, opened again
 * where a server ended it), open when it succeeds; every event lands in `seen`. Closed
 * with the scope.
 */
const watchPods = (endpoint: Endpoint, namespace: string, seen: Map<string, Seen>) =>
  watchCollection(
    endpoint,
    `${podsPath(namespace)}?labelSelector=${encodeURIComponent(SESSION_LABEL)}`,
    (event, at) => {
      if (event.type !== "ADDED" && event.type !== "MODIFIED") return
      const pod = event.object as Pod
      const name = pod.metadata?.name ?? ""
      const entry = seen.get(name) ?? { added: at, conditionAt: undefined, trueAt: undefined, status: undefined }
      seen.set(name, entry)
      const status = pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status
      entry.status = status
      if (status !== undefined && entry.conditionAt === undefined) entry.conditionAt = at
      if (status === "True" && entry.trueAt === undefined) entry.trueAt = at
    }
  )

/** One POST of a Pod; answers the status code and the Status message of a refusal. */
const post = (endpoint: Endpoint, namespace: string, pod: Pod, agent: http.Agent) =>
  new Promise<{ readonly code: number; readonly message: string }>((resolve) => {
    const body = JSON.stringify(pod)
    const request = transport(endpoint.server, endpoint.tls).request(`${endpoint.server}${podsPath(namespace)}`, {
      method: "POST",
      agent,
      headers: {
        ...authorization(endpoint),
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body)
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const code = response.statusCode ?? 0
        if (code < 300) return resolve({ code, message: "" })
        let message = Buffer.concat(chunks).toString("utf8").slice(0, 500)
        try {
          message = (JSON.parse(message) as { message?: string }).message ?? message
        } catch {
          // Not a Status body: its first characters.
        }
        resolve({ code, message })
      })
    })
    request.on("error", (error) => resolve({ code: 0, message: error.message }))
    request.end(body)
  })

/** Creates every Pod at once over `CREATE_SOCKETS` connections; the failures, each with why. */
const createPods = (endpoint: Endpoint, namespace: string, pods: ReadonlyArray<Pod>) =>
  Effect.promise(async () => {
    const agent = transport(endpoint.server, endpoint.tls).agent({ keepAlive: true, maxSockets: CREATE_SOCKETS })
    const failed: Array<string> = []
    let retried = 0
    await Promise.all(pods.map(async (pod) => {
      for (let attempt = 1;; attempt++) {
        const { code, message } = await post(endpoint, namespace, pod, agent)
        if (code >= 200 && code < 300) return
        const transient = code === 0 || code === 429 || code >= 500
        if (!transient || attempt === CREATE_ATTEMPTS) {
          failed.push(`${pod.metadata?.name}: ${code} ${message}`)
          return
        }
        retried++
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt))
      }
    }))
    agent.destroy()
    return { failed, retried }
  })

/** Process CPU (user + system, every thread) and peak RSS of `pid`, from /proc. */
const processUsage = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // utime and stime (fields 14 and 15 of the whole line), in clock ticks of 10 ms.
  const cpuMs = (Number(fields[11]) + Number(fields[12])) * 10
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return { cpuMs, peakRssKiB: Number(hwm?.[1] ?? Number.NaN) }
}

/** The controller process, killed with the scope; its condition lines counted by status. */
const controllerProcess = (bin: string, cwd: string, env: NodeJS.ProcessEnv) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [bin, "controller", "--no-leader-elect", "-o", "json"], {
        cwd,
        env,
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Record<string, number> = {}
      let logged = 0
      readline.createInterface({ input: child.stdout }).on("line", (line) => {
        const status = (JSON.parse(line) as { status?: string }).status ?? "?"
        lines[status] = (lines[status] ?? 0) + 1
      })
      readline.createInterface({ input: child.stderr }).on("line", (line) => {
        if (++logged <= CONTROLLER_LINES_SHOWN) console.error(`  controller: ${line}`)
      })
      return { child, lines, logged: () => logged }
    }),
    ({ child, logged }) =>
      stop(child).pipe(
        Effect.zipRight(Effect.sync(() => {
          if (logged() > CONTROLLER_LINES_SHOWN) {
            console.error(`  controller: ${logged() - CONTROLLER_LINES_SHOWN} more lines not shown`)
          }
        }))
      )
  )

/** SIGTERM, then SIGKILL if it has not exited within 10 s. */
const stop = (child: ChildProcess) =>
  Effect.async<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done(Effect.void)
    child.on("exit", () => done(Effect.void))
    child.kill("SIGTERM")
  }).pipe(
    Effect.timeoutTo({
      duration: "10 seconds",
      onSuccess: () => Effect.void,
      onTimeout: () => Effect.sync(() => void child.kill("SIGKILL"))
    }),
    Effect.flatten
  )

const waitFor = (done: () => boolean, timeoutMs: number) =>
  Effect.sleep("20 millis").pipe(
    Effect.repeat({ until: done }),
    Effect.timeout(timeoutMs),
    Effect.option
  )

const triple = (values: ReadonlyArray<number>) =>
  `${shownMs(percentile(values, 0.5))}/${shownMs(percentile(values, 0.99))}/${shownMs(values.at(-1) ?? Number.NaN)} ms`

const COLUMNS = [
  ["pods", 8],
  ["peak RSS", 9],
  ["cpu", 8],
  ["cpu/pod", 9],
  ["created/s", 10],
  ["True p50/p99/max", 22],
  ["status delay p50/p99/max", 26],
  ["ended True", 11]
] as const

const line = (cells: ReadonlyArray<string>) =>
  cells.map((cell, i) => i === 0 ? cell.padEnd(COLUMNS[i]![1]) : cell.padStart(COLUMNS[i]![1])).join(" ")

/** A fresh cluster for the controller run or its floor, as the bench sees it. */
interface ControllerCluster {
  readonly info: ClusterInfo
  /** Its kubeconfig's file. */
  readonly kubeconfig: string
  readonly endpoint: Endpoint
  /** Each Ingress's first appearance (real only) and first status write, by `Ingress/<name>`. */
  readonly times: IngressTimes
  /** The server's CPU so far, ms: LocalCluster's process, or kube-apiserver's + etcd's. */
  readonly cpuMs: Effect.Effect<number>
  readonly requests: Effect.Effect<Record<string, number>>
  /** How often the server ended the bench's watch of Ingresses and it was opened again. */
  readonly watchRestarts: () => number
}

const localCluster = (installed: InstalledScripts) =>
  Effect.gen(function*() {
    const written = new Map<string, number>()
    const cluster: ClusterProcess = yield* clusterProcess(written, {
      controllers: "at-once",
      controllerDelayMs: SCALE_CONTROLLER_DELAY_MS,
      script: installed.scripts.cluster!
    })
    const kc = new k8s.KubeConfig()
    kc.loadFromString(cluster.info.kubeconfig)
    return {
      info: cluster.info,
      kubeconfig: yield* kubeconfigFile(cluster.info.kubeconfig, "controller"),
      endpoint: endpointOf(kc),
      times: { added: new Map(), written },
      cpuMs: cluster.cpuMs,
      requests: requestsByVerb(cluster.info.server),
      watchRestarts: () => 0
    } satisfies ControllerCluster
  })

const realCluster = Effect.gen(function*() {
  const cp = yield* realControlPlane
  const times: IngressTimes = { added: new Map(), written: new Map() }
  const watch = yield* watchIngresses(cp.endpoint, cp.info.namespace, times)
  return {
    info: cp.info,
    kubeconfig: cp.kubeconfig,
    endpoint: cp.endpoint,
    times,
    cpuMs: Effect.sync(() => {
      const { apiServer, etcd } = cp.serverCpuMs()
      return apiServer + etcd
    }),
    requests: serverRequestsByVerb(cp.endpoint),
    watchRestarts: watch.restarts
  } satisfies ControllerCluster
})

const freshCluster = (installed: InstalledScripts, kind: BenchCluster) =>
  kind === "real" ? realCluster : localCluster(installed)

const names = Array.from({ length: PODS }, (_, i) => `pod-${i}`)
const sessionOf = (name: string) => `s${name.slice("pod-".length)}`

/**
 * The floor under the controller's publishes: in a fresh cluster of the same kind, the
 * same Pods (Running, against the real control plane, so that their objects' owner is
 * theirs), and their objects published all at once over bare node:http; its wall time, ms.
 */
const floorPublishMs = (installed: InstalledScripts, kind: BenchCluster) =>
  Effect.scoped(Effect.gen(function*() {
    const cluster = yield* freshCluster(installed, kind)
    const uids = kind === "real"
      ? yield* runningPods(cluster.endpoint, cluster.info.namespace, names)
      : names.map((_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`)
    const config = yield* Effect.orDie(Effect.provide(
      RouterConfig,
      RouterConfigLive.layerFrom({
        sessionNamespace: cluster.info.namespace,
        baseDomain: cluster.info.baseDomain,
        ingressClassName: cluster.info.ingressClassName
      })
    ))
    const published = yield* Effect.promise(() =>
      barePublish(
        {
          ...cluster.endpoint,
          settings: {
            sessionNamespace: config.sessionNamespace,
            managedBy: config.managedBy,
            baseDomain: config.baseDomain!,
            ...(config.ingressClassName !== undefined ? { ingressClassName: config.ingressClassName } : {})
          }
        },
        names.map((name, i) => ({
          sessionId: sessionOf(name),
          podName: name,
          podUid: uids[i]!,
          ports: PORTS.map((port) => ({ port, protocol: "tcp" as const }))
        }))
      )
    )
    return published.wallMs
  }))

/** Runs the controller over `PODS` Pods; prints one row, how it ran, and its target. */
export const controller: Effect.Effect<boolean> = Effect.gen(function*() {
  const kind = yield* Effect.orDieWith(benchCluster(process.env.BENCH_CLUSTER), (line) => new Error(line))
  const installed = yield* installedScripts({ cluster: "clusterProcess.ts" }).pipe(
    Effect.orDieWith((why) => new Error(`installing the packed packages for the controller run failed: ${why}`))
  )
  const bin = path.join(installed.dir, "node_modules", "session-routing", "bin", "session-routing.js")
  const measured = yield* Effect.scoped(Effect.gen(function*() {
    const cluster = yield* freshCluster(installed, kind)
    const { endpoint, info } = cluster
    const seen = new Map<string, Seen>()
    const podWatch = yield* watchPods(endpoint, info.namespace, seen)
    const started = Date.now()
    const controller = yield* controllerProcess(bin, installed.dir, measuredEnv(info, cluster.kubeconfig))

    // One Pod first, not counted: the controller's start (its first list and watch) is not
    // a Pod's latency. It is True once the controller routes.
    const warm = yield* createPods(endpoint, info.namespace, [sessionPod("warm-up", "warmup")])
    if (warm.failed.length > 0) return yield* Effect.dieMessage(`creating the first Pod failed: ${warm.failed[0]}`)
    const warmed = yield* waitFor(() => seen.get("warm-up")?.trueAt !== undefined, 60_000)
    const startupMs = Date.now() - started
    const before = processUsage(controller.child.pid!)
    const cpuClusterBefore = yield* cluster.cpuMs
    const requestsBefore = yield* cluster.requests

    const ingressOf = (name: string) => `Ingress/${sessionObjectName(sessionOf(name))}`
    const createStart = Date.now()
    const created = yield* createPods(endpoint, info.namespace, names.map((name) => sessionPod(name, sessionOf(name))))
    const createWallMs = Date.now() - createStart
    const expected = PODS - created.failed.length
    const allTrue = () => names.filter((name) => seen.get(name)?.trueAt !== undefined).length >= expected
    const settled = yield* waitFor(allTrue, settleTimeoutMs(kind))
    const after = processUsage(controller.child.pid!)
    const clusterCpuMs = (yield* cluster.cpuMs) - cpuClusterBefore
    const requests = difference(yield* cluster.requests, requestsBefore)

    // A write reaches the controller as it reaches the bench, and the two race: wait,
    // bounded, for the write behind each True.
    const writes = cluster.times.written
    const unmatched = () => names.filter((name) => seen.get(name)?.trueAt !== undefined && !writes.has(ingressOf(name)))
    yield* waitFor(() => unmatched().length === 0, 5_000)
    const between = (from: (name: string) => number | undefined, to: (name: string) => number | undefined) =>
      names.flatMap((name) => {
        const a = from(name)
        const b = to(name)
        return a === undefined || b === undefined ? [] : [b - a]
      }).sort((x, y) => x - y)
    const added = (name: string) => seen.get(name)?.added
    const wrote = (name: string) => writes.get(ingressOf(name))
    return {
      startupMs,
      warmed: warmed._tag === "Some",
      warmCpuMs: before.cpuMs,
      peakRssKiB: after.peakRssKiB,
      cpuMs: after.cpuMs - before.cpuMs,
      createWallMs,
      created,
      settled: settled._tag === "Some",
      clusterCpuMs,
      requests,
      conditionLines: Object.entries(controller.lines).map(([status, n]) => `${n} ${status}`).join(", "),
      toCondition: between(added, (name) => seen.get(name)?.conditionAt),
      toWrite: between(added, wrote),
      afterWrite: between(wrote, (name) => seen.get(name)?.trueAt),
      latencies: between(added, (name) => seen.get(name)?.trueAt),
      // The controller's own delay: from its Ingress's first appearance to its status, as
      // a watch sees both; LocalCluster's is what it was set to.
      statusDelays: kind === "real"
        ? between((name) => cluster.times.added.get(ingressOf(name)), wrote)
        : names.map(() => SCALE_CONTROLLER_DELAY_MS),
      endedTrue: names.filter((name) => seen.get(name)?.status === "True").length,
      watchRestarts: podWatch.restarts() + cluster.watchRestarts()
    }
  }))
  const floorMs = yield* floorPublishMs(installed, kind)
  const m = measured
  const p99 = (values: ReadonlyArray<number>) => percentile(values, 0.99)
  const delayP99 = p99(m.statusDelays)
  console.log(
    `\ncontroller mode (BENCH_CLUSTER=${kind}): ${PODS.toLocaleString("en-US")} session Pods x ${PORTS.length} ports` +
      ` created at once, one \`session-routing controller\` process (every default, no leader election), ${
        kind === "real"
          ? "the real control plane, Traefik writing the status"
          : `LocalCluster, status written ${SCALE_CONTROLLER_DELAY_MS / 1_000} s after each object`
      }; latency: Pod ADDED to condition True on a watch of Pods; status delay: the Ingress's first appearance` +
      ` to its status write`
  )
  console.log(line(COLUMNS.map(([name]) => name)))
  console.log(line([
    `${PODS.toLocaleString("en-US")}x${PORTS.length}`,
    `${(m.peakRssKiB / 1024).toFixed(0)} MiB`,
    `${(m.cpuMs / 1_000).toFixed(1)} s`,
    `${(m.cpuMs / PODS).toFixed(2)} ms`,
    (PODS / (m.createWallMs / 1_000)).toFixed(0),
    triple(m.latencies),
    triple(m.statusDelays),
    `${m.endedTrue}/${PODS}`
  ]))
  console.log(
    `info controller: node ${path.relative(installed.dir, bin)} controller --no-leader-elect -o json in the` +
      ` installed project (packed packages), env: kubeconfig, namespace, base domain, IngressClass only;` +
      ` started and routed a first Pod in ${(m.startupMs / 1_000).toFixed(1)} s${
        m.warmed ? "" : " (it never went True)"
      } (${(m.warmCpuMs / 1_000).toFixed(1)} s CPU), not counted;` +
      ` ${PODS} Pods created over ${CREATE_SOCKETS} connections in ${(m.createWallMs / 1_000).toFixed(1)} s` +
      `${m.created.retried > 0 ? ` (${m.created.retried} creates retried)` : ""}` +
      `${
        m.created.failed.length > 0 ? `, ${m.created.failed.length} failed, the first: ${m.created.failed[0]}` : ""
      };` +
      ` CPU from the first create to the last True: ${(m.cpuMs / 1_000).toFixed(1)} s controller,` +
      ` ${(m.clusterCpuMs / 1_000).toFixed(1)} s ${kind === "real" ? "kube-apiserver + etcd" : "cluster"};` +
      ` condition lines printed: ${m.conditionLines || "none"};` +
      ` from ADDED p50/p99/max: first condition ${triple(m.toCondition)}, the Ingress's status write ${
        triple(m.toWrite)
      } (${m.toWrite.length} matched); that write to True ${triple(m.afterWrite)};` +
      ` the floor: the same ${PODS} Pods' objects published at once over bare node:http in ${
        (floorMs / 1_000).toFixed(1)
      } s; the server ended the bench's watches ${m.watchRestarts} times (each opened again from where it was); requests${
        kind === "real" ? " (every client's)" : ""
      }: ${verbs(m.requests)}${m.settled ? "" : `; the wait ran out after ${settleTimeoutMs(kind) / 1_000} s`}`
  )
  const bound = delayP99 + floorMs
  const times = p99(m.latencies) / bound
  const checks: ReadonlyArray<Check> = [
    {
      name: `${PODS.toLocaleString("en-US")} Pods: every Pod ends True`,
      ok: m.endedTrue === PODS,
      said: `${m.endedTrue} True`
    },
    {
      name: `${
        PODS.toLocaleString("en-US")
      } Pods: creation to True p99 <= 1.5x (the controller's status delay p99 + the floor's publish time)`,
      // Set against the real control plane; against LocalCluster, printed.
      ok: kind === "real" ? times <= 1.5 : undefined,
      said: `${shownMs(p99(m.latencies))} ms vs ${shownMs(delayP99)} + ${shownMs(floorMs)} = ${shownMs(bound)} ms (${
        times.toFixed(2)
      }x)`
    }
  ]
  return printChecks(checks)
}).pipe(Effect.scoped)
