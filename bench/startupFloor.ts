/**
 * The floor under any command's start: an @effect/cli program with one command that
 * does nothing, on NodeContext, bundled as the CLI is. Whatever session-routing does,
 * its start cannot come in under this one's.
 */
import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"

const command = Command.make("floor", {}, () => Effect.void)

Effect.runPromise(
  Command.run(command, { name: "floor", version: "0.0.0" })(process.argv).pipe(Effect.provide(NodeContext.layer))
)
