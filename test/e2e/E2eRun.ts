/**
 * One run of the end-to-end suite on its target: a fresh namespace with a run label on
 * it and on everything else the run creates, deleted when the run ends; the command
 * that cleans up after a crashed run, printed first; and the two clients a maintainer
 * would use, kubectl (as the admin, for the fixtures) and the `session-routing` binary.
 */
import { Context, Duration, Effect, Layer, type Scope } from "effect"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { inject } from "vitest"
import { LABEL_SESSION_ID, sessionObjectName } from "../../src/domain/Manifests.js"
import type { Pod } from "../../src/domain/Objects.js"
import { PORTS_ANNOTATION, ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"
import { type CliProcess, startCli, startProcess } from "../cli/CliProcess.js"
import { type E2eTarget, e2eTarget, realTargetFromEnv } from "./E2eTarget.js"

/** The label on everything a run creates, valued with the run's id. */
export const RUN_LABEL = "session-routing.dev/e2e"

/** How a process ended and what it printed. */
export interface ProcessRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The routing mode a journey publishes with, and the configuration it changes. */
export interface CliSettings {
  readonly mode: "ingress" | "gateway"
  /** Variables over the mode's defaults; an empty value unsets one. */
  readonly env?: Readonly<Record<string, string>>
  /** Another kubeconfig than the admin's (the least-privilege journey's); false for `render`, which reads none. */
  readonly kubeconfig?: string | false
}

/** A session's Pod, as its routing objects' owner names it. */
export interface SessionPod {
  readonly name: string
  readonly uid: string
}

export interface SessionPodOptions {
  readonly ready?: boolean
  readonly serve?: boolean
  /**
   * A Pod for controller mode: `session-<id>`, labelled with the session and its ports
   * annotated, gated on the routes condition, and without the session Service's label
   * (the controller writes it).
   */
  readonly gated?: boolean
  /** Another name than the default (two Pods of one session need two). */
  readonly name?: string
  /** Labels over the default ones (a mark the controller would have written). */
  readonly labels?: Readonly<Record<string, string>>
}

export interface E2eRun {
  readonly target: E2eTarget
  readonly runId: string
  /** The run's namespace, where every session lives. */
  readonly namespace: string
  /** `session-routing.dev/e2e=<run id>`. */
  readonly selector: string
  /** Runs kubectl as the admin; a non-zero exit is a failure carrying its stderr. */
  readonly kubectl: (args: ReadonlyArray<string>, stdin?: string) => Effect.Effect<string, string>
  /** Runs kubectl with `kubeconfig` and reports how it ended, whatever the exit. */
  readonly kubectlAs: (kubeconfig: string, args: ReadonlyArray<string>) => Effect.Effect<ProcessRun>
  /** Starts kubectl as the admin for the scope, for a command that runs on (`get -w`). */
  readonly startKubectl: (args: ReadonlyArray<string>) => Effect.Effect<CliProcess, never, Scope.Scope>
  /** Runs `session-routing <args>` to its end (within the route wait and a margin). */
  readonly cli: (args: ReadonlyArray<string>, settings: CliSettings) => Effect.Effect<ProcessRun, string>
  /** Starts `session-routing <args>` for the scope, for a journey that talks to it while it runs. */
  readonly startCli: (
    args: ReadonlyArray<string>,
    settings: CliSettings
  ) => Effect.Effect<CliProcess, never, Scope.Scope>
  /**
   * Creates `telo-run-<session>` in the run's namespace, one container per port serving
   * HTTP on it; with `serve`, runs its workload where the target's kubelet does not (the
   * ports must then come from `target.servedPort`); with `ready`, waits until it is Ready.
   */
  readonly sessionPod: (
    sessionId: string,
    ports: ReadonlyArray<number>,
    options?: SessionPodOptions
  ) => Effect.Effect<SessionPod, string, Scope.Scope>
}

/**
 * Whether a probe has somewhere to go on a real cluster: an address the Gateway published
 * (up.sh waits until it has one before the suite runs) or `SESSION_ROUTING_E2E_PROBE_ADDRESS`.
 * Read once when the suite is collected, so a journey without one is reported skipped.
 */
export const probeReachable = async (): Promise<boolean> => {
  const target = realTargetFromEnv()
  if (target === undefined || target.probe.address !== undefined) return true
  const read = await Effect.runPromise(runProcess(kubectlPath(), [
    "--kubeconfig",
    target.kubeconfig,
    ...(target.context === undefined ? [] : ["--context", target.context]),
    "get",
    "-n",
    target.names.gatewayNamespace,
    `gateway/${target.names.gatewayName}`,
    "-o",
    "jsonpath={.status.addresses[0].value}"
  ], { timeout: Duration.seconds(30) }))
  return read.code === 0 && read.stdout.trim() !== ""
}

export class E2e extends Context.Tag("test/e2e/E2e")<E2e, E2eRun>() {}

const kubectlPath = (): string => inject("bundledKubectl") ?? process.env.KUBECTL ?? "kubectl"

/** Runs `path` with `args` and `stdin`; never fails: the exit code says how it went. */
export const runProcess = (
  path: string,
  args: ReadonlyArray<string>,
  options: { readonly stdin?: string; readonly timeout: Duration.Duration }
): Effect.Effect<ProcessRun> =>
  Effect.async<ProcessRun>((resume) => {
    const child = execFile(
      path,
      [...args],
      { timeout: Duration.toMillis(options.timeout), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr: error !== null && stderr === "" ? error.message : stderr }))
      }
    )
    child.stdin?.end(options.stdin ?? "")
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** The session Pod: a container per port, each `netexec` serving HTTP there and Ready once it does. */
const podManifest = (
  target: E2eTarget,
  namespace: string,
  runId: string,
  sessionId: string,
  ports: ReadonlyArray<number>,
  options: SessionPodOptions
) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: options.gated === true
    ? {
      name: options.name ?? `session-${sessionId}`,
      namespace,
      labels: { [RUN_LABEL]: runId, [SESSION_LABEL]: sessionId, ...options.labels },
      annotations: { [PORTS_ANNOTATION]: ports.join(",") }
    }
    : {
      name: options.name ?? sessionObjectName(sessionId),
      namespace,
      labels: { [RUN_LABEL]: runId, [LABEL_SESSION_ID]: sessionId, ...options.labels }
    },
  spec: {
    ...(options.gated === true ? { readinessGates: [{ conditionType: ROUTES_CONDITION }] } : {}),
    containers: ports.map((port) => ({
      name: `http-${port}`,
      image: target.names.podImage,
      // netexec also serves UDP, on 8081 unless told; -1 turns that off, so containers never clash.
      args: ["netexec", `--http-port=${port}`, "--udp-port=-1"],
      ports: [{ name: `http-${port}`, containerPort: port, protocol: "TCP" }],
      readinessProbe: { httpGet: { path: "/", port } }
    })),
    terminationGracePeriodSeconds: 1
  }
})

