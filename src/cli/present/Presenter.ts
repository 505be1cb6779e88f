/**
 * Prints a session's events the way the person asked: JSON lines, plain lines off
 * a terminal, or a live table on one. The drawing decisions live in SessionView
 * (pure); this module only writes through `Console` and ticks the spinner.
 */
import { Options } from "@effect/cli"
import { Config, Console, Context, Duration, Effect, Layer, Logger, LogLevel, Option, Schedule, Stream } from "effect"
import type { SessionEvent } from "../../runner/SessionRunner.js"
import { type CliError, cliError } from "../CliError.js"
import {
  applyEvent,
  emptyView,
  jsonLine,
  plainLine,
  publishedLine,
  redraw,
  renderFrame,
  screenLines,
  type SessionView
} from "./SessionView.js"

/** The `-o` values of publish and status. */
export type OutputFormat = "table" | "json"

/** `-o/--output` of publish, status and check: @effect/cli refuses any other value. */
export const outputOption = Options.choice("output", ["table", "json"] as const).pipe(
  Options.withAlias("o"),
  Options.withDescription(
    "Output: table (a live table on a terminal, one line per change elsewhere) or json (one event per line)"
  ),
  Options.withDefault("table")
)

/**
 * Any failure of the session commands (bad session, kubeconfig, publish, config) as
 * the CLI's one line with exit status 1. Server messages can span lines; they are
 * folded so the promise of one line on stderr holds.
 */
export const asCliError = (error: { readonly message: string }): CliError =>
  cliError(error.message.replace(/\s*\n\s*/g, " ").trim())

/** What the CLI knows of its stdout. */
export interface TerminalInfo {
  readonly isTTY: boolean
  /** Read at each redraw, so a resized window wraps correctly. */
  readonly columns: () => number | undefined
}

/**
 * Whether stdout is a terminal. A Reference rather than a read of `process.stdout`
 * in place, so tests drive the table and the plain lines without a terminal.
 */
export class StdoutTerminal extends Context.Reference<StdoutTerminal>()("session-routing/cli/StdoutTerminal", {
  defaultValue: (): TerminalInfo => ({
    isTTY: process.stdout.isTTY === true,
    columns: () => process.stdout.columns
  })
}) {}

/** How events are printed, once the format and the terminal are known. */
export type Presentation =
  | { readonly _tag: "Json" }
  | { readonly _tag: "Plain" }
  | { readonly _tag: "Live"; readonly color: boolean; readonly columns: () => number | undefined }

/**
 * `json` is always JSON lines. `table` is the live table on a terminal and one plain
 * line per change elsewhere (a log file cannot take cursor movements). Colours follow
 * https://no-color.org: any non-empty `NO_COLOR` turns them off.
 */
export const presentationFor = (format: OutputFormat): Effect.Effect<Presentation> =>
  Effect.gen(function*() {
    if (format === "json") return { _tag: "Json" } as const
    const terminal = yield* StdoutTerminal
    if (!terminal.isTTY) return { _tag: "Plain" } as const
    return { _tag: "Live", color: yield* stdoutColor, columns: terminal.columns } as const
  })

/**
 * Whether stdout may carry colours: a terminal, and https://no-color.org's `NO_COLOR`
 * unset or empty. The live table and the help (`Cli.run`) both follow it.
 */
export const stdoutColor: Effect.Effect<boolean> = Effect.gen(function*() {
  if (!(yield* StdoutTerminal).isTTY) return false
  const noColor = yield* Config.option(Config.string("NO_COLOR")).pipe(Effect.orElseSucceed(() => Option.none()))
  return Option.match(noColor, { onNone: () => true, onSome: (value) => value === "" })
})

/**
 * One log entry as the CLI's other notes read: `warning: <message>` on one line, no
 * timestamps or fiber ids (a person reads these, and a log collector adds its own).
 */
export const cliLogLine = (level: LogLevel.LogLevel, message: unknown): string => {
  const label = LogLevel.greaterThanEqual(level, LogLevel.Error)
    ? "error"
    : LogLevel.greaterThanEqual(level, LogLevel.Warning)
    ? "warning"
    : LogLevel.greaterThanEqual(level, LogLevel.Info)
    ? "note"
    : "debug"
  const text = (Array.isArray(message) ? message : [message]).map((part) => String(part)).join(" ")
  return `${label}: ${text.replace(/\s*\n\s*/g, "; ")}`
}

