/**
 * `session-routing publish`: applies a session's routing objects to the cluster the
 * kubeconfig names, prints the runner's events, and with `--watch` waits until each
 * host is programmed or not, leaving with the status that says which.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Ref, Stream } from "effect"
import { parseSessionId, type PortMapping } from "../../domain/Session.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import { followSession } from "../../runner/FollowSession.js"
import { publishSession } from "../../runner/SessionRunner.js"
import type { RouterConfig } from "../../services/RouterConfig.js"
import { cliError, ExitCode } from "../CliError.js"
import { routerConfigFrom, sharedOptions, warnAbout, withSessionLayer } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { metricsOptions, withMetricsServer } from "../MetricsFlags.js"
import {
  type OutputFormat,
  outputOption,
  type Presentation,
  presentationFor,
  presentPublished,
  presentWatch
} from "../present/Presenter.js"
import { applyEvent, emptyView, publishExitCode, type SessionView, unreadMessage } from "../present/SessionView.js"
import { parsePodFlags, parsePortFlags, podFlag, podUidFlag, portFlag, sessionFlag } from "../SessionFlags.js"

/** The publish flags as @effect/cli parses them: raw text, checked by `parsePublishInput`. */
export interface PublishFlags {
  readonly session: string
  readonly pod: string
  readonly podUid: string
  readonly port: ReadonlyArray<string>
  readonly output: OutputFormat
}

/** What `publish` needs, after every flag is checked. */
export interface PublishInput {
  readonly sessionId: string
  readonly podName: string
  readonly podUid: string
  readonly ports: ReadonlyArray<PortMapping>
  readonly format: OutputFormat
}

/** Checks the flags in order and stops at the first bad one, with a line naming it. */
export const parsePublishInput = (flags: PublishFlags): Either.Either<PublishInput, string> =>
  Either.gen(function*() {
    const sessionId = yield* parseSessionId(flags.session)
    const ports = yield* parsePortFlags(flags.port)
    const { podName, podUid } = yield* parsePodFlags(flags.pod, flags.podUid)
    return { sessionId, podName, podUid, ports, format: flags.output }
  })

/**
 * Why a publish routes no host, for a note on stderr, or undefined when it routes
 * some. Without it an empty watch that exits 0 at once would look like success.
 */
export const nothingRoutedNote = (
  config: RouterConfig.Service,
  ports: ReadonlyArray<PortMapping>
): string | undefined => {
  if (config.mode === "none") return "note: mode none publishes nothing for a session: there is no host to watch"
  if (!ports.some((port) => port.protocol === "tcp")) {
    return "note: no tcp port: HTTP routing carries tcp ports only, so only the Service is published and there is no host to watch"
  }
  return undefined
}

// ---------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------

/** How a publish ends: its exit status, and the line to say when it is a failure. */
const outcomeOf = (view: SessionView): { readonly code: number; readonly message: string } => ({
  code: publishExitCode(view),
  message: unreadMessage(view) ?? ""
})

/** Publishes, prints, and returns how it ended (the caller provides the layers). */
const runPublish = (
  input: PublishInput,
  presentation: Presentation,
  mode: { readonly watch: boolean; readonly follow: boolean }
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const session = yield* publishSession({
        sessionId: input.sessionId,
        podName: input.podName,
        podUid: input.podUid,
        ports: input.ports
      })
      if (!mode.watch && !mode.follow) {
        // The watch publishSession started is stopped when this scope closes.
        yield* presentPublished(presentation, {
          type: "published",
          layer: session.layer,
          routes: session.routes,
          endpoints: session.endpoints
        })
        return { code: ExitCode.ok as number, message: "" }
      }
      if (!mode.follow) return outcomeOf(yield* presentWatch(presentation, session.events))
      const seen = yield* Ref.make(emptyView)
      const watched = Stream.tap(session.events, (event) => Ref.update(seen, (view) => applyEvent(view, event)))
      const followed = Stream.unwrap(
        Effect.map(Ref.get(seen), (view) => followSession(input.sessionId, view.rows))
      )
      // Reached only if the follow stream ever ended; interrupting it is the way out.
      return outcomeOf(yield* presentWatch(presentation, Stream.concat(watched, followed)))
    })
  )

