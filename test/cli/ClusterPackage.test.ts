/**
 * What `cluster` and `demo` say when @session-routing/local-cluster is not installed.
 * Neither package is on the npm registry yet, so the advice is the tarball a clone
 * packs (as test/PackageConsumer.slow.test.ts installs it), never `npm install <name>`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cliError } from "../../src/cli/CliError.js"
import { importForCommand, LOCAL_CLUSTER_PACKAGE } from "../../src/cli/internal/LocalClusterPackage.js"

/** What Node throws when the package itself is not installed. */
const notFound = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/node_modules/x.js`), {
    code: "ERR_MODULE_NOT_FOUND"
  })

describe("the local cluster package, not installed", () => {
  it.effect("fails the command with one line: the package, and how to pack and install it from a clone", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        importForCommand("cluster", LOCAL_CLUSTER_PACKAGE, () => Promise.reject(notFound(LOCAL_CLUSTER_PACKAGE)))
      )
      expect(error).toEqual(
        cliError(
          "`session-routing cluster` runs the local cluster, @session-routing/local-cluster, which is not installed; it is not on the npm registry yet: in a clone of session-routing run `npm ci && npm pack --workspace @session-routing/local-cluster`, then here `npm install <path to the .tgz it wrote>`"
        )
      )
      // The registry does not have it yet: `npm install <name>` would only fail again.
      expect(error.message).not.toContain(`npm install ${LOCAL_CLUSTER_PACKAGE}`)
    }))

  it.effect("dies with the error itself when something below the package is missing", () =>
    Effect.gen(function*() {
      const below = notFound("yaml")
      const exit = yield* Effect.exit(
        importForCommand("demo", LOCAL_CLUSTER_PACKAGE, () => Promise.reject(below))
      )
      expect(exit._tag === "Failure" && exit.cause._tag === "Die" ? exit.cause.defect : undefined).toBe(below)
    }))
})
