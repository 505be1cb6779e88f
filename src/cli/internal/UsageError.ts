/**
 * @effect/cli's own usage errors as the CLI's one `error:` line: an unknown option
 * or command named with the nearest real one, and the library's other messages
 * (missing option, missing value, stray argument) in the CLI's words.
 */
import { type Command, CommandDescriptor, HelpDoc, type Usage } from "@effect/cli"
import { HashMap } from "effect"

/** The names a usage error can point at: the program's own options and each subcommand's. */
export interface CommandNames {
  readonly name: string
  readonly options: ReadonlyArray<string>
  /** Subcommand name to its option names (long and short, with their dashes), in declaration order. */
  readonly subcommands: ReadonlyMap<string, ReadonlyArray<string>>
}

/**
 * The options @effect/cli adds to every command. `--log-level` and `--completions`
 * take a value, so the word after them is not a subcommand.
 */
const BUILT_IN_OPTIONS = ["--help", "-h", "--version", "--wizard", "--completions", "--log-level"] as const
const BUILT_IN_WITH_VALUE: ReadonlySet<string> = new Set(["--completions", "--log-level"])

/** Every option name in a usage tree, skipping the command names it also holds. */
const optionNamesOf = (usage: Usage.Usage): Array<string> => {
  switch (usage._tag) {
    case "Named":
      return usage.names.filter((name) => name.startsWith("-"))
    case "Optional":
    case "Repeated":
      return optionNamesOf(usage.usage)
    case "Alternation":
    case "Concat":
      return [...optionNamesOf(usage.left), ...optionNamesOf(usage.right)]
    case "Empty":
    case "Mixed":
      return []
  }
}

/** Reads the names off the command tree once: the same tree @effect/cli parses with. */
export const commandNames = <Name extends string>(
  name: string,
  command: Command.Command<Name, any, any, any>
): CommandNames => ({
  name,
  options: [...optionNamesOf(CommandDescriptor.getUsage(command.descriptor)), ...BUILT_IN_OPTIONS],
  subcommands: new Map(
    Array.from(HashMap.toEntries(CommandDescriptor.getSubcommands(command.descriptor))).map(([sub, descriptor]) => [
      sub,
      [...optionNamesOf(CommandDescriptor.getUsage(descriptor)), ...BUILT_IN_OPTIONS]
    ])
  )
})

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and
 * swaps of two neighbours each cost 1. The swap matters: `--prot` is one slip from
 * `--port`, where plain Levenshtein counts two and would tie it with `--pod`.
 */
export const editDistance = (a: string, b: string): number => {
  // One row per prefix of `a`; the row two back is what a swap reaches from.
  let before: Array<number> = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, before[j - 2]! + 1)
      }
      current.push(distance)
    }
    before = previous
    previous = current
  }
  return previous[b.length]!
}

const bare = (name: string): string => name.replace(/^-+/, "")

/**
 * The candidate nearest to `word`, compared without leading dashes, or undefined
 * when none is near enough to be a slip: about one edit per three letters, so
 * `-x` suggests nothing rather than some other one-letter flag. Ties go to the
 * candidate declared first.
 */
