/**
 * The process entry of `session-routing`: runs the CLI on Node and leaves with the
 * exit status the command chose (0, 1, 3, ...) or the one its stop meant (130, 141,
 * 143). `bin/session-routing.js` loads it.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { makeRunMain, type Teardown } from "@effect/platform/Runtime"
import { Cause, Effect, Exit } from "effect"
import { constVoid } from "effect/Function"
import { run } from "./Cli.js"
import { ExitCode } from "./CliError.js"
import { processStops, untilStopped } from "./internal/ProcessStop.js"

/**
 * `NodeRuntime.runMain` without its signal handling: it interrupts on SIGINT and on
 * SIGTERM alike, so the exit status could not tell them apart (both came out 130).
 * `processStops` arms the signals instead, inside the program. The rest is as there:
 * defects are logged, an interval keeps Node alive while the program only waits, and
 * a 0 lets the process end on its own so buffered output drains.
 */
const runMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(constVoid, 2 ** 31 - 1)
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    teardown(exit, (code) => {
      if (code !== 0) process.exit(code)
    })
  })
})

/**
 * `run` succeeds with the status to leave with, a stop's included. A defect exits 1
 * (runMain has reported it); an interrupt from anywhere else exits 130, as Ctrl-C would.
 */
const exitWithStatus: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : 0)
  onExit(Cause.isInterruptedOnly(exit.cause) ? ExitCode.interrupted : ExitCode.failure)
}

const main = Effect.scoped(Effect.flatMap(processStops, (stops) => untilStopped(run(process.argv), stops)))

// Effect's pretty logger writes to stdout, which carries only the command's output.
main.pipe(Effect.provide(NodeContext.layer), runMain({ teardown: exitWithStatus, disablePrettyLogger: true }))
