/**
 * `session-routing cluster`: runs LocalCluster standalone, set up as a session
 * cluster (namespace, IngressClass, GatewayClass and Gateway, controllers, data
 * plane, and a session Pod whose workload answers), prints where it listens, and
 * serves until SIGINT or SIGTERM stops it.
 */
import { Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { ControllerDelay, SessionCluster } from "@session-routing/local-cluster"
import { Console, Deferred, Duration, Effect, Either, Exit, Option, type Scope } from "effect"
import { sessionObjectName } from "../../domain/Manifests.js"
import type { KubeObject } from "../../domain/Objects.js"
import { RBAC_NAME, rbacManifest } from "../../domain/RbacManifest.js"
import { allResources, apiVersionOf, type ResourceType } from "../../domain/Resources.js"
import { ENV } from "../../layers/RouterConfigLive.js"
import { cliError } from "../CliError.js"
import { startSessionPod } from "../internal/DemoWorkload.js"
import type { CommandHelp } from "../internal/Help.js"
import { loadLocalCluster } from "../internal/LocalClusterPackage.js"

/** The controllers' delay when `--controller-delay` is not given: long enough to see `pending`. */
export const DEFAULT_CONTROLLER_DELAY_MS = 1000

/** The session whose Pod `cluster` starts, with a workload the data plane sends its traffic to. */
export const DEMO_SESSION = "demo"

/** The port that Pod declares; its workload answers on every port a route names. */
export const DEMO_PORT = 8080

/** The cluster flags as @effect/cli parses them: raw text, checked by `parseClusterInput`. */
export interface ClusterFlags {
  readonly port: string
  readonly writeKubeconfig: Option.Option<string>
  readonly noIngressController: boolean
  readonly noGatewayController: boolean
  readonly controllerDelay: string
  readonly controllerManager: boolean
  readonly rbac: boolean
}

/** What `cluster` needs, after every flag is checked. */
export interface ClusterInput {
  readonly port: number
  /** Where to write the kubeconfig; none: a temporary file removed at shutdown. */
  readonly kubeconfigPath: Option.Option<string>
  readonly ingressController: boolean
  readonly gatewayController: boolean
  readonly delay: ControllerDelay
  /** Run the garbage collector too (the EndpointSlice controller always runs). */
  readonly controllerManager: boolean
  /** HTTPS, authentication and RBAC, with a runner kubeconfig bound to deploy/rbac.yaml's grants. */
  readonly rbac: boolean
}

/** Checks the flags in order and stops at the first bad one, with a line naming it. */
export const parseClusterInput = (flags: ClusterFlags): Either.Either<ClusterInput, string> =>
  Either.gen(function*() {
    const port = /^\d+$/.test(flags.port.trim()) ? Number(flags.port.trim()) : Number.NaN
    if (!Number.isSafeInteger(port) || port > 65535) {
      return yield* Either.left(
        `--port=${JSON.stringify(flags.port)} must be a port number, 0..65535 (0 picks a free one)`
      )
    }
    const delayText = flags.controllerDelay.trim()
    // "never" is the silent-404 cluster: controllers that claim objects and never write status.
    const delay: ControllerDelay | undefined = delayText === "never"
      ? "never"
      : /^\d+$/.test(delayText)
      ? Duration.millis(Number(delayText))
      : undefined
    if (delay === undefined) {
      return yield* Either.left(
        `--controller-delay=${JSON.stringify(flags.controllerDelay)} must be whole milliseconds (e.g. 1000) or never`
      )
    }
    const kubeconfigPath = Option.filter(flags.writeKubeconfig, (path) => path.trim() !== "")
    if (Option.isSome(flags.writeKubeconfig) && Option.isNone(kubeconfigPath)) {
      return yield* Either.left("--write-kubeconfig needs a file path, e.g. --write-kubeconfig ./local.kubeconfig")
    }
    return {
      port,
      kubeconfigPath,
      ingressController: !flags.noIngressController,
      gatewayController: !flags.noGatewayController,
      delay,
      controllerManager: flags.controllerManager,
      rbac: flags.rbac
    }
  })

/**
 * The SessionCluster the flags describe. The EndpointSlice controller always runs, as
 * on every real cluster: without it a Pod behind a session Service never takes its
 * traffic. The garbage collector only with `--controller-manager`, since it deletes at
 * once what a publish names a Pod that does not exist as the owner of.
 */
export const sessionClusterOptions = (input: ClusterInput): SessionCluster.SessionClusterOptions => ({
  port: input.port,
  ingress: input.ingressController ? { delay: input.delay } : false,
  gateway: input.gatewayController ? { delay: input.delay } : false,
  ...(input.controllerManager ? { controllerManager: true } : { endpointSlices: true }),
  ...(input.rbac ? { auth: { rbac: true } } : {})
})

/** Where the runner's kubeconfig goes: beside the admin's, `runner-` before its name. */
export const runnerKubeconfigPath = (kubeconfigPath: string): string => {
  const slash = kubeconfigPath.lastIndexOf("/")
  return `${kubeconfigPath.slice(0, slash + 1)}runner-${kubeconfigPath.slice(slash + 1)}`
}

/**
 * With RBAC on: writes deploy/rbac.yaml's objects for the cluster's namespace (as an
 * admin would apply them) and a kubeconfig for their ServiceAccount, with a token.
 */
const grantRunner = (sc: SessionCluster.SessionCluster, path: string) =>
  Effect.gen(function*() {
    const { Credential, writeCredentialFile } = yield* loadLocalCluster("cluster")
    const objects = rbacManifest({ mode: "ingress", sessionNamespace: sc.namespace, statusSource: "watch" })
    for (const object of objects) {
      const resource = allResources.find((r) => apiVersionOf(r) === object.apiVersion && r.kind === object.kind)
      yield* Effect.orDie(
        sc.cluster.store.create(resource as ResourceType<KubeObject>, object.metadata?.namespace, object)
      )
    }
    const text = yield* sc.cluster.kubeconfigAs(Credential.serviceAccount(sc.namespace, RBAC_NAME))
    yield* Effect.tryPromise({
      try: () => writeCredentialFile(path, text),
      catch: (error) =>
        cliError(`cannot write the runner kubeconfig to ${path}: ${error instanceof Error ? error.message : error}`)
    })
  })

const delayText = (delay: ControllerDelay): string =>
  delay === "never" ? "never writes status" : `writes status after ${Duration.toMillis(Duration.decode(delay))} ms`

/**
 * The lines for stdout, `key: value` each, `server` first: a script waits for the
 * first line and reads the URL from it, and finds the rest by key.
 */
export const describeCluster = (sc: SessionCluster.SessionCluster, kubeconfigPath: string): ReadonlyArray<string> => [
  `server: ${sc.cluster.url}`,
  ...(sc.dataPlane !== undefined ? [`data-plane: ${sc.dataPlane.url}`] : []),
  `kubeconfig: ${kubeconfigPath}`,
  `namespace: ${sc.namespace}`,
  `base-domain: ${sc.baseDomain}`,
  `ingress-class: ${sc.ingressClassName}`,
  `gateway: ${sc.gateway.namespace}/${sc.gateway.name}`
]

/** The session Pod `cluster` started: its uid, and where its workload listens. */
export interface DemoPod {
  readonly name: string
  readonly uid: string
  /** The loopback port of the workload that stands in for its containers. */
  readonly local: number
}

/** What a person can do with the cluster, for stderr (stdout stays parseable). */
export const usageHints = (
  sc: SessionCluster.SessionCluster,
  input: ClusterInput,
  kubeconfigPath: string,
  pod?: DemoPod
): ReadonlyArray<string> => {
  const env = `${ENV.baseDomain}=${sc.baseDomain} ${ENV.sessionNamespace}=${sc.namespace}`
  // The Pod's own uid: with --controller-manager, objects owned by a uid that does not
  // exist are collected at once, so a made-up one would leave nothing to see.
  const owner = pod === undefined
    ? `--pod ${sessionObjectName(DEMO_SESSION)} --pod-uid UID`
    : `--pod ${pod.name} --pod-uid ${pod.uid}`
  const publish =
    `session-routing publish --kubeconfig ${kubeconfigPath} --session ${DEMO_SESSION} ${owner} --port ${DEMO_PORT} --watch`
  const host = `${DEMO_PORT}-${DEMO_SESSION}.${sc.baseDomain}`
  return [
    `LocalCluster is serving on 127.0.0.1; Ctrl-C stops it.`,
    `  ingress controller: ${
      input.ingressController ? `class "${sc.ingressClassName}", ${delayText(input.delay)}` : "off"
    }`,
    `  gateway controller: ${
      input.gatewayController ? `class "${sc.gateway.className}", ${delayText(input.delay)}` : "off"
    } (Gateway ${sc.gateway.namespace}/${sc.gateway.name}, listener *.${sc.baseDomain})`,
    ...(pod === undefined ? [] : [
      `  session Pod ${sc.namespace}/${pod.name} (uid ${pod.uid}, session ${DEMO_SESSION}): LocalCluster runs no ` +
      `containers, so a workload on 127.0.0.1:${pod.local} stands in and answers 200 on every port`
    ]),
    `try:`,
    `  kubectl --kubeconfig ${kubeconfigPath} get ingressclass,ingress,pods -A`,
    `  ${env} ${ENV.ingressClassName}=${sc.ingressClassName} ${publish}`,
    ...(sc.dataPlane === undefined ? [] : [`  curl -H 'Host: ${host}' ${sc.dataPlane.url}/`]),
    `  ${env} ${ENV.mode}=gateway ${ENV.gatewayName}=${sc.gateway.name} ${publish}`
  ]
}

const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM"] as const

/** The signals that stop a served cluster. */
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number]

