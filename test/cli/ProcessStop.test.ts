/**
 * How a run ends from outside: SIGINT, SIGTERM, a stdout whose reader went away.
 * `untilStopped` in-process with stops the test sends, then the real binary, whose
 * signal handling, stdout and exit status only exist in a process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Clock, Deferred, Duration, Effect, Fiber, Ref } from "effect"
import { ProcessStop, type ProcessStops, stopExitCode, untilStopped } from "../../src/cli/internal/ProcessStop.js"
import { IngressResource } from "../../src/domain/Resources.js"
import { cliCluster } from "./CliCluster.js"
import { startCli } from "./CliProcess.js"
import { publishArgs } from "./TestCli.js"

/** Stops the test sends by hand, and whether stdout is to look closed. */
const handStops = Effect.gen(function*() {
  const next = yield* Deferred.make<ProcessStop>()
  const closed = yield* Ref.make(false)
  const stops: ProcessStops = { next: Deferred.await(next), stdoutClosed: Ref.get(closed) }
  return { stops, send: (stop: ProcessStop) => Deferred.succeed(next, stop), closeStdout: Ref.set(closed, true) }
})

describe("stopExitCode", () => {
  it("follows the shell's 128 + signal number, and 1 for a stdout that failed otherwise", () => {
    expect([
      stopExitCode(ProcessStop.Signal({ signal: "SIGINT" })),
      stopExitCode(ProcessStop.Signal({ signal: "SIGTERM" })),
      stopExitCode(ProcessStop.StdoutClosed()),
      stopExitCode(ProcessStop.StdoutFailed({ message: "EIO" }))
    ]).toEqual([130, 143, 141, 1])
  })
})

describe("untilStopped", () => {
  it.effect("interrupts the command on a stop and answers once its finalizers have run", () =>
    Effect.gen(function*() {
      const { send, stops } = yield* handStops
      const started = yield* Deferred.make<void>()
      const finalizing = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const finalized = yield* Ref.make(false)
      const command = Effect.scoped(
        Effect.gen(function*() {
          yield* Effect.addFinalizer(() =>
            Deferred.succeed(finalizing, undefined).pipe(
              Effect.zipRight(Deferred.await(release)),
              Effect.zipRight(Ref.set(finalized, true))
            )
          )
          yield* Deferred.succeed(started, undefined)
          return yield* Effect.never
        })
      )
      const run = yield* Effect.fork(untilStopped(command, stops))
      yield* Deferred.await(started)
      yield* send(ProcessStop.Signal({ signal: "SIGTERM" }))
      yield* Deferred.await(finalizing)
      // The command is closing its scope: the answer waits for it rather than racing past.
      expect((yield* Fiber.poll(run))._tag).toBe("None")
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(run)).toBe(143)
      expect(yield* Ref.get(finalized)).toBe(true)
    }))

  it.effect("says on stderr that stdout failed, other than by a closed pipe, and answers 1", () =>
    Effect.gen(function*() {
      const { send, stops } = yield* handStops
      const stderr: Array<string> = []
      const base = yield* Effect.console
      yield* send(ProcessStop.StdoutFailed({ message: "write EIO" }))
      const code = yield* untilStopped(Effect.never, stops).pipe(
        Effect.withConsole({ ...base, error: (line: unknown) => Effect.sync(() => stderr.push(String(line))) })
      )
      expect({ code, stderr }).toEqual({ code: 1, stderr: ["error: cannot write to stdout: write EIO"] })
    }))

  it.effect("answers with the command's own status when it ends first", () =>
    Effect.gen(function*() {
      const { stops } = yield* handStops
      expect(yield* untilStopped(Effect.succeed(3), stops)).toBe(3)
    }))

  // The EPIPE of a command's last write is reported a tick after the write: by then
  // the command may have succeeded, and 0 would say everything was written.
  it.effect("answers 141 for a command that succeeded after its output met a closed pipe", () =>
    Effect.gen(function*() {
      const { closeStdout, stops } = yield* handStops
      expect(yield* untilStopped(Effect.as(closeStdout, 0), stops)).toBe(141)
    }))

  it.effect("keeps a failing command's status even when its output met a closed pipe", () =>
    Effect.gen(function*() {
      const { closeStdout, stops } = yield* handStops
      expect(yield* untilStopped(Effect.as(closeStdout, 3), stops)).toBe(3)
    }))
})

