/**
 * Controller mode at scale: `session-routing controller` as a user runs it (the installed
 * CLI binary of the packed package, its own process, every default, no leader election)
 * against LocalCluster in its own process, controllers writing status 5 s after each
 * object. 1,000 session Pods of three ports are created at once over HTTP; a watch of
 * the Pods, as a kubelet has one, times each from its ADDED to its condition True.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import * as readline from "node:readline"
import { sessionObjectName } from "../src/domain/Manifests.js"
import type { Pod } from "../src/domain/Objects.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../src/domain/PodRouting.js"
import {
  clusterProcess,
  difference,
  kubeconfigFile,
  measuredEnv,
  requestsByVerb,
  SCALE_CONTROLLER_DELAY_MS
} from "./health.js"
import { type Check, printChecks, verbs } from "./healthReport.js"
import { installedScripts } from "./installed.js"
import { instantMs, percentile, shownMs } from "./processStats.js"

const PODS = 1_000
/** As bench/scaleRunner.ts publishes its sessions: 8080, 8081 and 8082. */
const PORTS = [8080, 8081, 8082] as const
/** Requests in flight while creating the Pods: enough to keep the cluster busy. */
const CREATE_SOCKETS = 32
/** How long after the last create the bench waits for every Pod to end True. */
const SETTLE_TIMEOUT_MS = 180_000
/** A create refused with 429 or 5xx is tried again, at most this many times. */
const CREATE_ATTEMPTS = 10
/** Lines of the controller's stderr (its logs) shown; the rest are only counted. */
const CONTROLLER_LINES_SHOWN = 5
/** A bound on one watch line: a Pod object is a few KiB. */
const MAX_WATCH_LINE = 1024 * 1024

interface Endpoint {
  readonly server: URL
  readonly token: string | undefined
}

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

const headers = (endpoint: Endpoint): http.OutgoingHttpHeaders =>
  endpoint.token === undefined ? {} : { authorization: `Bearer ${endpoint.token}` }

/**
 * A watch of the session Pods over bare node:http, open (headers received) when it
 * succeeds; every event lands in `seen`. Closed with the scope.
 */
const watchPods = (endpoint: Endpoint, namespace: string, seen: Map<string, Seen>) =>
  Effect.acquireRelease(
    Effect.async<http.ClientRequest, string>((resume) => {
      const request = http.get(
        new URL(
          `${podsPath(namespace)}?watch=true&labelSelector=${encodeURIComponent(SESSION_LABEL)}`,
          endpoint.server
        ),
        { headers: headers(endpoint) },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume()
            return resume(Effect.fail(`the watch of Pods answered ${response.statusCode}`))
          }
          // Destroying the request at the end resets the response: that is the end, not a failure.
          response.on("error", () => {})
          const lines = readline.createInterface({ input: response })
          lines.on("error", () => {})
          lines.on("line", (line) => {
            if (line.length > MAX_WATCH_LINE) return
            const at = instantMs()
            const event = JSON.parse(line) as { type: string; object: Pod }
            const name = event.object.metadata?.name ?? ""
            if (event.type !== "ADDED" && event.type !== "MODIFIED") return
            const entry = seen.get(name) ?? { added: at, conditionAt: undefined, trueAt: undefined, status: undefined }
            seen.set(name, entry)
            const status = event.object.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status
            entry.status = status
            if (status !== undefined && entry.conditionAt === undefined) entry.conditionAt = at
            if (status === "True" && entry.trueAt === undefined) entry.trueAt = at
          })
          resume(Effect.succeed(request))
        }
      )
      request.on("error", (error) => resume(Effect.fail(`the watch of Pods failed: ${error.message}`)))
    }),
    (request) => Effect.sync(() => request.destroy())
  )

