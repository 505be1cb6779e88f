/**
 * `--metrics-port` and `--metrics-host`: the long-running commands serve
 * session-routing's metrics in the Prometheus text format while they run, on
 * 127.0.0.1 unless told otherwise, and say on stderr where.
 */
import { Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { DEFAULT_METRICS_HOST } from "../services/Telemetry.js"
import { type CliError, cliError } from "./CliError.js"

/** The metrics options, spread into a command's own. */
export const metricsOptions = {
  metricsPort: Options.integer("metrics-port").pipe(
    Options.withPseudoName("PORT"),
    Options.withDescription(
      "Serve Prometheus metrics at http://ADDRESS:PORT/metrics while the command runs (0: any free port)"
    ),
    Options.optional
  ),
  metricsHost: Options.text("metrics-host").pipe(
    Options.withPseudoName("ADDRESS"),
    Options.withDescription("Address the metrics server binds with --metrics-port; 0.0.0.0 for every interface"),
    Options.withDefault(DEFAULT_METRICS_HOST)
  )
} as const

/** The parsed metrics options. */
export interface MetricsFlags {
  readonly metricsPort: Option.Option<number>
  readonly metricsHost: string
}

/**
 * Runs `self` with the metrics server up when `--metrics-port` was given, after a
 * `metrics: <url>` line on stderr (the bound port, when 0 asked for any). A port that
 * cannot be bound fails before `self` starts.
 */
export const withMetricsServer =
  (flags: MetricsFlags, health?: { readonly ready: Effect.Effect<boolean> }) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | CliError, R> =>
    Option.match(flags.metricsPort, {
      onNone: () => self,
      onSome: (port) =>
        port < 0 || port > 65535
          ? Effect.fail(cliError(`--metrics-port ${port} must be a TCP port from 0 to 65535`))
          : Effect.scoped(
            // Loaded only here: the HTTP server it runs is of no use to any other start.
            Effect.promise(() => import("./MetricsServer.js")).pipe(
              Effect.flatMap((server) =>
                server.serve({ port, host: flags.metricsHost, ...(health !== undefined ? { health } : {}) })
              ),
              Effect.mapError((error) =>
                cliError(
                  `cannot serve metrics on ${flags.metricsHost} port ${port}: ${
                    error.cause instanceof Error ? error.cause.message : String(error.cause)
                  }`
                )
              ),
              Effect.flatMap(({ url }) => Console.error(`metrics: ${url}`)),
              Effect.zipRight(self)
            )
          )
    })
