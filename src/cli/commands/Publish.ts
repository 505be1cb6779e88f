/**
 * `session-routing publish`: applies a session's routing objects to the cluster the
 * kubeconfig names, prints the runner's events, and with `--watch` waits until each
 * host is programmed or not, leaving with the status that says which.
 */
import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Either, Ref, Schedule, Stream } from "effect"
import { parseSessionId, type PortMapping } from "../../domain/Session.js"
import { rejectionReason } from "../../health/RouteHealth.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import { publishSession, type SessionEvent } from "../../runner/SessionRunner.js"
import type { RouterConfig } from "../../services/RouterConfig.js"
import { SessionRouter } from "../../services/SessionRouter.js"
import { cliError, ExitCode } from "../CliError.js"
import { parsePodFlags, parsePortFlags } from "../SessionFlags.js"
import { globalOptions, routerConfigOverrides, sessionLayer } from "../GlobalOptions.js"
import {
  asCliError,
  logsToStderr,
  type OutputFormat,
  outputOption,
  parseOutputFormat,
  type Presentation,
  presentationFor,
  presentPublished,
  presentWatch
} from "../present/Presenter.js"
import { applyEvent, emptyView, type HostRow, publishExitCode } from "../present/SessionView.js"


/** The publish flags as @effect/cli parses them: raw text, checked by `parsePublishInput`. */
export interface PublishFlags {
  readonly session: string
  readonly pod: string
  readonly podUid: string
  readonly port: ReadonlyArray<string>
  readonly output: string
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
  Either.gen(function* () {
    const format = yield* parseOutputFormat(flags.output)
    const sessionId = yield* parseSessionId(flags.session)
    const ports = yield* parsePortFlags(flags.port)
    const { podName, podUid } = yield* parsePodFlags(flags.pod, flags.podUid)
    return { sessionId, podName, podUid, ports, format }
  })

/**
 * Why a publish routes no host, for a note on stderr, or undefined when it routes
 * some. Without it an empty watch that exits 0 at once would look like success.
 */
export const nothingRoutedNote = (config: RouterConfig.Service, ports: ReadonlyArray<PortMapping>): string | undefined => {
  if (config.mode === "none") return "note: mode none publishes nothing for a session: there is no host to watch"
  if (config.baseDomain === undefined) {
    return `note: nothing is published without a base domain: set ${RouterConfigLive.ENV.baseDomain} (e.g. sessions.example.com)`
  }
  if (!ports.some((port) => port.protocol === "tcp")) {
    return "note: no tcp port: HTTP routing carries tcp ports only, so only the Service is published and there is no host to watch"
  }
  return undefined
}

// ---------------------------------------------------------------------------
// --follow
// ---------------------------------------------------------------------------

/**
 * The reason a host gets when its routing object disappeared while followed: the
 * session was unpublished, or its owner Pod was deleted and the cluster collected it.
 */
export const GONE_REASON =
  "the routing object for this host is gone: the session was unpublished, or its owner Pod was deleted"

/** What `--follow` remembers between polls. */
export interface FollowState {
  readonly rows: ReadonlyMap<string, HostRow>
  /** True while reads fail, so one streak of failures is reported once. */
  readonly failing: boolean
}

/** One poll's answers: the routes the cluster holds (or why not), and each one's verdict. */
export type PollResult =
  | { readonly _tag: "RoutesUnreadable"; readonly reason: string }
  | {
      readonly _tag: "Read"
      readonly hosts: ReadonlyArray<{
        readonly port: number
        readonly host: string
        readonly verdict: Either.Either<HostRow["state"] | { readonly rejected: string }, string>
      }>
    }

/**
 * The events one poll adds to what was known, and what is known after it. Only
 * changes are reported. A failed read changes no host (the last answer stands) and is
 * reported once per streak as `read-error`. A `pending` verdict is news only for a
 * host that was programmed (it lost its status) or new: a host that already ended
 * unprogrammed stays so until a controller programs it.
 */
export const followStep = (state: FollowState, poll: PollResult): readonly [FollowState, ReadonlyArray<SessionEvent>] => {
  const events: Array<SessionEvent> = []
  let failure: string | undefined
  const rows = new Map<string, HostRow>()
  if (poll._tag === "RoutesUnreadable") {
    failure = poll.reason
    for (const [host, row] of state.rows) rows.set(host, row)
  } else {
    for (const { host, port, verdict } of poll.hosts) {
      const before = state.rows.get(host)
      if (Either.isLeft(verdict)) {
        failure ??= verdict.left
        if (before !== undefined) rows.set(host, before)
        continue
      }
      const answer = verdict.right
      const next: HostRow =
        typeof answer === "object"
          ? { port, host, state: "unprogrammed", reason: answer.rejected }
          : answer === "pending" && before?.state === "unprogrammed"
            ? before
            : { port, host, state: answer }
      rows.set(host, next)
      if (before === undefined || before.state !== next.state || before.reason !== next.reason) {
        events.push({ type: "route", port, host, state: next.state, ...(next.reason !== undefined ? { reason: next.reason } : {}) })
      }
    }
    for (const [host, before] of state.rows) {
      if (poll.hosts.some((h) => h.host === host)) continue
      events.push({ type: "route", port: before.port, host, state: "unprogrammed", reason: GONE_REASON })
    }
  }
  // Said before the host changes of the same poll, as the watch does.
  if (failure !== undefined && !state.failing) events.unshift({ type: "read-error", reason: failure })
  return [{ rows, failing: failure !== undefined }, events]
}

/** Reads the session's routes and each one's verdict once. */
const pollSession = (sessionId: string): Effect.Effect<PollResult, never, SessionRouter> =>
  Effect.gen(function* () {
    const router = yield* SessionRouter
    const routes = yield* Effect.either(router.routesOf(sessionId))
    if (Either.isLeft(routes)) return { _tag: "RoutesUnreadable", reason: routes.left.reason } as const
    const hosts = yield* Effect.forEach(
      routes.right,
      (route) =>
        router.verdictFor(sessionId, route).pipe(
          Effect.map((verdict) =>
            verdict.kind === "rejected" ? { rejected: rejectionReason(verdict.reason, verdict.message) } : verdict.kind
          ),
          Effect.mapError((error) => error.reason),
          Effect.either,
          Effect.map((verdict) => ({ port: route.port, host: route.host, verdict }))
        ),
      { concurrency: 8 }
    )
    return { _tag: "Read", hosts } as const
  })

/**
 * `--follow` after the watch: re-reads the session's hosts every `intervalMs` for as
 * long as it is consumed and emits a `route` event whenever one changes (a controller
 * programs a host late, a route loses its status, an object is deleted), in the same
 * shapes as the watch. It never ends by itself.
 */
export const followSession = (
  sessionId: string,
  known: ReadonlyArray<HostRow>,
  intervalMs: number
): Stream.Stream<SessionEvent, never, SessionRouter> =>
  Stream.fromSchedule(Schedule.spaced(Duration.millis(Math.max(1, intervalMs)))).pipe(
    Stream.mapAccumEffect(
      { rows: new Map(known.map((row) => [row.host, row])), failing: false } as FollowState,
      (state) => Effect.map(pollSession(sessionId), (poll) => followStep(state, poll))
    ),
    Stream.flattenIterables
  )

// ---------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------

/** Publishes, prints, and returns the exit status (the caller provides the layers). */
const runPublish = (
  input: PublishInput,
  presentation: Presentation,
  mode: { readonly watch: boolean; readonly follow: boolean },
  intervalMs: number
) =>
  Effect.scoped(
    Effect.gen(function* () {
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
        return ExitCode.ok as number
      }
      if (!mode.follow) return publishExitCode(yield* presentWatch(presentation, session.events))
      const seen = yield* Ref.make(emptyView)
      const watched = Stream.tap(session.events, (event) => Ref.update(seen, (view) => applyEvent(view, event)))
      const followed = Stream.unwrap(
        Effect.map(Ref.get(seen), (view) => followSession(input.sessionId, view.rows, intervalMs))
      )
      // Reached only if the follow stream ever ended; interrupting it is the way out.
      return publishExitCode(yield* presentWatch(presentation, Stream.concat(watched, followed)))
    })
  )

