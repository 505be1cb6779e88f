/**
 * `session-routing status`: one read of each host the cluster holds for a session,
 * in the same event shapes `publish` prints, for a process that did not publish it
 * (a runner restarted, a person on call). Exit 0 only when every host is programmed.
 */
import { Command } from "@effect/cli"
import { Console, Effect, Either } from "effect"
import { sessionSelector } from "../../domain/Manifests.js"
import { parseSessionId } from "../../domain/Session.js"
import { hostsOf, isEmptyFootprint, sessionFootprint } from "../../runner/SessionFootprint.js"
import { sessionStatus } from "../../runner/SessionRunner.js"
import { cliError, ExitCode } from "../CliError.js"
import { configFromObjects, objectsConfig, objectsLayer, sharedOptions, withSessionLayer } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { asCliError, outputOption, presentationFor, presentSnapshot } from "../present/Presenter.js"
import { statusExitCode, unreadMessage } from "../present/SessionView.js"
import { sessionFlag } from "../SessionFlags.js"

/** What `status --help` says beyond the options. */
export const statusHelp: CommandHelp = {
  details: [
    "For a process that did not publish the session (a restarted runner, a person on call), in the event " +
    "shapes publish prints. The session's objects say how it was published: no mode, Gateway or base domain " +
    "is needed. A host pending longer than SESSION_ROUTE_READY_TIMEOUT_MS is unprogrammed with its diagnosis, " +
    "as publish --watch reports it at its deadline. Exit status 0 when every host is programmed, 3 when one is " +
    "pending or unprogrammed, 1 on a failure (a session with no objects, or a status that could not be read)."
  ],
  examples: [
    {
      comment: "Is every host of session hzyayvabgyvz programmed?",
      command: "session-routing status --session hzyayvabgyvz"
    },
    {
      comment: "The same in namespace dev, as JSON",
      command: "session-routing status --session hzyayvabgyvz -n dev -o json"
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
      const environment = yield* objectsConfig(flags)
      const sessionId = yield* Either.mapLeft(parseSessionId(flags.session), (line) => cliError(line))
      const presentation = yield* presentationFor(flags.output)
      // The session's objects say how it was published: no mode, Gateway or base domain to be told.
      const footprint = yield* sessionFootprint(sessionId).pipe(
        Effect.provide(objectsLayer(flags, environment)),
        Effect.mapError(asCliError)
      )
      if (isEmptyFootprint(footprint)) {
        return yield* cliError(
          `session ${sessionId} has no routing objects in namespace ${environment.sessionNamespace} ` +
            `(no Service, Ingress or HTTPRoute labelled ${sessionSelector(sessionId)}): was it published there?`
        )
      }
      const config = yield* configFromObjects(flags, footprint)
      const since = new Map(hostsOf(footprint).map((host) => [host.host, host.since]))
      const events = yield* sessionStatus(sessionId, {
        since: (route) => since.get(route.host),
        deadlineMs: config.routeReadyTimeoutMs
      }).pipe(withSessionLayer(flags, config))
      const view = yield* presentSnapshot(presentation, events)
      if (view.rows.length === 0) {
        yield* Console.error(
          `note: session ${sessionId} has only a Service in namespace ${config.sessionNamespace}: no tcp port, so no host`
        )
      }
      const code = statusExitCode(view)
      if (code !== ExitCode.ok) return yield* cliError(unreadMessage(view) ?? "", code)
    })
).pipe(
  Command.withDescription(
    "Read once whether each host the cluster holds for a session is programmed, whichever mode published it"
  )
)
