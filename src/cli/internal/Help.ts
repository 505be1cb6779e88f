/**
 * `--help` in kubectl's shape: what the command does, examples, its options with
 * their values, choices and defaults, the usage line, all within 100 columns.
 * @effect/cli's own help cannot be shaped so (it prints a type sentence under every
 * option, the usage without the program's name, and no examples), so the CLI renders
 * it here from the declarations the parser runs (see CommandTree.ts).
 */
import { Option } from "effect"
import type { CommandInfo, OptionInfo } from "./CommandTree.js"

/** The widest line the help prints. */
export const HELP_WIDTH = 100

/** A command line to copy, under a comment that says what it shows. */
export interface Example {
  readonly comment: string
  readonly command: string
}

/** What a command's help says beyond its declaration. */
export interface CommandHelp {
  /** Paragraphs after the one-line description: exit statuses, where settings come from. */
  readonly details?: ReadonlyArray<string>
  readonly examples: ReadonlyArray<Example>
  /**
   * The usage lines after the command's path, for a command whose options are required
   * only together (`render`: `--session` and `--port`, or `--rbac`); by default the
   * required options, then `[options]`.
   */
  readonly usage?: ReadonlyArray<string>
}

/**
 * `help [command]`, kubectl's way to ask for a command's help: `help publish` prints
 * what `publish --help` prints, `help` alone the root's. It is no @effect/cli command
 * (its handler would need the help of the tree it belongs to): `Cli.run` answers it
 * before parsing, and the root's help lists it with the commands.
 */
export const helpCommand: CommandInfo = {
  name: "help",
  description: "Print the help of a command (help publish: the same as publish --help)",
  options: [],
  subcommands: []
}

/** Whether `args` (no runtime or script path) ask for help: none at all, or -h/--help before a bare `--`. */
export const wantsHelp = (args: ReadonlyArray<string>): boolean => {
  if (args.length === 0) return true
  const end = args.indexOf("--")
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h")
}

/** Words of `text` in lines of at most `width` columns, each starting with `indent`. */
export const wrap = (text: string, indent: string, width: number = HELP_WIDTH): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(indent + line)
  return lines
}

/**
 * A shell command in lines of at most `width` columns, continued with ` \` as a shell
 * reads it. A line breaks before a word, never between a flag and its value nor
 * between the program and its command.
 */
export const wrapCommand = (command: string, indent: string, width: number = HELP_WIDTH): Array<string> => {
  const words = command.split(" ").filter((word) => word !== "")
  // The first word that is not an environment assignment (`SESSION_ROUTING_MODE=gateway`).
  const program = words.find((word) => !/^[A-Z_]+=/.test(word))
  const groups: Array<string> = []
  words.forEach((word, i) => {
    const before = words[i - 1]
    const bound = before !== undefined && !word.startsWith("-") && (before.startsWith("-") || before === program)
    if (bound && groups.length > 0) groups[groups.length - 1] += ` ${word}`
    else groups.push(word)
  })
  const continued = `${indent}    `
  const lines: Array<string> = []
  let line = ""
  groups.forEach((group, i) => {
    const start = lines.length === 0 ? indent : continued
    // Room for the " \" that every line but the last ends with.
    const room = i === groups.length - 1 ? width : width - 2
    if (line !== "" && start.length + line.length + 1 + group.length > room) {
      lines.push(`${start}${line} \\`)
      line = group
    } else {
      line = line === "" ? group : `${line} ${group}`
    }
  })
  if (line !== "") lines.push(`${lines.length === 0 ? indent : continued}${line}`)
  return lines
}

const valueOf = (option: OptionInfo): string =>
  Option.match(option.value, {
    onNone: () => "",
    onSome: (value) => ` ${value}${option.repeatable ? "..." : ""}`
  })

/** `-o, --output table|json (default table)`: the names, the value, and whether it is needed. */
export const optionHeading = (option: OptionInfo): string => {
  // A flag's default is always false: saying so is noise.
  const fallback = Option.isSome(option.value) ? option.fallback : Option.none()
  const notes = [
    ...(option.required ? ["required"] : []),
    ...Option.match(fallback, { onNone: () => [], onSome: (value) => [`default ${value}`] })
  ]
  const names = [...option.aliases, option.name].join(", ")
  return `${names}${valueOf(option)}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`
}

const optionLines = (options: ReadonlyArray<OptionInfo>): Array<string> =>
  options.flatMap((option) => [...wrap(optionHeading(option), "  "), ...wrap(option.description, "      ")])

/** The usage line: the command's path, its required options, then `[options]` for the rest. */
export const usageLine = (path: ReadonlyArray<string>, command: CommandInfo): string => {
  const required = command.options.filter((option) => option.required).map((option) =>
    `${option.name}${valueOf(option)}`
  )
  const rest = command.subcommands.length > 0 ? ["<command>"] : []
  const optional = command.options.some((option) => !option.required) || command.subcommands.length > 0
  return [...path, ...rest, ...required, ...(optional ? ["[options]"] : [])].join(" ")
}

const exampleLines = (examples: ReadonlyArray<Example>): Array<string> =>
  examples.flatMap((example, i) => [
    ...(i > 0 ? [""] : []),
    ...wrap(example.comment, "  # "),
    ...wrapCommand(example.command, "  ")
  ])

const commandList = (commands: ReadonlyArray<CommandInfo>): Array<string> => {
  const column = Math.max(...commands.map((command) => command.name.length)) + 4
  return commands.flatMap((command) => {
    const [first = "", ...rest] = wrap(command.description, " ".repeat(column))
    return [`  ${command.name.padEnd(column - 2)}${first.trimStart()}`, ...rest]
  })
}

/** How a heading looks: bold where stdout takes colours. */
export type Emphasis = (heading: string) => string

const section = (emphasis: Emphasis, heading: string, lines: ReadonlyArray<string>): Array<string> =>
  lines.length === 0 ? [] : ["", emphasis(heading), ...lines]

/**
 * The help of `command`, reached by `path` from the program (`["session-routing"]`
 * for the root, `["session-routing", "publish"]` for a subcommand). The root lists
 * the commands and `globalOptions` (every command takes them); a subcommand points there.
 */
export const helpText = (input: {
  readonly path: ReadonlyArray<string>
  readonly command: CommandInfo
  readonly help: CommandHelp
  readonly globalOptions: ReadonlyArray<OptionInfo>
  readonly emphasis: Emphasis
}): string => {
  const { command, emphasis, globalOptions, help, path } = input
  const program = path[0] ?? command.name
  const root = path.length <= 1
  const lines = [
    ...wrap(command.description, ""),
    ...(help.details ?? []).flatMap((paragraph) => ["", ...wrap(paragraph, "")]),
    ...section(emphasis, "Examples:", exampleLines(help.examples)),
    ...section(emphasis, "Commands:", commandList(command.subcommands)),
    ...section(emphasis, "Options:", optionLines(command.options)),
    ...(root ? section(emphasis, "Global options (every command takes them):", optionLines(globalOptions)) : []),
    ...section(
      emphasis,
      "Usage:",
      (help.usage?.map((line) => [...path, line].join(" ")) ?? [usageLine(path, command)]).flatMap((line) =>
        wrapCommand(line, "  ")
      )
    ),
    "",
    ...wrap(
      root
        ? `Use "${program} <command> --help" for a command's options and examples.`
        : `Use "${program} --help" for the options every command takes.`,
      ""
    )
  ]
  return lines.join("\n")
}