/** Lines that would mean Node printed a crash rather than the CLI ending quietly. */
const expectNoCrash = (stderr: string) => {
  expect(stderr).not.toContain("Unhandled")
  expect(stderr).not.toContain("EPIPE")
  expect(stderr).not.toMatch(/^\s+at /m)
}

describe("session-routing as a process, stopped from outside", () => {
  const sessionId = "st0p"
  const publishFollow = (kubeconfig: string) =>
    publishArgs(sessionId, [8080], "--kubeconfig", kubeconfig, "--follow", "-o", "json")
  const programmed = (line: string) => line.includes("\"state\":\"programmed\"")

  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
    it.live(
      `interrupts publish --follow on ${signal} and exits ${code}`,
      () =>
        Effect.scoped(
          Effect.gen(function*() {
            const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })
            const cli = yield* startCli(publishFollow(cluster.kubeconfig), cluster.env)
            // Every host settled: from here --follow only re-reads until it is stopped.
            yield* cli.stdoutLine(programmed)
            cli.child.kill(signal)
            expect(yield* cli.ended()).toEqual({ code, signal: null })
            expect(cli.stderr()).toBe("")
          })
        ),
      60_000
    )
  }

  // Ctrl-C with Event writes the server leaves unanswered: nobody waits for Events then, and
  // "routing goes on without Events" would be false while routing ends.
  it.live(
    "stops publish --follow at once on SIGINT while Event writes hang, saying nothing of Events",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })
          yield* cluster.cluster.faults.add({ resource: "events", action: Fault.hang })
          const cli = yield* startCli(publishFollow(cluster.kubeconfig), {
            ...cluster.env,
            SESSION_API_TIMEOUT_MS: "20000"
          })
          // The Events of the publish and of the programmed host are queued or hanging by now.
          yield* cli.stdoutLine(programmed)
          const stopped = yield* Clock.currentTimeMillis
          cli.child.kill("SIGINT")
          expect(yield* cli.ended()).toEqual({ code: 130, signal: null })
          // The hung write would have held the stop for its 20 s limit.
          expect((yield* Clock.currentTimeMillis) - stopped).toBeLessThan(5_000)
          expect(cli.stderr()).toBe("")
        })
      ),
    60_000
  )

  it.live(
    "ends publish --follow with 141 and no stack trace once the reader of stdout goes away",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })
          const cli = yield* startCli(publishFollow(cluster.kubeconfig), cluster.env)
          yield* cli.stdoutLine((line) => line.includes("\"type\":\"published\""))
          cli.closeStdout()
          // Whatever the watch still had to say, deleting the Ingress makes --follow
          // print again: that write meets the closed pipe. --follow never ends on its
          // own, so an exit at all shows the command was stopped.
          yield* cluster.cluster.store.delete(IngressResource, cluster.namespace, `telo-run-${sessionId}`)
          expect(yield* cli.ended()).toEqual({ code: 141, signal: null })
          expectNoCrash(cli.stderr())
        })
      ),
    60_000
  )

  it.live(
    "exits 141 and prints nothing on stderr when render's only write meets a closed pipe",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cli = yield* startCli(
            ["render", "--session", "hzyayvabgyvz", "--port", "8080", "--pod-uid", "u-1", "-o", "json"],
            { SESSION_ROUTING_BASE_DOMAIN: "telo.run" }
          )
          // Closed before the process has even loaded its sources: the reader is gone first.
          cli.closeStdout()
          expect(yield* cli.ended()).toEqual({ code: 141, signal: null })
          expect(cli.stderr()).toBe("")
        })
      ),
    60_000
  )
})
