/**
 * The cluster the end-to-end journeys run against, one of three:
 * - the real control plane `npm run test:cluster` starts (test/control-plane: kube-apiserver,
 *   its controllers, kwok's Pods, Traefik) with the Gateway of test/e2e/cluster/gateway.yaml;
 * - another real cluster, the one `SESSION_ROUTING_E2E_KUBECONFIG` names (kind, as
 *   test/e2e/cluster/up.sh sets it up: IngressClass `nginx`, GatewayClass `eg`);
 * - LocalCluster inside `npm test`, set up with kind's names and the same Gateway.
 * The journeys see only a kubeconfig, names and waits; what differs is how long a
 * controller may take, and who runs a Pod's containers.
 */
import { SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Scope } from "effect"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { parseAllDocuments } from "yaml"
import type { Gateway } from "../../src/domain/Objects.js"
import type { ControlPlaneInfo } from "../control-plane/ControlPlaneProcess.js"
import { httpServerAt, loopbackServer } from "../support/LoopbackServer.js"

/** The names a cluster's setup chose, each from its variable, with the defaults of up.sh. */
export interface E2eNames {
  readonly ingressClass: string
  readonly gatewayClass: string
  readonly gatewayController: string
  readonly gatewayName: string
  readonly gatewayNamespace: string
  readonly baseDomain: string
  /** The image of a session Pod's containers: one `netexec --http-port=<port>` per routed port. */
  readonly podImage: string
}

/** What a journey may wait for, in the Gateway API conformance tests' terms. */
export interface E2eWaits {
  /** For a route's conditions, and so `SESSION_ROUTE_READY_TIMEOUT_MS` (conformance: 60 s). */
  readonly route: Duration.Duration
  /** For a Gateway's address, and a Pod to turn Ready (conformance: 180 s). */
  readonly gatewayAddress: Duration.Duration
}

/** A Pod whose containers a target runs (or stands in for). */
export interface WorkloadPod {
  readonly namespace: string
  readonly name: string
  readonly ports: ReadonlyArray<number>
}

export interface E2eTarget {
  /** For the log: `LocalCluster`, the real control plane, or the context and server of the kubeconfig. */
  readonly description: string
  /** Which of the three it is. */
  readonly kind: "local" | "control-plane" | "cluster"
  /** An admin kubeconfig: the suite creates namespaces, Pods and RBAC with it. */
  readonly kubeconfig: string
  readonly context: string | undefined
  readonly names: E2eNames
  readonly waits: E2eWaits
  /** Where the probe connects instead of the Gateway's published address, when set. */
  readonly probe: { readonly address?: string; readonly port?: number }
  /**
   * Runs a Pod's containers for the scope. A real cluster's kubelet does this once the
   * Pod is created, so there it does nothing. LocalCluster runs no containers, so one
   * server on 127.0.0.1 answering 200 stands in for them; kwok runs none either, so on
   * the real control plane a server per port listens at the Pod's address (the Node's).
   */
  readonly runWorkload: (pod: WorkloadPod) => Effect.Effect<void, string, Scope.Scope>
  /**
   * A port for a Pod whose workload runs: on the real control plane every Pod has the
   * Node's address, so a served port must be one free there; elsewhere `preferred`.
   */
  readonly servedPort: (preferred: number) => Effect.Effect<number, string>
  /**
   * Stops the API server and starts it again, succeeding once it answers: only the real
   * control plane this run started can.
   */
  readonly restartApiServer: Effect.Effect<void, string> | undefined
}

/** The variables `npm run test:cluster` reads, and the setup's names they default to. */
export const E2E_ENV = {
  kubeconfig: "SESSION_ROUTING_E2E_KUBECONFIG",
  context: "SESSION_ROUTING_E2E_CONTEXT",
  ingressClass: "SESSION_ROUTING_E2E_INGRESS_CLASS",
  gatewayClass: "SESSION_ROUTING_E2E_GATEWAY_CLASS",
  gatewayController: "SESSION_ROUTING_E2E_GATEWAY_CONTROLLER",
  gatewayName: "SESSION_ROUTING_E2E_GATEWAY_NAME",
  gatewayNamespace: "SESSION_ROUTING_E2E_GATEWAY_NAMESPACE",
  baseDomain: "SESSION_ROUTING_E2E_BASE_DOMAIN",
  podImage: "SESSION_ROUTING_E2E_POD_IMAGE",
  probeAddress: "SESSION_ROUTING_E2E_PROBE_ADDRESS",
  probePort: "SESSION_ROUTING_E2E_PROBE_PORT"
} as const

