/**
 * A real Kubernetes control plane on this machine, as plain processes on 127.0.0.1: etcd,
 * kube-apiserver (TLS, RBAC, an admin client certificate, a ServiceAccount issuer, as
 * envtest starts it), kube-controller-manager (garbage collector, EndpointSlices,
 * namespaces, ServiceAccounts and their tokens, Deployments), kube-scheduler, kwok running
 * one Node's Pods (kwok-stages.yaml), and Traefik as the Ingress and Gateway API controller
 * with its data plane. Everything is stopped, in reverse order, when the scope closes.
 */
import { Duration, Effect, ExecutionStrategy, Exit, Option, Ref, Scope } from "effect"
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { createServer } from "node:net"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseAllDocuments } from "yaml"
import { type AdminApi, makeAdminApi } from "./AdminApi.js"
import { type Binaries, binaries, type Versions, versions } from "./Build.js"
import { ControlPlaneError } from "./ControlPlaneError.js"
import { type ControlPlanePki, makePki } from "./Pki.js"
import {
  awaitUp,
  type Component,
  type ComponentSpec,
  describeExit,
  type ExitInfo,
  logTail,
  startComponent
} from "./Processes.js"

/** Traefik's names for its controllers, which the classes it serves must carry. */
export const TRAEFIK_INGRESS_CONTROLLER = "traefik.io/ingress-controller"
export const TRAEFIK_GATEWAY_CONTROLLER = "traefik.io/gateway-controller"
export const CLASS_NAME = "traefik"
/** The one Node, which kwok runs the Pods of. */
export const NODE_NAME = "kwok-node"

export interface ControlPlaneOptions {
  /** Where the admin kubeconfig is written. */
  readonly kubeconfig: string
  /** The session namespace; default `telo-sessions`. */
  readonly namespace?: string
  readonly baseDomain?: string
  /**
   * A YAML file of Namespaces and Gateways to set up instead of the default Gateway (the
   * end-to-end suite's test/e2e/cluster/gateway.yaml). Each Gateway gets class `traefik`,
   * and each listener port an entry point of Traefik's: a listener is served on 127.0.0.1
   * at a port of its own, the first one being the data plane.
   */
  readonly gatewayFile?: string
  /** The API server's port; 0 (default): a free one. */
  readonly apiServerPort?: number
  /** The data plane's port (the first listener's); 0 (default): a free one. */
  readonly dataPlanePort?: number
  /** Progress, one line at a time. */
  readonly progress?: (line: string) => void
}

export interface ControlPlane {
  readonly server: string
  readonly kubeconfig: string
  readonly namespace: string
  readonly baseDomain: string
  readonly ingressClass: string
  readonly gateway: { readonly namespace: string; readonly name: string; readonly className: string }
  readonly gatewayController: string
  /** Traefik's data plane, where a session host is served (the first Gateway listener's port). */
  readonly dataPlane: { readonly host: string; readonly port: number }
  /** The Node's address, which every Pod gets: backends for a Pod's ports listen there. */
  readonly nodeAddress: string
  readonly versions: Versions & { readonly gatewayApi: string }
  /** What the API server's `/version` says it is (its gitVersion). */
  readonly serverVersion: string
  /** The processes' logs and data; removed when the control plane stops. */
  readonly workDir: string
  /** Stops kube-apiserver and starts it again on the same port and etcd; succeeds once it is ready. */
  readonly restartApiServer: Effect.Effect<void, ControlPlaneError>
  /** Fails, naming it, when a component exits without being asked to; never succeeds. */
  readonly watch: Effect.Effect<never, ControlPlaneError>
}

const KWOK_STAGES = fileURLToPath(new URL("kwok-stages.yaml", import.meta.url))
const DEFAULT_NAMESPACE = "telo-sessions"
const DEFAULT_BASE_DOMAIN = "sessions.localtest.me"
const SERVICE_CIDR = "10.96.0.0/16"
/** How long each component may take to answer its health check. */
const COME_UP = Duration.seconds(60)

