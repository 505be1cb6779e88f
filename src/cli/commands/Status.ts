/**
 * `session-routing status`: one read of each host the cluster holds for a session,
 * in the same event shapes `publish` prints, for a process that did not publish it
 * (a runner restarted, a person on call). Exit 0 only when every host is programmed.
 */
import { Command } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import { sessionStatus } from "../../runner/SessionRunner.js"
import { cliError, ExitCode } from "../CliError.js"
import { nothingToNote, routerConfigFrom, sharedOptions, warnAbout, withSessionLayer } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { outputOption, presentationFor, presentSnapshot } from "../present/Presenter.js"
import { statusExitCode, unreadMessage } from "../present/SessionView.js"
import { sessionFlag } from "../SessionFlags.js"

/** What `status --help` says beyond the options. */
export const statusHelp: CommandHelp = {
  details: [
    "For a process that did not publish the session (a restarted runner, a person on call), in the event " +
    "shapes publish prints. Exit status 0 when every host is programmed, 3 when one is pending or " +
    "unprogrammed, 1 on a failure (a status that could not be read included)."
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
    session: sessionFlag("Session id: lower-case letters, digits and '-'"),
    output: outputOption,
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* routerConfigFrom(flags)
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      const presentation = yield* presentationFor(flags.output)
      yield* warnAbout(config)
      const idle = nothingToNote(config, "read")
      // The none layer reads nothing, so "no hosts" would say nothing about the cluster.
      if (idle !== undefined) return yield* Console.error(idle)
      const events = yield* sessionStatus(sessionId).pipe(withSessionLayer(flags, config))
      const view = yield* presentSnapshot(presentation, events)
      if (view.rows.length === 0) {
        yield* Console.error(
          `note: session ${sessionId} has no ${config.mode} routing objects in namespace ${config.sessionNamespace}`
        )
      }
      const code = statusExitCode(view)
      if (code !== ExitCode.ok) return yield* cliError(unreadMessage(view) ?? "", code)
    })
).pipe(Command.withDescription("Read once whether each host the cluster holds for a session is programmed"))
