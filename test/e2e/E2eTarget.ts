/**
 * The cluster the end-to-end journeys run against: the real one
 * `SESSION_ROUTING_E2E_KUBECONFIG` names (`npm run test:cluster`), else a LocalCluster set
 * up as test/e2e/cluster/up.sh sets up kind: IngressClass `nginx`, GatewayClass `eg` with
 * its controller's name, and the Gateway of test/e2e/cluster/gateway.yaml, read from that
 * file. The journeys see only a kubeconfig, names and waits; what differs between the two
 * is how long a controller may take, and who runs a Pod's containers.
 */
import { SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Scope } from "effect"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"
import type { Gateway } from "../../src/domain/Objects.js"
import { loopbackServer } from "../support/LoopbackServer.js"

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

export interface E2eTarget {
  /** For the log: `LocalCluster`, or the context and server of the kubeconfig. */
  readonly description: string
  /** Whether the cluster is the in-process LocalCluster. */
  readonly local: boolean
  /** An admin kubeconfig: the suite creates namespaces, Pods and RBAC with it. */
  readonly kubeconfig: string
  readonly context: string | undefined
  readonly names: E2eNames
  readonly waits: E2eWaits
  /** Where the probe connects instead of the Gateway's published address, when set. */
  readonly probe: { readonly address?: string; readonly port?: number }
  /**
   * Runs a Pod's containers for the scope. A real cluster's kubelet does this once the
   * Pod is created, so there it does nothing; LocalCluster runs no containers, so one
   * server on 127.0.0.1 answering 200 stands in for them.
   */
  readonly runWorkload: (pod: { readonly namespace: string; readonly name: string }) => Effect.Effect<void>
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
    local: false,
    kubeconfig,
    context,
    names: namesFromEnv(),
    waits: { route: Duration.seconds(60), gatewayAddress: Duration.seconds(180) },
    probe: {
      ...(probeAddress !== undefined ? { address: probeAddress } : {}),
      ...(probePort !== undefined ? { port: probePort } : {})
    },
    runWorkload: () => Effect.void
  }
}

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
    local: true,
    kubeconfig,
    context: undefined,
    names,
    waits: { route: Duration.seconds(5), gatewayAddress: Duration.seconds(10) },
    probe: { address: dataPlane.host, port: dataPlane.port },
    runWorkload: (pod) =>
      Effect.gen(function*() {
        const server = yield* loopbackServer((_, res) => res.end("served"))
        yield* Effect.orDie(dataPlane.registerPod(pod, { host: "127.0.0.1", port: server.port }))
      }).pipe(Scope.extend(scope))
  }
})

/** Whether `SESSION_ROUTING_E2E_KUBECONFIG` names a real cluster to run against. */
export const onRealCluster = (): boolean => variable(E2E_ENV.kubeconfig) !== undefined

/** The real cluster the environment names, if it names one. */
export const realTargetFromEnv = (): E2eTarget | undefined => {
  const kubeconfig = variable(E2E_ENV.kubeconfig)
  return kubeconfig === undefined ? undefined : realTarget(kubeconfig)
}

/** The target the environment names: that real cluster, else LocalCluster. */
export const e2eTarget: Effect.Effect<E2eTarget, unknown, Scope.Scope> = Effect.suspend(() => {
  const real = realTargetFromEnv()
  return real === undefined ? localTarget : Effect.succeed(real)
})
