/**
 * stdout under `-o json` carries JSON lines and nothing else, whatever the events API
 * does: the real binary (its process entry sets up logging, not Cli.run) runs every
 * command that talks to the cluster while Events are not served, forbidden, or hang,
 * and each failure is said once: as an `event-error` line, never also on stderr.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Effect } from "effect"
import { EventResource, EventV1Resource } from "../../src/domain/Resources.js"
import { type CliCluster, cliCluster } from "./CliCluster.js"
import { startCli } from "./CliProcess.js"
import { publishArgs } from "./TestCli.js"

const SESSION = "jsonout1"
const PUBLISH = publishArgs(SESSION, [8080, 9090], "--watch")

/** What each events API fault does to the cluster. */
const faults: Record<string, (cluster: CliCluster) => Effect.Effect<void>> = {
  "does not serve Events": (cluster) =>
    Effect.all([
      cluster.cluster.store.setServed(EventV1Resource as never, false),
      cluster.cluster.store.setServed(EventResource as never, false)
    ], { discard: true }),
  "forbids Events": (cluster) =>
    Effect.all([
      cluster.cluster.faults.add({ verbs: ["create", "patch"], resource: EventV1Resource, action: Fault.forbid() }),
      cluster.cluster.faults.add({ verbs: ["create", "patch"], resource: EventResource, action: Fault.forbid() })
    ], { discard: true }),
  "hangs on Events": (cluster) =>
    Effect.asVoid(
      cluster.cluster.faults.add({ verbs: ["create", "patch"], resource: EventV1Resource, action: Fault.hang })
    )
}

/** Every line of `stdout` parsed as JSON: a line that is not fails the test, naming it. */
const parsedLines = (command: string, stdout: string): ReadonlyArray<{ readonly type?: string }> =>
  stdout.split("\n").filter((line) => line !== "").map((line) => {
    try {
      return JSON.parse(line) as { readonly type?: string }
    } catch {
      throw new Error(`${command} -o json printed a line that is not JSON on stdout: ${line}`)
    }
  })

describe("-o json against an events API that fails", () => {
  for (const [fault, apply] of Object.entries(faults)) {
    it.live(
      `prints only JSON on stdout when the server ${fault}, and says the failure once`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const cluster = yield* cliCluster()
          yield* apply(cluster)
          // A short API limit: a hung Event write gives up, and the command's exit waits for it no longer.
          const env = { ...cluster.env, SESSION_API_TIMEOUT_MS: "1000" }
          const commands: ReadonlyArray<ReadonlyArray<string>> = [
            PUBLISH,
            ["status", "--session", SESSION],
            ["check", "--round-trip"],
            ["unpublish", "--session", SESSION]
          ]
          for (const command of commands) {
            const json = command[0] === "unpublish" ? [] : ["-o", "json"]
            const cli = yield* startCli([...command, "--kubeconfig", cluster.kubeconfig, ...json], env)
            const ended = yield* Effect.orDie(cli.ended("60 seconds"))
            const name = command[0] ?? ""
            // unpublish prints a plain line per object deleted and has no -o: no log line may join them.
            const lines = json.length > 0
              ? parsedLines(name, cli.stdout())
              : (expect(cli.stdout()).toMatch(/^((Service|Ingress|HTTPRoute) \S+ deleted\n)+$/), [])
            const eventErrors = lines.filter((line) => line.type === "event-error")
            expect(eventErrors.length, `${name}: event-error lines`).toBeLessThanOrEqual(1)
            // Said on stdout, so not again on stderr; said nowhere else, then once on stderr.
            const onStderr = cli.stderr().split("\n").filter((line) => line.includes("could not record Event"))
            expect(onStderr.length + eventErrors.length, `${name}: times the failure was said`).toBeLessThanOrEqual(1)
            if (command === PUBLISH) {
              expect(ended.code, cli.stderr()).toBe(0)
              // While the session listens, on its stream; a write that gives up after it ended, on stderr.
              expect(onStderr.length + eventErrors.length).toBe(1)
              expect(JSON.stringify([...eventErrors, ...onStderr])).not.toMatch(/routing mode|CRDs/)
            }
          }
        })),
      240_000
    )
  }
})
