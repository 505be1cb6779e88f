/**
 * Runs the real `session-routing` CLI in-process for tests: the same `Cli.run` the
 * binary runs, with stdout and stderr captured through a Console and the
 * environment given as a map, so no test depends on the shell that runs it.
 */
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, type Console, Duration, Effect, Queue } from "effect"
import { format } from "node:util"
import { run } from "../../src/cli/Cli.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"

/** What one CLI run left behind. */
export interface CliResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/** A Console that appends what node's console would print to the two buffers. */
const capturingConsole = (base: Console.Console, stdout: Array<string>, stderr: Array<string>): Console.Console => {
  const to = (sink: Array<string>) => (...args: ReadonlyArray<unknown>) => {
    sink.push(format(...args) + "\n")
  }
  const effect = (sink: Array<string>) => (...args: ReadonlyArray<unknown>) => Effect.sync(() => to(sink)(...args))
  return {
    ...base,
    log: effect(stdout),
    info: effect(stdout),
    debug: effect(stdout),
    error: effect(stderr),
    warn: effect(stderr),
    unsafe: {
      ...base.unsafe,
      log: to(stdout),
      info: to(stdout),
      debug: to(stdout),
      error: to(stderr),
      warn: to(stderr)
    }
  }
}

/**
 * `publish` of session `sessionId` for its Pod `telo-run-<id>` (uid `u-1`), one
 * `--port` per port, then `rest`: the command line most CLI tests start from.
 */
export const publishArgs = (
  sessionId: string,
  ports: ReadonlyArray<number>,
  ...rest: ReadonlyArray<string>
): ReadonlyArray<string> => [
  "publish",
  "--session",
  sessionId,
  "--pod",
  `telo-run-${sessionId}`,
  "--pod-uid",
  "u-1",
  ...ports.flatMap((port) => ["--port", String(port)]),
  ...rest
]

/**
 * Runs `session-routing <args>` with `env` as the whole environment (read with the
 * same `pathDelim` as the process environment) and returns the exit status and output.
 */
export const runCli = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {}
): Effect.Effect<CliResult> =>
  Effect.gen(function*() {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Effect.console
    const exitCode = yield* run(["node", "session-routing", ...args]).pipe(
      Effect.withConsole(capturingConsole(base, stdout, stderr)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })),
      Effect.provide(NodeContext.layer)
    )
    return { exitCode, stdout: stdout.join(""), stderr: stderr.join("") }
  })

/**
 * Starts the CLI in a fiber; each stdout line arrives on a queue as it is printed, for
 * commands that run until interrupted (`publish --follow`).
 */
export const streamingCli = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const stdout = yield* Queue.unbounded<string>()
    const stderr = yield* Queue.unbounded<string>()
    const base = yield* Effect.console
    const fiber = yield* run(["node", "session-routing", ...argv]).pipe(
      Effect.withConsole({
        ...base,
        log: (...line: ReadonlyArray<unknown>) => Queue.offer(stdout, format(...line)),
        error: (...line: ReadonlyArray<unknown>) => Queue.offer(stderr, format(...line))
      }),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })),
      Effect.provide(NodeContext.layer),
      Effect.fork
    )
    /** The next `n` events, failing the test if they do not come within `withinMs`. */
    const next = (n: number, withinMs = 10_000) =>
      Effect.replicateEffect(Queue.take(stdout), n).pipe(
        Effect.map((lines) => lines.map((line) => JSON.parse(line) as SessionEvent)),
        Effect.timeoutFail({
          duration: Duration.millis(withinMs),
          onTimeout: () => new Error(`no ${n} events within ${withinMs} ms`)
        })
      )
    /** Everything printed and not yet taken. */
    const pending = Effect.map(
      Queue.takeAll(stdout),
      (lines) => [...lines].map((line) => JSON.parse(line) as SessionEvent)
    )
    /** The first stderr line `accept` takes (earlier ones are dropped), within `withinMs`. */
    const stderrLine = (accept: (line: string) => boolean, withinMs = 10_000) =>
      Queue.take(stderr).pipe(
        Effect.repeat({ until: accept }),
        Effect.timeoutFail({
          duration: Duration.millis(withinMs),
          onTimeout: () => new Error(`no such stderr line within ${withinMs} ms`)
        })
      )
    return { fiber, next, pending, stderrLine }
  })