/** What `publish --help` says beyond the options. */
export const publishHelp: CommandHelp = {
  details: [
    "Applies the session's Service, then its Ingress or one HTTPRoute per tcp port, all owned by the Pod, " +
    "to the cluster the kubeconfig names, and prints what was published. Exit status 0 when every watched " +
    "host is programmed, 3 when one is unprogrammed, 1 on a failure (a status that could not be read " +
    "included). Everything but the flags comes from " +
    `the environment (${RouterConfigLive.ENV.baseDomain}, ${RouterConfigLive.ENV.ingressClassName}, ...).`
  ],
  examples: [
    {
      comment: "Publish session hzyayvabgyvz's ports 8080 and 5000/udp and wait until each host is programmed",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing publish --session hzyayvabgyvz --pod telo-run-hzyayvabgyvz --pod-uid 3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13 --port 8080 --port 5000/udp --watch"
    },
    {
      comment: "In gateway mode, then keep reporting each change, one JSON event per line",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com SESSION_GATEWAY_NAME=sessions session-routing publish --mode gateway --session hzyayvabgyvz --pod telo-run-hzyayvabgyvz --pod-uid 3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13 --port 8080 --follow -o json"
    }
  ]
}

/**
 * `session-routing publish --session ID --pod NAME --pod-uid UID --port 8080[/tcp|/udp]...
 * [--watch] [--follow] [-o table|json] [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`.
 */
export const publishCommand = Command.make(
  "publish",
  {
    session: sessionFlag("Session id: lower-case letters, digits and '-' (e.g. hzyayvabgyvz)"),
    pod: podFlag("Name of the session Pod that owns the objects"),
    podUid: podUidFlag("metadata.uid of that Pod: the objects are collected with it"),
    port: portFlag("A session port, e.g. 8080 or 5000/udp; repeat the option for each port").pipe(Options.atLeast(1)),
    watch: Options.boolean("watch").pipe(
      Options.withDescription("Wait until every host is programmed or unprogrammed; exit 3 if any is unprogrammed")
    ),
    follow: Options.boolean("follow").pipe(
      Options.withDescription(
        "As --watch, then keep following the hosts through the same status source (on the shared watch, " +
          "with no further requests) and print each change (a late controller, a lost status, a deleted " +
          "object) until interrupted"
      )
    ),
    output: outputOption,
    ...metricsOptions,
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      // Configuration first: a bad environment is a start-up failure whatever the flags say.
      const config = yield* routerConfigFrom(flags)
      const input = yield* Either.mapLeft(parsePublishInput(flags), (line) => cliError(line))
      const presentation = yield* presentationFor(input.format)
      // Without a base domain the library publishes nothing (the none layer): on a command
      // line that would read as a publish that worked.
      if (config.mode !== "none" && config.baseDomain === undefined) {
        return yield* cliError(
          `no base domain is set, so there is no host to publish: set ${RouterConfigLive.ENV.baseDomain} ` +
            `(e.g. sessions.example.com), or pass --mode none to publish nothing on purpose`
        )
      }
      yield* warnAbout(config)
      const note = nothingRoutedNote(config, input.ports)
      if (note !== undefined) yield* Console.error(note)
      const outcome = yield* runPublish(input, presentation, flags).pipe(
        withSessionLayer(flags, config),
        withMetricsServer(flags)
      )
      // The events already said which hosts were unprogrammed and why; a status that
      // could not be read is a failure, and said so once more.
      if (outcome.code !== ExitCode.ok) return yield* cliError(outcome.message, outcome.code)
    })
).pipe(Command.withDescription("Publish a session's routing objects and report whether each host is programmed"))
