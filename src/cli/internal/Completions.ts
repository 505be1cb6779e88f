/**
 * `--completions SHELL`, answered by the CLI: @effect/cli's script for the shell, less
 * the built-ins the CLI withholds (`--wizard`), which would otherwise complete to an
 * option the CLI refuses as unknown.
 */
import { CommandDescriptor } from "@effect/cli"
import { Effect } from "effect"

/** The shells `--completions` names, as @effect/cli maps them (`sh` is bash). */
const SHELLS = { sh: "bash", bash: "bash", fish: "fish", zsh: "zsh" } as const

/** The shell `--completions value` names, or undefined for a value @effect/cli refuses. */
export const completionShell = (value: string): "bash" | "fish" | "zsh" | undefined =>
  Object.hasOwn(SHELLS, value) ? SHELLS[value as keyof typeof SHELLS] : undefined

/**
 * `lines` without the options `withheld` (`--wizard`): the line that declares one (zsh's
 * `'--wizard[...]'`, fish's `-l wizard`), and the word among bash's `opts`.
 */
export const withoutOptions = (lines: ReadonlyArray<string>, withheld: ReadonlyArray<string>): Array<string> =>
  lines
    .filter((line) =>
      !withheld.some((name) => line.includes(`'${name}[`) || line.includes(` -l ${name.replace(/^--/, "")} `))
    )
    .map((line) =>
      withheld.reduce(
        (kept, name) => kept.replaceAll(` ${name} `, " ").replaceAll(` ${name}"`, `"`).replaceAll(`"${name} `, `"`),
        line
      )
    )

/** The completion script of `command`, run as `program`, for `shell`, without the `withheld` options. */
export const completionScript = (
  command: CommandDescriptor.Command<unknown>,
  program: string,
  shell: "bash" | "fish" | "zsh",
  withheld: ReadonlyArray<string>
): Effect.Effect<string> => {
  const script = shell === "bash"
    ? CommandDescriptor.getBashCompletions(command, program)
    : shell === "fish"
    ? CommandDescriptor.getFishCompletions(command, program)
    : CommandDescriptor.getZshCompletions(command, program)
  return Effect.map(script, (lines) => withoutOptions(lines, withheld).join("\n"))
}
