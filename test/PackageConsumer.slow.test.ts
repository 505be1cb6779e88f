/**
 * The packages as a consumer installs them: `npm pack` of the library and of the local
 * cluster, installed from those tarballs into a fresh project (no workspace links) by
 * npm itself, with their dependencies resolved from a registry on 127.0.0.1 that
 * serves what the lockfile pins. Then, in that project: the README's runner example
 * runs in plain Node against the installed local cluster; the example type-checks as
 * a strict TypeScript consumer (`module: nodenext`, `skipLibCheck: false`); the
 * executable starts; and without the local cluster, `demo` fails with one line naming
 * the package to install. Neither package has a script that runs when it is installed:
 * npm warns of no install script of theirs, and the consumer needs no @types/ws of its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { transform } from "esbuild"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { LOCAL_CLUSTER_PACKAGE, missingPackageMessage } from "../src/cli/internal/LocalClusterPackage.js"
import {
  installProject,
  lockedVersion,
  packPackages,
  REPOSITORY,
  run,
  startRegistry,
  succeeded,
  temporaryDirectory
} from "./support/ConsumerProject.js"

/** The scripts npm runs when it installs a package from a tarball or git (npm help scripts). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"]

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
          const work = yield* temporaryDirectory("session-routing-consumer-")
          const packed = yield* packPackages(work)
          // npm counts `prepare` as an install script of a package installed from a tarball or git
          // (npm 11 warns of it): the build runs at `prepack`, when packing, instead.
          for (const tarball of Object.values(packed)) {
            const manifest = yield* succeeded(
              "tar",
              yield* run("tar", ["-xOzf", tarball, "package/package.json"], { cwd: work })
            )
            const scripts = Object.keys((JSON.parse(manifest.stdout) as { scripts?: object }).scripts ?? {})
            expect([tarball, scripts.filter((name) => INSTALL_SCRIPTS.includes(name))]).toEqual([tarball, []])
          }
          const dir = join(work, "app")
          mkdirSync(dir)
          const registry = yield* startRegistry
          // No @types/ws here: the library depends on it (see the type check below).
          const { packages, stderr } = yield* installProject(
            dir,
            {
              "session-routing": `file:${packed["session-routing"]}`,
              [LOCAL_CLUSTER_PACKAGE]: `file:${packed[LOCAL_CLUSTER_PACKAGE]}`,
              "@types/node": lockedVersion("@types/node")
            },
            registry,
            { allowScripts: { "msgpackr-extract": false } }
          )
          // The one install script of the tree is denied, so npm names every other it would run.
          expect(stderr.split("\n").filter((line) => line.includes("install-scripts"))).toEqual([])
          expect(packages.filter((p) => p.hasInstallScript).map((p) => p.name)).toEqual(["msgpackr-extract"])
          // Not installed with the library: the CLI's own dependencies, a TypeScript loader, a bundler.
          const cliOnly = ["@effect/cli", "@effect/platform-node", "@effect/printer", "tsx", "esbuild"]
          expect(packages.filter((p) => cliOnly.includes(p.name))).toEqual([])

          // (a) The README example, its types stripped, in plain Node against the installed local cluster.
          const example = readFileSync(join(REPOSITORY, "examples", "runner.ts"), "utf8")
          const { code } = yield* Effect.promise(() => transform(example, { loader: "ts", format: "esm" }))
          writeFileSync(join(dir, "runner.mjs"), code)
          writeFileSync(join(dir, "drive.mjs"), driver)
          const drive = yield* succeeded("the example", yield* run(process.execPath, ["drive.mjs"], { cwd: dir }))
          expect(drive.stdout).toContain(
            `EVENTS ${JSON.stringify([["published", null], ["route", "pending"], ["route", "programmed"]])}`
          )

          // (b) The example as a strict TypeScript consumer sees it, declarations of every package checked.
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
          const tsc = join(REPOSITORY, "node_modules", "typescript", "bin", "tsc")
          const checked = yield* succeeded(
            "tsc",
            yield* run(process.execPath, [tsc, "-p", "tsconfig.json", "--listFiles"], { cwd: dir })
          )
          // client-node 1.4.0's declarations import `ws` (through isomorphic-ws) without depending on
          // its types. Without them the check still passes, every WebSocket type there read as any:
          // the library's dependency on @types/ws is what puts them in the program.
          const wsTypes = checked.stdout.split("\n").filter((file) => file.endsWith("/@types/ws/index.d.ts"))
          expect(wsTypes.map((file) => file.slice(file.lastIndexOf("node_modules/")))).toEqual([
            "node_modules/@types/ws/index.d.ts"
          ])

          // The executable, as installed.
          const bin = join(dir, "node_modules", ".bin", "session-routing")
          const version = yield* succeeded("--version", yield* run(bin, ["--version"], { cwd: dir }))
          expect(version.stdout.trim()).toBe("0.1.0")
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
              `error: ${missingPackageMessage("demo", LOCAL_CLUSTER_PACKAGE)}`
            ]
          })
        })
      ),
    300_000
  )
})
