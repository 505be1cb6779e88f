/**
 * `--help` of the root and of every command the tree holds, held to what a person
 * needs to read it: a description, examples, each option with its choices and
 * whether it is required, the program's name in the usage line, nothing of
 * @effect/cli's type sentences, and no line wider than 100 columns. What the
 * options are is read off the tree through @effect/cli's own `Usage`, not off the
 * CLI's help code, so a help that drops a choice or a required mark fails here.
 */
import { BuiltInOptions, Command, CommandDescriptor, HelpDoc, Options, Usage } from "@effect/cli"
import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Option } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { command } from "../../src/cli/Cli.js"
import { WITHHELD_BUILT_INS } from "../../src/cli/internal/CommandTree.js"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { startCli } from "./CliProcess.js"
import { runCli } from "./TestCli.js"

const PROGRAM = "session-routing"
const pipe = { isTTY: false, columns: () => undefined }
const tty = { isTTY: true, columns: () => 120 }
const HELP_FILE = fileURLToPath(new URL("../../build/cli/help.json", import.meta.url))

const help = (args: ReadonlyArray<string>) => runCli(args).pipe(Effect.provideService(StdoutTerminal, pipe))

/** One option of a usage tree: its long name, the values of a choice, and whether it may be left out. */
interface Named {
  readonly name: string
  readonly choices: ReadonlyArray<string>
  readonly required: boolean
}

// @effect/cli's Usage gives a choice's values as "a | b | c", any other value as one word.
const namedOf = (usage: Usage.Usage, required = true): Array<Named> => {
  switch (usage._tag) {
    case "Named": {
      // The command's own name is a Named too, without dashes.
      if (!usage.names.some((n) => n.startsWith("-"))) return []
      const name = usage.names.find((n) => n.startsWith("--")) ?? usage.names[0]!
      const values = Option.getOrElse(usage.acceptedValues, () => "")
      return [{ name, choices: values.includes(" | ") ? values.split(" | ") : [], required }]
    }
    case "Optional":
    case "Repeated":
      // A repeated option may be required (`atLeast(1)`) or not: Usage does not say which.
      return namedOf(usage.usage, false)
    case "Alternation":
    case "Concat":
      return [...namedOf(usage.left, required), ...namedOf(usage.right, required)]
    case "Empty":
    case "Mixed":
      return []
  }
}

const subcommands = Array.from(HashMap.entries(Command.getSubcommands(command)))
const builtIns = namedOf(
  Options.getUsage(BuiltInOptions.builtInOptions(command.descriptor, Usage.empty, HelpDoc.empty))
)
const BUILT_IN_ONLY = ["--wizard", "--completions", "--log-level"]

/** The indented lines under `heading`, up to the next line that is not indented (a heading, the last line). */
const sectionOf = (text: string, heading: string): Array<string> => {
  const lines = text.split("\n")
  const start = lines.indexOf(heading)
  if (start < 0) return []
  const end = lines.findIndex((line, i) => i > start && line !== "" && !line.startsWith(" "))
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((line) => line.trim() !== "")
}

/** The lines that describe the option whose heading is `heading`. */
const descriptionOf = (text: string, heading: string): string => {
  const lines = sectionOf(text, "Options:")
  const rest = lines.slice(lines.indexOf(heading) + 1)
  const end = rest.findIndex((line) => !line.startsWith("      "))
  return rest.slice(0, end < 0 ? undefined : end).map((line) => line.trim()).join(" ")
}

/** The rules every help page keeps, whichever command it is for. */
const expectReadable = (result: { exitCode: number; stdout: string; stderr: string }, path: string) => {
  expect(result.exitCode).toBe(0)
  expect(result.stderr).toBe("")
  const lines = result.stdout.replace(/\n$/, "").split("\n")
  expect(lines.filter((line) => line.length > 100)).toEqual([])
  for (const placeholder of ["A user-defined piece of text", "A true or false value", "This setting is optional"]) {
    expect(result.stdout).not.toContain(placeholder)
  }
  // A description first, before any section.
  expect(lines[0]).toMatch(/^[A-Z]/)
  // Each usage line (not its continuations) starts with the program and the command.
  const usage = sectionOf(result.stdout, "Usage:").filter((line) => !line.startsWith("      "))
  expect(usage.length).toBeGreaterThan(0)
  for (const line of usage) expect(line).toMatch(new RegExp(`^  ${path}( |$)`))
  // One to three examples, each a comment and a command line that runs it.
  const examples = sectionOf(result.stdout, "Examples:")
  const comments = examples.filter((line, i) => line.startsWith("  # ") && !examples[i - 1]?.startsWith("  # "))
  expect(comments.length).toBeGreaterThanOrEqual(1)
  expect(comments.length).toBeLessThanOrEqual(3)
  expect(examples.filter((line) => !line.startsWith("  # ") && line.includes(`${path}`)).length).toBeGreaterThan(0)
}

/** The option's heading line: its names, its value, and what the help notes of it. */
const headingOf = (text: string, name: string): string | undefined =>
  sectionOf(text, "Options:").concat(sectionOf(text, "Global options (every command takes them):")).find((line) =>
    new RegExp(`^  (-\\w, )?${name}\\b`).test(line)
  )