/**
 * Arms SIGINT and SIGTERM for the life of the scope and returns the wait for the
 * first of them. For a server they are the ordinary way to stop, not a failure: the
 * CLI's own handlers (`processStops` in `src/cli/internal/ProcessStop.ts`, which
 * interrupt the command and leave with 130 or 143) are set aside while armed, so the command can close
 * the cluster and leave with 0. Armed before the cluster starts, so a signal sent
 * the moment the URL is printed is not lost; disarmed the moment one arrives, so a
 * second Ctrl-C during shutdown interrupts as usual. `process.listeners` is used
 * rather than `rawListeners` on purpose: tsx hides its own signal relay from it, and
 * that relay must stay in place.
 */
export const shutdownSignal: Effect.Effect<Effect.Effect<ShutdownSignal>, never, Scope.Scope> = Effect.gen(
  function*() {
    const received = yield* Deferred.make<ShutdownSignal>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const setAside = SHUTDOWN_SIGNALS.map((signal) => ({ signal, listeners: process.listeners(signal) }))
        let armed = true
        const disarm = () => {
          if (!armed) return
          armed = false
          for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal)
          for (const { signal, listeners } of setAside) for (const listener of listeners) process.on(signal, listener)
        }
        function onSignal(signal: NodeJS.Signals) {
          disarm()
          Deferred.unsafeDone(received, Exit.succeed(signal as ShutdownSignal))
        }
        for (const { signal, listeners } of setAside) {
          for (const listener of listeners) process.off(signal, listener)
          process.on(signal, onSignal)
        }
        return disarm
      }),
      (disarm) => Effect.sync(disarm)
    )
    return Deferred.await(received)
  }
)

