/**
 * What the executable loads to start: `--version` and the root's help load no module
 * beyond the executable itself (it reads them from package.json and the build), and the
 * bundled CLI answers `render` without resolving client-node, OpenTelemetry, the local
 * cluster's package or the metrics server (each is imported only by the command that needs
 * it), which is most of what a start used to cost. Every module the process resolves is
 * recorded by a resolve hook registered before the executable runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../bin/session-routing.js", import.meta.url))

/** A script for `--import` that logs each module resolved (not Node's own) to stderr, one `resolved <url>` line each. */
const hook = (() => {
  const dir = mkdtempSync(join(tmpdir(), "startup-"))
  const file = join(dir, "log-resolve.mjs")
  const hooks = `export async function resolve(specifier, context, next) {
    const resolved = await next(specifier, context)
    if (!resolved.url.startsWith("node:")) process.stderr.write("resolved " + resolved.url + "\\n")
    return resolved
  }`
  writeFileSync(
    file,
    `import { register } from "node:module"\nregister(${
      JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)
    })\n`
  )
  return file
})()

/** The modules `session-routing <args>` resolves, and its exit status. */
const resolvedBy = (args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly resolved: ReadonlyArray<string> }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", hook, bin, ...args],
      {
        env: {
          PATH: process.env.PATH ?? "",
          SESSION_ROUTING_BASE_DOMAIN: "example.com",
          SESSION_INGRESS_CLASS: "nginx"
        },
        timeout: 60_000
      },
      (error, _stdout, stderr) =>
        resume(Effect.succeed({
          code: error === null ? 0 : Number(error.code ?? 1),
          resolved: stderr.split("\n").filter((line) => line.startsWith("resolved ")).map((line) => line.slice(9))
        }))
    )
    return Effect.sync(() => child.kill())
  })

describe("the executable's start", () => {
  // Loading the bundle (Effect, @effect/cli) took several times Node's own start, for what a
  // person types first to see whether the tool is there.
  for (const args of [["--version"], ["--help"], ["-h"], ["help"], []]) {
    it.live(`${args.join(" ") || "no arguments"} loads no module beyond the executable`, () =>
      Effect.gen(function*() {
        const { code, resolved } = yield* resolvedBy(args)
        expect(code).toBe(0)
        expect(resolved.filter((url) => !url.endsWith("/bin/session-routing.js"))).toEqual([])
      }))
  }

  const render = ["render", "--session", "abc", "--pod-uid", "3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13", "--port", "8080"]
  for (const args of [["--version", "--log-level", "debug"], render]) {
    it.live(`${args.join(" ")} runs the bundle and loads none of what only some commands use`, () =>
      Effect.gen(function*() {
        const { code, resolved } = yield* resolvedBy(args)
        expect(code).toBe(0)
        expect(resolved.some((url) => url.endsWith("/build/cli/main.js"))).toBe(true)
        expect(resolved.filter((url) => /client-node|local-cluster|opentelemetry/.test(url))).toEqual([])
        // Nor the bundle's chunk for the metrics server.
        expect(resolved.filter((url) => /\/MetricsServer-[^/]*\.js$/.test(url))).toEqual([])
        // Nothing from the sources: the bundle is all it runs.
        expect(resolved.filter((url) => url.endsWith(".ts"))).toEqual([])
      }))
  }
})
