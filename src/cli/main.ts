/**
 * The process entry of `session-routing`: runs the CLI on Node and leaves with the
 * exit status the command chose (0, 1, 3, ...). `bin/session-routing.js` loads it.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import type { Teardown } from "@effect/platform/Runtime"
import { Cause, Effect, Exit } from "effect"
import { run } from "./Cli.js"

/**
 * `run` succeeds with the status to leave with. A defect still exits 1 (runMain has
 * reported it), and an interrupt (Ctrl-C) exits 130, as shells expect.
 */
const exitWithStatus: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : 0)
  onExit(Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
}

run(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain({ teardown: exitWithStatus }))