/** LocalCluster set up for sessions, loaded when `command` starts one. */
export const loadSessionCluster = (command: string) =>
  Effect.map(loadLocalCluster(command), (module) => module.SessionCluster)

/** A cluster being served: what `describeCluster` printed, and the session Pod it started. */
export interface ServedCluster {
  readonly sc: SessionCluster.SessionCluster
  readonly kubeconfigPath: string
  readonly pod?: DemoPod
}

/**
 * The session Pod `telo-run-demo`, served by a workload the data plane sends its
 * traffic to: LocalCluster runs no containers, so without one every host a person
 * publishes would answer 503. None when there is no data plane to register it with.
 */
const startDemoPod = (sc: SessionCluster.SessionCluster) =>
  sc.dataPlane === undefined
    ? Effect.succeed(undefined)
    : Effect.map(
      startSessionPod(
        { ...sc, dataPlane: sc.dataPlane },
        DEMO_SESSION,
        [{ port: DEMO_PORT, protocol: "tcp" }],
        "cluster"
      ),
      ({ local, pod }): DemoPod => ({ name: pod.name, uid: pod.uid, local })
    )

/**
 * Starts the cluster, writes the kubeconfig, prints where everything is, and serves
 * until `until` succeeds with why it should stop (the command: a signal; tests: when
 * they are done). Closing the scope afterwards stops the controllers, closes the API
 * server and the data plane with their open connections, and removes a temporary
 * kubeconfig.
 */