const DEFAULT_NAMES: E2eNames = {
  ingressClass: "nginx",
  gatewayClass: "eg",
  gatewayController: "gateway.envoyproxy.io/gatewayclass-controller",
  gatewayName: "sessions",
  gatewayNamespace: "session-routing-e2e",
  baseDomain: "sessions.localtest.me",
  podImage: "registry.k8s.io/e2e-test-images/agnhost:2.53"
}

/** The ingress-nginx controller's name, which LocalCluster's IngressClass `nginx` names too. */
const INGRESS_NGINX_CONTROLLER = "k8s.io/ingress-nginx"

const GATEWAY_FILE = new URL("cluster/gateway.yaml", import.meta.url)

/** A variable's value, or undefined when it is unset or blank. */
const variable = (name: string): string | undefined => {
  const value = process.env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

const namesFromEnv = (): E2eNames => ({
  ingressClass: variable(E2E_ENV.ingressClass) ?? DEFAULT_NAMES.ingressClass,
  gatewayClass: variable(E2E_ENV.gatewayClass) ?? DEFAULT_NAMES.gatewayClass,
  gatewayController: variable(E2E_ENV.gatewayController) ?? DEFAULT_NAMES.gatewayController,
  gatewayName: variable(E2E_ENV.gatewayName) ?? DEFAULT_NAMES.gatewayName,
  gatewayNamespace: variable(E2E_ENV.gatewayNamespace) ?? DEFAULT_NAMES.gatewayNamespace,
  baseDomain: variable(E2E_ENV.baseDomain) ?? DEFAULT_NAMES.baseDomain,
  podImage: variable(E2E_ENV.podImage) ?? DEFAULT_NAMES.podImage
})

/** The probe port variable as a port number; anything else is a setup error that names it. */
const probePortFromEnv = (): number | undefined => {
  const text = variable(E2E_ENV.probePort)
  if (text === undefined) return undefined
  const port = Number(text)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${E2E_ENV.probePort}=${JSON.stringify(text)} must be a port number, 1..65535`)
  }
  return port
}

/** The real cluster's target: only names, waits and the kubeconfig; its kubelet runs the Pods. */
const realTarget = (kubeconfig: string): E2eTarget => {
  const context = variable(E2E_ENV.context)
  const probeAddress = variable(E2E_ENV.probeAddress)
  const probePort = probePortFromEnv()
  return {
    description: `the cluster of ${kubeconfig}${context === undefined ? "" : ` (context ${context})`}`,
    kind: "cluster",
    kubeconfig,
    context,
    names: namesFromEnv(),
    waits: { route: Duration.seconds(60), gatewayAddress: Duration.seconds(180) },
    probe: {
      ...(probeAddress !== undefined ? { address: probeAddress } : {}),
      ...(probePort !== undefined ? { port: probePort } : {})
    },
    runWorkload: () => Effect.void,
    servedPort: (preferred) => Effect.succeed(preferred),
    restartApiServer: undefined
  }
}

/**
 * The real control plane the run's global setup started (ControlPlaneGlobalSetup.ts):
 * Traefik's classes, the suite's Gateway, the conformance waits, and a workload server per
 * port at the Node's address, which every kwok Pod has.
 */
const controlPlaneTarget = (info: ControlPlaneInfo): E2eTarget => {
  const [gatewayNamespace, gatewayName] = info.gateway.split("/") as [string, string]
  const dataPlane = new URL(info["data-plane"])
  const nodeAddress = info["node-address"]
  const control = info.control
  return {
    description: `the real control plane (Kubernetes ${info.kubernetes}, Traefik) at ${info.server}`,
    kind: "control-plane",
    kubeconfig: info.kubeconfig,
    context: undefined,
    names: {
      ingressClass: info["ingress-class"],
      gatewayClass: info["gateway-class"],
      gatewayController: info["gateway-controller"],
      gatewayName,
      gatewayNamespace,
      baseDomain: info["base-domain"],
      podImage: DEFAULT_NAMES.podImage
    },
    waits: { route: Duration.seconds(60), gatewayAddress: Duration.seconds(180) },
    probe: { address: dataPlane.hostname, port: Number(dataPlane.port) },
    runWorkload: (pod) =>
      Effect.forEach(pod.ports, (port) =>
        httpServerAt(nodeAddress, port, (_, res) => res.end("served")).pipe(
          Effect.mapError((error) =>
            `cannot serve ${pod.namespace}/${pod.name}'s port ${port} at ${nodeAddress}: ${error.message}`
          )
        ), { discard: true }),
    servedPort: () =>
      Effect.scoped(httpServerAt(nodeAddress, 0)).pipe(
        Effect.map((server) => server.port),
        Effect.mapError((error) => `no free port at ${nodeAddress}: ${error.message}`)
      ),
    restartApiServer: control === undefined ? undefined : restartThrough(control)
  }
}

