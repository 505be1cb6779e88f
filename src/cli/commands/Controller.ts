/**
 * `session-routing controller`: routes every session Pod the label selects, for runners
 * in any language, and writes each Pod's `session-routing.dev/RoutesProgrammed`
 * condition. Replicas elect one leader on a Lease (unless `--no-leader-elect`); with
 * `--metrics-port` it serves `/healthz`, `/readyz` and `/metrics`. Runs until SIGINT or
 * SIGTERM, then releases its Lease and exits 0.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { CONTROLLER_IDENTITY_ENV } from "../../domain/ControllerManifest.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../../domain/PodRouting.js"
import { NamespaceResource } from "../../domain/Resources.js"
import * as SessionRouting from "../../layers/SessionRouting.js"
import { controllerLeaseName, type ControllerOptions, type PodReport, runController } from "../../runner/Controller.js"
import type { LeadershipChange } from "../../runner/controller/LeaderElection.js"
import { KubeClient } from "../../services/KubeClient.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { type CliError, cliError } from "../CliError.js"
import { kubeClientLayer, routerConfigFrom, sharedOptions, warnAbout } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { metricsOptions, withMetricsServer } from "../MetricsFlags.js"
import { asCliError, type OutputFormat, outputOption } from "../present/Presenter.js"
import { shutdownSignal } from "./Cluster.js"

/** The controller flags as @effect/cli parses them. */
export interface ControllerFlags {
  readonly sessionLabel: string
  readonly shards: number
  readonly shard: number
  readonly noLeaderElect: boolean
  readonly identity: Option.Option<string>
  readonly probeSuccesses: number
}

