/**
 * Every option that takes a value, on every command, in each form kubectl users type:
 * `--name value`, `--name=value`, and for a one-letter alias `-n value`, `-n=value`,
 * `-nvalue`; the options every command takes (`--log-level`) before or after the
 * command. The forms are read off the command tree, so an option declared later is
 * held to them too; then the findings as they were made, through the CLI.
 */
import { CliConfig, CommandDescriptor } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { command, commandLine } from "../../src/cli/Cli.js"
import { builtInOptions, commandTree, type OptionInfo } from "../../src/cli/internal/CommandTree.js"
import { startCli } from "./CliProcess.js"
import { runCli } from "./TestCli.js"

const PROGRAM = "session-routing"
const ENV = { SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com", SESSION_INGRESS_CLASS: "nginx" }

/** What @effect/cli makes of `args`: the parsed command and its options, or its usage error. */
const parse = (args: ReadonlyArray<string>) =>
  CommandDescriptor.parse(command.descriptor, [PROGRAM, ...args], CliConfig.defaultConfig).pipe(
    Effect.either,
    Effect.provide(NodeContext.layer)
  )

/** A value each option accepts at parse time, not its default: the last choice, else a number. */
const sample = (option: OptionInfo): string => option.choices.at(-1) ?? "7"

/** `option` with `value` in every form it must take. */
const formsOf = (option: OptionInfo, value: string): ReadonlyArray<ReadonlyArray<string>> => [
  [option.name, value],
  [`${option.name}=${value}`],
  ...option.aliases.flatMap((alias) => [[alias, value], [`${alias}=${value}`], [`${alias}${value}`]])
]

const withValue = (options: ReadonlyArray<OptionInfo>) => options.filter((option) => Option.isSome(option.value))

const tree = commandTree(command)
const globals = withValue(builtInOptions(command))

describe("every option that takes a value", () => {
  for (const sub of tree.subcommands) {
    /** The command's required options, each given once, leaving out `but`. */
    const required = (but?: OptionInfo) =>
      sub.options.filter((option) => option.required && option !== but).flatMap((option) => [
        option.name,
        sample(option)
      ])

    for (const option of withValue(sub.options)) {
      it.effect(`${sub.name} ${option.name} parses the same in every form, first or last`, () =>
        Effect.gen(function*() {
          const value = sample(option)
          // `--name value` is the form @effect/cli reads on its own.
          const expected = yield* parse([sub.name, ...required(option), option.name, value])
          expect(Either.isRight(expected), String(Either.isLeft(expected) && expected.left.error)).toBe(true)
          for (const form of formsOf(option, value)) {
            for (const args of [[sub.name, ...form, ...required(option)], [sub.name, ...required(option), ...form]]) {
              expect(yield* parse(commandLine(args)), args.join(" ")).toEqual(expected)
            }
          }
        }))
    }

    for (const option of globals) {
      it.effect(`${sub.name} takes the global ${option.name} before or after it, in every form`, () =>
        Effect.gen(function*() {
          const value = sample(option)
          // Before the command is where @effect/cli reads its built-ins on its own.
          const expected = yield* parse([option.name, value, sub.name, ...required()])
          expect(Either.isRight(expected)).toBe(true)
          for (const form of formsOf(option, value)) {
            for (
              const args of [
                [...form, sub.name, ...required()],
                [sub.name, ...form, ...required()],
                [sub.name, ...required(), ...form]
              ]
            ) {
              expect(yield* parse(commandLine(args)), args.join(" ")).toEqual(expected)
            }
          }
        }))
    }
  }

  it("leaves a value as typed, even one that looks like a flag, and everything after --", () => {
    const args = ["render", "--session", "-ofoo", "--pod", "--log-level=x", "--", "--port=1", "-nfoo"]
    expect(commandLine(args)).toEqual(args)
  })
})

describe("option forms through the CLI", () => {
  const render = (...rest: ReadonlyArray<string>) => runCli(["render", "--session", "s1", ...rest], ENV)

  it.effect("takes a repeated option as --port=8080", () =>
    Effect.gen(function*() {
      const expected = yield* render("--port", "8080", "--port", "5000/udp")
      expect(expected.exitCode).toBe(0)
      expect(yield* render("--port=8080", "--port=5000/udp")).toEqual(expected)
      expect(yield* render("--port=8080", "--port", "5000/udp")).toEqual(expected)
    }))

  it.effect("takes -n and -o as -n=value and -nvalue, as kubectl does", () =>
    Effect.gen(function*() {
      const expected = yield* render("--port", "8080", "-n", "dev", "-o", "json")
      expect(expected.exitCode).toBe(0)
      expect(expected.stdout).toContain(`"namespace": "dev"`)
      for (const forms of [["-n=dev", "-o=json"], ["-ndev", "-ojson"], ["--namespace=dev", "--output=json"]]) {
        expect(yield* render("--port", "8080", ...forms), forms.join(" ")).toEqual(expected)
      }
    }))

  it.effect("takes --log-level after the command, in both forms", () =>
    Effect.gen(function*() {
      const expected = yield* render("--port", "8080")
      expect(expected.exitCode).toBe(0)
      for (const forms of [["--log-level", "debug"], ["--log-level=debug"]]) {
        expect(yield* render("--port", "8080", ...forms), forms.join(" ")).toEqual(expected)
        expect(yield* runCli([...forms, "render", "--session", "s1", "--port", "8080"], ENV)).toEqual(expected)
      }
    }))

  it.effect("keeps the usage errors: an unknown flag and the nearest one, a missing or refused value", () =>
    Effect.gen(function*() {
      const error = (line: string) => ({ exitCode: 1, stdout: "", stderr: `error: ${line}\n` })
      expect(yield* render("--prot=8080")).toEqual(error("unknown option --prot for render (did you mean --port?)"))
      expect(yield* render("--port", "1", "-xfoo")).toEqual(error("unknown option -xfoo for render"))
      expect(yield* render("--port", "1", "--log-level")).toEqual(error("option --log-level for render needs a value"))
      // It was @effect/cli's "Invalid subcommand for session-routing - use one of ...".
      expect(yield* render("--port", "1", "--log-level=loud")).toEqual(
        error(`--log-level="loud" must be one of all, trace, debug, info, warning, error, fatal, none`)
      )
    }))
})

describe("an option given twice", () => {
  const render = (...rest: ReadonlyArray<string>) => runCli(["render", "--session", "s1", ...rest], ENV)
  // It was "needs a value", or "missing options --pod, --pod-uid" though both were given.
  it.effect("refuses a one-value option given twice, naming both values, in any form", () =>
    Effect.gen(function*() {
      const publish = (...args: ReadonlyArray<string>) =>
        runCli(["publish", "--session", "s1", "--pod", "p", "--port", "8080", ...args], ENV)
      expect(yield* publish("--pod-uid", "1", "--pod-uid=2")).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: `error: option --pod-uid for publish is given 2 times ("1", "2"): give it once\n`
      })
      expect((yield* render("--port", "1", "-n", "a", "--namespace=b")).stderr).toBe(
        `error: option --namespace for render is given 2 times ("a", "b"): give it once\n`
      )
      // A repeatable one stays repeatable.
      expect((yield* render("--port", "8080", "--port=9090")).exitCode).toBe(0)
    }))
})

describe("option forms through the executable", () => {
  // The findings, as they were made: `--port=8080` was "unexpected argument", `-n=foo`
  // too, and `--log-level debug` after the command "needs a value".
  it.live("takes --port=8080, -n=dev and --log-level debug after the command", () =>
    Effect.gen(function*() {
      const cli = yield* startCli(
        ["render", "--session", "s1", "--port=8080", "-n=dev", "-o", "json", "--log-level", "debug"],
        ENV
      )
      expect(yield* cli.ended()).toEqual({ code: 0, signal: null })
      const list = JSON.parse(cli.stdout()) as { items: ReadonlyArray<{ metadata: { namespace: string } }> }
      expect(list.items.map((item) => item.metadata.namespace)).toEqual(["dev", "dev"])
      expect(cli.stderr()).not.toContain("error:")
    }).pipe(Effect.scoped))
})
