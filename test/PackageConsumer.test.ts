/**
 * The packages as a consumer installs them: `npm pack` of the library and of the local
 * cluster, installed from those tarballs into a fresh project (no workspace links) by
 * npm itself, with their dependencies resolved from a registry on 127.0.0.1 that
 * serves what the lockfile pins. Then, in that project: the README's runner example
 * runs in plain Node against the installed local cluster; the example type-checks as
 * a strict TypeScript consumer (`module: nodenext`, `skipLibCheck: false`); the
 * executable starts; and without the local cluster, `demo` fails with one line naming
 * the package to install.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { transform } from "esbuild"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { LOCAL_CLUSTER_PACKAGE } from "../src/cli/internal/LocalClusterPackage.js"
import { serveLoopbackRegistry } from "./support/LoopbackRegistry.js"

const root = fileURLToPath(new URL("..", import.meta.url))

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end; never fails: the test reads the code and the output. */
const run = (file: string, args: ReadonlyArray<string>, options: { cwd: string; env?: Record<string, string> }) =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
        timeout: 240_000,
        maxBuffer: 64 * 1024 * 1024
      },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
    )
    return Effect.sync(() => child.kill())
  })

/** Fails the test with the command's output when it did not succeed. */
const succeeded = (what: string, result: Run): Run => {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result
}

/** The version the lockfile pins for a package the repository installs. */
const lockedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>
  }).packages[`node_modules/${name}`]!.version

/** Starts the installed local cluster, runs the example's `main` against it, prints the events as JSON. */
const driver = `
import { SessionCluster } from "@session-routing/local-cluster"
import { ConfigProvider, Duration, Effect } from "effect"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { main } from "./runner.mjs"

const events = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const sc = yield* SessionCluster.make({ ingress: { delay: Duration.millis(50) }, dataPlane: false })
  const kubeconfig = join(yield* Effect.promise(() => mkdtemp(join(tmpdir(), "consumer-"))), "kubeconfig")
  yield* sc.cluster.writeKubeconfig(kubeconfig)
  const env = new Map([
    ["KUBECONFIG", kubeconfig],
    ["SESSION_ROUTING_BASE_DOMAIN", sc.baseDomain],
    ["SESSION_INGRESS_CLASS", sc.ingressClassName],
    ["SESSION_ROUTE_POLL_INTERVAL_MS", "20"],
    ["SESSION_ROUTE_READY_TIMEOUT_MS", "5000"]
  ])
  return yield* main.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(env, { pathDelim: "_" })))
})))
process.stdout.write("EVENTS " + JSON.stringify(events.map((e) => [e.type, e.state ?? null])) + "\\n")
`

