/**
 * A consumer's project: the repository's packages packed as npm publishes them, and
 * a fresh project that installs those tarballs (no workspace links) with npm itself,
 * its dependencies resolved from the loopback registry, so nothing reaches any
 * address but 127.0.0.1. The packaged-consumer test runs code in such a project; the
 * footprint bench measures what it installs.
 */
import { Effect, type Scope } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type LoopbackRegistry, serveLoopbackRegistry } from "./LoopbackRegistry.js"

export const REPOSITORY = fileURLToPath(new URL("../..", import.meta.url))

/** A command's end: its exit status and output. */
export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end; never fails: the caller reads the code and the output. */
export const run = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: Record<string, string> }
) =>
  Effect.async<Run>((resume) => {
    const child = execFile(file, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
      timeout: 240_000,
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) =>
      resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
    return Effect.sync(() =>
      child.kill()
    )
  })

/** The run, or a failure carrying its output when it did not succeed. */
export const succeeded = (what: string, result: Run): Effect.Effect<Run, string> =>
  result.code === 0
    ? Effect.succeed(result)
    : Effect.fail(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`)

/** The version the repository's lockfile pins for a package it installs. */
export const lockedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(REPOSITORY, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>
  }).packages[`node_modules/${name}`]!.version

/** A temporary directory, removed with the scope. */
export const temporaryDirectory = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
  )

/** The tarballs `npm pack` makes of each package, by package name. */
export interface Packed {
  readonly "session-routing": string
  readonly "@session-routing/local-cluster": string
}

/** Packs both packages into `dir` from the current build (`npm run build` wrote it; packing does not run it again). */
export const packPackages = (dir: string): Effect.Effect<Packed, string> =>
  Effect.gen(function*() {
    for (const workspace of [[], ["--workspace", "@session-routing/local-cluster"]]) {
      yield* succeeded(
        "npm pack",
        yield* run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, ...workspace], { cwd: REPOSITORY })
      )
    }
    return {
      "session-routing": join(dir, "session-routing-0.1.0.tgz"),
      "@session-routing/local-cluster": join(dir, "session-routing-local-cluster-0.1.0.tgz")
    }
  })

/** What an install left: the lockfile npm wrote, read back, and what npm said on stderr. */
export interface Installed {
  readonly dir: string
  readonly stderr: string
  /** Each installed package by its path under node_modules. */
  readonly packages: ReadonlyArray<{ readonly name: string; readonly hasInstallScript: boolean }>
}

/**
 * The registry installs resolve from: the repository's lockfile, served from npm's
 * cache on 127.0.0.1 until the scope closes. One serves every install of a scope.
 */
export const startRegistry: Effect.Effect<LoopbackRegistry, string, Scope.Scope> = Effect.gen(function*() {
  const cache =
    (yield* succeeded("npm config get cache", yield* run("npm", ["config", "get", "cache"], { cwd: REPOSITORY })))
      .stdout.trim()
  return yield* serveLoopbackRegistry({ lockfile: join(REPOSITORY, "package-lock.json"), cacheDir: cache })
})

/**
 * Makes a fresh project in `dir` with `dependencies` (versions, or `file:` tarballs)
 * and installs it with npm from `registry`; npm's cache for it is its own, inside `dir`.
 * Install scripts are off, unless `allowScripts` is given: then they are on, under that
 * policy in the project's package.json, so npm warns of any script it does not cover
 * (npm 11's allowScripts; an older npm ignores the field and runs them all).
 */
export const installProject = (
  dir: string,
  dependencies: Record<string, string>,
  registry: LoopbackRegistry,
  options: { readonly allowScripts?: Record<string, boolean> } = {}
): Effect.Effect<Installed, string> =>
  Effect.gen(function*() {
    const { allowScripts } = options
    const manifest = {
      name: "consumer",
      private: true,
      dependencies,
      ...(allowScripts === undefined ? {} : { allowScripts })
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2))
    const install = yield* succeeded(
      "npm install",
      yield* run("npm", allowScripts === undefined ? ["install", "--ignore-scripts"] : ["install"], {
        cwd: dir,
        env: {
          npm_config_registry: registry.url,
          npm_config_update_notifier: "false",
          npm_config_audit: "false",
          npm_config_fund: "false",
          npm_config_cache: join(dir, ".npm-cache")
        }
      })
    )
    rmSync(join(dir, ".npm-cache"), { recursive: true, force: true })
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
      packages: Record<string, { readonly hasInstallScript?: boolean; readonly link?: boolean }>
    }
    if (Object.values(lock.packages).some((entry) => entry.link === true)) {
      return yield* Effect.fail("the install linked a package instead of installing it")
    }
    return {
      dir,
      stderr: install.stderr,
      packages: Object.entries(lock.packages).filter(([key]) => key !== "").map(([key, entry]) => ({
        name: key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length),
        hasInstallScript: entry.hasInstallScript === true
      }))
    }
  })
