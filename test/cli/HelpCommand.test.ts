/**
 * `help [command]`, kubectl's way to ask for help: `help publish` prints what
 * `publish --help` prints, `help` the root's, and an unknown command is the usage error
 * it is without `help`. docs/cli.md's overview names every command the root's help lists.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { command } from "../../src/cli/Cli.js"
import { commandTree } from "../../src/cli/internal/CommandTree.js"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { runCli } from "./TestCli.js"

const pipe = { isTTY: false, columns: () => undefined }
const cli = (args: ReadonlyArray<string>) => runCli(args).pipe(Effect.provideService(StdoutTerminal, pipe))

/** The command names the root's help lists under "Commands:". */
const listedCommands = (help: string): Array<string> => {
  const lines = help.split("\n")
  const start = lines.indexOf("Commands:")
  const end = lines.findIndex((line, i) => i > start && line === "")
  return lines.slice(start + 1, end).flatMap((line) => /^  (\S+)/.exec(line)?.[1] ?? [])
}

describe("session-routing help", () => {
  for (const sub of commandTree(command).subcommands) {
    it.effect(`help ${sub.name} prints what ${sub.name} --help prints`, () =>
      Effect.gen(function*() {
        const expected = yield* cli([sub.name, "--help"])
        expect(expected.exitCode).toBe(0)
        expect(yield* cli(["help", sub.name])).toEqual(expected)
        expect(yield* cli(["--log-level", "debug", "help", sub.name])).toEqual(expected)
      }))
  }

  it.effect("help alone prints the root's help, which lists help with the commands", () =>
    Effect.gen(function*() {
      const root = yield* cli(["--help"])
      expect(yield* cli(["help"])).toEqual(root)
      expect(listedCommands(root.stdout)).toContain("help")
    }))

  it.effect("refuses an unknown command as it does without help", () =>
    Effect.gen(function*() {
      const error = { exitCode: 1, stdout: "", stderr: "error: unknown command nosuch for session-routing\n" }
      expect(yield* cli(["help", "nosuch"])).toEqual(error)
      expect(yield* cli(["nosuch"])).toEqual(error)
      expect((yield* cli(["help", "publsh"])).stderr).toBe(
        "error: unknown command publsh for session-routing (did you mean publish?)\n"
      )
    }))

  // The overview lacked `controller`: a command added later must be added there too.
  it.effect("every command the root's help lists is in docs/cli.md's overview", () =>
    Effect.gen(function*() {
      const doc = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8")
      const overview = /```\n([\s\S]*?)```/.exec(doc)?.[1] ?? ""
      const documented = overview.split("\n").flatMap((line) => /^session-routing (\S+)/.exec(line)?.[1] ?? [])
      expect(documented).toEqual(listedCommands((yield* cli(["--help"])).stdout))
    }))
})
