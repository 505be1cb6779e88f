/**
 * `session-routing status`: one read of each host the cluster holds for a session,
 * in the same event shapes `publish` prints, for a process that did not publish it
 * (a runner restarted, a person on call). Exit 0 only when every host is programmed.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import { sessionStatus } from "../../runner/SessionRunner.js"
import { cliError, ExitCode } from "../CliError.js"
import { routerConfigOverrides, routesSessions, sessionLayer, sharedOptions } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { asCliError, outputOption, presentationFor, presentSnapshot } from "../present/Presenter.js"
import { statusExitCode } from "../present/SessionView.js"

/** What `status --help` says beyond the options. */
export const statusHelp: CommandHelp = {
  details: [
    "For a process that did not publish the session (a restarted runner, a person on call), in the event " +
    "shapes publish prints. Exit status 0 when every host is programmed, 3 when one is pending or " +
    "unprogrammed, 1 on a failure."
  ],
  examples: [
    {
      comment: "Is every host of session hzyayvabgyvz programmed?",
      command: "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing status --session hzyayvabgyvz"
    },
    {
      comment: "The same for a session published in gateway mode in namespace dev, as JSON",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com SESSION_GATEWAY_NAME=sessions session-routing status --session hzyayvabgyvz --mode gateway -n dev -o json"
    }
  ]
}

/** `session-routing status --session ID [-o table|json] [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`. */
export const statusCommand = Command.make(
  "status",
  {
    session: Options.text("session").pipe(
      Options.withPseudoName("ID"),
      Options.withDescription("Session id: lower-case letters, digits and '-'")
    ),
    output: outputOption,
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* RouterConfigLive.fromEnv(routerConfigOverrides(flags))
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      const presentation = yield* presentationFor(flags.output)
      for (const warning of config.warnings) yield* Console.error(`warning: ${warning}`)
      if (!routesSessions(config)) {
        // The none layer reads nothing, so "no hosts" would say nothing about the cluster.
        yield* Console.error(
          `note: nothing to read: ${
            config.mode === "none"
              ? "mode none publishes nothing"
              : `no base domain is set (${RouterConfigLive.ENV.baseDomain})`
          }; pass the --mode the session was published with`
        )
        return
      }
      const events = yield* sessionStatus(sessionId).pipe(
        Effect.provide(sessionLayer(flags, config)),
        Effect.mapError(asCliError)
      )
      const view = yield* presentSnapshot(presentation, events)
      if (view.rows.length === 0) {
        yield* Console.error(
          `note: session ${sessionId} has no ${config.mode} routing objects in namespace ${config.sessionNamespace}`
        )
      }
      const code = statusExitCode(view)
      if (code !== ExitCode.ok) return yield* cliError("", code)
    })
).pipe(Command.withDescription("Read once whether each host the cluster holds for a session is programmed"))
