/**
 * Runs `bin/session-routing.js` as a real process for tests of what only a process
 * has: signals, a stdout whose reader goes away, the exit status. Output is kept as
 * it arrives so a test waits on what the command printed, never on a clock.
 */
import { Deferred, Duration, Effect, Option, Schedule, type Scope, Stream, SubscriptionRef } from "effect"
import { type ChildProcessByStdio, spawn } from "node:child_process"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import type { Ended } from "./ClusterProcess.js"

const BIN = fileURLToPath(new URL("../../bin/session-routing.js", import.meta.url))
const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export interface CliProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>
  /** Everything read from stdout and stderr so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  /**
   * Waits until stdout holds a line `line` accepts and returns it. Start-up loads the
   * whole compiled CLI, over a second on a busy machine, hence the generous default.
   */
  readonly stdoutLine: (
    line: (text: string) => boolean,
    within?: Duration.DurationInput
  ) => Effect.Effect<string, string>
  /** Closes the test's end of the stdout pipe: the reader going away, as `head -1` does. */
  readonly closeStdout: () => void
  /** Waits for the process to end. */
  readonly ended: (within?: Duration.DurationInput) => Effect.Effect<Ended, string>
}

/**
 * Spawns `node bin/session-routing.js <args>` with exactly `env` (plus PATH), so the
 * developer's shell cannot leak in. The scope kills a process the test left running.
 */
export const startCli = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>
): Effect.Effect<CliProcess, never, Scope.Scope> => startProcess(process.execPath, [BIN, ...args], env)

/** `startCli` for any program: `command <args>` with exactly `env` (plus PATH), watched the same way. */
export const startProcess = (
  command: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>
): Effect.Effect<CliProcess, never, Scope.Scope> =>
  Effect.gen(function*() {
    let stderr = ""
    const stdout = yield* SubscriptionRef.make("")
    const exited = yield* Deferred.make<Ended>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(command, [...args], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? "", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on(
          "data",
          (chunk: string) => Effect.runSync(SubscriptionRef.update(stdout, (text) => text + chunk))
        )
        child.stderr.on("data", (chunk: string) => (stderr += chunk))
        // 'close' rather than 'exit': it comes after the last output has been read.
        child.on("close", (code, signal) => Deferred.unsafeDone(exited, Effect.succeed({ code, signal })))
        return child
      }),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const lineIn = (text: string, accept: (line: string) => boolean) => text.split("\n").slice(0, -1).find(accept)
    const stdoutText = () => Effect.runSync(SubscriptionRef.get(stdout))
    const stdoutLine = (accept: (line: string) => boolean, within: Duration.DurationInput = Duration.seconds(25)) =>
      Effect.raceFirst(
        stdout.changes.pipe(
          Stream.filterMap((text) => Option.fromNullable(lineIn(text, accept))),
          Stream.runHead,
          Effect.flatMap(Effect.orElseFail(() => "stdout ended"))
        ),
        // Once the process is gone, the line is there or will never be.
        Deferred.await(exited).pipe(
          Effect.flatMap((ended) =>
            Effect.orElseFail(
              Effect.fromNullable(lineIn(stdoutText(), accept)),
              () =>
                `exited (${ended.code ?? ended.signal}) before the line; stdout:\n${stdoutText()}\nstderr:\n${stderr}`
            )
          )
        )
      ).pipe(
        Effect.timeoutFail({
          duration: within,
          onTimeout: () =>
            `no such stdout line within ${Duration.format(within)}; stdout:\n${stdoutText()}\nstderr:\n${stderr}`
        })
      )
    return {
      child,
      stdout: stdoutText,
      stderr: () => stderr,
      stdoutLine,
      closeStdout: () => child.stdout.destroy(),
      ended: (within = Duration.seconds(15)) =>
        Deferred.await(exited).pipe(
          Effect.timeoutFail({
            duration: within,
            onTimeout: () => `did not exit within ${Duration.format(within)}; stderr:\n${stderr}`
          })
        )
    }
  })

/** Waits until `process`'s stderr says `text` `times` times; answers all of stderr then. */
export const stderrSays = (process: CliProcess, text: string, within: Duration.DurationInput, times = 1) =>
  Effect.repeat(Effect.sync(() => process.stderr()), {
    until: (stderr) => stderr.split(text).length > times,
    schedule: Schedule.spaced(Duration.millis(50))
  }).pipe(
    Effect.timeoutFail({
      duration: within,
      onTimeout: () => `stderr did not say "${text}" within ${Duration.format(within)}:\n${process.stderr()}`
    }),
    Effect.orDie,
    Effect.zipRight(Effect.sync(() => process.stderr()))
  )
