/**
 * Which `OTEL_*` settings export spans, and where: an endpoint alone turns OTLP on,
 * `OTEL_TRACES_EXPORTER` picks, `none` and `OTEL_SDK_DISABLED` win, and a value that
 * cannot be used is refused by name.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { type ExportSettings, exportSettings, exportTarget, layer } from "../../src/layers/TracingExport.js"

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
