/**
 * The control plane's processes: each started with its output in a log file of its own, in
 * a process group of its own (so a Ctrl-C reaches the supervisor, which stops them in order,
 * rather than all of them at once), watched for an exit nobody asked for, and stopped with
 * SIGTERM, then SIGKILL after a grace period, when its scope closes.
 */
import { Deferred, Duration, Effect, type Scope } from "effect"
import { spawn } from "node:child_process"
import { open, readFile } from "node:fs/promises"
import { ControlPlaneError } from "./ControlPlaneError.js"

/** How a process ended: its exit code, or the signal that ended it. */
export interface ExitInfo {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ComponentSpec {
  /** What a person calls it: `etcd`, `kube-apiserver`, ... */
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly logFile: string
  /** How long it may take to stop on SIGTERM before it is killed; default 10 s. */
  readonly stopGrace?: Duration.Duration
}

export interface Component {
  readonly name: string
  readonly pid: number
  readonly logFile: string
  /** Completes when the process ends, asked to or not. */
  readonly exited: Effect.Effect<ExitInfo>
  /** Whether its end was asked for (`stop`): then an exit is no news. */
  readonly stopping: () => boolean
  /** SIGTERM, SIGKILL after the grace period; completes once the process is gone. */
  readonly stop: Effect.Effect<void>
}

/** How long a component may take to stop on SIGTERM before it is killed. */
const STOP_GRACE = Duration.seconds(10)

export const describeExit = (exit: ExitInfo): string =>
  exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`

/** The last `count` non-empty lines of a log, for a message that says why something failed. */
export const logTail = (file: string, count = 5): Effect.Effect<string> =>
  Effect.promise(() =>
    readFile(file, "utf8").then(
      (text) => text.split("\n").filter((line) => line.trim() !== "").slice(-count).join("\n"),
      () => ""
    )
  )

/** Starts a component for the scope; the scope's end stops it. */
export const startComponent = (spec: ComponentSpec): Effect.Effect<Component, ControlPlaneError, Scope.Scope> =>
  Effect.gen(function*() {
    const exited = yield* Deferred.make<ExitInfo>()
    let stopping = false
    const log = yield* Effect.promise(() => open(spec.logFile, "a"))
    const child = yield* Effect.async<ReturnType<typeof spawn>, ControlPlaneError>((resume) => {
      const child = spawn(spec.command, [...spec.args], {
        env: { ...process.env, ...spec.env },
        stdio: ["ignore", log.fd, log.fd],
        detached: true
      })
      child.once("spawn", () => resume(Effect.succeed(child)))
      child.once(
        "error",
        (error) =>
          resume(
            Effect.fail(
              new ControlPlaneError({ message: `${spec.name}: cannot start ${spec.command}: ${error.message}` })
            )
          )
      )
      child.once("exit", (code, signal) => {
        void log.close()
        Deferred.unsafeDone(exited, Effect.succeed({ code, signal }))
      })
    })
    const signal = (name: NodeJS.Signals) =>
      Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill(name)
      })
    const stop = Effect.suspend(() => {
      stopping = true
      return signal("SIGTERM").pipe(
        // Interruptible, or the grace could not end it inside a scope's (uninterruptible) finalizer.
        Effect.zipRight(
          Deferred.await(exited).pipe(Effect.interruptible, Effect.timeout(spec.stopGrace ?? STOP_GRACE))
        ),
        Effect.catchAll(() => signal("SIGKILL").pipe(Effect.zipRight(Deferred.await(exited)))),
        Effect.asVoid
      )
    })
    yield* Effect.addFinalizer(() => stop)
    return {
      name: spec.name,
      pid: child.pid ?? -1,
      logFile: spec.logFile,
      exited: Deferred.await(exited),
      stopping: () => stopping,
      stop
    }
  })

/**
 * Waits until `check` says the component is up, polling every 200 ms; fails at once if it
 * exits first, and after `within` if it never comes up, each time naming it, with the end
 * of its log.
 */
export const awaitUp = (
  component: Component,
  check: Effect.Effect<boolean, unknown>,
  within: Duration.Duration
): Effect.Effect<void, ControlPlaneError> => {
  const up: Effect.Effect<void> = check.pipe(
    Effect.timeout(Duration.seconds(5)),
    Effect.orElseSucceed(() => false),
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.zipRight(Effect.sleep("200 millis"), Effect.suspend(() => up))))
  )
  const failWith = (what: string) =>
    Effect.flatMap(logTail(component.logFile), (tail) =>
      Effect.fail(
        new ControlPlaneError({
          message: `${component.name} ${what}; the end of ${component.logFile}:\n${tail || "(nothing)"}`
        })
      ))
  const died = Effect.flatMap(component.exited, (exit) => failWith(`${describeExit(exit)} before it was up`))
  return Effect.raceFirst(up, died).pipe(
    Effect.timeout(within),
    Effect.catchTag("TimeoutException", () => failWith(`did not come up within ${Duration.format(within)}`))
  )
}