/** What the control plane's Gateways are made of, as far as it reads them. */
interface GatewayObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata?: { readonly name?: string; readonly namespace?: string }
  readonly spec?: { gatewayClassName?: string; listeners?: Array<{ port?: number; [key: string]: unknown }> }
}

/** A port nobody listens on now (the kernel's pick), or `wanted` after checking it is free. */
const freePort = (what: string, wanted = 0) =>
  Effect.async<number, ControlPlaneError>((resume) => {
    const server = createServer()
    server.once("error", (error: NodeJS.ErrnoException) =>
      resume(Effect.fail(
        new ControlPlaneError({
          message: error.code === "EADDRINUSE"
            ? `port ${wanted} (${what}) is in use on 127.0.0.1: pick another, or 0 for a free one`
            : `cannot take a port for ${what}: ${error.message}`
        })
      )))
    server.listen(wanted, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resume(Effect.succeed(port)))
    })
  })

/**
 * The machine's first non-loopback IPv4 address: the Node's, and so every Pod's. The API
 * server refuses loopback addresses in EndpointSlices, so Pods cannot be on 127.0.0.1.
 */
const nodeAddress = Effect.suspend(() => {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) return Effect.succeed(address.address)
    }
  }
  return Effect.fail(
    new ControlPlaneError({
      message:
        "this machine has no non-loopback IPv4 address for the Node's Pods (EndpointSlices refuse loopback ones): add one, e.g. a dummy interface"
    })
  )
})

const kubeconfigText = (server: string, pki: ControlPlanePki) =>
  Effect.promise(async () => {
    const [ca, cert, key] = await Promise.all(
      [pki.caCert, pki.adminCert, pki.adminKey].map((file) => readFile(file).then((data) => data.toString("base64")))
    )
    return [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: session-routing-control-plane",
      "  cluster:",
      `    server: ${server}`,
      `    certificate-authority-data: ${ca}`,
      "users:",
      "- name: kubernetes-admin",
      "  user:",
      `    client-certificate-data: ${cert}`,
      `    client-key-data: ${key}`,
      "contexts:",
      "- name: session-routing-control-plane",
      "  context:",
      "    cluster: session-routing-control-plane",
      "    user: kubernetes-admin",
      "current-context: session-routing-control-plane",
      ""
    ].join("\n")
  })

const writePrivate = (path: string, text: string) =>
  Effect.tryPromise({
    try: async () => {
      await writeFile(path, text, { mode: 0o600 })
      await chmod(path, 0o600)
    },
    catch: (error) => new ControlPlaneError({ message: `cannot write ${path}: ${String(error)}` })
  })

/** Polls `check` every 200 ms until it holds, failing after `within` with `what` in the message. */
const until = (what: string, check: Effect.Effect<boolean, ControlPlaneError>, within: Duration.Duration) => {
  const loop: Effect.Effect<void, ControlPlaneError> = Effect.flatMap(
    check,
    (ok) => (ok ? Effect.void : Effect.zipRight(Effect.sleep(Duration.millis(200)), Effect.suspend(() => loop)))
  )
  return loop.pipe(
    Effect.timeoutFail({
      duration: within,
      onTimeout: () => new ControlPlaneError({ message: `${what} within ${Duration.format(within)}` })
    })
  )
}

const conditionTrue = (object: Record<string, any> | undefined, type: string): boolean =>
  (object?.status?.conditions ?? []).some((c: { type?: string; status?: string }) =>
    c.type === type && c.status === "True"
  )

/** An HTTP(S) health endpoint answering 200 (self-signed certificates accepted: these are local probes). */
const healthy = (url: string): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const request = url.startsWith("https:") ? httpsRequest : httpRequest
    const req = request(url, { rejectUnauthorized: false, timeout: 5_000 }, (res) => {
      res.resume()
      resume(Effect.succeed(res.statusCode === 200))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resume(Effect.succeed(false)))
    req.end()
    return Effect.sync(() => req.destroy())
  })

