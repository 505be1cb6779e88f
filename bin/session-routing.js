#!/usr/bin/env node
// The `session-routing` executable: the bundled CLI (`npm run build` writes build/, and
// `npm start`, `npm test` and `npm pack` run it).
import { readFileSync } from "node:fs"

/**
 * What the CLI prints for `args` when they ask only for the version or the root's help
 * (`--help`, `-h`, `help`, nothing), read from files instead of loading the bundle, whose
 * Effect and @effect/cli take several times as long as Node's own start: these are what a
 * person types first. The bundle inlines package.json's version, and the build renders
 * the help with the CLI's own code (esbuild.config.mjs); undefined for anything else, or
 * when the help was not built.
 */
const answer = (args) => {
  const only = args.length === 1 ? args[0] : undefined
  if (only === "--version") {
    return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version
  }
  if (args.length > 0 && only !== "--help" && only !== "-h" && only !== "help") return undefined
  let help
  try {
    help = JSON.parse(readFileSync(new URL("../build/cli/help.json", import.meta.url), "utf8"))
  } catch {
    return undefined
  }
  // Bold on a terminal unless https://no-color.org's NO_COLOR is set and not empty, as the CLI decides.
  return process.stdout.isTTY === true && !process.env.NO_COLOR ? help.bold : help.plain
}

const text = answer(process.argv.slice(2))
if (text !== undefined) {
  // console.log, as the CLI prints it: the same bytes, and a closed stdout is no crash.
  console.log(text)
} else {
  try {
    await import("../build/cli/main.js")
  } catch (error) {
    // Only the entry itself missing; a dependency missing below it is reported as it is.
    if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.url).endsWith("/build/cli/main.js")) {
      process.stderr.write("session-routing: the CLI is not built; run `npm run build` in the package first\n")
      process.exit(1)
    }
    throw error
  }
}