/** Checks the flags and turns them into the controller's options, or names the bad value. */
export const controllerOptionsFrom = (
  flags: ControllerFlags,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<ControllerOptions, string> => {
  if (!Number.isInteger(flags.shards) || flags.shards < 1) {
    return Either.left(`--shards ${flags.shards} must be a whole number of at least 1`)
  }
  if (!Number.isInteger(flags.shard) || flags.shard < 0 || flags.shard >= flags.shards) {
    return Either.left(`--shard ${flags.shard} must be from 0 to ${flags.shards - 1} (--shards ${flags.shards})`)
  }
  if (!Number.isInteger(flags.probeSuccesses) || flags.probeSuccesses < 1) {
    return Either.left(`--probe-successes ${flags.probeSuccesses} must be a whole number of at least 1`)
  }
  if (flags.sessionLabel.trim() === "") return Either.left("--session-label must name a label, e.g. " + SESSION_LABEL)
  const identity = Option.getOrElse(
    Option.orElse(
      flags.identity,
      () => Option.fromNullable(env[CONTROLLER_IDENTITY_ENV]).pipe(Option.filter((v) => v !== ""))
    ),
    // client-go's default: the host name and a random suffix, unique per process.
    () => `${hostname()}_${randomUUID()}`
  )
  return Either.right({
    sessionLabel: flags.sessionLabel,
    ...(flags.shards > 1 ? { shard: { count: flags.shards, index: flags.shard } } : {}),
    probeSuccesses: flags.probeSuccesses,
    ...(flags.noLeaderElect ? {} : { leaderElection: { identity } })
  })
}

/** One line per condition written: `namespace/pod RoutesProgrammed=True Reason: message`. */
export const reportLine = (report: PodReport, format: OutputFormat): string =>
  format === "json"
    ? JSON.stringify({
      type: "condition",
      namespace: report.namespace,
      pod: report.podName,
      condition: ROUTES_CONDITION,
      status: report.condition.status,
      reason: report.condition.reason,
      message: report.condition.message
    })
    : `${report.namespace}/${report.podName} RoutesProgrammed=${report.condition.status} ${report.condition.reason}: ${report.condition.message}`

/** What a leadership change says on stderr. */
export const leadershipLine = (lease: string, identity: string, change: LeadershipChange): string => {
  switch (change._tag) {
    case "Leading":
      return `leader election: ${identity} holds Lease ${lease} and routes`
    case "Following":
      return `leader election: Lease ${lease} is held by ${change.holder}; waiting`
    case "NoLeader":
      return `leader election: no live leader on Lease ${lease}: ${change.lastHolder} has not renewed it ` +
        "within its duration by this replica's clock, and this replica cannot take it; not ready"
    case "Lost":
      return `leader election: ${change.error.message}; routing stopped, standing again`
    case "SteppedDown":
      return `leader election: ${identity} stepped down${change.released ? " and released Lease " + lease : ""}`
  }
}

/**
 * Reads the session namespace once at start. A list or watch of Pods in a namespace
 * that does not exist answers an empty list, not an error, so without this a controller
 * pointed at the wrong namespace would wait there in silence. Any other failure to read
 * it (a 403 where the namespace `get` is not granted) leaves the answer open: a warning,
 * and the controller starts.
 */
export const checkSessionNamespace = (namespace: string): Effect.Effect<void, CliError, KubeClient> =>
  Effect.flatMap(KubeClient, (kube) => kube.get(NamespaceResource, "", namespace)).pipe(
    Effect.asVoid,
    Effect.catchAll((error) =>
      error._tag === "NotFound"
        ? Effect.fail(
          cliError(
            `namespace "${namespace}" does not exist: create it (kubectl create namespace ${namespace}), ` +
              "or set RUNNER_SESSION_NAMESPACE / -n to the namespace of the session Pods"
          )
        )
        : Console.error(`warning: could not read namespace "${namespace}", starting anyway: ${error.reason}`)
    )
  )

/** What `controller --help` says beyond the options. */
export const controllerHelp: CommandHelp = {
  details: [
    `Watches the Pods of the session namespace that carry the label ${SESSION_LABEL} (its value is the session ` +
    "id), publishes each one's routing objects owned by the Pod, and writes the Pod's condition " +
    `${ROUTES_CONDITION} (True once every host is programmed), so a Pod that lists it in ` +
    "spec.readinessGates is Ready only when its routes are. Ports come from the annotation " +
    "session-routing.dev/ports (8080,5000/udp), else from the containers' declared ports. Replicas elect " +
    "one leader on a Lease in the session namespace (one per shard with --shards M, named for N and M; a " +
    "replica refuses to start while a live Lease of another shard count exists). With --metrics-port, /readyz " +
    "answers 200 while the replica leads or sees a live leader, 503 otherwise. Runs until SIGINT or SIGTERM, " +
    "then releases its Lease and exits 0; one line per condition written."
  ],
  examples: [
    {
      comment: "Route the labelled Pods of namespace telo-sessions, serving health and metrics on port 8080",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing controller -n telo-sessions --metrics-port 8080"
    },
    {
      comment: "One of three shards, as JSON lines",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing controller --shards 3 --shard 0 -o json"
    }
  ]
}

/** `session-routing controller [--session-label L] [--shards M --shard N] [--no-leader-elect] ...`. */
export const controllerCommand = Command.make(
  "controller",
  {
    sessionLabel: Options.text("session-label").pipe(
      Options.withPseudoName("LABEL"),
      Options.withDescription("The Pod label whose value is the session id"),
      Options.withDefault(SESSION_LABEL)
    ),
    shards: Options.integer("shards").pipe(
      Options.withPseudoName("M"),
      Options.withDescription(
        "Split the sessions into M shards, each with its own Lease (session-routing-controller-shard-N-of-M); " +
          "every replica must have the same M: one refuses to start while a live Lease of another M exists"
      ),
      Options.withDefault(1)
    ),
    shard: Options.integer("shard").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Route shard N (0 to M-1) of --shards M"),
      Options.withDefault(0)
    ),
    noLeaderElect: Options.boolean("no-leader-elect").pipe(
      Options.withDescription("Route at once without a Lease: run one replica only")
    ),
    identity: Options.text("identity").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription(
        `This replica in the Lease (default: $${CONTROLLER_IDENTITY_ENV}, else host name and a random id)`
      ),
      Options.optional
    ),
    probeSuccesses: Options.integer("probe-successes").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("With probes on, probes in a row that must reach a host before it counts"),
      Options.withDefault(3)
    ),
    output: outputOption,
    ...metricsOptions,
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* routerConfigFrom(flags)
      const options = yield* Either.mapLeft(controllerOptionsFrom(flags, process.env), (line) => cliError(line))
      yield* warnAbout(config)
      // Ready while it leads or sees a live leader; not ready once it lost the Lease,
      // stepped down or sees no live leader, until it leads or follows one again.
      const ready = yield* Ref.make(options.leaderElection === undefined)
      const lease = `${config.sessionNamespace}/${controllerLeaseName(options.shard)}`
      const election = options.leaderElection
      const run = runController({
        ...options,
        onReport: (report) => Console.log(reportLine(report, flags.output)),
        ...(election !== undefined
          ? {
            leaderElection: {
              ...election,
              onChange: (change) =>
                Effect.zipRight(
                  Ref.set(ready, change._tag === "Leading" || change._tag === "Following"),
                  Console.error(leadershipLine(lease, election.identity, change))
                )
            }
          }
          : {})
      })
      // One client for the router and for the controller's own reads and writes of Pods.
      const layer = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(kubeClientLayer(flags)),
        Layer.provideMerge(Layer.succeed(RouterConfig, config))
      )
      // SIGINT and SIGTERM are how an orchestrator stops a controller, not a failure: the
      // routing is interrupted, which releases the Lease, and the process exits 0.
      const stop = Effect.tap(yield* shutdownSignal, (signal) => Console.error(`${signal}: stopping the controller`))
      yield* Effect.zipRight(checkSessionNamespace(config.sessionNamespace), run).pipe(
        Effect.provide(layer),
        Effect.mapError(asCliError),
        Effect.raceFirst(stop),
        withMetricsServer(flags, { ready: Ref.get(ready) })
      )
      yield* Console.error("controller stopped")
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription("Route every labelled session Pod and write its RoutesProgrammed condition, until stopped")
)
