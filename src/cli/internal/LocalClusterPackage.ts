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
        ? Effect.fail(
          cliError(
            `\`session-routing ${command}\` runs the local cluster, which is not installed: npm install ${specifier}`
          )
        )
        : Effect.die(error)
    )
  )

/** The local cluster package, for `command`. */
export const loadLocalCluster = (command: string): Effect.Effect<LocalClusterModule, CliError> =>
  importForCommand(command, LOCAL_CLUSTER_PACKAGE, () => import("@session-routing/local-cluster"))
