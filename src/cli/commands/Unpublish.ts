/**
 * `session-routing unpublish`: deletes a session's routing objects (its Service and its
 * Ingress or HTTPRoutes, whichever mode published them) before the Pod goes, e.g. when
 * a session is closed but its Pod is kept. Deleting what is already gone succeeds.
 */
import { Command } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { parseSessionId } from "../../domain/Session.js"
import { unpublishEveryMode } from "../../layers/SessionRouterLive.js"
import { cliError } from "../CliError.js"
import { configuredMode, objectsConfig, objectsLayer, sharedOptions } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { asCliError } from "../present/Presenter.js"
import { sessionFlag } from "../SessionFlags.js"

/** What `unpublish --help` says beyond the options. */
export const unpublishHelp: CommandHelp = {
  details: [
    "Deletes the session's Service and its Ingress or HTTPRoutes, whichever mode published them, e.g. when a " +
    "session closes but its Pod stays (the Pod's deletion collects them anyway). Needs no base domain or " +
    "Gateway. The configured mode's routes (--mode, else SESSION_ROUTING_MODE) must be listable; the other " +
    "mode's are looked through where this identity may list them. Prints each object deleted; exit status 0 " +
    "also when there were none (said on stderr), 1 when one could not be listed or deleted."
  ],
  examples: [
    {
      comment: "Delete session hzyayvabgyvz's objects in the configured namespace",
      command: "session-routing unpublish --session hzyayvabgyvz"
    },
    {
      comment: "The same in namespace dev, for a runner in gateway mode (its RBAC may name HTTPRoutes only)",
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
      // The configured mode's routes must be listable; the other mode's are looked through as
      // a router looks through what the other mode left (an identity with one mode's RBAC).
      const configured = yield* configuredMode(flags)
      const mode = configured === "none" ? undefined : configured
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
