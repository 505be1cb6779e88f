/**
 * What the command tree itself prints, before any command runs: the help and
 * @effect/cli's own usage errors, held to the CLI's promises on colour and on one
 * line per failure.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { runCli } from "./TestCli.js"

const pipe = { isTTY: false, columns: () => undefined }
const tty = { isTTY: true, columns: () => 120 }

describe("session-routing help and usage errors", () => {
  // @effect/cli rendered its help in ANSI bold whatever stdout was, so
  // `session-routing publish --help | less` showed escape codes; the help is bold on a terminal only.
  it.effect("prints the help without colour codes off a terminal", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["publish", "--help"]).pipe(Effect.provideService(StdoutTerminal, pipe))
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toContain("--pod-uid")
      expect(result.stdout).not.toContain("\x1b[")
    }))

  it.effect("prints the help without colour codes on a terminal when NO_COLOR is set", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["status", "--help"], { NO_COLOR: "1" }).pipe(
        Effect.provideService(StdoutTerminal, tty)
      )
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toContain("--session")
      expect(result.stdout).not.toContain("\x1b[")
    }))

  it.effect("keeps the help's colours on a terminal", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["status", "--help"]).pipe(Effect.provideService(StdoutTerminal, tty))
      expect(result.stdout).toContain("\x1b[")
    }))

  // @effect/cli reports every missing option as its own paragraph, which came out
  // as several lines with blank ones between them.
  it.effect("reports several missing options on one line", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["publish", "--session", "s1", "--port", "8080"])
      expect(result).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: missing options --pod, --pod-uid for publish\n"
      })
    }))
})
