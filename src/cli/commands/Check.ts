/**
 * `session-routing check`: can this configuration route sessions on this cluster?
 * Runs `checkRouting` and prints each check (✓, ✗ or !) with what to do on a failure.
 * Exit 0 when none failed, 1 otherwise; a kubeconfig that cannot be loaded is a failed check.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer, Option } from "effect"
import * as SessionRouting from "../../layers/SessionRouting.js"
import { type CheckReport, checkRouting, nothingToCheck, reportOf } from "../../runner/Check.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { cliError, ExitCode } from "../CliError.js"
import { kubeClientLayer, routerConfigFrom, routesSessions, sharedOptions, warnAbout } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { reportJson, reportLines } from "../present/CheckView.js"
import { stdoutColor } from "../present/Presenter.js"
import { parsePodFlags, podFlag, podUidFlag } from "../SessionFlags.js"

/** `--pod` and `--pod-uid` together, checked as `publish` checks them; neither is fine too. */
const probeOwnerOf = (pod: Option.Option<string>, podUid: Option.Option<string>) => {
  if (Option.isNone(pod) && Option.isNone(podUid)) return Either.right(undefined)
  if (Option.isNone(pod) || Option.isNone(podUid)) {
    return Either.left(cliError("--pod and --pod-uid go together: name the Pod and its metadata.uid"))
  }
  return Either.mapLeft(parsePodFlags(pod.value, podUid.value), (line) => cliError(line))
}

/**
 * `-o` as `check` prints it: the report is one value, not a stream of events, so the
 * session commands' `outputOption` (a live table, one event per line) would describe
 * another command's output.
 */
const checkOutputOption = Options.choice("output", ["table", "json"] as const).pipe(
  Options.withAlias("o"),
  Options.withDescription(
    "Output: table (one line per check: ✓ passed, ✗ failed, ! could not tell) or json (the whole report as one JSON object)"
  ),
  Options.withDefault("table")
)

/** What `check --help` says beyond the options. */
export const checkHelp: CommandHelp = {
  details: [
    "Prints each check (✓, ✗ or !) with what to do about a failure. Exit status 0 when no check failed, 1 otherwise.",
    "With --controller it also asks whether this identity may do what controller mode does beyond routing: " +
    "get, list, watch and patch Pods, patch pods/status, and get, create and update Leases (render --controller " +
    "grants them)."
  ],
  examples: [
    {
      comment: "Check the kubeconfig's current context for ingress mode",
      command: "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing check"
    },
    {
      comment: "Also publish a probe session owned by the runner's Pod, wait for its verdict, and remove it",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing check --round-trip --pod runner-0 --pod-uid \"$(kubectl get pod runner-0 -o jsonpath='{.metadata.uid}')\""
    },
    {
      comment: "Check controller mode in gateway mode, as its ServiceAccount on context staging, as JSON",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com SESSION_GATEWAY_NAME=sessions session-routing check --controller --mode gateway --context staging -o json"
    }
  ]
}

/** `session-routing check [--round-trip [--pod NAME --pod-uid UID]] [--controller] [-o table|json] [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`. */
export const checkCommand = Command.make(
  "check",
  {
    output: checkOutputOption,
    roundTrip: Options.boolean("round-trip").pipe(
      Options.withDescription("Also publish a probe session, wait for its verdict and unpublish it")
    ),
    pod: podFlag("With --round-trip: a running Pod to own the probe's objects (with --pod-uid)").pipe(Options.optional),
    podUid: podUidFlag("The metadata.uid of --pod").pipe(Options.optional),
    controller: Options.boolean("controller").pipe(
      Options.withDescription("Also check what controller mode needs: Pods, pods/status and Leases")
    ),
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* routerConfigFrom(flags)
      const probeOwner = yield* probeOwnerOf(flags.pod, flags.podUid)
      yield* warnAbout(config)
      const report: CheckReport = routesSessions(config)
        ? yield* checkRouting({
          roundTrip: flags.roundTrip,
          controller: flags.controller,
          ...(probeOwner !== undefined ? { probeOwner } : {})
        }).pipe(
          Effect.provide(
            SessionRouting.layerConfig.pipe(
              Layer.provideMerge(kubeClientLayer(flags)),
              Layer.provideMerge(Layer.succeed(RouterConfig, config))
            )
          ),
          // No usable kubeconfig is the first check failing, not an error of the command.
          Effect.catchAll((error) =>
            Effect.succeed(reportOf([{
              id: error._tag === "KubeConfigError" ? "kubeconfig" : "setup",
              status: "fail",
              line: error.message,
              hint: "pass --kubeconfig and --context, or set KUBECONFIG"
            }]))
          )
        )
        : nothingToCheck(config)
      if (flags.output === "json") yield* Console.log(reportJson(report))
      else for (const line of reportLines(report, yield* stdoutColor)) yield* Console.log(line)
      if (!report.ok) return yield* cliError("", ExitCode.failure)
    })
).pipe(Command.withDescription("Check that this configuration can route sessions on the cluster"))