describe("session-routing --help", () => {
  it.effect("reads as one page: description, examples, commands, the global options once, usage", () =>
    Effect.gen(function*() {
      const result = yield* help(["--help"])
      expectReadable(result, PROGRAM)
      // A description too long for its line continues under itself, not under the names.
      const listed = sectionOf(result.stdout, "Commands:").flatMap((line) => /^  (\S+)/.exec(line)?.[1] ?? [])
      // `help` is answered before parsing, so it is listed beside the declared commands.
      expect([...listed].sort()).toEqual([...subcommands.map(([name]) => name), "help"].sort())
      for (const option of builtIns) {
        const headings = result.stdout.split("\n").filter((line) =>
          new RegExp(`^  (-\\w, )?${option.name}\\b`).test(line)
        )
        // --wizard hung without a terminal: the CLI does not offer it.
        expect(headings).toHaveLength(WITHHELD_BUILT_INS.includes(option.name) ? 0 : 1)
        for (const choice of option.choices) expect(headings[0]).toContain(choice)
      }
    }))

  it.effect("prints the same page with no arguments at all", () =>
    Effect.gen(function*() {
      expect(yield* help([])).toEqual(yield* help(["--help"]))
    }))

  // The executable prints this page from build/cli/help.json without loading the CLI
  // (bin/session-routing.js): it must be the page the CLI renders, plain and on a terminal.
  it.live("is the page the executable prints, for --help, -h, help and no arguments, and in bold on a terminal", () =>
    Effect.gen(function*() {
      const page = yield* help(["--help"])
      for (const args of [["--help"], ["-h"], ["help"], []]) {
        const cli = yield* startCli(args, {})
        const ended = yield* cli.ended()
        expect({ args, code: ended.code, stdout: cli.stdout(), stderr: cli.stderr() }).toEqual({
          args,
          code: 0,
          stdout: page.stdout,
          stderr: ""
        })
      }
      const built = JSON.parse(readFileSync(HELP_FILE, "utf8")) as { readonly plain: string; readonly bold: string }
      const bold = yield* runCli(["--help"]).pipe(Effect.provideService(StdoutTerminal, tty))
      expect({ plain: `${built.plain}\n`, bold: `${built.bold}\n` }).toEqual({
        plain: page.stdout,
        bold: bold.stdout
      })
    }).pipe(Effect.scoped))
})

describe("each command's --help", () => {
  for (const [name, descriptor] of subcommands) {
    it.effect(`keeps the rules for ${name}, lists each option with its choices, and leaves the global options out`, () =>
      Effect.gen(function*() {
        const result = yield* help([name, "--help"])
        expectReadable(result, `${PROGRAM} ${name}`)
        for (const option of namedOf(CommandDescriptor.getUsage(descriptor))) {
          const heading = headingOf(result.stdout, option.name)
          expect(heading, option.name).toBeDefined()
          if (option.choices.length > 0) expect(heading).toContain(`${option.name} ${option.choices.join("|")}`)
          if (option.required) expect(heading).toContain("(required")
        }
        for (const builtIn of BUILT_IN_ONLY) expect(result.stdout).not.toContain(builtIn)
      }))
  }

  it.effect("says --port of publish is required and may be repeated", () =>
    Effect.gen(function*() {
      const result = yield* help(["publish", "--help"])
      expect(headingOf(result.stdout, "--port")).toBe("  --port PORT[/tcp|/udp]... (required)")
      expect(result.stdout).not.toContain("zero or more")
    }))

  // --mode and -o were plain text, so the help said "text" where the values belong.
  it.effect("gives the values of --mode and -o where the value goes", () =>
    Effect.gen(function*() {
      const result = yield* help(["publish", "--help"])
      expect(headingOf(result.stdout, "--mode")).toBe("  --mode ingress|gateway|none")
      expect(headingOf(result.stdout, "--output")).toBe("  -o, --output table|json (default table)")
    }))

  it.effect("shows the defaults withDefault gives", () =>
    Effect.gen(function*() {
      const render = yield* help(["render", "--help"])
      expect(headingOf(render.stdout, "--output")).toBe("  -o, --output yaml|json (default yaml)")
      const status = yield* help(["status", "--help"])
      expect(headingOf(status.stdout, "--output")).toBe("  -o, --output table|json (default table)")
    }))

  // It was described as re-reading the hosts; it follows the status source the watch used.
  it.effect("describes --follow as following the hosts on the watch's status source", () =>
    Effect.gen(function*() {
      const result = yield* help(["publish", "--help"])
      const description = descriptionOf(result.stdout, "  --follow")
      expect(description).toContain("same status source")
      expect(description).not.toContain("re-read")
    }))

  // It was publish's: a live table, one event per line; check prints one report.
  it.effect("describes check's -o as the one report check prints", () =>
    Effect.gen(function*() {
      const result = yield* help(["check", "--help"])
      const description = descriptionOf(result.stdout, "  -o, --output table|json (default table)")
      expect(description).toContain("one JSON object")
      expect(description).not.toContain("live table")
      expect(description).not.toContain("per line")
    }))

  it.effect("prints a command's help with --help before it or after its options", () =>
    Effect.gen(function*() {
      const after = yield* help(["status", "--session", "s1", "-h"])
      expect(yield* help(["--help", "status"])).toEqual(after)
      expect(after.stdout.split("\n")[0]).toBe(
        "Read once whether each host the cluster holds for a session is programmed, whichever mode published"
      )
    }))

  it.effect("refuses the help of an unknown command, naming the nearest one", () =>
    Effect.gen(function*() {
      expect(yield* help(["publsh", "--help"])).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: unknown command publsh for session-routing (did you mean publish?)\n"
      })
    }))
})
