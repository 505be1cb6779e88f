/**
 * The command tree as data: each command's name, description and options, read off
 * the same @effect/cli declarations the parser runs, so the help and the usage errors
 * say what parsing enforces (the choices, the defaults, what is required).
 */
import { BuiltInOptions, type Command, HelpDoc, Usage } from "@effect/cli"
import { Option } from "effect"

/** One option as declared. */
export interface OptionInfo {
  /** The long name with its dashes: `--output`. */
  readonly name: string
  /** The other names with their dashes: `-o`. */
  readonly aliases: ReadonlyArray<string>
  /** What follows the flag (`ID`, `table|json`); none for a boolean flag. */
  readonly value: Option.Option<string>
  /** The values an `Options.choice` accepts; empty for any other option. */
  readonly choices: ReadonlyArray<string>
  readonly description: string
  /** The value `Options.withDefault` gives when the flag is left out. */
  readonly fallback: Option.Option<string>
  /** Whether the command refuses to run without it (`Options.atLeast(1)` included). */
  readonly required: boolean
  /** Whether it may be given more than once (`Options.repeated`, `Options.atLeast`). */
  readonly repeatable: boolean
}

/** One command as declared, with its subcommands in declaration order. */
export interface CommandInfo {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionInfo>
  readonly subcommands: ReadonlyArray<CommandInfo>
}

// @effect/cli's descriptors are opaque in its types: these are the fields of its
// 0.77 instructions that the help needs. Help.test.ts renders every command from
// them, so a release that moves them fails there rather than printing less.
type OptionsNode =
  | { readonly _tag: "Empty" }
  | {
    readonly _tag: "Single"
    readonly fullName: string
    readonly aliases: ReadonlyArray<string>
    readonly placeholder: string
    readonly primitiveType: {
      readonly _tag: string
      readonly alternatives?: ReadonlyArray<readonly [string, unknown]>
    }
    readonly description: HelpDoc.HelpDoc
  }
  | { readonly _tag: "Map" | "WithFallback"; readonly options: OptionsNode }
  | { readonly _tag: "WithDefault"; readonly options: OptionsNode; readonly fallback: unknown }
  | { readonly _tag: "Both" | "OrElse"; readonly left: OptionsNode; readonly right: OptionsNode }
  | { readonly _tag: "Variadic"; readonly argumentOption: OptionsNode; readonly min: Option.Option<number> }
  | { readonly _tag: "KeyValueMap"; readonly argumentOption: OptionsNode }

type DescriptorNode =
  | {
    readonly _tag: "Standard"
    readonly name: string
    readonly description: HelpDoc.HelpDoc
    readonly options: OptionsNode
  }
  | { readonly _tag: "GetUserInput"; readonly name: string; readonly description: HelpDoc.HelpDoc }
  | { readonly _tag: "Map"; readonly command: DescriptorNode }
  | { readonly _tag: "Subcommands"; readonly parent: DescriptorNode; readonly children: ReadonlyArray<DescriptorNode> }

const SGR = /\x1b\[[0-9;]*m/g

/** A description as @effect/cli renders it, as one line of plain text. */
const plainText = (doc: HelpDoc.HelpDoc): string => HelpDoc.toAnsiText(doc).replace(SGR, "").replace(/\s+/g, " ").trim()

const dashed = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`)

/** `withDefault(x)` holds x; `optional` holds `Option.none()`, which is no default to show. */
const fallbackOf = (fallback: unknown): Option.Option<string> =>
  Option.isOption(fallback) ? Option.map(fallback, String) : Option.some(String(fallback))

const optionsOf = (
  node: OptionsNode,
  required: boolean,
  repeatable: boolean,
  fallback: Option.Option<string>
): Array<OptionInfo> => {
  switch (node._tag) {
    case "Empty":
      return []
    case "Single": {
      const type = node.primitiveType
      const choices = type._tag === "Choice" ? (type.alternatives ?? []).map(([choice]) => choice) : []
      // A boolean flag is false when left out, so it is never required.
      const flag = type._tag === "Bool"
      return [{
        name: node.fullName,
        aliases: node.aliases.map(dashed),
        value: flag ? Option.none() : Option.some(choices.length > 0 ? choices.join("|") : node.placeholder),
        choices,
        description: plainText(node.description),
        fallback,
        required: required && !flag,
        repeatable
      }]
    }
    case "Map":
      return optionsOf(node.options, required, repeatable, fallback)
    case "WithFallback":
      return optionsOf(node.options, false, repeatable, fallback)
    case "WithDefault":
      return optionsOf(node.options, false, repeatable, fallbackOf(node.fallback))
    case "Both":
    case "OrElse":
      return [
        ...optionsOf(node.left, required, repeatable, fallback),
        ...optionsOf(node.right, required, repeatable, fallback)
      ]
    case "Variadic":
      return optionsOf(node.argumentOption, required && Option.getOrElse(node.min, () => 0) > 0, true, fallback)
    case "KeyValueMap":
      return optionsOf(node.argumentOption, required, true, fallback)
  }
}

const commandOf = (node: DescriptorNode): CommandInfo => {
  switch (node._tag) {
    case "Standard":
      return {
        name: node.name,
        description: plainText(node.description),
        options: optionsOf(node.options, true, false, Option.none()),
        subcommands: []
      }
    case "GetUserInput":
      return { name: node.name, description: plainText(node.description), options: [], subcommands: [] }
    case "Map":
      return commandOf(node.command)
    case "Subcommands":
      return { ...commandOf(node.parent), subcommands: node.children.map(commandOf) }
  }
}

/** The tree `command` declares: the root, its options, and each subcommand with its own. */
export const commandTree = <Name extends string>(command: Command.Command<Name, any, any, any>): CommandInfo =>
  commandOf(command.descriptor as unknown as DescriptorNode)

/**
 * The options @effect/cli adds to every command that the CLI does not offer: `--wizard`
 * prompts on the terminal, so without one it hangs, and it writes colour codes wherever
 * stdout goes. A kubectl-style tool has no wizard; `Cli.run` refuses it as unknown.
 */
export const WITHHELD_BUILT_INS: ReadonlyArray<string> = ["--wizard"]

/**
 * The options @effect/cli adds to every command that the CLI offers (`--help`,
 * `--version`, `--log-level`, `--completions`), with its own descriptions.
 */
export const builtInOptions = <Name extends string>(
  command: Command.Command<Name, any, any, any>
): ReadonlyArray<OptionInfo> =>
  optionsOf(
    BuiltInOptions.builtInOptions(command.descriptor, Usage.empty, HelpDoc.empty) as unknown as OptionsNode,
    true,
    false,
    Option.none()
  ).filter((option) => !WITHHELD_BUILT_INS.includes(option.name))

/** Every name of `option`, the long one first. */
export const namesOf = (option: OptionInfo): ReadonlyArray<string> => [option.name, ...option.aliases]
