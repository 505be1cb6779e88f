/**
 * What ends a run of the CLI from outside the command: SIGINT, SIGTERM, or the
 * reader of stdout going away. Each interrupts the command, so its scopes close
 * (watches stop, a served cluster shuts down) before the process leaves with the
 * status that says what happened.
 */
import { Console, Data, Deferred, Effect, Exit, type Scope } from "effect"
import { constVoid } from "effect/Function"
import { ExitCode } from "../CliError.js"

/** Why the process stopped the command before it finished on its own. */
export type ProcessStop = Data.TaggedEnum<{
  Signal: { readonly signal: StopSignal }
  /** stdout's reader went away (EPIPE): `... | head -1`. */
  StdoutClosed: {}
  /** Writing stdout failed some other way: the results are lost, which is a failure. */
  StdoutFailed: { readonly message: string }
}>

/** Constructors and matchers for `ProcessStop`. */
export const ProcessStop = Data.taggedEnum<ProcessStop>()

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const

/** The signals that interrupt a command. */
export type StopSignal = (typeof STOP_SIGNALS)[number]

/**
 * The exit status for each way of being stopped. Signals follow the shell's 128 + the
 * signal's number: 130 for SIGINT (Ctrl-C), 143 for SIGTERM, which supervisors
 * (systemd, Kubernetes, CI runners) read as "stopped on request".
 *
 * A closed stdout exits 141, 128 + SIGPIPE, rather than 0. It is what the shell
 * already reports for `git log`, `seq` or `cat` whose reader went away, so a script
 * under `set -o pipefail` meets nothing new; and it keeps a command that was cut short
 * apart from one that finished: `publish --watch | head -1` never reached its
 * verdict, and a 0 would claim every host was programmed.
 */
export const stopExitCode: (stop: ProcessStop) => number = ProcessStop.$match({
  Signal: ({ signal }) => (signal === "SIGINT" ? ExitCode.interrupted : ExitCode.terminated),
  StdoutClosed: () => ExitCode.stdoutClosed,
  StdoutFailed: () => ExitCode.failure
})

/** What `untilStopped` watches. */
export interface ProcessStops {
  /** Waits for the first stop. */
  readonly next: Effect.Effect<ProcessStop>
  /**
   * Whether a write to stdout already met a closed pipe. Node knows at the write,
   * but its 'error' event (and so `next`) comes a tick later, by when a command that
   * wrote its last line may be done.
   */
  readonly stdoutClosed: Effect.Effect<boolean>
}

/**
 * Arms the process for the life of the scope.
 *
 * Signals: while armed, SIGINT and SIGTERM no longer kill the process; they complete
 * `next` once. The listeners go the moment one arrives, so a second Ctrl-C during a
 * slow shutdown kills the process as usual. `cluster` sets these listeners aside
 * while it serves (a signal is its ordinary way to stop, with status 0) and puts them
 * back afterwards.
 *
 * stdout and stderr: with no 'error' listener, the EPIPE of a write to a closed pipe
 * is an unhandled 'error' event, which Node turns into a stack trace and exit 1. The
 * listeners stay after the scope closes, for the process's whole life, since that
 * event can come after the command is done. A failed stderr write has nowhere to be
 * reported and stops nothing.
 */
export const processStops: Effect.Effect<ProcessStops, never, Scope.Scope> = Effect.gen(function*() {
  const stopped = yield* Deferred.make<ProcessStop>()
  const stop = (reason: ProcessStop) => Deferred.unsafeDone(stopped, Exit.succeed(reason))
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const disarm = () => {
        for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
      }
      function onSignal(signal: NodeJS.Signals) {
        disarm()
        stop(ProcessStop.Signal({ signal: signal as StopSignal }))
      }
      for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
      process.stdout.on("error", (error: NodeJS.ErrnoException) =>
        stop(
          isClosedPipe(error) ? ProcessStop.StdoutClosed() : ProcessStop.StdoutFailed({ message: error.message })
        ))
      process.stderr.on("error", constVoid)
      return disarm
    }),
    (disarm) => Effect.sync(disarm)
  )
  return {
    next: Deferred.await(stopped),
    stdoutClosed: Effect.sync(() => isClosedPipe(process.stdout.errored))
  }
})

const isClosedPipe = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as NodeJS.ErrnoException).code === "EPIPE"

/**
 * Runs `program` (which succeeds with an exit status) until it ends or a stop
 * arrives. A stop interrupts the program and waits for its finalizers before
 * answering with the stop's status; nothing more is printed for a signal or a closed
 * stdout: the person asked for it, or is gone. A program that succeeded while its
 * output met a closed pipe answers 141 too, as a classic tool killed by SIGPIPE
 * would: 0 says everything was written. A failure keeps its own status, which says more.
 */
export const untilStopped = <R>(
  program: Effect.Effect<number, never, R>,
  stops: ProcessStops
): Effect.Effect<number, never, R> =>
  Effect.raceFirst(
    Effect.flatMap(program, (code) =>
      code === 0
        ? Effect.map(stops.stdoutClosed, (closed) => (closed ? stopExitCode(ProcessStop.StdoutClosed()) : code))
        : Effect.succeed(code)),
    Effect.flatMap(stops.next, (stop) =>
      stop._tag === "StdoutFailed"
        ? Effect.as(Console.error(`error: cannot write to stdout: ${stop.message}`), stopExitCode(stop))
        : Effect.succeed(stopExitCode(stop)))
  )
