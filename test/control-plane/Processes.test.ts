/**
 * The supervisor's handling of one process, with plain shell commands standing in for the
 * control plane's components: a component that exits before it is up, or never comes up,
 * is named with the end of its log; one that ignores SIGTERM is killed after its grace;
 * closing the scope stops what it started.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { awaitUp, startComponent } from "./Processes.js"

const inTempDir = <A, E>(use: (dir: string) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.scoped(
    Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "control-plane-processes-"))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    ).pipe(Effect.flatMap(use))
  )

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("the control plane's processes", () => {
  it.live("names a component that exits before it is up, with the end of its log", () =>
    inTempDir((dir) =>
      Effect.gen(function*() {
        const component = yield* startComponent({
          name: "etcd",
          command: "/bin/sh",
          args: ["-c", "echo 'listen tcp 127.0.0.1:2379: bind: address already in use'; exit 3"],
          logFile: join(dir, "etcd.log")
        })
        const failed = yield* Effect.flip(awaitUp(component, Effect.succeed(false), Duration.seconds(20)))
        expect(failed.message).toBe(
          `etcd exited with code 3 before it was up; the end of ${
            join(dir, "etcd.log")
          }:\nlisten tcp 127.0.0.1:2379: bind: address already in use`
        )
      })
    ))

  it.live("names a component that does not come up within its time", () =>
    inTempDir((dir) =>
      Effect.gen(function*() {
        const component = yield* startComponent({
          name: "kwok",
          command: "/bin/sh",
          args: ["-c", "echo waiting for the API server; sleep 30"],
          logFile: join(dir, "kwok.log")
        })
        const failed = yield* Effect.flip(awaitUp(component, Effect.succeed(false), Duration.millis(500)))
        expect(failed.message).toBe(
          `kwok did not come up within 500ms; the end of ${join(dir, "kwok.log")}:\nwaiting for the API server`
        )
      })
    ))

  it.live("kills a component that ignores SIGTERM once its grace is over, when its scope closes", () =>
    inTempDir((dir) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const component = yield* startComponent({
          name: "stubborn",
          command: "/bin/sh",
          args: ["-c", "trap '' TERM; echo up; while true; do sleep 1; done"],
          logFile: join(dir, "stubborn.log"),
          stopGrace: Duration.millis(300)
        }).pipe(Scope.extend(scope))
        // Up once it said so: the shell has set its trap by then, so SIGTERM cannot stop it.
        const said = Effect.sync(() => readFileSync(join(dir, "stubborn.log"), "utf8").includes("up"))
        yield* awaitUp(component, said, Duration.seconds(5))
        expect(alive(component.pid)).toBe(true)
        yield* Scope.close(scope, Exit.void)
        expect(yield* component.exited).toEqual({ code: null, signal: "SIGKILL" })
        expect(component.stopping()).toBe(true)
      })
    ))
})
