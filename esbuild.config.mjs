/**
 * The `session-routing` CLI as one bundle (build/cli/): loading a single file in place
 * of the hundreds of modules Effect, @effect/cli and the library are made of is what
 * lets the command start in a fraction of a second. Parts only some commands use are
 * split into chunks loaded on demand (client-node is imported when a kubeconfig is
 * first read, OpenTelemetry when OTEL_* asks for export, the metrics server with
 * --metrics-port).
 *
 * The CLI's own dependencies (@effect/cli, the printers, @effect/platform-node, yaml)
 * are inside the bundle, so they are devDependencies: a runner that installs the
 * library does not install them. Effect is inside too (loading its index from
 * node_modules doubles the time `--version` takes); a package loaded beside the
 * bundle brings its own copy of the same version, and Effect keeps one set of
 * runtime globals per version. What stays outside is client-node (imported lazily,
 * and large) and the optional packages loaded on demand: OpenTelemetry and the local
 * cluster (`demo`, `cluster`).
 *
 * `node esbuild.config.mjs` builds it (`npm run build` runs that); the bench bundles
 * its startup floor with the same options.
 */
import { build } from "esbuild"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

/** How an entry point of the CLI is bundled. */
export const bundleOptions = {
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  external: [
    "@kubernetes/client-node",
    "@opentelemetry/*",
    "@effect/opentelemetry",
    "@session-routing/local-cluster",
    // Only its file watcher needs it, and the CLI watches no files.
    "@parcel/watcher"
  ],
  // A CommonJS dependency inside an ES module bundle still calls require.
  banner: {
    js:
      "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
  }
}

/**
 * Writes build/cli/help.json, the root's help plain and in bold (`{ plain, bold }`), which
 * bin/session-routing.js prints for `--help` without loading the bundle. The text comes
 * from the CLI's own `rootHelp`, bundled alone into a scratch directory and loaded once,
 * so it is what the bundle would print.
 */
const writeRootHelp = async () => {
  const scratch = mkdtempSync(join(tmpdir(), "session-routing-help-"))
  try {
    // Split as the CLI is: the parts only some commands load stay in chunks never imported here.
    await build({ ...bundleOptions, sourcemap: false, entryPoints: { cli: "src/cli/Cli.ts" }, outdir: scratch })
    const { rootHelp } = await import(pathToFileURL(join(scratch, "cli.js")).href)
    writeFileSync("build/cli/help.json", JSON.stringify({ plain: rootHelp(false), bold: rootHelp(true) }) + "\n")
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // Chunk names carry a hash of their content: a rebuild must not leave old ones beside.
  rmSync("build/cli", { recursive: true, force: true })
  await build({ ...bundleOptions, entryPoints: { main: "src/cli/main.ts" }, outdir: "build/cli" })
  await writeRootHelp()
}
