/**
 * The package as a runner's plain Node loads it: both entry points of the exports map
 * import from the compiled build with no TypeScript loader, in a process of their own,
 * and the declarations each names are there beside them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
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

describe("the package's entry points", () => {
  it.live("import in plain Node by the package's name, loading no .ts file", () =>
    Effect.gen(function*() {
      const result = yield* plainNode(`
        // With no loader registered, a .ts file anywhere in the graph fails the import.
        const library = await import("session-routing")
        const cluster = await import("session-routing/local-cluster")
        console.log(JSON.stringify({
          publishSession: typeof library.publishSession,
          SessionRouter: typeof library.SessionRouter,
          LocalCluster: typeof cluster.LocalCluster?.make
        }))
      `)
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual({
        publishSession: "function",
        SessionRouter: "function",
        LocalCluster: "function"
      })
    }))

  it("leaves OpenTelemetry to whoever exports spans: optional peers, exactly the packages export loads", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { readonly optional?: boolean }>
    }
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual([...OTEL_PACKAGES].sort())
    expect(OTEL_PACKAGES.filter((name) => manifest.peerDependenciesMeta[name]?.optional !== true)).toEqual([])
    expect(Object.keys(manifest.dependencies).filter((name) => name.includes("opentelemetry"))).toEqual([])
  })

  it("imports at run time only what it depends on: its dependencies, optional peers and Node's own modules", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
    }
    const allowed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)])
    const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")
    const imported = new Set<string>()
    for (const file of readdirSync(join(root, "build"), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".js")) continue
      const text = readFileSync(join(root, "build", file), "utf8")
      for (const [, specifier] of text.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g)) {
        if (specifier !== undefined && !specifier.startsWith("node:")) imported.add(packageOf(specifier))
      }
    }
    // The scan is of real imports: the library imports effect, and the CLI bundle client-node.
    expect(imported.has("effect")).toBe(true)
    expect(imported.has("@kubernetes/client-node")).toBe(true)
    expect([...imported].filter((name) => !allowed.has(name)).sort()).toEqual([])
  })

  it("names declarations and modules that the build wrote", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, string | { readonly types: string; readonly import: string }>
    }
    for (const [entry, target] of Object.entries(manifest.exports)) {
      if (typeof target === "string") continue
      expect([entry, existsSync(join(root, target.types))]).toEqual([entry, true])
      expect([entry, existsSync(join(root, target.import))]).toEqual([entry, true])
    }
  })
})