export const serveCluster = <E, R>(
  input: ClusterInput,
  until: (served: ServedCluster) => Effect.Effect<string, E, R>
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const SessionCluster = yield* loadSessionCluster("cluster")
      const sc = yield* SessionCluster.make(sessionClusterOptions(input)).pipe(
        Effect.mapError((error) => cliError(`cannot start the cluster: ${error.reason}`))
      )
      const kubeconfigPath = yield* Option.match(input.kubeconfigPath, {
        onSome: (file) => Effect.succeed(path.resolve(file)),
        // A kubeconfig for a server that is gone only misleads: the temporary one goes with it.
        onNone: () =>
          fs.makeTempDirectoryScoped({ prefix: "session-routing-cluster-" }).pipe(
            Effect.map((dir) => path.join(dir, "kubeconfig")),
            Effect.mapError((error) =>
              cliError(`cannot create a temporary directory for the kubeconfig: ${error.message}`)
            )
          )
      })
      yield* sc.cluster.writeKubeconfig(kubeconfigPath).pipe(Effect.mapError((error) => cliError(error.reason)))
      const runner = input.rbac ? runnerKubeconfigPath(kubeconfigPath) : undefined
      if (runner !== undefined) yield* grantRunner(sc, runner)
      const pod = yield* startDemoPod(sc)
      for (const line of describeCluster(sc, kubeconfigPath)) yield* Console.log(line)
      if (runner !== undefined) {
        yield* Console.log(`runner-kubeconfig: ${runner}`)
        yield* Console.log(`runner: system:serviceaccount:${sc.namespace}:${RBAC_NAME}`)
      }
      for (const line of usageHints(sc, input, kubeconfigPath, pod)) yield* Console.error(line)
      const why = yield* until({ sc, kubeconfigPath, ...(pod !== undefined ? { pod } : {}) })
      yield* Console.error(`${why}: stopping the cluster`)
    })
  ).pipe(Effect.zipLeft(Console.error("cluster stopped")))

/** What `cluster --help` says beyond the options. */
export const clusterHelp: CommandHelp = {
  details: [
    "Sets it up as a session cluster (namespace, IngressClass, GatewayClass and Gateway, controllers, data " +
    "plane, and the session Pod telo-run-demo with a workload that answers 200), prints where it listens as " +
    "key: value lines on stdout (server first), and serves until SIGINT or SIGTERM, then exits 0. Needs the " +
    "@session-routing/local-cluster package."
  ],
  examples: [
    {
      comment: "Serve a cluster and keep its kubeconfig where the other commands can use it",
      command: "session-routing cluster --write-kubeconfig ./local.kubeconfig"
    },
    {
      comment: "A cluster whose controllers never write status: every host ends unprogrammed",
      command: "session-routing cluster --controller-delay never --write-kubeconfig ./local.kubeconfig"
    },
    {
      comment: "HTTPS and RBAC; runner-local.kubeconfig beside the admin's is the runner's ServiceAccount",
      command: "session-routing cluster --rbac --controller-manager --write-kubeconfig ./local.kubeconfig"
    }
  ]
}

/**
 * `session-routing cluster [--port N] [--write-kubeconfig PATH] [--no-ingress-controller]
 * [--no-gateway-controller] [--controller-delay MS|never] [--controller-manager]`.
 */
export const clusterCommand = Command.make(
  "cluster",
  {
    port: Options.text("port").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Port of the API server on 127.0.0.1; 0 picks any free port"),
      Options.withDefault("0")
    ),
    writeKubeconfig: Options.text("write-kubeconfig").pipe(
      Options.withPseudoName("PATH"),
      Options.withDescription(
        "Write a kubeconfig for the cluster to this path (default: a temporary file, removed at exit)"
      ),
      Options.optional
    ),
    noIngressController: Options.boolean("no-ingress-controller").pipe(
      Options.withDescription(
        "Run no ingress controller: session Ingresses stay pending (the IngressClass still exists)"
      )
    ),
    noGatewayController: Options.boolean("no-gateway-controller").pipe(
      Options.withDescription("Run no Gateway controller: HTTPRoutes get no status (the Gateway still exists)")
    ),
    controllerDelay: Options.text("controller-delay").pipe(
      Options.withPseudoName("MS|never"),
      Options.withDescription("Milliseconds each controller waits before writing status; never: they write none"),
      Options.withDefault(String(DEFAULT_CONTROLLER_DELAY_MS))
    ),
    rbac: Options.boolean("rbac").pipe(
      Options.withDescription(
        "Serve HTTPS and authenticate and authorize every request by RBAC; the kubeconfig is the admin's, and runner-<name> beside it is a ServiceAccount bound to deploy/rbac.yaml"
      )
    ),
    controllerManager: Options.boolean("controller-manager").pipe(
      Options.withDescription(
        "Also run the garbage collector: objects whose owner Pod is gone (or never existed) are deleted (the EndpointSlice controller always runs)"
      )
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const input = yield* Either.mapLeft(parseClusterInput(flags), (line) => cliError(line))
      const signal = yield* shutdownSignal
      yield* serveCluster(input, () => signal)
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription("Run LocalCluster, an embedded Kubernetes API with stand-in controllers, on 127.0.0.1")
)