export const closestName = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const typed = bare(word)
  const limit = Math.floor((typed.length + 1) / 3)
  let best: { readonly name: string; readonly distance: number } | undefined
  for (const name of candidates) {
    const distance = editDistance(typed, bare(name))
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

/** `--name=value` names `--name`; a negative number (`-1`) is a value, not a flag. */
const flagName = (arg: string): string | undefined =>
  arg.length > 1 && arg.startsWith("-") && !/^-\d/.test(arg) ? arg.split("=")[0] : undefined

/**
 * The first flag in `args` that is not one of `known`, up to a bare `--`.
 * @effect/cli stops reading options at an unknown one, so it reports the options
 * after it as missing ("Expected to find option: '--session'" for `publish --prot 1
 * --session s1`); the unknown flag is the cause and is what the person must fix.
 */
export const unknownFlag = (args: ReadonlyArray<string>, known: ReadonlyArray<string>): string | undefined => {
  for (const arg of args) {
    if (arg === "--") return undefined
    const name = flagName(arg)
    if (name !== undefined && !known.includes(name)) return name
  }
  return undefined
}

const suggestion = (word: string, candidates: ReadonlyArray<string>): string => {
  const near = closestName(word, candidates)
  return near === undefined ? "" : ` (did you mean ${near}?)`
}

/** Where the subcommand sits in `args`: the first word that is neither a flag nor a built-in's value. */
const subcommandIndex = (args: ReadonlyArray<string>): number => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return -1
    if (flagName(arg) === undefined) return i
    if (BUILT_IN_WITH_VALUE.has(arg)) i++
  }
  return -1
}

const quoted = (pattern: string): RegExp => new RegExp(`^${pattern}: '(.*)'$`)
const MISSING_OPTION = quoted("Expected to find option")
const MISSING_VALUE = quoted("Expected a value following option")
const STRAY_ARGUMENT = quoted("Received unknown argument")

/**
 * The library's own lines in the CLI's words, for the known shapes; any other line
 * (a bad value for a choice, a bad file path) is kept as the library wrote it. The
 * missing options of one command come out together, as one clause.
 */
const rephrase = (lines: ReadonlyArray<string>, where: string, known: ReadonlyArray<string>): Array<string> => {
  const missing = lines.flatMap((line) => MISSING_OPTION.exec(line)?.[1] ?? [])
  const others = lines
    .filter((line) => !MISSING_OPTION.test(line))
    .map((line) => {
      const noValue = MISSING_VALUE.exec(line)
      if (noValue !== null) return `option ${noValue[1]}${where} needs a value`
      const stray = STRAY_ARGUMENT.exec(line)?.[1]
      // `render -o` at the end of the line: the option is known, its value is what is missing.
      if (stray !== undefined && known.includes(stray)) return `option ${stray}${where} needs a value`
      if (stray !== undefined) return `unexpected argument ${stray}${where}`
      return line
    })
  return missing.length === 0
    ? others
    : [`missing option${missing.length > 1 ? "s" : ""} ${missing.join(", ")}${where}`, ...others]
}

/**
 * The one line (without `error: `) for a usage error @effect/cli reported as
 * `libraryLines`, given the arguments as typed (no runtime or script path). An
 * unknown command or option wins over the library's message, which it caused.
 */
export const usageErrorLine = (
  names: CommandNames,
  args: ReadonlyArray<string>,
  libraryLines: ReadonlyArray<string>
): string => {
  const at = subcommandIndex(args)
  const sub = at < 0 ? undefined : args[at]
  const subOptions = sub === undefined ? undefined : names.subcommands.get(sub)
  if (sub !== undefined && subOptions === undefined) {
    return `unknown command ${sub} for ${names.name}${suggestion(sub, [...names.subcommands.keys()])}`
  }
  const rootFlag = unknownFlag(at < 0 ? args : args.slice(0, at), names.options)
  if (rootFlag !== undefined) {
    return `unknown option ${rootFlag} for ${names.name}${suggestion(rootFlag, names.options)}`
  }
  if (sub !== undefined && subOptions !== undefined) {
    const flag = unknownFlag(args.slice(at + 1), subOptions)
    if (flag !== undefined) return `unknown option ${flag} for ${sub}${suggestion(flag, subOptions)}`
  }
  return rephrase(libraryLines, sub === undefined ? "" : ` for ${sub}`, subOptions ?? names.options).join("; ")
}

const SGR = /\x1b\[[0-9;]*m/g

/** A HelpDoc as its non-empty lines of plain text: how @effect/cli words a ValidationError. */
export const helpDocLines = (doc: HelpDoc.HelpDoc): Array<string> =>
  HelpDoc.toAnsiText(doc)
    .replace(SGR, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
