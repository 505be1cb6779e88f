/**
 * The command line rewritten, against the command tree, into the one form @effect/cli
 * reads for every option, so each option takes every form kubectl users type:
 * `--name value`, `--name=value`, `-n value`, `-n=value` and `-nvalue`, before or after
 * the command for the options every command takes (`--log-level`).
 *
 * @effect/cli reads less than that, and unevenly: it splits `--name=value` only for an
 * option given once (a repeated one, `Options.repeated`/`atLeast` like `--port`, is
 * matched by its exact name and never split, so `--port=8080` was an unexpected
 * argument); it never splits `-n=value`, and takes `-nfoo` for the boolean flags
 * `-n -f -o -o`; and it reads its built-ins only before the command or first after it,
 * so `render ... --log-level debug` lost the option. Rewriting here, from the tree the
 * parser runs, gives every option declared later all of these forms too.
 */
import { type CommandNames, type CommandOptions, flagName } from "./UsageError.js"

/**
 * `arg` as a flag and its value when it joins them (`--name=value`, `-n=value`,
 * `-nvalue`) for an option of `options` that takes a value; undefined otherwise. A
 * boolean flag is left as typed: @effect/cli reads `--watch=false` itself.
 */
const joined = (arg: string, options: CommandOptions): readonly [string, string] | undefined => {
  const name = flagName(arg)
  if (name === undefined) return undefined
  if (name.startsWith("--")) {
    return name !== arg && options.withValue.has(name) ? [name, arg.slice(name.length + 1)] : undefined
  }
  // One dash: a one-letter alias, then its value, with or without an "=".
  const alias = arg.slice(0, 2)
  if (arg.length <= 2 || !options.withValue.has(alias)) return undefined
  return [alias, arg.slice(arg[2] === "=" ? 3 : 2)]
}

/**
 * `args` (no runtime or script path) as @effect/cli must receive them: each option
 * that takes a value as two words, `--name value`, and the root's options (the
 * built-ins every command takes) moved before the command, where @effect/cli reads
 * them. Words after a bare `--`, and everything after an unknown command, pass as
 * typed; a value is never read as a flag (`--context -x` keeps `-x` as the value),
 * as @effect/cli reads it.
 */
export const normalizeArgv = (args: ReadonlyArray<string>, names: CommandNames): Array<string> => {
  const root: Array<string> = []
  const moved: Array<string> = []
  const command: Array<string> = []
  let options: CommandOptions | undefined = names.options
  let into = root
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--" || options === undefined) {
      into.push(...args.slice(i))
      break
    }
    if (into === root && flagName(arg) === undefined) {
      // The first word that is neither a flag nor a value: the command, whose options follow.
      options = names.subcommands.get(arg)
      into = command
      command.push(arg)
      continue
    }
    const words = joined(arg, options) ??
      (options.withValue.has(arg) && i + 1 < args.length ? [arg, args[++i]!] : [arg])
    const flag = words[0]!
    // A root option after the command goes before it; one whose value is missing stays,
    // so that the error names it rather than taking the command for its value.
    const whole = words.length === 2 || !options.withValue.has(flag)
    const before = into === command && whole && names.options.names.includes(flag)
    ;(before ? moved : into).push(...words)
  }
  return [...root, ...moved, ...command]
}