/** One POST of a Pod; answers the status code and the Status message of a refusal. */
const post = (endpoint: Endpoint, namespace: string, pod: Pod, agent: http.Agent) =>
  new Promise<{ readonly code: number; readonly message: string }>((resolve) => {
    const body = JSON.stringify(pod)
    const request = http.request(new URL(podsPath(namespace), endpoint.server), {
      method: "POST",
      agent,
      headers: { ...headers(endpoint), "content-type": "application/json", "content-length": Buffer.byteLength(body) }
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
    const agent = new http.Agent({ keepAlive: true, maxSockets: CREATE_SOCKETS })
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
  ["less delay p50/p99/max", 24],
  ["ended True", 11]
] as const

const line = (cells: ReadonlyArray<string>) =>
  cells.map((cell, i) => i === 0 ? cell.padEnd(COLUMNS[i]![1]) : cell.padStart(COLUMNS[i]![1])).join(" ")

/** Runs the controller over `PODS` Pods; prints one row, how it ran, and its target. */
export const controller: Effect.Effect<boolean> = Effect.gen(function*() {
  const installed = yield* installedScripts({ cluster: "clusterProcess.ts" }).pipe(
    Effect.orDieWith((why) => new Error(`installing the packed packages for the controller run failed: ${why}`))
  )
  const bin = path.join(installed.dir, "node_modules", "session-routing", "bin", "session-routing.js")
  // Each Ingress's first status write, as the cluster process prints it.
  const writes = new Map<string, number>()
  const cluster = yield* clusterProcess(writes, {
    controllers: "at-once",
    controllerDelayMs: SCALE_CONTROLLER_DELAY_MS,
    script: installed.scripts.cluster!
  })
  const { info } = cluster
  const kc = new k8s.KubeConfig()
  kc.loadFromString(info.kubeconfig)
  const endpoint: Endpoint = { server: new URL(info.server), token: kc.getCurrentUser()?.token }
  const kubeconfig = yield* kubeconfigFile(info.kubeconfig, "controller")
  const seen = new Map<string, Seen>()
  yield* Effect.orDie(watchPods(endpoint, info.namespace, seen))
  const started = Date.now()
  const controller = yield* controllerProcess(bin, installed.dir, measuredEnv(info, kubeconfig))

  // One Pod first, not counted: the controller's start (its first list and watch) is not
  // a Pod's latency. It is True once the controller routes.
  const warm = yield* createPods(endpoint, info.namespace, [sessionPod("warm-up", "warmup")])
  if (warm.failed.length > 0) return yield* Effect.dieMessage(`creating the first Pod failed: ${warm.failed[0]}`)
  const warmed = yield* waitFor(() => seen.get("warm-up")?.trueAt !== undefined, 60_000)
  const startupMs = Date.now() - started
  const before = processUsage(controller.child.pid!)
  const cpuClusterBefore = yield* cluster.cpuMs
  const requestsBefore = yield* requestsByVerb(info.server)

  const names = Array.from({ length: PODS }, (_, i) => `pod-${i}`)
  const sessionOf = (name: string) => `s${name.slice("pod-".length)}`
  const ingressOf = (name: string) => `Ingress/${sessionObjectName(sessionOf(name))}`
  const createStart = Date.now()
  const created = yield* createPods(endpoint, info.namespace, names.map((name) => sessionPod(name, sessionOf(name))))
  const createWallMs = Date.now() - createStart
  const expected = PODS - created.failed.length
  const allTrue = () => names.filter((name) => seen.get(name)?.trueAt !== undefined).length >= expected
  const settled = yield* waitFor(allTrue, SETTLE_TIMEOUT_MS)
  const after = processUsage(controller.child.pid!)
  const clusterCpuMs = (yield* cluster.cpuMs) - cpuClusterBefore
  const requests = difference(yield* requestsByVerb(info.server), requestsBefore)

  // A write reaches the controller after the cluster printed it, but the two pipes race:
  // wait, bounded, for the write behind each True.
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
  const toCondition = between(added, (name) => seen.get(name)?.conditionAt)
  const toWrite = between(added, wrote)
  const afterWrite = between(wrote, (name) => seen.get(name)?.trueAt)
  const latencies = names.flatMap((name) => {
    const entry = seen.get(name)
    return entry?.trueAt === undefined ? [] : [entry.trueAt - entry.added]
  }).sort((a, b) => a - b)
  const endedTrue = names.filter((name) => seen.get(name)?.status === "True").length
  const cpuMs = after.cpuMs - before.cpuMs
  console.log(
    `\ncontroller mode: ${PODS.toLocaleString("en-US")} session Pods x ${PORTS.length} ports created at once,` +
      ` one \`session-routing controller\` process (every default, no leader election), status written` +
      ` ${
        SCALE_CONTROLLER_DELAY_MS / 1_000
      } s after each object; latency: Pod ADDED to condition True on a watch of Pods`
  )
  console.log(line(COLUMNS.map(([name]) => name)))
  console.log(line([
    `${PODS.toLocaleString("en-US")}x${PORTS.length}`,
    `${(after.peakRssKiB / 1024).toFixed(0)} MiB`,
    `${(cpuMs / 1_000).toFixed(1)} s`,
    `${(cpuMs / PODS).toFixed(2)} ms`,
    (PODS / (createWallMs / 1_000)).toFixed(0),
    triple(latencies),
    triple(latencies.map((ms) => ms - SCALE_CONTROLLER_DELAY_MS)),
    `${endedTrue}/${PODS}`
  ]))
  const conditionLines = Object.entries(controller.lines).map(([status, n]) => `${n} ${status}`).join(", ")
  console.log(
    `info controller: node ${path.relative(installed.dir, bin)} controller --no-leader-elect -o json in the` +
      ` installed project (packed packages), env: kubeconfig, namespace, base domain, IngressClass only;` +
      ` started and routed a first Pod in ${(startupMs / 1_000).toFixed(1)} s${
        warmed._tag === "None" ? " (it never went True)" : ""
      } (${(before.cpuMs / 1_000).toFixed(1)} s CPU), not counted;` +
      ` ${PODS} Pods created over ${CREATE_SOCKETS} connections in ${(createWallMs / 1_000).toFixed(1)} s` +
      `${created.retried > 0 ? ` (${created.retried} creates retried)` : ""}` +
      `${created.failed.length > 0 ? `, ${created.failed.length} failed, the first: ${created.failed[0]}` : ""};` +
      ` CPU from the first create to the last True: ${(cpuMs / 1_000).toFixed(1)} s controller,` +
      ` ${(clusterCpuMs / 1_000).toFixed(1)} s cluster; condition lines printed: ${conditionLines || "none"};` +
      ` from ADDED p50/p99/max: first condition ${triple(toCondition)}, the Ingress's status write ${
        triple(toWrite)
      } (${toWrite.length} matched); that write to True ${triple(afterWrite)};` +
      ` requests: ${verbs(requests)}${
        settled._tag === "None" ? `; the wait ran out after ${SETTLE_TIMEOUT_MS / 1_000} s` : ""
      }`
  )
  const checks: ReadonlyArray<Check> = [
    {
      name: `${PODS.toLocaleString("en-US")} Pods: every Pod ends True`,
      ok: endedTrue === PODS,
      said: `${endedTrue} True`
    },
    {
      name: `${PODS.toLocaleString("en-US")} Pods: creation to True p99`,
      ok: undefined,
      said: `${shownMs(percentile(latencies, 0.99))} ms (${
        shownMs(percentile(latencies, 0.99) - SCALE_CONTROLLER_DELAY_MS)
      } ms beyond the delay)`
    }
  ]
  return printChecks(checks)
}).pipe(Effect.scoped)
