/**
 * @effect/cli's usage errors as the CLI's one `error:` line: the pure pieces (nearest
 * name, the line itself) table by table, then the real CLI in-process, whose stderr
 * must hold that one line and nothing of the library's own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  closestName,
  type CommandNames,
  type CommandOptions,
  unknownFlag,
  usageErrorLine
} from "../../src/cli/internal/UsageError.js"
import { runCli } from "./TestCli.js"

describe("closestName", () => {
  const publish = [
    "--session",
    "--pod",
    "--pod-uid",
    "--port",
    "--watch",
    "--follow",
    "--output",
    "-o",
    "--namespace",
    "-n",
    "--help",
    "-h"
  ]
  const cases: ReadonlyArray<readonly [string, string | undefined]> = [
    ["--prot", "--port"],
    ["--sesion", "--session"],
    ["--pod-ui", "--pod-uid"],
    ["--wacth", "--watch"],
    ["--hepl", "--help"],
    ["--outptu", "--output"],
    // A long flag typed with one dash is one slip from its name.
    ["-follow", "--follow"],
    // Names of three letters or fewer are never suggested (@effect/cli's rule): `-x` is
    // no slip of `-o`, nor `--pd` of `--pod`.
    ["-x", undefined],
    ["--pd", undefined],
    // Two edits are a slip, three are not (@effect/cli's autoCorrectLimit).
    ["--sessn", "--session"],
    ["--sesn", undefined],
    ["--frobnicate", undefined],
    ["--verbose", undefined]
  ]
  for (const [typed, expected] of cases) {
    it(`suggests ${expected ?? "nothing"} for ${typed}`, () => {
      expect(closestName(typed, publish)).toBe(expected)
    })
  }

  it("breaks a tie with the name declared first", () => {
    expect(closestName("--patch", ["--watch", "--match"])).toBe("--watch")
    expect(closestName("--patch", ["--match", "--watch"])).toBe("--match")
  })
})

describe("unknownFlag", () => {
  const known = ["--session", "--port", "-o"]
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string | undefined]> = [
    ["every flag is known", ["--session", "s1", "--port", "8080", "-o", "json"], undefined],
    ["the first unknown one", ["--session", "s1", "--prot", "1", "--wacth"], "--prot"],
    ["the name before an =", ["--prot=8080"], "--prot"],
    ["no flag in a known one's =value", ["--port=8080"], undefined],
    ["no flag in a negative number", ["--port", "-1"], undefined],
    ["nothing after a bare --", ["--session", "s1", "--", "--prot"], undefined]
  ]
  for (const [name, args, expected] of cases) {
    it(`finds ${name}`, () => {
      expect(unknownFlag(args, known)).toBe(expected)
    })
  }
})

describe("usageErrorLine", () => {
  const output = { name: "--output", values: ["table", "json"] }
  const options = (
    names: ReadonlyArray<string>,
    choices: ReadonlyMap<string, { readonly name: string; readonly values: ReadonlyArray<string> }> = new Map()
  ): CommandOptions => ({
    names,
    choices,
    withValue: new Set(names.filter((name) => name !== "--help")),
    once: new Map()
  })
  const names: CommandNames = {
    name: "session-routing",
    options: {
      names: ["--help", "-h", "--version", "--log-level"],
      choices: new Map(),
      withValue: new Set(["--log-level"]),
      once: new Map([["--log-level", "--log-level"]])
    },
    subcommands: new Map([
      [
        "publish",
        options(
          ["--session", "--pod", "--pod-uid", "--port", "-o", "--output", "--help", "-h"],
          new Map([["-o", output], ["--output", output]])
        )
      ],
      ["status", options(["--session", "--help", "-h"])]
    ])
  }
  const cases: ReadonlyArray<{
    readonly name: string
    readonly args: ReadonlyArray<string>
    readonly library: ReadonlyArray<string>
    readonly line: string
  }> = [
    {
      // @effect/cli stops at the unknown flag and blames the options after it.
      name: "names the unknown option rather than the options it hid",
      args: ["publish", "--prot", "8080", "--session", "s1"],
      library: ["Expected to find option: '--session'", "Expected to find option: '--pod'"],
      line: "unknown option --prot for publish (did you mean --port?)"
    },
    {
      name: "names an unknown option with no near one alone",
      args: ["publish", "--verbose"],
      library: ["Received unknown argument: '--verbose'"],
      line: "unknown option --verbose for publish"
    },
    {
      name: "names an unknown command and the nearest one",
      args: ["publsh", "--session", "s1"],
      library: ["Invalid subcommand for session-routing - use one of 'publish', 'status'"],
      line: "unknown command publsh for session-routing (did you mean publish?)"
    },
    {
      name: "reads past a built-in's value to the command",
      args: ["--log-level", "debug", "statsu"],
      library: ["Invalid subcommand for session-routing - use one of 'publish', 'status'"],
      line: "unknown command statsu for session-routing (did you mean status?)"
    },
    {
      name: "names an unknown option before the command",
      args: ["--hepl"],
      library: ["Invalid subcommand for session-routing - use one of 'publish', 'status'"],
      line: "unknown option --hepl for session-routing (did you mean --help?)"
    },
    {
      name: "gathers the missing options in one clause",
      args: ["publish", "--session", "s1"],
      library: ["Expected to find option: '--pod'", "Expected to find option: '--pod-uid'"],
      line: "missing options --pod, --pod-uid for publish"
    },
    {
      // What Options.atLeast(1) says of a --port left out.
      name: "counts a repeated option left out as missing",
      args: ["publish", "--session", "s1"],
      library: ["Expected to find option: '--pod'", "Expected at least 1 value(s) for option: '--port'"],
      line: "missing options --pod, --port for publish"
    },
    {
      // The library's line names neither the option nor the value.
      name: "names a value a choice refuses, with the option's long name and the valid values",
      args: ["publish", "--session", "s1", "-o", "yaml"],
      library: ["Expected one of the following cases: table, json"],
      line: `--output="yaml" must be one of table, json`
    },
    {
      name: "reads a refused choice after an =",
      args: ["publish", "--output=wide", "--session", "s1"],
      library: ["Expected one of the following cases: table, json"],
      line: `--output="wide" must be one of table, json`
    },
    {
      name: "says which option lacks its value",
      args: ["status", "--session"],
      library: ["Expected a value following option: '--session'"],
      line: "option --session for status needs a value"
    },
    {
      // The library calls a known flag at the very end an unknown argument.
      name: "says a known option at the end lacks its value",
      args: ["publish", "--session", "s1", "-o"],
      library: ["Received unknown argument: '-o'"],
      line: "option -o for publish needs a value"
    },
    {
      name: "names a stray argument",
      args: ["publish", "--session", "s1", "extra"],
      library: ["Received unknown argument: 'extra'"],
      line: "unexpected argument extra for publish"
    },
    {
      name: "keeps a message it does not know, joined on one line",
      args: ["publish", "--session", "s1"],
      library: ["Expected one of the following cases: 'a', 'b'", "Something else went wrong"],
      line: "Expected one of the following cases: 'a', 'b'; Something else went wrong"
    }
  ]
  for (const c of cases) {
    it(c.name, () => {
      expect(usageErrorLine(names, c.args, c.library)).toBe(c.line)
    })
  }
})

describe("session-routing usage errors", () => {
  const usageError = (args: ReadonlyArray<string>, line: string) =>
    Effect.gen(function*() {
      expect(yield* runCli(args)).toEqual({ exitCode: 1, stdout: "", stderr: `error: ${line}\n` })
    })

  // Before: "Received unknown argument: '--prot'", no prefix and no hint; with the
  // flag first, "Expected to find option" for every option typed after it.
  it.effect("names an unknown flag and the command's nearest one", () =>
    Effect.gen(function*() {
      const line = "unknown option --prot for publish (did you mean --port?)"
      yield* usageError(["publish", "--session", "s1", "--pod", "p", "--pod-uid", "u", "--prot", "8080"], line)
      yield* usageError(["publish", "--prot", "8080", "--session", "s1", "--pod", "p", "--pod-uid", "u"], line)
    }))

  it.effect("suggests from the command's own options, shared ones included", () =>
    Effect.gen(function*() {
      yield* usageError(
        ["cluster", "--no-ingres-controller"],
        "unknown option --no-ingres-controller for cluster (did you mean --no-ingress-controller?)"
      )
      yield* usageError(
        ["render", "--session", "s1", "--port", "1", "--namspace", "dev"],
        "unknown option --namspace for render (did you mean --namespace?)"
      )
    }))

  it.effect("names an unknown command and the nearest one", () =>
    usageError(["publis", "--session", "s1"], "unknown command publis for session-routing (did you mean publish?)"))

  it.effect("names a value a choice refuses and what the option accepts", () =>
    Effect.gen(function*() {
      yield* usageError(
        ["render", "--session", "s1", "--port", "1", "--mode", "istio"],
        `--mode="istio" must be one of ingress, gateway, none`
      )
      yield* usageError(["status", "--session", "s1", "--output=wide"], `--output="wide" must be one of table, json`)
    }))

  it.effect("says a required repeated option is missing, with the others", () =>
    usageError(["publish", "--session", "s1"], "missing options --pod, --pod-uid, --port for publish"))

  it.effect("reports a missing option, a missing value and a stray argument with the prefix", () =>
    Effect.gen(function*() {
      yield* usageError(
        ["publish", "--session", "s1", "--port", "1", "--pod", "p"],
        "missing option --pod-uid for publish"
      )
      yield* usageError(["status", "--session"], "option --session for status needs a value")
      yield* usageError(["render", "--session", "s1", "--port", "1", "-o"], "option -o for render needs a value")
      yield* usageError(["render", "--session", "s1", "--port", "1", "extra"], "unexpected argument extra for render")
    }))

  it.effect("leaves the help as it was", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["publish", "--help"])
      expect(result.exitCode).toBe(0)
      expect(result.stderr).toBe("")
      expect(result.stdout).toContain("--pod-uid")
    }))
})