/**
 * Effect's default logger writes to stdout; under `-o json` stdout carries events
 * only, so the commands send every log line to stderr instead, as one line each.
 */
export const logsToStderr: Layer.Layer<never> = Logger.replace(
  Logger.defaultLogger,
  Logger.withConsoleError(Logger.make(({ logLevel, message }) => cliLogLine(logLevel, message)))
)

/** How often the spinner moves while a host is pending. */
export const SPINNER_INTERVAL = Duration.millis(100)

/** Prints one event as a line (JSON or plain), for the formats that never redraw. */
const printLine = (presentation: Presentation, event: SessionEvent): Effect.Effect<void> =>
  Console.log(presentation._tag === "Json" ? jsonLine(event) : plainLine(event))

/** Prints only the `published` event: `publish` without `--watch`. */
export const presentPublished = (
  presentation: Presentation,
  event: Extract<SessionEvent, { readonly type: "published" }>
): Effect.Effect<void> =>
  presentation._tag === "Json" ? Console.log(jsonLine(event)) : Console.log(publishedLine(event))

/** One read of the hosts (`status`): lines, or the table drawn once with still marks. */
export const presentSnapshot = (
  presentation: Presentation,
  events: ReadonlyArray<SessionEvent>
): Effect.Effect<SessionView> =>
  Effect.gen(function*() {
    const view = events.reduce(applyEvent, emptyView)
    if (presentation._tag === "Live") {
      const lines = renderFrame(view, { color: presentation.color })
      if (lines.length > 0) yield* Console.log(lines.join("\n"))
    } else {
      for (const event of events) yield* printLine(presentation, event)
    }
    return view
  })

type LiveInput = { readonly _tag: "Event"; readonly event: SessionEvent } | { readonly _tag: "Tick" }

interface LiveState {
  readonly view: SessionView
  readonly tick: number
  /** Screen lines of the frame currently on screen, to move back over on redraw. */
  readonly drawn: number
  /** The frame on screen, to skip redraws that would change nothing. */
  readonly frame: string
}

/**
 * Prints events as they come and returns what they said once the stream ends.
 * Live: the `published` line stays above a table that is redrawn in place on every
 * change and on every spinner tick while a host is pending. Ticks come from a
 * `Schedule`, merged with the events so one fiber does all the drawing.
 */
export const presentWatch = <E, R>(
  presentation: Presentation,
  events: Stream.Stream<SessionEvent, E, R>
): Effect.Effect<SessionView, E, R> => {
  if (presentation._tag !== "Live") {
    return Stream.runFoldEffect(
      events,
      emptyView,
      (view, event) => printLine(presentation, event).pipe(Effect.as(applyEvent(view, event)))
    )
  }
  const inputs = Stream.merge(
    Stream.map(events, (event): LiveInput => ({ _tag: "Event", event })),
    Stream.fromSchedule(Schedule.spaced(SPINNER_INTERVAL)).pipe(Stream.as<LiveInput>({ _tag: "Tick" })),
    // The table is done when the events are; the ticks only animate it.
    { haltStrategy: "left" }
  )
  const initial: LiveState = { view: emptyView, tick: 0, drawn: 0, frame: "" }
  return Stream.runFoldEffect(inputs, initial, (state, input) =>
    Effect.gen(function*() {
      let { drawn, frame } = state
      const tick = input._tag === "Tick" ? state.tick + 1 : state.tick
      const view = input._tag === "Event" ? applyEvent(state.view, input.event) : state.view
      if (input._tag === "Event" && input.event.type === "published") {
        // The published line is not part of the frame: it is written once, above it.
        yield* Console.log(redraw(drawn, [publishedLine(input.event)]))
        drawn = 0
        frame = ""
      }
      const lines = renderFrame(view, { color: presentation.color, tick })
      const next = lines.join("\n")
      if (next !== frame && lines.length > 0) {
        yield* Console.log(redraw(drawn, lines))
        drawn = screenLines(lines, presentation.columns())
        frame = next
      }
      return { view, tick, drawn, frame }
    })).pipe(Effect.map((state) => state.view))
}