/**
 * `session-routing publish --session ID --pod NAME --pod-uid UID --port 8080[/tcp|/udp]...
 * [--watch] [--follow] [-o table|json] [--kubeconfig PATH] [--context NAME] [-n NS] [--mode MODE]`.
 */
export const publishCommand = Command.make(
  "publish",
  {
    ...globalOptions,
    session: Options.text("session").pipe(
      Options.withDescription("Session id: lower-case letters, digits and '-' (e.g. hzyayvabgyvz)")
    ),
    pod: Options.text("pod").pipe(Options.withDescription("Name of the session Pod that owns the objects")),
    podUid: Options.text("pod-uid").pipe(
      Options.withDescription("metadata.uid of that Pod: the objects are collected with it")
    ),
    port: Options.text("port").pipe(
      Options.withDescription("A session port: PORT, PORT/tcp or PORT/udp; repeat for each port"),
      Options.repeated
    ),
    watch: Options.boolean("watch").pipe(
      Options.withDescription("Wait until every host is programmed or unprogrammed; exit 3 if any is unprogrammed")
    ),
    follow: Options.boolean("follow").pipe(
      Options.withDescription("After the watch, keep re-reading the hosts and print each change until interrupted")
    ),
    output: outputOption
  },
  (flags) =>
    Effect.gen(function* () {
      // Configuration first: a bad environment is a start-up failure whatever the flags say.
      const config = yield* RouterConfigLive.fromEnv(routerConfigOverrides(flags))
      const input = yield* Either.mapLeft(parsePublishInput(flags), (line) => cliError(line))
      const presentation = yield* presentationFor(input.format)
      for (const warning of config.warnings) yield* Console.error(`warning: ${warning}`)
      const note = nothingRoutedNote(config, input.ports)
      if (note !== undefined) yield* Console.error(note)
      const code = yield* runPublish(input, presentation, flags, config.routePollIntervalMs).pipe(
        Effect.provide(sessionLayer(flags, config)),
        Effect.mapError(asCliError)
      )
      // The events already said which hosts failed: nothing more to print.
      if (code !== ExitCode.ok) return yield* cliError("", code)
    }).pipe(Effect.provide(logsToStderr))
).pipe(
  Command.withDescription(
    "Publish a session's routing objects and report each host: exit 0 when all are programmed, 3 when one is not, 1 on failure"
  )
)
