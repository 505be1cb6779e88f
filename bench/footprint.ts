/**
 * What a runner installs: the packed library installed into a fresh project the way
 * a consumer's `npm install` does it (test/support/ConsumerProject.ts: the tarballs,
 * dependencies from a loopback registry that serves the lockfile's versions), then
 * the size of its node_modules on disk, the number of packages and which of them
 * carry an install script. Beside it, the same with the local cluster added, and the
 * floor: the library's own stack (effect, @effect/platform, client-node 1.4.0)
 * installed alone. Sizes are MB (10^6 bytes) of apparent file size, as `du -sb`
 * counts them.
 */
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import {
  type Installed,
  installProject,
  lockedVersion,
  packPackages,
  run,
  startRegistry,
  temporaryDirectory
} from "../test/support/ConsumerProject.js"

/** Target of the packages issue: a consumer install of the library ≤ 145 MB. */
const MAX_LIBRARY_MB = 145
/** The only install script the library's install may carry (msgpackr's optional native build, from @effect/platform). */
const ALLOWED_INSTALL_SCRIPTS = ["msgpackr-extract"]

const megabytesOf = (dir: string) =>
  Effect.map(run("du", ["-sb", join(dir, "node_modules")], { cwd: dir }), (result) => {
    if (result.code !== 0) throw new Error(`du failed: ${result.stderr}`)
    return Number(result.stdout.split("\t")[0]) / 1e6
  })

interface Row {
  readonly name: string
  readonly installed: Installed
  readonly mb: number
}

export const footprint: Effect.Effect<boolean, unknown> = Effect.scoped(
  Effect.gen(function*() {
    const work = yield* temporaryDirectory("session-routing-footprint-")
    const packed = yield* packPackages(work)
    const projects: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["library", { "session-routing": `file:${packed["session-routing"]}` }],
      ["library + local cluster", {
        "session-routing": `file:${packed["session-routing"]}`,
        "@session-routing/local-cluster": `file:${packed["@session-routing/local-cluster"]}`
      }],
      ["floor: effect, @effect/platform, client-node", {
        effect: lockedVersion("effect"),
        "@effect/platform": lockedVersion("@effect/platform"),
        "@kubernetes/client-node": lockedVersion("@kubernetes/client-node")
      }]
    ]
    const registry = yield* startRegistry
    const rows: Array<Row> = []
    for (const [name, dependencies] of projects) {
      const dir = join(work, `project-${rows.length}`)
      mkdirSync(dir)
      const installed = yield* installProject(dir, dependencies, registry)
      rows.push({ name, installed, mb: yield* megabytesOf(dir) })
    }

    console.log("\nWhat a consumer installs (npm install of the packed tarballs into a fresh project)")
    console.log(`${"project".padEnd(48)}${"node_modules".padStart(14)}${"packages".padStart(10)}  install scripts`)
    for (const row of rows) {
      const scripts = row.installed.packages.filter((p) => p.hasInstallScript).map((p) => p.name)
      console.log(
        `${row.name.padEnd(48)}${`${row.mb.toFixed(1)} MB`.padStart(14)}${
          String(row.installed.packages.length).padStart(10)
        }  ${scripts.join(", ") || "none"}`
      )
    }
    const library = rows[0]!
    const floor = rows[2]!
    const extraScripts = library.installed.packages.filter((p) =>
      p.hasInstallScript && !ALLOWED_INSTALL_SCRIPTS.includes(p.name)
    )
    const sizeMet = library.mb <= MAX_LIBRARY_MB
    console.log(
      `${sizeMet ? "met" : "MISSED"}: the library installs ${
        library.mb.toFixed(1)
      } MB (target <= ${MAX_LIBRARY_MB} MB; ` +
        `the floor of its own stack, in the same sitting: ${floor.mb.toFixed(1)} MB, so ${
          (library.mb - floor.mb).toFixed(1)
        } MB is the library's own)`
    )
    console.log(
      `${extraScripts.length === 0 ? "met" : "MISSED"}: install scripts beyond ${ALLOWED_INSTALL_SCRIPTS.join(", ")}: ${
        extraScripts.map((p) => p.name).join(", ") || "none"
      }`
    )
    return sizeMet && extraScripts.length === 0
  })
)
