/**
 * Vitest global setup: brings the build (`npm run build`: the compiled packages a
 * plain-Node import loads, and the CLI bundle `bin/session-routing.js` runs) up to date
 * with the sources before any test starts, so the tests that spawn the CLI or import a
 * package by its built entry never run a build older than the code under test. The
 * compiles are incremental: with nothing changed they only check; the bundle takes
 * about a second.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export default async function setup(): Promise<void> {
  try {
    await promisify(execFile)("npm", ["run", "build", "--silent"], { cwd: ROOT, timeout: 300_000 })
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? ""
    throw new Error(`the package does not build (npm run build):\n${out || String(error)}`)
  }
}