describe("the packed packages in a fresh project", () => {
  it.live(
    "install from their tarballs, run the README example in plain Node, type-check strictly, and start the CLI",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const dir = yield* Effect.acquireRelease(
            Effect.sync(() => mkdtempSync(join(tmpdir(), "session-routing-consumer-"))),
            (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
          )
          const npm = (args: ReadonlyArray<string>, cwd: string, env?: Record<string, string>) =>
            run("npm", args, { cwd, ...(env === undefined ? {} : { env }) })
          // The build is current (the global setup ran it); packing need not run it again.
          for (const workspace of [[], ["--workspace", LOCAL_CLUSTER_PACKAGE]]) {
            succeeded(
              "npm pack",
              yield* npm(["pack", "--ignore-scripts", "--pack-destination", dir, ...workspace], root)
            )
          }
          const cache = succeeded("npm config get cache", yield* npm(["config", "get", "cache"], root)).stdout.trim()
          const registry = yield* serveLoopbackRegistry({ lockfile: join(root, "package-lock.json"), cacheDir: cache })

          const env = {
            npm_config_registry: registry.url,
            npm_config_update_notifier: "false",
            npm_config_audit: "false",
            npm_config_fund: "false",
            // A cache of its own: what it installs comes from the registry above, not from a warm cache.
            npm_config_cache: join(dir, "npm-cache")
          }
          const manifest = {
            name: "consumer",
            private: true,
            type: "module",
            dependencies: {
              "session-routing": `file:${join(dir, "session-routing-0.1.0.tgz")}`,
              [LOCAL_CLUSTER_PACKAGE]: `file:${join(dir, "session-routing-local-cluster-0.1.0.tgz")}`,
              "@types/node": lockedVersion("@types/node"),
              // client-node 1.4.0's declarations import `ws` without depending on its types.
              "@types/ws": lockedVersion("@types/ws")
            }
          }
          yield* Effect.sync(() => writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2)))
          // Install scripts stay off; the lockfile npm writes says which packages would run one.
          succeeded("npm install", yield* npm(["install", "--ignore-scripts"], dir, env))
          const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
            packages: Record<string, { readonly hasInstallScript?: boolean; readonly link?: boolean }>
          }
          expect(Object.values(lock.packages).filter((entry) => entry.link === true)).toEqual([])
          expect(
            Object.entries(lock.packages).filter(([, entry]) => entry.hasInstallScript === true).map(([key]) =>
              key.slice(key.lastIndexOf("node_modules/") + 13)
            )
          ).toEqual(["msgpackr-extract"])
          // Not installed with the library: the CLI's own dependencies, the emulator's, a TypeScript loader.
          const installed = Object.keys(lock.packages).map((key) => key.slice(key.lastIndexOf("node_modules/") + 13))
          expect(installed.filter((name) => ["@effect/cli", "@effect/platform-node", "tsx", "esbuild"].includes(name)))
            .toEqual([])

          // (a) The README example, its types stripped, in plain Node against the installed local cluster.
          const example = readFileSync(join(root, "examples", "runner.ts"), "utf8")
          const { code } = yield* Effect.promise(() => transform(example, { loader: "ts", format: "esm" }))
          yield* Effect.sync(() => {
            writeFileSync(join(dir, "runner.mjs"), code)
            writeFileSync(join(dir, "drive.mjs"), driver)
          })
          const drive = succeeded("the example", yield* run(process.execPath, ["drive.mjs"], { cwd: dir }))
          expect(drive.stdout).toContain(
            `EVENTS ${JSON.stringify([["published", null], ["route", "pending"], ["route", "programmed"]])}`
          )

          // (b) The example as a strict TypeScript consumer sees it, declarations of every package checked.
          yield* Effect.sync(() => {
            writeFileSync(join(dir, "runner.ts"), example)
            writeFileSync(
              join(dir, "tsconfig.json"),
              JSON.stringify({
                compilerOptions: {
                  target: "ES2022",
                  module: "nodenext",
                  moduleResolution: "nodenext",
                  strict: true,
                  exactOptionalPropertyTypes: true,
                  skipLibCheck: false,
                  noEmit: true,
                  types: ["node"]
                },
                files: ["runner.ts"]
              })
            )
          })
          const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
          succeeded("tsc", yield* run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }))

          // The executable, as installed.
          const bin = join(dir, "node_modules", ".bin", "session-routing")
          expect(succeeded("--version", yield* run(bin, ["--version"], { cwd: dir })).stdout.trim()).toBe("0.1.0")
          // Without the local cluster: one line naming the package to install.
          const clusterDir = join(dir, "node_modules", "@session-routing", "local-cluster")
          yield* Effect.acquireRelease(
            Effect.sync(() => renameSync(clusterDir, `${clusterDir}.away`)),
            () => Effect.sync(() => renameSync(`${clusterDir}.away`, clusterDir))
          )
          const demo = yield* run(bin, ["demo"], { cwd: dir })
          expect({ code: demo.code, stderr: demo.stderr.trim().split("\n") }).toEqual({
            code: 1,
            stderr: [
              `error: \`session-routing demo\` runs the local cluster, which is not installed: npm install ${LOCAL_CLUSTER_PACKAGE}`
            ]
          })
        })
      ),
    300_000
  )
})
