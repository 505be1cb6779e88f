/**
 * Span export as a real process sees it: a plain `publish --watch` never loads
 * OpenTelemetry (the module log of the process says so), and with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set the same command loads it and, before it exits,
 * sends its spans to that endpoint (a receiver of the test's own on 127.0.0.1).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, type Scope } from "effect"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { loopbackServer } from "../support/LoopbackServer.js"
import { type CliCluster, cliCluster, tempDir } from "./CliCluster.js"
import { startCli } from "./CliProcess.js"

const REGISTER = fileURLToPath(new URL("../support/moduleLog/register.mjs", import.meta.url))

/** An OTLP/HTTP receiver on 127.0.0.1 that keeps every JSON body posted to /v1/traces. */
const otlpReceiver: Effect.Effect<{ readonly url: string; readonly bodies: Array<unknown> }, never, Scope.Scope> =
  Effect.suspend(() => {
    const bodies: Array<unknown> = []
    return Effect.map(
      loopbackServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          if (request.url === "/v1/traces") bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      }),
      ({ url }) => ({ url, bodies })
    )
  })

/** Runs `publish --watch` for `session` as a process with `env` added, and returns the modules it resolved. */
const publishProcess = (cluster: CliCluster, session: string, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const log = join(yield* tempDir, "modules.log")
    const cli = yield* startCli(
      [
        "publish",
        "--session",
        session,
        "--pod",
        `telo-run-${session}`,
        "--pod-uid",
        "u-1",
        "--port",
        "8080",
        "--kubeconfig",
        cluster.kubeconfig,
        "--watch",
        "-o",
        "json"
      ],
      { ...cluster.env, ...env, NODE_OPTIONS: `--import=${REGISTER}`, MODULE_LOG: log }
    )
    const ended = yield* cli.ended(Duration.seconds(60))
    expect({ ...ended, stderr: cli.stderr() }).toEqual({ code: 0, signal: null, stderr: "" })
    return (yield* Effect.promise(() => readFile(log, "utf8"))).split("\n")
  })

const otel = (url: string) => /\/node_modules\/@(effect\/)?opentelemetry/.test(url)

interface OtlpSpan {
  readonly name: string
  readonly spanId: string
  readonly parentSpanId?: string
}

interface OtlpBody {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: {
      readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string } }>
    }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

describe("span export in a process", () => {
  it.live(
    "loads no OpenTelemetry module without OTEL variables, and exports the spans over OTLP with them",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(20) }, gateway: false })

          const plain = yield* publishProcess(cluster, "pl4in", {})
          // The log is real: it holds the modules the run did load.
          expect(plain.some((url) => url.includes("/node_modules/@kubernetes/client-node/"))).toBe(true)
          expect(plain.filter(otel)).toEqual([])

          const receiver = yield* otlpReceiver
          const exported = yield* publishProcess(cluster, "exp0rt", {
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
            OTEL_SERVICE_NAME: "session-routing-test"
          })
          expect(exported.some((url) => url.includes("/node_modules/@effect/opentelemetry/"))).toBe(true)

          const bodies = receiver.bodies as ReadonlyArray<OtlpBody>
          const services = bodies.flatMap((body) =>
            body.resourceSpans.flatMap((resource) =>
              resource.resource.attributes.filter((a) => a.key === "service.name").map((a) => a.value.stringValue)
            )
          )
          expect(new Set(services)).toEqual(new Set(["session-routing-test"]))
          const spans = bodies.flatMap((body) =>
            body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
          )
          const [publish, ...others] = spans.filter((span) => span.name === "session-routing.publish")
          expect(others).toEqual([])
          const children = spans.filter((span) => span.parentSpanId === publish!.spanId).map((span) => span.name)
          expect(children.filter((name) => name === "kube.apply")).toHaveLength(4)
          expect(children.filter((name) => name === "session-routing.host")).toHaveLength(1)
        })
      ),
    120_000
  ) // two processes, each loading the whole CLI: slow on a busy machine
})
