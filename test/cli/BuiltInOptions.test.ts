/**
 * @effect/cli's built-in options as the executable answers them: `--version` prints the
 * version and one newline (the library's ended in a blank line); `--wizard`, which the
 * library offers and a kubectl-style tool does not, is an unknown option. Its prompts
 * hung without a terminal and wrote colour codes into a file.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import packageJson from "session-routing/package.json" with { type: "json" }
import { command } from "../../src/cli/Cli.js"
import { commandTree } from "../../src/cli/internal/CommandTree.js"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { startCli } from "./CliProcess.js"
import { runCli } from "./TestCli.js"

const ENV = { SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com", SESSION_INGRESS_CLASS: "nginx" }

/** The executable's exit status and output for `args`, with no terminal on any stream. */
const executable = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const cli = yield* startCli(args, ENV)
    const ended = yield* cli.ended()
    return { code: ended.code, stdout: cli.stdout(), stderr: cli.stderr() }
  }).pipe(Effect.scoped)

describe("--version", () => {
  it.live("prints exactly the version and one newline, before or after a command", () =>
    Effect.gen(function*() {
      const version = { code: 0, stdout: `${packageJson.version}\n`, stderr: "" }
      expect(yield* executable(["--version"])).toEqual(version)
      expect(yield* executable(["render", "--session", "s1", "--port", "8080", "--version"])).toEqual(version)
    }))
})

describe("--wizard", () => {
  it.live("is an unknown option, before or after a command, and never waits on a terminal", () =>
    Effect.gen(function*() {
      expect(yield* executable(["--wizard"])).toEqual({
        code: 1,
        stdout: "",
        stderr: "error: unknown option --wizard for session-routing\n"
      })
      expect(yield* executable(["render", "--session", "s1", "--port", "8080", "--wizard"])).toEqual({
        code: 1,
        stdout: "",
        stderr: "error: unknown option --wizard for render\n"
      })
    }))

  // @effect/cli's scripts completed --wizard, an option the CLI now refuses.
  it.effect("is in no completion script, which still completes every other option and command", () =>
    Effect.gen(function*() {
      for (const shell of ["sh", "bash", "fish", "zsh"]) {
        const result = yield* runCli(["--completions", shell])
        expect(result.exitCode, shell).toBe(0)
        expect(result.stdout, shell).not.toContain("wizard")
        for (const word of ["--log-level", "--version", "--port", "--namespace", "controller"]) {
          expect(result.stdout, `${shell} ${word}`).toContain(
            word.replace(/^--(?=\w)/, shell === "fish" ? "-l " : "--")
          )
        }
        if (shell === "bash") execFileSync("bash", ["-n"], { input: result.stdout })
      }
      expect(yield* runCli(["status", "--completions", "bash"])).toEqual(yield* runCli(["--completions", "bash"]))
    }))

  it.effect("appears in no help", () =>
    Effect.gen(function*() {
      const pipe = { isTTY: false, columns: () => undefined }
      for (const args of [["--help"], ...commandTree(command).subcommands.map((sub) => [sub.name, "--help"])]) {
        const help = yield* runCli(args).pipe(Effect.provideService(StdoutTerminal, pipe))
        expect(help.exitCode, args.join(" ")).toBe(0)
        expect(help.stdout, args.join(" ")).not.toContain("wizard")
      }
    }))
})
