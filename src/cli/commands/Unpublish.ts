/**
 * `session-routing unpublish`: deletes a session's routing objects (its Service and its
 * Ingress or HTTPRoutes, whichever mode published them) before the Pod goes, e.g. when
 * a session is closed but its Pod is kept. Deleting what is already gone succeeds.
 */
import { Command } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import { unpublishEveryMode } from "../../layers/SessionRouter.js"
import { cliError } from "../CliError.js"
import { objectsConfig, objectsLayer, sharedOptions } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { asCliError } from "../present/Presenter.js"
import { sessionFlag } from "../SessionFlags.js"

/** What `unpublish --help` says beyond the options. */
export const unpublishHelp: CommandHelp = {
  details: [
    "Deletes the session's Service and its Ingress or HTTPRoutes, whichever mode published them, e.g. when a " +
    "session closes but its Pod stays (the Pod's deletion collects them anyway). Needs no base domain or " +
    "Gateway. Both kinds of route must be listable, unless --mode names the session's: then the other kind is " +
    "looked through only if this identity may (RBAC for one mode). Prints each object deleted; exit status 0 " +
    "also when there were none (said on stderr), 1 when one could not be listed or deleted."
  ],
  examples: [
    {
      comment: "Delete session hzyayvabgyvz's objects in the configured namespace",
      command: "session-routing unpublish --session hzyayvabgyvz"
    },
    {
      comment: "The same in namespace dev, as an identity allowed to list HTTPRoutes but not Ingresses",
      command: "session-routing unpublish --session hzyayvabgyvz --mode gateway -n dev"
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
      const config = yield* objectsConfig(flags)
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      const mode = Option.getOrUndefined(Option.filter(flags.mode, (m) => m !== "none"))
      const removed = yield* unpublishEveryMode(sessionId, mode).pipe(
        Effect.provide(objectsLayer(flags, config)),
        Effect.mapError(asCliError)
      )
      if (removed.length === 0) {
        return yield* Console.error(
          `note: session ${sessionId} has no routing objects in namespace ${config.sessionNamespace}: nothing to delete`
        )
      }
      for (const ref of removed) yield* Console.log(`${ref.kind} ${ref.namespace}/${ref.name} deleted`)
    })
).pipe(Command.withDescription("Delete a session's routing objects, whichever mode published them"))
