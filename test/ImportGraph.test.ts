/**
 * What importing the library loads: the static import graph from `src/index.ts`
 * reaches no LocalCluster module and no YAML, so a runner that imports
 * session-routing does not load an HTTP server, an SSA engine or a YAML parser. The
 * cluster is its own package, `@session-routing/local-cluster`, under packages/.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

/** Every module reachable by static imports (and re-exports) from `entry`: project files, and bare package names; `types` follows type-only imports too. */
const importGraph = (entry: string, options: { readonly types?: boolean } = {}) => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const text = readFileSync(file, "utf8")
    // `import ... from "x"`, `export ... from "x"`, `import "x"`; type-only imports load nothing.
    for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^"';]*?\s+from\s+)?"([^"]+)"/gm)) {
      if (match[1] !== undefined && options.types !== true) continue
      const target = match[2]!
      if (target.startsWith(".")) visit(resolve(dirname(file), target.replace(/\.js$/, ".ts")))
      else packages.add(target.startsWith("@") ? target.split("/").slice(0, 2).join("/") : target.split("/")[0]!)
    }
  }
  visit(join(root, entry))
  return { files: [...files].map((file) => relative(root, file)), packages: [...packages] }
}

describe("the library's import graph", () => {
  it("loads no LocalCluster module and no YAML from the main entry point", () => {
    const graph = importGraph("src/index.ts")
    expect(graph.files.length).toBeGreaterThan(20)
    expect(graph.files.filter((file) => !file.startsWith("src/"))).toEqual([])
    expect(graph.files.filter((file) => file.startsWith("src/cli/"))).toEqual([])
    expect(graph.packages).not.toContain("yaml")
  })

  it("keeps in src/domain only what the library itself loads", () => {
    // Rules only the simulator applies (API validation, Gateway attachment, the
    // route table) live in its package: a domain module none of the library's entries
    // reaches would be simulator code in the library's floor.
    const entries = ["src/index.ts", "src/controller.ts", "src/manifests.ts", "src/kubernetes.ts"]
    const graph = { files: entries.flatMap((entry) => importGraph(entry, { types: true }).files) }
    const domain = readdirSync(join(root, "src/domain")).filter((file) => file.endsWith(".ts")).map((file) =>
      `src/domain/${file}`
    )
    expect(domain.filter((file) => !graph.files.includes(file))).toEqual([])
  })

  it("reaches OpenTelemetry by no static import, from the library or the CLI: it is loaded only to export spans", () => {
    for (const entry of ["src/index.ts", "src/cli/main.ts"]) {
      const graph = importGraph(entry)
      expect(graph.files).toContain("src/layers/TracingExport.ts")
      expect(graph.files).not.toContain("src/layers/tracing/OtelExport.ts")
      expect(graph.packages.filter((name) => name.includes("opentelemetry"))).toEqual([])
    }
  })

  it("keeps LocalCluster in its own package, which reaches the library only through its public entries", () => {
    const graph = importGraph("packages/local-cluster/src/index.ts")
    expect(graph.files).toContain("packages/local-cluster/src/LocalCluster.ts")
    // The API server's rules it applies are its own, not the library's.
    for (const file of ["Validation", "ServerSideApply", "RouteTable", "GatewayAttachment", "GatewayStatus"]) {
      expect(graph.files).toContain(`packages/local-cluster/src/${file}.ts`)
    }
    expect(graph.files.filter((file) => !file.startsWith("packages/local-cluster/src/"))).toEqual([])
    expect(graph.packages).toContain("session-routing")
  })
})
