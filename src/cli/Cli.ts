/**
 * The `session-routing` command tree and the one place that turns a command's
 * outcome into an exit status. `run` is an Effect, so tests drive the real CLI
 * in-process with their own Console and ConfigProvider.
 */
import { type CliApp, Command, ValidationError } from "@effect/cli"
import { Console, Effect, FiberRef } from "effect"
import packageJson from "session-routing/package.json" with { type: "json" }
import { ENV } from "../layers/RouterConfigLive.js"
import * as TracingExport from "../layers/TracingExport.js"
import { RouterConfigError } from "../services/RouterConfig.js"
import { CliError, ExitCode } from "./CliError.js"
import { checkCommand, checkHelp } from "./commands/Check.js"
import { clusterCommand, clusterHelp } from "./commands/Cluster.js"
import { controllerCommand, controllerHelp } from "./commands/Controller.js"
import { demoCommand, demoHelp } from "./commands/Demo.js"
import { publishCommand, publishHelp } from "./commands/Publish.js"
import { renderCommand, renderHelp } from "./commands/Render.js"
import { statusCommand, statusHelp } from "./commands/Status.js"
import { unpublishCommand, unpublishHelp } from "./commands/Unpublish.js"
import { normalizeArgv } from "./internal/ArgvForms.js"
import { builtInOptions, type CommandInfo, commandTree, WITHHELD_BUILT_INS } from "./internal/CommandTree.js"
import { completionScript, completionShell } from "./internal/Completions.js"
import { type CommandHelp, helpCommand, helpText, wantsHelp } from "./internal/Help.js"
import {
  commandNames,
  helpDocLines,
  repeatedOptionLine,
  subcommandIndex,
  usageErrorLine,
  withheldFlag
} from "./internal/UsageError.js"
import { logsToStderr, stdoutColor } from "./present/Presenter.js"

/**
 * Whether the fiber is inside a command's handler. Outside it, the only stderr
 * writes are @effect/cli's own usage errors, which `report` words itself.
 */
const inCommand = FiberRef.unsafeMake(false)

const NAME = "session-routing"

/**
 * The root command: no options of its own (the shared ones live on each subcommand,
 * see GlobalOptions.ts); run alone it prints the help. Later commands join the list.
 */
export const command = Command.make(NAME).pipe(
  Command.withDescription(
    "Publishes Kubernetes routing objects for session Pods and reports whether each host was programmed"
  ),
  Command.withSubcommands([
    renderCommand,
    publishCommand,
    statusCommand,
    unpublishCommand,
    checkCommand,
    controllerCommand,
    clusterCommand,
    demoCommand
  ]),
  Command.transformHandler((handler) => Effect.locally(handler, inCommand, true))
)

/** What each command's help says beyond its declaration, by command name; the root's under its own. */
const helpTexts: Readonly<Record<string, CommandHelp>> = {
  [NAME]: {
    details: [
      `Configuration comes from the environment (${ENV.baseDomain}, ${ENV.mode}, ...); ` +
      "the flags of each command override the settings they name."
    ],
    examples: [
      { comment: "The whole story on an embedded cluster, no cluster needed", command: `${NAME} demo` },
      {
        comment: "Publish a session's port 8080 and wait until its host is programmed",
        command:
          `${ENV.baseDomain}=sessions.example.com ${NAME} publish --session hzyayvabgyvz --pod telo-run-hzyayvabgyvz --pod-uid 3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13 --port 8080 --watch`
      },
      { comment: "Can this configuration route sessions on the current cluster?", command: `${NAME} check` }
    ]
  },
  render: renderHelp,
  publish: publishHelp,
  status: statusHelp,
  unpublish: unpublishHelp,
  check: checkHelp,
  controller: controllerHelp,
  cluster: clusterHelp,
  demo: demoHelp
}

/** The parsed application: `cli(argv)` with argv shaped like `process.argv` (runtime, script, arguments). */
export const cli = Command.run(command, { name: NAME, version: packageJson.version })

const declared = commandTree(command)

/** The command tree as data, for the help and the usage errors, with the `help` that `run` answers. */
const tree = { ...declared, subcommands: [...declared.subcommands, helpCommand] }

/** The options @effect/cli gives every command, those the CLI offers. */
const globalOptions = builtInOptions(command)

/** The option and command names usage errors suggest from. */
const names = commandNames(tree, globalOptions)

/** The help of `sub`, or the root's when it is undefined; its headings in bold when `color`. */
const helpOf = (sub: CommandInfo | undefined, color: boolean): string =>
  helpText({
    path: sub === undefined ? [NAME] : [NAME, sub.name],
    command: sub ?? tree,
    help: helpTexts[sub?.name ?? NAME] ?? { examples: [] },
    globalOptions,
    emphasis: (heading) => (color ? `\x1b[1m${heading}\x1b[0m` : heading)
  })

/**
 * The root's help as `--help` prints it, in bold on a terminal (`color`) or plain. The
 * build renders both into build/cli/help.json, which bin/session-routing.js prints
 * without loading the CLI (esbuild.config.mjs).
 */
export const rootHelp = (color: boolean): string => helpOf(undefined, color)

/**
 * Prints the help `args` ask for: the root's, or that of the command they name.
 * An unknown command is a usage error, as it is without `--help`.
 */
