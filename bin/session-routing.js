#!/usr/bin/env node
// The `session-routing` executable: the bundled CLI (`npm run build` writes build/,
// and `npm ci`, `npm start` and `npm test` run it).
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