/** The CRDs of Traefik's Gateway API version, applied and Established. */
const installGatewayApi = (api: AdminApi, bins: Binaries) =>
  Effect.gen(function*() {
    const files = (yield* Effect.promise(() => readdir(bins.gatewayApiCrds))).filter((file) => file.endsWith(".yaml"))
    const names: Array<string> = []
    for (const file of files.sort()) {
      const text = yield* Effect.promise(() => readFile(join(bins.gatewayApiCrds, file), "utf8"))
      for (const doc of parseAllDocuments(text)) {
        const crd = doc.toJS() as { metadata: { name: string } }
        yield* api.apply(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, crd)
        names.push(crd.metadata.name)
      }
    }
    yield* until(
      "the Gateway API CRDs were not Established",
      Effect.map(
        Effect.forEach(names, (name) => api.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)),
        (crds) => crds.every((crd) => conditionTrue(crd, "Established"))
      ),
      COME_UP
    )
    return (yield* Effect.promise(() => readFile(join(bins.gatewayApiCrds, "version"), "utf8"))).trim()
  })

/** The Gateways to set up: those of `file` (with its Namespaces), else one in the session namespace. */
const gatewaySetup = (options: ControlPlaneOptions, namespace: string, baseDomain: string) =>
  Effect.gen(function*() {
    if (options.gatewayFile === undefined) {
      const gateway: GatewayObject = {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: "sessions", namespace },
        spec: {
          gatewayClassName: CLASS_NAME,
          listeners: [{
            name: "http",
            protocol: "HTTP",
            port: 80,
            hostname: `*.${baseDomain}`,
            allowedRoutes: { namespaces: { from: "Same" } }
          }]
        }
      }
      return { namespaces: [] as ReadonlyArray<string>, gateways: [gateway] }
    }
    const file = options.gatewayFile
    const text = yield* Effect.tryPromise({
      try: () => readFile(file, "utf8"),
      catch: (error) => new ControlPlaneError({ message: `cannot read the Gateway file ${file}: ${String(error)}` })
    })
    const objects = parseAllDocuments(text).map((doc) => doc.toJS() as GatewayObject).filter((o) => o !== null)
    const gateways = objects.filter((o) => o.kind === "Gateway")
    if (gateways.length === 0) return yield* new ControlPlaneError({ message: `${file} holds no Gateway` })
    const namespaces = objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata?.name ?? "")
    return { namespaces, gateways }
  })

