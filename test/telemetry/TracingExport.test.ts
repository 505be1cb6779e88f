/**
 * Which `OTEL_*` settings export spans, and where: an endpoint alone turns OTLP on,
 * `OTEL_TRACES_EXPORTER` picks, `none` and `OTEL_SDK_DISABLED` win, and a value that
 * cannot be used is refused by name.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Either, Exit, Layer } from "effect"
import {
  askedBy,
  type ExportSettings,
  exportSettings,
  exportTarget,
  layer,
  loadExporter,
  OTEL_PACKAGES
} from "../../src/layers/TracingExport.js"

const unset: ExportSettings = {
  disabled: false,
  exporter: "",
  endpoint: "",
  tracesEndpoint: "",
  serviceName: "session-routing"
}

describe("exportTarget", () => {
  it("exports nothing when no variable names an exporter or an endpoint", () => {
    expect(exportTarget(unset)).toEqual(Either.right(undefined))
  })

  it("sends spans to the endpoint's /v1/traces when only the endpoint is set", () => {
    expect(exportTarget({ ...unset, endpoint: "http://collector:4318/" })).toEqual(
      Either.right({ otlpUrl: "http://collector:4318/v1/traces", console: false, serviceName: "session-routing" })
    )
  })

  it("uses the traces endpoint as given, and the OTLP default when otlp is asked for without one", () => {
    expect(exportTarget({ ...unset, endpoint: "http://a:4318", tracesEndpoint: "http://b/traces" })).toEqual(
      Either.right({ otlpUrl: "http://b/traces", console: false, serviceName: "session-routing" })
    )
    expect(exportTarget({ ...unset, exporter: "otlp,console" })).toEqual(
      Either.right({ otlpUrl: "http://localhost:4318/v1/traces", console: true, serviceName: "session-routing" })
    )
  })

  it("prints spans without OTLP when the exporter is console, even with an endpoint set", () => {
    expect(exportTarget({ ...unset, exporter: "Console", endpoint: "http://a:4318" })).toEqual(
      Either.right({ console: true, serviceName: "session-routing" })
    )
  })

  it("exports nothing when the exporter is none or the SDK is disabled", () => {
    expect(exportTarget({ ...unset, exporter: "none", endpoint: "http://a:4318" })).toEqual(Either.right(undefined))
    expect(exportTarget({ ...unset, disabled: true, endpoint: "http://a:4318" })).toEqual(Either.right(undefined))
  })

  it("refuses an exporter it does not ship, naming the variable", () => {
    expect(exportTarget({ ...unset, exporter: "zipkin" })).toEqual(
      Either.left({ key: "OTEL_TRACES_EXPORTER", value: "zipkin", expected: "otlp, console or none (comma-separated)" })
    )
  })
})

describe("exportSettings", () => {
  it.effect("reads the standard variables, OTEL_SDK_DISABLED true in any case and anything else as false", () =>
    Effect.gen(function*() {
      const read = (entries: ReadonlyArray<readonly [string, string]>) =>
        exportSettings.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries), { pathDelim: "_" })))
      expect(yield* read([["OTEL_SDK_DISABLED", "True"], ["OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"]])).toEqual({
        ...unset,
        disabled: true,
        endpoint: "http://a:4318"
      })
      expect(yield* read([["OTEL_SDK_DISABLED", "yes"], ["OTEL_SERVICE_NAME", "runner-7"]])).toEqual({
        ...unset,
        serviceName: "runner-7"
      })
    }))
})

describe("TracingExport.layer", () => {
  it.effect("fails at start-up with one configuration line for an exporter it does not ship", () =>
    Effect.gen(function*() {
      const error = yield* Layer.build(layer).pipe(
        Effect.scoped,
        Effect.flip,
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["OTEL_TRACES_EXPORTER", "zipkin"]]), { pathDelim: "_" })
        )
      )
      expect(error.message).toBe(
        "invalid configuration: OTEL_TRACES_EXPORTER=\"zipkin\" must be otlp, console or none (comma-separated)"
      )
    }))
})

describe("loadExporter", () => {
  const notFound = (name: string) =>
    Object.assign(
      new Error(`Cannot find package '${name}' imported from /app/build/esm/layers/tracing/OtelExport.js`),
      {
        code: "ERR_MODULE_NOT_FOUND"
      }
    )

  it.effect("names the variable that asked for export and the packages to install when one is missing", () =>
    Effect.gen(function*() {
      const asked = askedBy({ ...unset, endpoint: "http://127.0.0.1:4318" })
      const error = yield* Effect.flip(loadExporter(() => Promise.reject(notFound("@effect/opentelemetry")), asked))
      expect(error.message).toBe(
        `invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318" must be unset, or the optional OpenTelemetry packages installed, which export needs (@effect/opentelemetry is missing): npm install ${
          OTEL_PACKAGES.join(" ")
        }`
      )
    }))

  it.effect("lets any other failure to load through as a defect", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        loadExporter(() => Promise.reject(new SyntaxError("broken")), askedBy({ ...unset, exporter: "console" }))
      )
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))

  it("says which variable turned export on: the exporter list, then the traces endpoint, then the endpoint", () => {
    expect(askedBy({ ...unset, exporter: "otlp", endpoint: "http://a" })).toEqual({
      key: "OTEL_TRACES_EXPORTER",
      value: "otlp"
    })
    expect(askedBy({ ...unset, tracesEndpoint: "http://t", endpoint: "http://a" })).toEqual({
      key: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      value: "http://t"
    })
    expect(askedBy({ ...unset, endpoint: "http://a" })).toEqual({
      key: "OTEL_EXPORTER_OTLP_ENDPOINT",
      value: "http://a"
    })
  })
})
