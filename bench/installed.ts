/**
 * The packages as a runner installs them, for the benches that measure the path a user
 * runs: both packages packed as npm publishes them and installed into a fresh project
 * (test/support/ConsumerProject.ts: tarballs, dependencies from a registry on 127.0.0.1
 * serving the lockfile's versions), and the bench's own process scripts compiled into
 * that project with every package left external, so that `session-routing`, the local
 * cluster and Effect load from its node_modules, plain Node, no TypeScript loader.
 */
import { Effect, type Scope } from "effect"
import { build } from "esbuild"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  installProject,
  lockedVersion,
  packPackages,
  startRegistry,
  temporaryDirectory
} from "../test/support/ConsumerProject.js"

/** Each bench script of `entries` (name → source path), built as `<dir>/bench/<name>.mjs`. */
export interface InstalledScripts {
  readonly dir: string
  readonly scripts: Readonly<Record<string, string>>
}

const here = fileURLToPath(new URL(".", import.meta.url))

/**
 * Packs, installs and builds `entries` into a project removed with the scope. The
 * project depends on what a runner program would: the library, the local cluster (for
 * the cluster process), Effect's Node runtime and the client-node the library pins.
 */
export const installedScripts = (
  entries: Readonly<Record<string, string>>
): Effect.Effect<InstalledScripts, string, Scope.Scope> =>
  Effect.gen(function*() {
    const work = yield* temporaryDirectory("session-routing-bench-")
    const packed = yield* packPackages(work)
    const registry = yield* startRegistry
    const dir = join(work, "project")
    yield* Effect.sync(() => mkdirSync(dir))
    yield* installProject(dir, {
      "session-routing": `file:${packed["session-routing"]}`,
      "@session-routing/local-cluster": `file:${packed["@session-routing/local-cluster"]}`,
      "@effect/platform-node": lockedVersion("@effect/platform-node"),
      "@kubernetes/client-node": lockedVersion("@kubernetes/client-node")
    }, registry)
    const outdir = join(dir, "bench")
    yield* Effect.tryPromise({
      try: () =>
        build({
          entryPoints: Object.fromEntries(Object.entries(entries).map(([name, source]) => [name, join(here, source)])),
          outdir,
          outExtension: { ".js": ".mjs" },
          bundle: true,
          // Every package from the project's node_modules; only the bench's own modules inlined.
          packages: "external",
          // Not the repository's tsconfig: its `paths` would resolve the packages to their sources.
          tsconfigRaw: {},
          splitting: true,
          format: "esm",
          platform: "node",
          target: "node20",
          logLevel: "warning"
        }),
      catch: (error) => `building the bench scripts failed: ${String(error)}`
    })
    return {
      dir,
      scripts: Object.fromEntries(Object.keys(entries).map((name) => [name, join(outdir, `${name}.mjs`)]))
    }
  })
