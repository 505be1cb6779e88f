/**
 * The local cluster is its own package (`@session-routing/local-cluster`), loaded
 * only by the commands that run it (`demo`, `cluster`): more code than the rest of
 * the CLI, and not something every installation has. When it is not installed, the
 * command fails with one line that names the package and how to install it.
 */
import { Effect } from "effect"
import { type CliError, cliError } from "../CliError.js"

/** The package's name, as npm installs it. */
export const LOCAL_CLUSTER_PACKAGE = "@session-routing/local-cluster"

/**
 * How to install `specifier`, one of this repository's packages. They are not on the
 * npm registry yet, so `npm install <name>` would fail: the way is a tarball packed in a
 * clone, as test/PackageConsumer.slow.test.ts installs them.
 */
export const installAdvice = (specifier: string): string =>
  `it is not on the npm registry yet: in a clone of session-routing run \`npm ci && npm pack --workspace ${specifier}\`, then here \`npm install <path to the .tgz it wrote>\``

/** The line a command that needs the local cluster fails with when it is not installed. */
export const missingPackageMessage = (command: string, specifier: string): string =>
  `\`session-routing ${command}\` runs the local cluster, ${specifier}, which is not installed; ${
    installAdvice(specifier)
  }`

type LocalClusterModule = typeof import("@session-routing/local-cluster")

/** Whether `error` says that `specifier` itself could not be found (not a module below it). */
export const isMissingPackage = (error: unknown, specifier: string): boolean => {
  const { code, message } = (error ?? {}) as { readonly code?: unknown; readonly message?: unknown }
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    typeof message === "string" && message.includes(`'${specifier}'`)
}

/**
 * Imports `specifier` for `command`; a missing package is a `CliError` naming it, any
 * other failure to load (a broken install) is a defect with its own message.
 */
export const importForCommand = <A>(
  command: string,
  specifier: string,
  load: () => Promise<A>
): Effect.Effect<A, CliError> =>
  Effect.tryPromise({ try: load, catch: (error) => error }).pipe(
    Effect.catchAll((error) =>
      isMissingPackage(error, specifier)
        ? Effect.fail(cliError(missingPackageMessage(command, specifier)))
        : Effect.die(error)
    )
  )

/** The local cluster package, for `command`. */
export const loadLocalCluster = (command: string): Effect.Effect<LocalClusterModule, CliError> =>
  importForCommand(command, LOCAL_CLUSTER_PACKAGE, () => import("@session-routing/local-cluster"))