/** Starts the control plane for the scope. */
export const startControlPlane = (
  options: ControlPlaneOptions
): Effect.Effect<ControlPlane, ControlPlaneError, Scope.Scope> =>
  Effect.gen(function*() {
    const say = options.progress ?? (() => {})
    const pins = versions()
    const bins = binaries(pins)
    const namespace = options.namespace ?? DEFAULT_NAMESPACE
    const baseDomain = options.baseDomain ?? DEFAULT_BASE_DOMAIN
    yield* Effect.forEach(Object.values(bins), (path) =>
      Effect.tryPromise({
        try: () => access(path),
        catch: () =>
          new ControlPlaneError({
            message: `${path} is missing: build the control plane with test/control-plane/build.sh`
          })
      }))
    const node = yield* nodeAddress
    const setup = yield* gatewaySetup(options, namespace, baseDomain)

    // Ports: the ones asked for must be free now; the rest are the kernel's picks.
    const apiPort = yield* freePort("kube-apiserver", options.apiServerPort ?? 0)
    const etcdPort = yield* freePort("etcd")
    const etcdPeerPort = yield* freePort("etcd peers")
    const controllerManagerPort = yield* freePort("kube-controller-manager")
    const schedulerPort = yield* freePort("kube-scheduler")
    const kwokPort = yield* freePort("kwok")
    const traefikPort = yield* freePort("Traefik's ping")
    // One Traefik entry point per distinct listener port of the Gateways, which then listen on it.
    const listenerPorts = [
      ...new Set(setup.gateways.flatMap((g) => (g.spec?.listeners ?? []).map((l) => l.port ?? 80)))
    ]
    const entryPoints = new Map<number, number>()
    for (const [index, port] of listenerPorts.entries()) {
      entryPoints.set(
        port,
        yield* freePort(`Gateway listener port ${port}`, index === 0 ? options.dataPlanePort ?? 0 : 0)
      )
    }
    const dataPlanePort = entryPoints.get(listenerPorts[0] ?? 80) ?? 0

    // Removed with the control plane, unless it failed: then its logs are what tells why.
    const workDir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-control-plane-"))),
      (dir, exit) =>
        Exit.isFailure(exit) && !Exit.isInterrupted(exit)
          ? Effect.sync(() => say(`its logs are kept in ${dir}/logs`))
          : Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const logs = join(workDir, "logs")
    yield* Effect.promise(() => mkdir(logs))
    const logFile = (name: string) => join(logs, `${name}.log`)

    say("certificates")
    const pki = yield* makePki(workDir)
    const server = `https://127.0.0.1:${apiPort}`
    const kubeconfig = yield* kubeconfigText(server, pki)
    const componentKubeconfig = join(workDir, "admin.kubeconfig")
    yield* writePrivate(componentKubeconfig, kubeconfig)
    const api = yield* makeAdminApi(server, pki)

    const started = (spec: ComponentSpec, check: Effect.Effect<boolean, unknown>) =>
      Effect.gen(function*() {
        say(`starting ${spec.name}`)
        const component = yield* startComponent(spec)
        yield* awaitUp(component, check, COME_UP)
        return component
      })

    const etcd = yield* started({
      name: "etcd",
      command: bins.etcd,
      args: [
        `--data-dir=${join(workDir, "etcd")}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
        // A test cluster's data need not survive a power cut; fsync would slow every write.
        "--unsafe-no-fsync"
      ],
      logFile: logFile("etcd")
    }, healthy(`http://127.0.0.1:${etcdPort}/health`))

    const apiServerSpec: ComponentSpec = {
      name: "kube-apiserver",
      command: bins.kubeApiserver,
      args: [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--client-ca-file=${pki.caCert}`,
        "--authorization-mode=Node,RBAC",
        "--service-account-issuer=https://kubernetes.default.svc",
        `--service-account-key-file=${pki.serviceAccountPublicKey}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        "--allow-privileged=true",
        // It would publish 127.0.0.1 as the `kubernetes` Service's endpoint, which the API refuses.
        "--endpoint-reconciler-type=none",
        // etcd keeps every revision until the API server compacts it, every 5 minutes by
        // default (each time up to the revision of the time before), so an expired continue
        // token or an Exact list's 410 would take a contract test ten minutes to see
        // (test/contract/ListWatch.contract.test.ts); at 10s they take under a minute. Watches
        // are served from the watch cache, whose window compaction does not move.
        "--etcd-compaction-interval=10s"
      ],
      logFile: logFile("kube-apiserver")
    }
    const apiReady = Effect.map(
      Effect.either(api.call("GET", "/readyz")),
      (answer) => answer._tag === "Right" && answer.right.status === 200
    )
    // kube-apiserver lives in a slot of its own in the scope, so a restart replaces it in place
    // and the scope still stops it after the controllers and before etcd.
    const apiSlot = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const startApiServer = Effect.gen(function*() {
      const instance = yield* Scope.fork(apiSlot, ExecutionStrategy.sequential)
      const component = yield* Scope.extend(started(apiServerSpec, apiReady), instance)
      return { instance, component }
    })
    const apiServer = yield* Ref.make(yield* startApiServer)

    const served = yield* api.get("/version")
    const serverVersion = String(served?.gitVersion ?? "unknown")
    say(`kube-apiserver ${serverVersion} is ready; writing the admin kubeconfig`)
    yield* writePrivate(options.kubeconfig, kubeconfig)
    const gatewayApi = yield* installGatewayApi(api, bins)
    for (const name of new Set([namespace, ...setup.namespaces])) {
      yield* api.apply(`/api/v1/namespaces/${name}`, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
    }
    yield* api.apply(`/apis/networking.k8s.io/v1/ingressclasses/${CLASS_NAME}`, {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      // The default class, as a cluster with Traefik usually has it: an Ingress without a class gets it.
      metadata: { name: CLASS_NAME, annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
      spec: { controller: TRAEFIK_INGRESS_CONTROLLER }
    })
    yield* api.apply(`/apis/gateway.networking.k8s.io/v1/gatewayclasses/${CLASS_NAME}`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: CLASS_NAME },
      spec: { controllerName: TRAEFIK_GATEWAY_CONTROLLER }
    })
    for (const gateway of setup.gateways) {
      const listeners = (gateway.spec?.listeners ?? []).map((listener) => ({
        ...listener,
        port: entryPoints.get(listener.port ?? 80)
      }))
      const gatewayNamespace = gateway.metadata?.namespace ?? namespace
      yield* api.apply(
        `/apis/gateway.networking.k8s.io/v1/namespaces/${gatewayNamespace}/gateways/${gateway.metadata?.name}`,
        {
          ...gateway,
          metadata: { ...gateway.metadata, namespace: gatewayNamespace },
          spec: { ...gateway.spec, gatewayClassName: CLASS_NAME, listeners }
        }
      )
    }
    yield* api.apply(`/api/v1/nodes/${NODE_NAME}`, {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: NODE_NAME,
        annotations: { "kwok.x-k8s.io/node": "fake" },
        labels: { "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux", type: "kwok" }
      }
    })

    const components: Array<Component> = [etcd]
    const healthzOf = (port: number) => healthy(`https://127.0.0.1:${port}/healthz`)
    components.push(
      yield* started({
        name: "kube-controller-manager",
        command: bins.kubeControllerManager,
        args: [
          `--kubeconfig=${componentKubeconfig}`,
          `--authentication-kubeconfig=${componentKubeconfig}`,
          `--authorization-kubeconfig=${componentKubeconfig}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${controllerManagerPort}`,
          "--leader-elect=false",
          `--controllers=${
            [
              "garbage-collector-controller",
              "endpointslice-controller",
              "namespace-controller",
              "serviceaccount-controller",
              "serviceaccount-token-controller",
              "root-ca-certificate-publisher-controller",
              "clusterrole-aggregation-controller",
              "deployment-controller",
              "replicaset-controller"
            ].join(",")
          }`,
          `--service-account-private-key-file=${pki.serviceAccountKey}`,
          `--root-ca-file=${pki.caCert}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`
        ],
        logFile: logFile("kube-controller-manager")
      }, healthzOf(controllerManagerPort)),
      yield* started({
        name: "kube-scheduler",
        command: bins.kubeScheduler,
        args: [
          `--kubeconfig=${componentKubeconfig}`,
          `--authentication-kubeconfig=${componentKubeconfig}`,
          `--authorization-kubeconfig=${componentKubeconfig}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${schedulerPort}`,
          "--leader-elect=false"
        ],
        logFile: logFile("kube-scheduler")
      }, healthzOf(schedulerPort)),
      yield* started({
        name: "kwok",
        command: bins.kwok,
        args: [
          `--kubeconfig=${componentKubeconfig}`,
          "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
          `--config=${KWOK_STAGES}`,
          `--node-ip=${node}`,
          `--server-address=127.0.0.1:${kwokPort}`
        ],
        logFile: logFile("kwok")
      }, healthy(`http://127.0.0.1:${kwokPort}/healthz`))
    )
    yield* until(
      `the Node ${NODE_NAME} was not Ready`,
      Effect.map(api.get(`/api/v1/nodes/${NODE_NAME}`), (n) => conditionTrue(n, "Ready")),
      COME_UP
    )
    // The API server taints a Node not-ready when it is created, and only the node lifecycle
    // controller (not run: it would evict Pods whenever kwok's heartbeat lagged) lifts it.
    yield* api.call("PATCH", `/api/v1/nodes/${NODE_NAME}`, {
      text: JSON.stringify({ spec: { taints: null } }),
      contentType: "application/merge-patch+json"
    })

    const entryPointArgs = [...entryPoints.entries()].flatMap(([listener, port]) => [
      `--entryPoints.listener-${listener}.address=127.0.0.1:${port}`
    ])
    components.push(
      yield* started({
        name: "traefik",
        command: bins.traefik,
        args: [
          ...entryPointArgs,
          `--entryPoints.traefik.address=127.0.0.1:${traefikPort}`,
          "--ping=true",
          "--ping.entryPoint=traefik",
          "--providers.kubernetesIngress=true",
          // Traefik writes an Ingress's status only with an endpoint to write: its data plane.
          "--providers.kubernetesIngress.ingressEndpoint.ip=127.0.0.1",
          "--providers.kubernetesGateway=true",
          "--providers.kubernetesGateway.statusAddress.ip=127.0.0.1",
          "--log.level=INFO",
          "--log.noColor=true"
        ],
        env: { KUBECONFIG: componentKubeconfig },
        logFile: logFile("traefik")
      }, healthy(`http://127.0.0.1:${traefikPort}/ping`))
    )
    for (const gateway of setup.gateways) {
      const gatewayNamespace = gateway.metadata?.namespace ?? namespace
      const path =
        `/apis/gateway.networking.k8s.io/v1/namespaces/${gatewayNamespace}/gateways/${gateway.metadata?.name}`
      yield* until(
        `Traefik did not program the Gateway ${gatewayNamespace}/${gateway.metadata?.name}`,
        Effect.map(api.get(path), (g) => conditionTrue(g, "Programmed")),
        COME_UP
      )
    }

    // A restart that could not bring kube-apiserver back is a death like any other.
    const restartFailure = yield* Ref.make(Option.none<ControlPlaneError>())
    const restartApiServer = Effect.gen(function*() {
      const current = yield* Ref.get(apiServer)
      say("restarting kube-apiserver")
      yield* Scope.close(current.instance, Exit.void)
      yield* Ref.set(apiServer, yield* startApiServer)
    }).pipe(Effect.tapError((error) => Ref.set(restartFailure, Option.some(error))))

    // A component's exit that nobody asked for ends the watch, naming it.
    const failure = (component: Component, exit: ExitInfo) =>
      Effect.flatMap(logTail(component.logFile, 3), (tail) =>
        Effect.fail(
          new ControlPlaneError({
            message: `${component.name} ${describeExit(exit)}; the end of ${component.logFile}:\n${tail}`
          })
        ))
    const died = (component: Component) =>
      Effect.flatMap(component.exited, (exit) => (component.stopping() ? Effect.never : failure(component, exit)))
    // kube-apiserver is followed across restarts: the exit of an instance being replaced is no news.
    const apiServerDied: Effect.Effect<never, ControlPlaneError> = Effect.gen(function*() {
      const current = yield* Ref.get(apiServer)
      const exit = yield* current.component.exited
      if (!current.component.stopping()) return yield* failure(current.component, exit)
      yield* until(
        "kube-apiserver did not come back",
        Effect.flatMap(Ref.get(restartFailure), (broken) =>
          Option.isSome(broken)
            ? Effect.fail(broken.value)
            : Effect.map(Ref.get(apiServer), (next) => next !== current)),
        Duration.days(365)
      )
      return yield* apiServerDied
    })
    // The first failure ends them all (a race would wait for a success, which never comes).
    const watch = Effect.all([apiServerDied, ...components.map(died)], { concurrency: "unbounded", discard: true })
      .pipe(
        Effect.zipRight(Effect.never)
      )

    const first = setup.gateways[0]!
    return {
      server,
      kubeconfig: options.kubeconfig,
      namespace,
      baseDomain,
      ingressClass: CLASS_NAME,
      gateway: {
        namespace: first.metadata?.namespace ?? namespace,
        name: first.metadata?.name ?? "",
        className: CLASS_NAME
      },
      gatewayController: TRAEFIK_GATEWAY_CONTROLLER,
      dataPlane: { host: "127.0.0.1", port: dataPlanePort },
      nodeAddress: node,
      versions: { ...pins, gatewayApi },
      serverVersion,
      workDir,
      restartApiServer,
      watch
    }
  })