const makeRun: Effect.Effect<E2eRun, unknown, Scope.Scope> = Effect.gen(function*() {
  const target = yield* e2eTarget
  const runId = randomBytes(4).toString("hex")
  const namespace = `session-routing-e2e-${runId}`
  const selector = `${RUN_LABEL}=${runId}`
  const contextFlags = target.context === undefined ? [] : ["--context", target.context]
  const kubectlAs = (kubeconfig: string, args: ReadonlyArray<string>, stdin?: string) =>
    runProcess(kubectlPath(), ["--kubeconfig", kubeconfig, ...contextFlags, ...args], {
      ...(stdin !== undefined ? { stdin } : {}),
      timeout: Duration.sum(target.waits.gatewayAddress, Duration.seconds(30))
    })
  const kubectl = (args: ReadonlyArray<string>, stdin?: string) =>
    Effect.flatMap(
      kubectlAs(target.kubeconfig, args, stdin),
      (run) =>
        run.code === 0
          ? Effect.succeed(run.stdout)
          : Effect.fail(`kubectl ${args.join(" ")} exited ${run.code}: ${run.stderr.trim()}`)
    )

  const cleanup = `kubectl delete namespace,clusterrole,clusterrolebinding,ingressclass -l ${selector}`
  console.log(`session-routing e2e run ${runId} against ${target.description}`)
  console.log(`after a crashed run, clean up with: ${cleanup}`)
  yield* Effect.acquireRelease(
    kubectl(
      ["create", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: namespace, labels: { [RUN_LABEL]: runId } }
      })
    ),
    () =>
      kubectl(["delete", "namespace,clusterrole,clusterrolebinding,ingressclass", "-l", selector, "--wait=false"]).pipe(
        Effect.catchAll((reason) => Effect.sync(() => console.error(`cleanup failed (${reason}); run: ${cleanup}`)))
      )
  )

  const modeEnv = (settings: CliSettings): Record<string, string> => {
    const shared = {
      SESSION_ROUTING_BASE_DOMAIN: target.names.baseDomain,
      RUNNER_SESSION_NAMESPACE: namespace,
      SESSION_ROUTE_READY_TIMEOUT_MS: String(Duration.toMillis(target.waits.route))
    }
    const mode = settings.mode === "ingress"
      ? { SESSION_ROUTING_MODE: "ingress", SESSION_INGRESS_CLASS: target.names.ingressClass }
      : {
        SESSION_ROUTING_MODE: "gateway",
        SESSION_GATEWAY_NAME: target.names.gatewayName,
        SESSION_GATEWAY_NAMESPACE: target.names.gatewayNamespace
      }
    const env: Record<string, string> = { ...shared, ...mode, ...settings.env }
    for (const [name, value] of Object.entries(env)) if (value === "") delete env[name]
    return env
  }
  const cliArgs = (args: ReadonlyArray<string>, settings: CliSettings) =>
    settings.kubeconfig === false
      ? args
      : [...args, "--kubeconfig", settings.kubeconfig ?? target.kubeconfig, ...contextFlags]
  const cli = (args: ReadonlyArray<string>, settings: CliSettings) =>
    Effect.scoped(Effect.gen(function*() {
      const command = yield* startCli(cliArgs(args, settings), modeEnv(settings))
      const ended = yield* command.ended(Duration.sum(target.waits.route, Duration.seconds(30)))
      return { code: ended.code ?? -1, stdout: command.stdout(), stderr: command.stderr() }
    }))

  const sessionPod = (sessionId: string, ports: ReadonlyArray<number>, options: SessionPodOptions = {}) =>
    Effect.gen(function*() {
      const manifest = podManifest(target, namespace, runId, sessionId, ports, options)
      const created = JSON.parse(yield* kubectl(["create", "-f", "-", "-o", "json"], JSON.stringify(manifest))) as Pod
      const name = created.metadata?.name ?? ""
      if (options.serve === true) yield* target.runWorkload({ namespace, name, ports })
      if (options.ready === true) {
        const within = `${Duration.toSeconds(target.waits.gatewayAddress)}s`
        yield* kubectl(["wait", "-n", namespace, "--for=condition=Ready", `pod/${name}`, `--timeout=${within}`])
      }
      return { name, uid: created.metadata?.uid ?? "" }
    })

  // The journeys start once the Gateway is Programmed (up.sh waited for it too); one that
  // never is fails the gateway journeys with their own messages, so this only logs.
  yield* kubectl([
    "wait",
    "-n",
    target.names.gatewayNamespace,
    "--for=condition=Programmed",
    `gateway/${target.names.gatewayName}`,
    `--timeout=${Duration.toSeconds(target.waits.gatewayAddress)}s`
  ]).pipe(Effect.catchAll((reason) => Effect.sync(() => console.log(`the Gateway is not Programmed: ${reason}`))))

  return {
    target,
    runId,
    namespace,
    selector,
    kubectl,
    kubectlAs: (kubeconfig, args) => kubectlAs(kubeconfig, args),
    startKubectl: (args) =>
      startProcess(kubectlPath(), ["--kubeconfig", target.kubeconfig, ...contextFlags, ...args], {
        HOME: process.env.HOME ?? ""
      }),
    cli,
    startCli: (args, settings) => startCli(cliArgs(args, settings), modeEnv(settings)),
    sessionPod
  }
})

/** The run for the suite: set up once, its namespace deleted when the suite ends. */
export const E2eLive: Layer.Layer<E2e, unknown> = Layer.scoped(E2e, makeRun)
