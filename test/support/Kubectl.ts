/**
 * Runs the real kubectl (Debian's `kubernetes-client`, kubectl 1.20, or any newer
 * release, from $KUBECTL or PATH) for the wire tests, and says how to install it when
 * it is missing: a skipped wire test would hide exactly the install step it exists to
 * catch. Tests assert on what the server did, not on kubectl's log format.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { it } from "@effect/vitest"
import { Effect, type Scope } from "effect"

export const KUBECTL = process.env.KUBECTL ?? "kubectl"

export interface KubectlRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs kubectl with `args`; never rejects, the exit code says how it went. */
export const kubectl = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): Promise<KubectlRun> =>
  new Promise((resolve) => {
    execFile(KUBECTL, [...args], { timeout: 30_000, env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resolve({ code, stdout, stderr: error !== null && stderr === "" ? error.message : stderr })
    })
  })

const version = await kubectl(["version", "--client"])

/** Whether kubectl runs here. */
export const kubectlAvailable = version.code === 0

/** A failing test that names the missing kubectl and the install step. */
export const requireKubectl = (): void => {
  it("has kubectl to run", () => {
    throw new Error(
      `kubectl was not found (tried ${KUBECTL}: ${version.stderr.trim() || "not runnable"}). ` +
        "Install Debian's kubernetes-client (apt-get install -y kubernetes-client, as .ci/run does; remove the `kubectl` package first if it owns /usr/bin/kubectl) or set KUBECTL."
    )
  })
}

/** A scratch directory for one kubectl test: the kubeconfig goes here, files to apply, and kubectl's discovery cache. */
export interface KubectlWorkspace {
  /** Where the cluster's kubeconfig is to be written. */
  readonly kubeconfig: string
  /** kubectl with that kubeconfig; the discovery cache stays in the workspace, not in $HOME. */
  readonly run: (...args: ReadonlyArray<string>) => Effect.Effect<KubectlRun>
  /** Writes `text` to a file in the workspace and returns its path. */
  readonly file: (name: string, text: string) => Effect.Effect<string>
}

/** A workspace for the life of the scope; the directory is removed with it. */
export const kubectlWorkspace = (prefix: string): Effect.Effect<KubectlWorkspace, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), prefix))),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const kubeconfig = join(dir, "kubeconfig")
    return {
      kubeconfig,
      run: (...args) => Effect.promise(() => kubectl(["--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"), ...args])),
      file: (name, text) =>
        Effect.promise(async () => {
          const path = join(dir, name)
          await writeFile(path, text)
          return path
        })
    }
  })