/** Asks the control plane's supervisor to restart kube-apiserver; succeeds once it is back. */
const restartThrough = (control: string): Effect.Effect<void, string> =>
  Effect.async<void, string>((resume) => {
    const req = request(`${control}/restart/kube-apiserver`, { method: "POST" }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () =>
        resume(res.statusCode === 200 ? Effect.void : Effect.fail(`the restart failed (${res.statusCode}): ${body}`)))
    })
    req.on("error", (error) =>
      resume(Effect.fail(`the control plane's supervisor did not answer: ${error.message}`)))
    req.end()
    return Effect.sync(() =>
      req.destroy()
    )
  })

/** The Gateway of test/e2e/cluster/gateway.yaml, the one object of its kind there. */
const gatewayOfSetup = (): Gateway => {
  const objects = parseAllDocuments(readFileSync(GATEWAY_FILE, "utf8")).map((doc) => doc.toJS() as Gateway)
  const gateway = objects.find((object) => object.kind === "Gateway")
  if (gateway === undefined) throw new Error(`${GATEWAY_FILE.pathname} holds no Gateway`)
  return gateway
}

/**
 * LocalCluster with authentication and RBAC on (the kubeconfig is its admin's), the
 * controller manager (garbage collector, EndpointSlices) and the data plane, named as
 * up.sh names kind's setup. Its controllers answer within a fraction of a second.
 */
const localTarget: Effect.Effect<E2eTarget, unknown, Scope.Scope> = Effect.gen(function*() {
  const names = DEFAULT_NAMES
  const gateway = gatewayOfSetup()
  const controllerDelay = Duration.millis(200)
  const session = yield* SessionCluster.make({
    namespace: gateway.metadata?.namespace ?? names.gatewayNamespace,
    baseDomain: names.baseDomain,
    ingress: { className: names.ingressClass, controllerName: INGRESS_NGINX_CONTROLLER, delay: controllerDelay },
    gateway: {
      className: gateway.spec?.gatewayClassName ?? names.gatewayClass,
      controllerName: names.gatewayController,
      gatewayName: gateway.metadata?.name ?? names.gatewayName,
      listeners: gateway.spec?.listeners ?? [],
      delay: controllerDelay
    },
    controllerManager: true,
    auth: { rbac: true }
  })
  const dataPlane = session.dataPlane
  if (dataPlane === undefined) throw new Error("LocalCluster started without its data plane")
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-e2e-"))),
    (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
  )
  const kubeconfig = join(dir, "kubeconfig")
  yield* session.cluster.writeKubeconfig(kubeconfig)
  const scope = yield* Effect.scope
  return {
    description: `LocalCluster at ${session.cluster.url}`,
    kind: "local",
    kubeconfig,
    context: undefined,
    names,
    waits: { route: Duration.seconds(5), gatewayAddress: Duration.seconds(10) },
    probe: { address: dataPlane.host, port: dataPlane.port },
    runWorkload: (pod) =>
      Effect.gen(function*() {
        const server = yield* loopbackServer((_, res) => res.end("served"))
        yield* Effect.orDie(dataPlane.registerPod(pod, { host: "127.0.0.1", port: server.port }))
      }).pipe(Scope.extend(scope)),
    servedPort: (preferred) => Effect.succeed(preferred),
    restartApiServer: session.cluster.faults.server.restart.pipe(Effect.mapError((error) => error.reason))
  }
})

/** The real control plane the global setup started, in `npm run test:cluster` without a kubeconfig. */
const controlPlaneInfo = (): ControlPlaneInfo | undefined => inject("controlPlane") ?? undefined

/** Whether the journeys run against a real API server: the control plane's, or the one the variable names. */
export const onRealCluster = (): boolean =>
  variable(E2E_ENV.kubeconfig) !== undefined || controlPlaneInfo() !== undefined

/** The real cluster the run targets, if it targets one: the variable's, else the control plane. */
export const realTargetFromEnv = (): E2eTarget | undefined => {
  const kubeconfig = variable(E2E_ENV.kubeconfig)
  if (kubeconfig !== undefined) return realTarget(kubeconfig)
  const info = controlPlaneInfo()
  return info === undefined ? undefined : controlPlaneTarget(info)
}

/** The target the run names: a real cluster, else LocalCluster. */
export const e2eTarget: Effect.Effect<E2eTarget, unknown, Scope.Scope> = Effect.suspend(() => {
  const real = realTargetFromEnv()
  return real === undefined ? localTarget : Effect.succeed(real)
})
