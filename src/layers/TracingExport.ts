/**
 * Exporting session-routing's spans through OpenTelemetry, configured by the standard
 * `OTEL_*` variables. Without them nothing is exported and the OpenTelemetry modules
 * are never loaded: they are imported on demand, so a plain run pays nothing for them.
 */
import { Config, Effect, Either, Layer } from "effect"
import { type ConfigProblem, RouterConfigError } from "../services/RouterConfig.js"

/** The standard variables read, by role. */
export const OTEL_ENV = {
  disabled: "OTEL_SDK_DISABLED",
  exporter: "OTEL_TRACES_EXPORTER",
  endpoint: "OTEL_EXPORTER_OTLP_ENDPOINT",
  tracesEndpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  serviceName: "OTEL_SERVICE_NAME"
} as const

/** Where spans go, once the variables are read. */
export interface ExportTarget {
  /** The OTLP/HTTP traces URL, when spans go to a collector. */
  readonly otlpUrl?: string
  /** Spans printed on stdout as they end (`OTEL_TRACES_EXPORTER=console`), for a look without a collector. */
  readonly console: boolean
  readonly serviceName: string
}

/** The variables as given; empty means unset. */
export interface ExportSettings {
  /** `OTEL_SDK_DISABLED` is `true` (any case); any other value leaves export on, as the specification says. */
  readonly disabled: boolean
  readonly exporter: string
  readonly endpoint: string
  readonly tracesEndpoint: string
  readonly serviceName: string
}

/** The OTLP/HTTP default when `OTEL_TRACES_EXPORTER=otlp` names no endpoint. */
export const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318"

/**
 * Where spans go under `settings`, or undefined when nowhere. An endpoint alone turns
 * OTLP export on; `OTEL_TRACES_EXPORTER` lists `otlp`, `console`, or `none`.
 */
export const exportTarget = (settings: ExportSettings): Either.Either<ExportTarget | undefined, ConfigProblem> => {
  if (settings.disabled) return Either.right(undefined)
  const listed = settings.exporter.split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "")
  const unknown = listed.find((name) => name !== "otlp" && name !== "console" && name !== "none")
  if (unknown !== undefined) {
    return Either.left({
      key: OTEL_ENV.exporter,
      value: settings.exporter,
      expected: "otlp, console or none (comma-separated)"
    })
  }
  const endpointSet = settings.endpoint !== "" || settings.tracesEndpoint !== ""
  const exporters = listed.length > 0 ? listed : endpointSet ? ["otlp"] : []
  if (exporters.length === 0 || exporters.includes("none")) return Either.right(undefined)
  const otlpUrl = settings.tracesEndpoint !== ""
    ? settings.tracesEndpoint
    : `${(settings.endpoint !== "" ? settings.endpoint : DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, "")}/v1/traces`
  return Either.right({
    ...(exporters.includes("otlp") ? { otlpUrl } : {}),
    console: exporters.includes("console"),
    serviceName: settings.serviceName
  })
}

const text = (name: string, description: string) =>
  Config.string(name).pipe(Config.withDefault(""), Config.withDescription(description))

/** The export variables from the environment (the `ConfigProvider` in context). */
export const exportSettings: Config.Config<ExportSettings> = Config.all({
  disabled: text(OTEL_ENV.disabled, "true turns every export off").pipe(
    Config.map((value) => value.trim().toLowerCase() === "true")
  ),
  exporter: text(OTEL_ENV.exporter, "where spans go: otlp, console, none"),
  endpoint: text(OTEL_ENV.endpoint, "OTLP/HTTP base URL; /v1/traces is appended"),
  tracesEndpoint: text(OTEL_ENV.tracesEndpoint, "OTLP/HTTP traces URL, used as given"),
  serviceName: Config.string(OTEL_ENV.serviceName).pipe(
    Config.withDefault("session-routing"),
    Config.withDescription("service.name of the exported spans")
  )
})

/**
 * Exports spans where the `OTEL_*` variables say, for the life of the layer (ending
 * it flushes what is buffered), or does nothing when they name no exporter. A value
 * it cannot use fails with a `RouterConfigError` naming the variable.
 */
export const layer: Layer.Layer<never, RouterConfigError> = Layer.unwrapScoped(
  Effect.gen(function*() {
    // Every field has a default and none is parsed by Config, so reading cannot fail.
    const settings = yield* Effect.orDie(exportSettings)
    const target = yield* Either.mapLeft(
      exportTarget(settings),
      (problem) => new RouterConfigError({ problems: [problem] })
    )
    if (target === undefined) return Layer.empty
    const otel = yield* loadExporter(() => import("./tracing/OtelExport.js"), askedBy(settings))
    return otel.layer(target)
  })
)

/** The OpenTelemetry packages export needs: optional peers of the package, installed by whoever exports. */
export const OTEL_PACKAGES = [
  "@effect/opentelemetry",
  "@opentelemetry/api",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/resources",
  "@opentelemetry/sdk-logs",
  "@opentelemetry/sdk-metrics",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/sdk-trace-node",
  "@opentelemetry/sdk-trace-web",
  "@opentelemetry/semantic-conventions"
] as const

/** The variable that turned export on, as a problem names it. */
export const askedBy = (settings: ExportSettings): { readonly key: string; readonly value: string } =>
  settings.exporter !== ""
    ? { key: "OTEL_TRACES_EXPORTER", value: settings.exporter }
    : settings.tracesEndpoint !== ""
    ? { key: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", value: settings.tracesEndpoint }
    : { key: "OTEL_EXPORTER_OTLP_ENDPOINT", value: settings.endpoint }

/**
 * Loads the exporter with `load`; when one of the OpenTelemetry packages is not
 * installed, fails with a RouterConfigError naming the variable that asked for export
 * and the packages to install, rather than a stack trace from the module loader.
 */
export const loadExporter = <A>(
  load: () => Promise<A>,
  asked: { readonly key: string; readonly value: string }
): Effect.Effect<A, RouterConfigError> =>
  Effect.tryPromise({
    try: load,
    catch: (error) => error
  }).pipe(
    Effect.catchAll((error) => {
      const code = (error as { code?: unknown } | null)?.code
      if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return Effect.die(error)
      const missing = OTEL_PACKAGES.filter((name) => String((error as Error).message).includes(`'${name}'`))
      return Effect.fail(
        new RouterConfigError({
          problems: [{
            ...asked,
            expected: `unset, or the optional OpenTelemetry packages installed, which export needs (${
              missing.length > 0 ? missing.join(", ") : "one of them"
            } is missing): npm install ${OTEL_PACKAGES.join(" ")}`
          }]
        })
      )
    })
  )
