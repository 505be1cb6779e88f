/**
 * @effect/cli's own usage errors as the CLI's one `error:` line: an unknown option
 * or command named with the nearest real one, a bad choice named with its value, and
 * the library's other messages (missing option, missing value, stray argument) in the
 * CLI's words.
 */
import { AutoCorrect, CliConfig, HelpDoc } from "@effect/cli"
import { Option } from "effect"
import { type CommandInfo, namesOf, type OptionInfo } from "./CommandTree.js"

/** The options of one command, as usage errors need them. */
export interface CommandOptions {
  /** Every option name (long and short, with their dashes), in declaration order. */
  readonly names: ReadonlyArray<string>
  /** Each name of an `Options.choice` option, to its long name and the values it accepts. */
  readonly choices: ReadonlyMap<string, { readonly name: string; readonly values: ReadonlyArray<string> }>
  /** The names of the options that take a value, so the word after them is not a command. */
  readonly withValue: ReadonlySet<string>
  /** Each name of an option that takes one value and may be given once, to its long name. */
  readonly once: ReadonlyMap<string, string>
}

/** The names a usage error can point at: the program's own options and each subcommand's. */
export interface CommandNames {
  readonly name: string
  readonly options: CommandOptions
  readonly subcommands: ReadonlyMap<string, CommandOptions>
}

/** The usage-error view of `options`. */
export const commandOptions = (options: ReadonlyArray<OptionInfo>): CommandOptions => ({
  names: options.flatMap(namesOf),
  choices: new Map(
    options.filter((option) => option.choices.length > 0).flatMap((option) =>
      namesOf(option).map((name) => [name, { name: option.name, values: option.choices }] as const)
    )
  ),
  withValue: new Set(options.filter((option) => Option.isSome(option.value)).flatMap(namesOf)),
  once: new Map(
    options.filter((option) => Option.isSome(option.value) && !option.repeatable).flatMap((option) =>
      namesOf(option).map((name) => [name, option.name] as const)
    )
  )
})

/**
 * The line for an option that takes one value given twice or more, in `args` as
 * `normalizeArgv` puts them (each value option as two words), or undefined. kubectl
 * would take the last; a command that publishes objects owned by a Pod should not
 * guess which uid was meant.
 */
export const repeatedOptionLine = (args: ReadonlyArray<string>, names: CommandNames): string | undefined => {
  const at = subcommandIndex(args, names.options)
  const command = at < 0 ? undefined : args[at]
  const options = command === undefined ? names.options : names.subcommands.get(command)
  if (options === undefined) return undefined
  const given = new Map<string, Array<string>>()
  for (let i = at + 1; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") break
    const long = options.once.get(arg)
    if (long !== undefined && i + 1 < args.length) given.set(long, [...(given.get(long) ?? []), args[++i]!])
    else if (options.withValue.has(arg)) i++
  }
  for (const [name, values] of given) {
    if (values.length > 1) {
      return `option ${name} for ${command} is given ${values.length} times (${
        values.map((v) => JSON.stringify(v)).join(", ")
      }): give it once`
    }
  }
  return undefined
}

/**
 * Reads the names off the command tree: the same tree @effect/cli parses with. The
 * built-in options are every command's too.
 */
export const commandNames = (tree: CommandInfo, builtIns: ReadonlyArray<OptionInfo>): CommandNames => ({
  name: tree.name,
  options: commandOptions([...tree.options, ...builtIns]),
  subcommands: new Map(tree.subcommands.map((sub) => [sub.name, commandOptions([...sub.options, ...builtIns])]))
})

const bare = (name: string): string => name.replace(/^-+/, "")

/**
 * The candidate nearest to `word` by @effect/cli's own auto-correct: its Levenshtein
 * distance within `autoCorrectLimit` (2), for names longer than that limit plus one,
 * so `-x` suggests nothing rather than some other short flag. Ties go to the candidate
 * declared first. The library only offers its correction when the slip is the first
 * argument left and some option is still missing, so the CLI asks for it here.
 */
export const closestName = (
  word: string,
  candidates: ReadonlyArray<string>,
  config: CliConfig.CliConfig = CliConfig.defaultConfig
): string | undefined => {
  let best: { readonly name: string; readonly distance: number } | undefined
  for (const name of candidates) {
    if (bare(name).length <= config.autoCorrectLimit + 1) continue
    const distance = AutoCorrect.levensteinDistance(word, name, config)
    if (distance <= config.autoCorrectLimit && (best === undefined || distance < best.distance)) {
      best = { name, distance }
    }
  }
  return best?.name
}

/** `--name=value` names `--name`; a negative number (`-1`) is a value, not a flag. */
export const flagName = (arg: string): string | undefined =>
  arg.length > 1 && arg.startsWith("-") && !/^-\d/.test(arg) ? arg.split("=")[0] : undefined

/** The name of the first flag in `args` that `pick` takes, up to a bare `--`. */
const firstFlag = (args: ReadonlyArray<string>, pick: (name: string) => boolean): string | undefined => {
  for (const arg of args) {
    if (arg === "--") return undefined
    const name = flagName(arg)
    if (name !== undefined && pick(name)) return name
  }
  return undefined
}

/**
 * The first flag in `args` that is not one of `known`, up to a bare `--`.
 * @effect/cli stops reading options at an unknown one, so it reports the options
 * after it as missing ("Expected to find option: '--session'" for `publish --prot 1
 * --session s1`); the unknown flag is the cause and is what the person must fix.
 */
