/**
 * Vitest global setup: brings the build (`build/`: the compiled package a plain-Node
 * import loads, and the CLI bundle `bin/session-routing.js` runs) up to date with the
 * sources before any test starts, so the tests that spawn the CLI never run a build
 * older than the code under test. The compile is incremental: with nothing changed it
 * only checks; the bundle takes about a second.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TSC = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url))

export default async function setup(): Promise<void> {
  const run = (args: ReadonlyArray<string>) =>
    promisify(execFile)(process.execPath, args, { cwd: ROOT, timeout: 300_000 })
  try {
    await run([TSC, "-p", "tsconfig.build.json"])
    await run(["esbuild.config.mjs"])
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? ""
    throw new Error(`the package does not build (npm run build):\n${out || String(error)}`)
  }
}
