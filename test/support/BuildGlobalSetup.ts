/**
 * Vitest global setup: brings the compiled package (`build/`, what `bin/session-routing.js`
 * and a plain-Node import run) up to date with the sources before any test starts, so
 * the tests that spawn the CLI never run a build older than the code under test. The
 * build is incremental: with nothing changed it only checks.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TSC = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url))

export default async function setup(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [TSC, "-p", "tsconfig.build.json"], { cwd: ROOT, timeout: 300_000 })
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? ""
    throw new Error(`the package does not build (npm run build):\n${out || String(error)}`)
  }
}