export const unknownFlag = (args: ReadonlyArray<string>, known: ReadonlyArray<string>): string | undefined =>
  firstFlag(args, (name) => !known.includes(name))

/**
 * The first of `withheld` (built-in options of @effect/cli that the CLI does not offer)
 * in `args`, up to a bare `--`. @effect/cli acts on them wherever they are rather than
 * refusing them, so the CLI looks for them before it parses.
 */
export const withheldFlag = (args: ReadonlyArray<string>, withheld: ReadonlyArray<string>): string | undefined =>
  firstFlag(args, (name) => withheld.includes(name))

const suggestion = (word: string, candidates: ReadonlyArray<string>): string => {
  const near = closestName(word, candidates)
  return near === undefined ? "" : ` (did you mean ${near}?)`
}

/**
 * Where the subcommand sits in `args`: the first word that is neither a flag nor the
 * value of one of `options` (`--log-level debug status`), or -1.
 */
export const subcommandIndex = (args: ReadonlyArray<string>, options: CommandOptions): number => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return -1
    if (flagName(arg) === undefined) return i
    if (options.withValue.has(arg)) i++
  }
  return -1
}

/**
 * The first value in `args` that a choice option does not accept, as the CLI's line.
 * @effect/cli's own ("Expected one of the following cases: table, json") names
 * neither the option nor the value.
 */
const badChoice = (args: ReadonlyArray<string>, options: CommandOptions): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return undefined
    const [flag = arg, ...rest] = arg.split("=")
    const choice = options.choices.get(flag)
    if (choice === undefined) continue
    const value = rest.length > 0 ? rest.join("=") : args[i + 1]
    if (value !== undefined && !choice.values.includes(value)) {
      return `${choice.name}=${JSON.stringify(value)} must be one of ${choice.values.join(", ")}`
    }
  }
  return undefined
}

const quoted = (pattern: string): RegExp => new RegExp(`^${pattern}: '(.*)'$`)
const MISSING_OPTION = quoted("Expected to find option")
// What `Options.atLeast(1)` says when the option is left out: it is missing too.
const MISSING_REPEATED = quoted("Expected at least \\d+ value\\(s\\) for option")
const MISSING_VALUE = quoted("Expected a value following option")
const STRAY_ARGUMENT = quoted("Received unknown argument")
const BAD_CHOICE = /^Expected one of the following cases: /

const missingOf = (line: string): string | undefined =>
  MISSING_OPTION.exec(line)?.[1] ?? MISSING_REPEATED.exec(line)?.[1]

/**
 * The library's own lines in the CLI's words, for the known shapes; any other line
 * (a bad file path) is kept as the library wrote it. The missing options of one
 * command come out together, as one clause.
 */
const rephrase = (
  lines: ReadonlyArray<string>,
  where: string,
  args: ReadonlyArray<string>,
  options: CommandOptions
): Array<string> => {
  const missing = lines.flatMap((line) => missingOf(line) ?? [])
  const others = lines
    .filter((line) => missingOf(line) === undefined)
    .map((line) => {
      const noValue = MISSING_VALUE.exec(line)
      if (noValue !== null) return `option ${noValue[1]}${where} needs a value`
      const stray = STRAY_ARGUMENT.exec(line)?.[1]
      // `render -o` at the end of the line: the option is known, its value is what is missing.
      if (stray !== undefined && options.names.includes(stray)) return `option ${stray}${where} needs a value`
      if (stray !== undefined) return `unexpected argument ${stray}${where}`
      if (BAD_CHOICE.test(line)) return badChoice(args, options) ?? line
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
  const at = subcommandIndex(args, names.options)
  const sub = at < 0 ? undefined : args[at]
  const subOptions = sub === undefined ? undefined : names.subcommands.get(sub)
  // A root option's bad value (`--log-level loud`) makes @effect/cli take the word after
  // it for a command ("Invalid subcommand"): the value is what the person must fix.
  const rootChoice = badChoice(at < 0 ? args : args.slice(0, at), names.options)
  if (rootChoice !== undefined) return rootChoice
  if (sub !== undefined && subOptions === undefined) {
    return `unknown command ${sub} for ${names.name}${suggestion(sub, [...names.subcommands.keys()])}`
  }
  const rootFlag = unknownFlag(at < 0 ? args : args.slice(0, at), names.options.names)
  if (rootFlag !== undefined) {
    return `unknown option ${rootFlag} for ${names.name}${suggestion(rootFlag, names.options.names)}`
  }
  if (sub !== undefined && subOptions !== undefined) {
    const rest = args.slice(at + 1)
    const flag = unknownFlag(rest, subOptions.names)
    if (flag !== undefined) return `unknown option ${flag} for ${sub}${suggestion(flag, subOptions.names)}`
    return rephrase(libraryLines, ` for ${sub}`, rest, subOptions).join("; ")
  }
  return rephrase(libraryLines, "", args, names.options).join("; ")
}

const SGR = /\x1b\[[0-9;]*m/g

/** A HelpDoc as its non-empty lines of plain text: how @effect/cli words a ValidationError. */
export const helpDocLines = (doc: HelpDoc.HelpDoc): Array<string> =>
  HelpDoc.toAnsiText(doc)
    .replace(SGR, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
