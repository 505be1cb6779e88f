/**
 * `session-routing unpublish`: deletes a session's routing objects (its Service and
 * the Ingress or HTTPRoutes of the configured mode) before the Pod goes, e.g. when a
 * session is closed but its Pod is kept. Deleting what is already gone succeeds.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import { unpublishSession } from "../../runner/SessionRunner.js"
import { cliError } from "../CliError.js"
import { globalOptions, routerConfigOverrides, routesSessions, sessionLayer } from "../GlobalOptions.js"
import { asCliError } from "../present/Presenter.js"

/** `session-routing unpublish --session ID [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`. */
export const unpublishCommand = Command.make(
  "unpublish",
  {
    ...globalOptions,
    session: Options.text("session").pipe(Options.withDescription("Session id: lower-case letters, digits and '-'"))
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* RouterConfigLive.fromEnv(routerConfigOverrides(flags))
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      for (const warning of config.warnings) yield* Console.error(`warning: ${warning}`)
      if (!routesSessions(config)) {
        // The none layer deletes nothing: saying "unpublished" would hide objects an
        // earlier publish in another mode left behind.
        yield* Console.error(
          `note: nothing to delete: ${
            config.mode === "none"
              ? "mode none publishes nothing"
              : `no base domain is set (${RouterConfigLive.ENV.baseDomain})`
          }; pass the --mode the session was published with`
        )
        return
      }
      yield* unpublishSession(sessionId).pipe(Effect.provide(sessionLayer(flags, config)), Effect.mapError(asCliError))
      yield* Console.log(`unpublished session ${sessionId} (${config.mode}, namespace ${config.sessionNamespace})`)
    })
).pipe(Command.withDescription("Delete a session's routing objects; exit 0 also when there were none"))
