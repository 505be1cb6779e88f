/**
 * The `session-routing` command tree and the one place that turns a command's
 * outcome into an exit status. `run` is an Effect, so tests drive the real CLI
 * in-process with their own Console and ConfigProvider.
 */
import { type CliApp, Command, ValidationError } from "@effect/cli"
import { Console, Effect, FiberRef } from "effect"
import packageJson from "session-routing/package.json" with { type: "json" }
import * as TracingExport from "../layers/TracingExport.js"
import { RouterConfigError } from "../services/RouterConfig.js"
import { CliError, ExitCode } from "./CliError.js"
import { checkCommand } from "./commands/Check.js"
import { clusterCommand } from "./commands/Cluster.js"
import { demoCommand } from "./commands/Demo.js"
import { publishCommand } from "./commands/Publish.js"
import { renderCommand } from "./commands/Render.js"
import { statusCommand } from "./commands/Status.js"
import { unpublishCommand } from "./commands/Unpublish.js"
import { commandNames, helpDocLines, usageErrorLine } from "./internal/UsageError.js"
import { logsToStderr, stdoutColor } from "./present/Presenter.js"

/**
 * Whether the fiber is inside a command's handler. Outside it, the only stderr
 * writes are @effect/cli's own usage errors, which `report` words itself.
 */
const inCommand = FiberRef.unsafeMake(false)

/**
 * The root command: no options of its own (the shared ones live on each subcommand,
 * see GlobalOptions.ts); run alone it prints the help. Later commands join the list.
 */
export const command = Command.make("session-routing").pipe(
  Command.withDescription(
    "Publishes Kubernetes routing objects for session Pods and reports whether they were programmed."
  ),
  Command.withSubcommands([
    renderCommand,
    publishCommand,
    statusCommand,
    unpublishCommand,
    checkCommand,
    clusterCommand,
    demoCommand
  ]),
  Command.transformHandler((handler) => Effect.locally(handler, inCommand, true))
)

const NAME = "session-routing"

/** The parsed application: `cli(argv)` with argv shaped like `process.argv` (runtime, script, arguments). */
export const cli = Command.run(command, { name: NAME, version: packageJson.version })

/** The option and command names usage errors suggest from. */
const names = commandNames(NAME, command)

/**
 * Drops @effect/cli's own printing of a usage error (its paragraph, e.g. "Received
 * unknown argument: '--prot'", with no `error:` and no hint) so that `report` can
 * print the CLI's line from the same error. Commands' stderr passes untouched.
 */
const withoutLibraryErrors = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.consoleWith((console) =>
    Effect.withConsole(self, {
      ...console,
      error: (...args: ReadonlyArray<unknown>) =>
        Effect.flatMap(FiberRef.get(inCommand), (inside) => (inside ? console.error(...args) : Effect.void))
    })
  )

/**
 * Drops trailing newlines from stderr writes and joins the lines of one write with
 * "; ". @effect/cli prints its usage errors as a paragraph that ends in a newline, so
 * each came out as a line plus a blank one, and several (two missing options) as
 * paragraphs; the CLI promises exactly one line per failure.
 */
const oneLineErrors = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.consoleWith((console) =>
    Effect.withConsole(self, {
      ...console,
      error: (...args: ReadonlyArray<unknown>) =>
        console.error(
          ...args.map((arg) => (typeof arg === "string" ? arg.replace(/\n+$/, "").replace(/\s*\n\s*/g, "; ") : arg))
        )
    })
  )

const SGR = /\x1b\[[0-9;]*m/g

/**
 * Strips colour codes from stdout writes when stdout may not carry colours.
 * @effect/cli renders its help in ANSI bold whatever stdout is, so `--help | less`
 * and `NO_COLOR` showed escape codes. The CLI's own output is colourless then
 * already; the live table's cursor movements are not colour codes and stay.
 */
const colourOnlyWhereWanted = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(stdoutColor, (color) =>
    color
      ? self
      : Effect.consoleWith((console) =>
        Effect.withConsole(self, {
          ...console,
          log: (...args: ReadonlyArray<unknown>) =>
            console.log(...args.map((arg) => (typeof arg === "string" ? arg.replace(SGR, "") : arg)))
        })
      ))

/**
 * Prints a failure as its one line on stderr and says which exit status it means.
 * `args` (as typed) let a usage error name the unknown flag and the nearest real one.
 */
const report = (args: ReadonlyArray<string>) => (error: unknown): Effect.Effect<number> => {
  if (ValidationError.isValidationError(error)) {
    return Effect.as(
      Console.error(`error: ${usageErrorLine(names, args, helpDocLines(error.error))}`),
      ExitCode.failure
    )
  }
  if (error instanceof CliError) {
    return error.message === ""
      ? Effect.succeed(error.exitCode)
      : Effect.as(Console.error(`error: ${error.message}`), error.exitCode)
  }
  if (error instanceof RouterConfigError) return Effect.as(Console.error(`error: ${error.message}`), ExitCode.failure)
  return Effect.as(Console.error(`error: ${String(error)}`), ExitCode.failure)
}

/**
 * Runs the CLI on `argv` and succeeds with the exit status: 0 on success, the
 * command's own status on a `CliError`, 1 on a usage or configuration error. Output
 * goes through `Console` (stdout: results only; stderr: warnings and the error line).
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number, never, CliApp.CliApp.Environment> =>
  cli(argv).pipe(
    // Spans go where the OTEL_* variables say, and are flushed before the status is returned.
    Effect.provide(TracingExport.layer),
    withoutLibraryErrors,
    Effect.as(ExitCode.ok as number),
    Effect.catchAll(report(argv.slice(2))),
    oneLineErrors,
    colourOnlyWhereWanted,
    // Last, so every fiber of every command, the layers' own included, logs to stderr.
    Effect.provide(logsToStderr)
  )
