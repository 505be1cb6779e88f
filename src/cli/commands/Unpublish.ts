/**
 * `session-routing unpublish`: deletes a session's routing objects (its Service and
 * the Ingress or HTTPRoutes of the configured mode) before the Pod goes, e.g. when a
 * session is closed but its Pod is kept. Deleting what is already gone succeeds.
 */
import { Command } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import { unpublishSession } from "../../runner/SessionRunner.js"
import { cliError } from "../CliError.js"
import { nothingToNote, routerConfigFrom, sharedOptions, warnAbout, withSessionLayer } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { sessionFlag } from "../SessionFlags.js"

/** What `unpublish --help` says beyond the options. */
export const unpublishHelp: CommandHelp = {
  details: [
    "Deletes the session's Service and the Ingress or HTTPRoutes of the configured mode, e.g. when a session " +
    "closes but its Pod stays (the Pod's deletion collects them anyway). Exit status 0 also when there were none."
  ],
  examples: [
    {
      comment: "Delete session hzyayvabgyvz's Service and Ingress",
      command: "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing unpublish --session hzyayvabgyvz"
    },
    {
      comment: "Delete the HTTPRoutes of a session published in gateway mode in namespace dev",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com SESSION_GATEWAY_NAME=sessions session-routing unpublish --session hzyayvabgyvz --mode gateway -n dev"
    }
  ]
}

/** `session-routing unpublish --session ID [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`. */
export const unpublishCommand = Command.make(
  "unpublish",
  {
    session: sessionFlag("Session id: lower-case letters, digits and '-'"),
    ...sharedOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* routerConfigFrom(flags)
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      yield* warnAbout(config)
      const idle = nothingToNote(config, "delete")
      // The none layer deletes nothing: saying "unpublished" would hide objects an
      // earlier publish in another mode left behind.
      if (idle !== undefined) return yield* Console.error(idle)
      yield* unpublishSession(sessionId).pipe(withSessionLayer(flags, config))
      yield* Console.log(`unpublished session ${sessionId} (${config.mode}, namespace ${config.sessionNamespace})`)
    })
).pipe(Command.withDescription("Delete a session's routing objects"))
