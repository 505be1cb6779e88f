/**
 * The packages as a runner's plain Node loads them: every entry point of each exports
 * map imports from the compiled build with no TypeScript loader, in a process of its
 * own, the declarations each names are there beside it, and what each build imports
 * is what its package depends on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { LOCAL_CLUSTER_PACKAGE } from "../src/cli/internal/LocalClusterPackage.js"
import { OTEL_PACKAGES } from "../src/layers/TracingExport.js"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Runs `script` as an ES module in plain Node (no loader, no NODE_OPTIONS) from the package root. */
const plainNode = (script: string) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { cwd: root, env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
    )
    return Effect.sync(() => child.kill())
  })

interface Manifest {
  readonly dependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly exports: Record<string, string | { readonly types: string; readonly import: string }>
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest

/** A bare specifier's package: `effect/Stream` → `effect`, `@effect/platform/Path` → `@effect/platform`. */
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/** Each package, where it is, and dependencies its build must be seen to import. */
const packages: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
  // The library, and the CLI bundle beside it, which imports client-node and the local cluster lazily.
  ["session-routing", root, ["effect", "@kubernetes/client-node", LOCAL_CLUSTER_PACKAGE]],
  [LOCAL_CLUSTER_PACKAGE, join(root, "packages", "local-cluster"), ["effect", "node-forge", "yaml", "session-routing"]]
]

describe("the packages' entry points", () => {
  it.live("import in plain Node by the package's name, loading no .ts file", () =>
    Effect.gen(function*() {
      const result = yield* plainNode(`
        // With no loader registered, a .ts file anywhere in the graph fails the import.
        const library = await import("session-routing")
        const kubernetes = await import("session-routing/kubernetes")
        const cluster = await import("@session-routing/local-cluster")
        console.log(JSON.stringify({
          publishSession: typeof library.publishSession,
          SessionRouter: typeof library.SessionRouter,
          makeKubeClient: typeof kubernetes.makeKubeClient,
          LocalCluster: typeof cluster.LocalCluster?.make
        }))
      `)
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual({
        publishSession: "function",
        SessionRouter: "function",
        makeKubeClient: "function",
        LocalCluster: "function"
      })
    }))

  it("leaves OpenTelemetry and the local cluster to whoever needs them: optional peers, exactly what is loaded on demand", () => {
    const manifest = manifestOf(root)
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual([...OTEL_PACKAGES, LOCAL_CLUSTER_PACKAGE].sort())
    expect(
      Object.keys(manifest.peerDependencies).filter((name) => manifest.peerDependenciesMeta?.[name]?.optional !== true)
    )
      .toEqual([])
    expect(Object.keys(manifest.dependencies).filter((name) => name.includes("opentelemetry"))).toEqual([])
  })

  for (const [name, dir, expected] of packages) {
    it(`${name} imports at run time only what it depends on: its dependencies, peers and Node's own modules`, () => {
      const manifest = manifestOf(dir)
      const allowed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)])
      const imported = new Set<string>()
      for (const file of readdirSync(join(dir, "build"), { recursive: true, encoding: "utf8" })) {
        if (!file.endsWith(".js")) continue
        const text = readFileSync(join(dir, "build", file), "utf8")
        for (const [, specifier] of text.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g)) {
          if (specifier !== undefined && !specifier.startsWith("node:")) imported.add(packageOf(specifier))
        }
      }
      // The scan is of real imports: each package imports these.
      expect(expected.filter((dependency) => !imported.has(dependency))).toEqual([])
      expect([...imported].filter((dependency) => !allowed.has(dependency)).sort()).toEqual([])
    })
  }

  for (const [name, dir] of packages) {
    it(`${name} names declarations and modules that its build wrote`, () => {
      for (const [entry, target] of Object.entries(manifestOf(dir).exports)) {
        if (typeof target === "string") continue
        expect([entry, existsSync(join(dir, target.types))]).toEqual([entry, true])
        expect([entry, existsSync(join(dir, target.import))]).toEqual([entry, true])
      }
    })
  }
})