const printHelp = (args: ReadonlyArray<string>): Effect.Effect<number> => {
  const at = subcommandIndex(args, names.options)
  const word = at < 0 ? undefined : args[at]
  // `help publish` asks for what `publish --help` prints; `help` alone, the root's.
  if (word === helpCommand.name) return printHelp(args.slice(at + 1))
  const sub = word === undefined ? undefined : tree.subcommands.find((command) => command.name === word)
  if (word !== undefined && sub === undefined) {
    return Effect.as(Console.error(`error: ${usageErrorLine(names, args, [])}`), ExitCode.failure)
  }
  return Effect.flatMap(stdoutColor, (color) => Effect.as(Console.log(helpOf(sub, color)), ExitCode.ok))
}

/** `args` (no runtime or script path) as @effect/cli receives them from `run`: see ArgvForms.ts. */
export const commandLine = (args: ReadonlyArray<string>): Array<string> => normalizeArgv(args, names)

/** Whether `args` name the `help` command. */
const isHelpCommand = (args: ReadonlyArray<string>): boolean =>
  args[subcommandIndex(args, names.options)] === helpCommand.name

/**
 * The arguments before the command and before a bare `--`: where @effect/cli reads its
 * built-ins, and where `normalizeArgv` moved any typed after the command.
 */
const rootArgs = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const ends = [subcommandIndex(args, names.options), args.indexOf("--")].filter((at) => at >= 0)
  return args.slice(0, Math.min(args.length, ...ends))
}

/**
 * What the CLI prints itself for a built-in `args` ask for, or undefined to leave them
 * to @effect/cli: `--completions` (the library's script offers `--wizard`) and
 * `--version` (the library prints it as a paragraph of its help document, which ends
 * in a blank line). A value `--completions` refuses is left to the library's error.
 */
const builtInAnswer = (args: ReadonlyArray<string>): Effect.Effect<void> | undefined => {
  const root = rootArgs(args)
  const at = root.indexOf("--completions")
  const shell = at < 0 ? undefined : completionShell(root[at + 1] ?? "")
  if (shell !== undefined) {
    return Effect.flatMap(completionScript(command.descriptor, NAME, shell, WITHHELD_BUILT_INS), Console.log)
  }
  return root.includes("--version") ? Console.log(packageJson.version) : undefined
}

/**
 * Drops @effect/cli's own printing of a usage error (its paragraph, e.g. "Received
 * unknown argument: '--prot'", with no `error:` and no hint): it prints one before
 * failing with it, unasked, so `report` prints the CLI's line from the same error.
 * Commands' stderr passes untouched.
 */
const withoutLibraryErrors = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.consoleWith((console) =>
    Effect.withConsole(self, {
      ...console,
      error: (...args: ReadonlyArray<unknown>) =>
        Effect.flatMap(FiberRef.get(inCommand), (inside) => (inside ? console.error(...args) : Effect.void))
    })
  )

/** `error: ` and `message` folded onto one line: the CLI promises exactly one line per failure. */
const errorLine = (message: string): Effect.Effect<void> =>
  Console.error(`error: ${message.replace(/\s*\n\s*/g, "; ").trim()}`)

/**
 * Prints a failure as its one line on stderr and says which exit status it means.
 * `args` (as @effect/cli received them) let a usage error name the unknown flag and the
 * nearest real one.
 */
const report = (args: ReadonlyArray<string>) => (error: unknown): Effect.Effect<number> => {
  if (ValidationError.isValidationError(error)) {
    return Effect.as(errorLine(usageErrorLine(names, args, helpDocLines(error.error))), ExitCode.failure)
  }
  if (error instanceof CliError) {
    return error.message === "" ? Effect.succeed(error.exitCode) : Effect.as(errorLine(error.message), error.exitCode)
  }
  if (error instanceof RouterConfigError) return Effect.as(errorLine(error.message), ExitCode.failure)
  return Effect.as(errorLine(String(error)), ExitCode.failure)
}

/**
 * Runs the CLI on `argv` and succeeds with the exit status: 0 on success, the
 * command's own status on a `CliError`, 1 on a usage or configuration error. Output
 * goes through `Console` (stdout: results only; stderr: warnings and the error line).
 * The arguments are first put in the form @effect/cli reads (see ArgvForms.ts); the
 * help, a withheld built-in, `--completions` and `--version` are answered before it parses.
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number, never, CliApp.CliApp.Environment> => {
  const args = commandLine(argv.slice(2))
  if (wantsHelp(args) || isHelpCommand(args)) return printHelp(args)
  if (withheldFlag(args, WITHHELD_BUILT_INS) !== undefined) {
    return Effect.as(errorLine(usageErrorLine(names, args, [])), ExitCode.failure)
  }
  // @effect/cli keeps one of the values, or says another option is missing.
  const repeated = repeatedOptionLine(args, names)
  if (repeated !== undefined) return Effect.as(errorLine(repeated), ExitCode.failure)
  const answer = builtInAnswer(args)
  if (answer !== undefined) return Effect.as(answer, ExitCode.ok)
  return cli([...argv.slice(0, 2), ...args]).pipe(
    // Spans go where the OTEL_* variables say, and are flushed before the status is returned.
    Effect.provide(TracingExport.layer),
    withoutLibraryErrors,
    Effect.as(ExitCode.ok as number),
    Effect.catchAll(report(args)),
    // Last, so every fiber of every command, the layers' own included, logs to stderr.
    Effect.provide(logsToStderr)
  )
}
