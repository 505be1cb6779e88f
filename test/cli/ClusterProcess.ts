/**
 * Runs `session-routing cluster` as a real process for tests: the shipped binary,
 * its own signal handling and exit status. Resolves once the first lines say where
 * the cluster listens; the scope kills a process the test left running.
 */
import { Deferred, Duration, Effect, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const BIN = fileURLToPath(new URL("../../bin/session-routing.js", import.meta.url))
const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The keys the command prints on stdout, `server` first and `gateway` last. */
export interface ClusterInfo {
  readonly server: string
  readonly "data-plane": string
  readonly kubeconfig: string
  readonly namespace: string
  readonly "base-domain": string
  readonly "ingress-class": string
  readonly gateway: string
}

/** How a process ended: its exit code, or the signal that killed it. */
export interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ClusterProcess {
  readonly info: ClusterInfo
  readonly child: ChildProcess
  /** Everything on stdout and stderr so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  /** Waits for the process to end (up to `within`). */
  readonly ended: (within?: Duration.DurationInput) => Effect.Effect<Ended, string>
}

/** Parses the `key: value` lines up to and including `gateway:`; undefined until they are all there. */
export const parseClusterInfo = (stdout: string): ClusterInfo | undefined => {
  const lines = stdout.split("\n")
  const last = lines.findIndex((line) => line.startsWith("gateway: "))
  if (last < 0) return undefined
  const entries = lines.slice(0, last + 1).map((line) => {
    const colon = line.indexOf(": ")
    return [line.slice(0, colon), line.slice(colon + 2)] as const
  })
  return Object.fromEntries(entries) as unknown as ClusterInfo
}

/**
 * Spawns `node bin/session-routing.js cluster <args>` and waits for its URL lines.
 * Start-up loads the whole compiled CLI, over a second on a busy machine, hence the
 * generous default.
 */
export const startClusterProcess = (
  args: ReadonlyArray<string>,
  options: { readonly startWithin?: Duration.DurationInput } = {}
): Effect.Effect<ClusterProcess, string, Scope.Scope> =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const exited = yield* Deferred.make<Ended>()
    const ready = yield* Deferred.make<ClusterInfo, string>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, [BIN, "cluster", ...args], {
          cwd: ROOT,
          stdio: ["ignore", "pipe", "pipe"]
        })
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk
          const info = parseClusterInfo(stdout)
          if (info !== undefined) Deferred.unsafeDone(ready, Effect.succeed(info))
        })
        child.stderr.on("data", (chunk: string) => (stderr += chunk))
        child.on("exit", (code, signal) => {
          Deferred.unsafeDone(exited, Effect.succeed({ code, signal }))
          Deferred.unsafeDone(
            ready,
            Effect.fail(
              `session-routing cluster exited (${code ?? signal}) before printing its URLs; stderr:\n${stderr}`
            )
          )
        })
        return child
      }),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const within = options.startWithin ?? Duration.seconds(25)
    const info = yield* Deferred.await(ready).pipe(
      Effect.timeoutFail({
        duration: within,
        onTimeout: () => `session-routing cluster printed no URLs within ${Duration.format(within)}; stderr:\n${stderr}`
      })
    )
    return {
      info,
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      ended: (limit = Duration.seconds(10)) =>
        Deferred.await(exited).pipe(
          Effect.timeoutFail({
            duration: limit,
            onTimeout: () => `session-routing cluster did not exit within ${Duration.format(limit)}; stderr:\n${stderr}`
          })
        )
    }
  })
