/**
 * How a command ends other than with success: a one-line message for stderr and
 * the exit status to leave with. Commands fail with it; `Cli.run` prints it.
 */
import { Data } from "effect"

/** Exit statuses the CLI uses; later commands add theirs here so the set stays in one place. */
export const ExitCode = {
  ok: 0,
  /** Bad input, bad configuration, or a failure to do the work. */
  failure: 1,
  /** A watched host ended `unprogrammed` (publish --watch). */
  unprogrammed: 3,
  /** Stopped by SIGINT (Ctrl-C): 128 + 2, as shells report it. */
  interrupted: 130,
  /** stdout's reader went away: 128 + SIGPIPE's 13, as for a tool that signal killed. */
  stdoutClosed: 141,
  /** Stopped by SIGTERM: 128 + 15, what supervisors expect of a requested stop. */
  terminated: 143
} as const

/**
 * A command's failure. `message` is one line naming the bad value and what would be
 * valid; an empty message prints nothing (the command already said everything).
 */
export class CliError extends Data.TaggedError("CliError")<{
  readonly message: string
  readonly exitCode: number
}> {}

/** Fails a command with one line on stderr and exit status 1 (or `exitCode`). */
export const cliError = (message: string, exitCode: number = ExitCode.failure): CliError =>
  new CliError({ message, exitCode })
