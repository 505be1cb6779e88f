/**
 * Runs the real kubectl (Debian's `kubernetes-client`, kubectl 1.20, from $KUBECTL or
 * PATH) for the wire tests, and says how to install it when it is missing: a skipped
 * wire test would hide exactly the install step it exists to catch.
 */
import { execFile } from "node:child_process"
import { it } from "@effect/vitest"

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
