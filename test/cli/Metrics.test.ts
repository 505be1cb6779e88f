/**
 * `publish --follow --metrics-port 0` end to end: the command says on stderr where it
 * serves its metrics, and a scrape over HTTP after one session shows the hosts by
 * state, the API requests (a retried one included), the publish, the time to
 * programmed and what the shared status watch holds, in the Prometheus text format.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Duration, Effect, Fiber, Schedule } from "effect"
import { loopbackServer } from "../support/LoopbackServer.js"
import { cliCluster } from "./CliCluster.js"
import { publishArgs, runCli, streamingCli } from "./TestCli.js"

const sessionId = "m3trics"

/** GETs `url` and returns the status, content type and body. */
const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

/** The samples of a scrape, by series (`name{labels}`), leaving the comments out. */
const samples = (body: string): ReadonlyMap<string, number> =>
  new Map(
    body.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
      const at = line.lastIndexOf(" ")
      return [line.slice(0, at), Number(line.slice(at + 1))] as const
    })
  )

describe("session-routing publish --metrics-port", () => {
  it.live("serves the session's metrics on 127.0.0.1 while following, in the Prometheus text format", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
        // The first write of the Ingress (its dry run) gets a 503 and is sent again.
        yield* cluster.cluster.faults.add({
          resource: "ingresses",
          verbs: ["patch"],
          action: Fault.respond(503),
          times: 1
        })
        const cli = yield* streamingCli(
          publishArgs(
            sessionId,
            [8080, 9090],
            "--kubeconfig",
            cluster.kubeconfig,
            "--follow",
            "-o",
            "json",
            "--metrics-port",
            "0"
          ),
          cluster.env
        )
        const announced = yield* cli.stderrLine((line) => line.startsWith("metrics: "))
        const url = announced.slice("metrics: ".length)
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
        // published, two pending, two programmed: then the command follows.
        yield* cli.next(5)

        const scrape = yield* get(url)
        expect(scrape.status).toBe(200)
        expect(scrape.type).toBe("text/plain; version=0.0.4; charset=utf-8")
        const types = scrape.body.split("\n").filter((line) => line.startsWith("# TYPE"))
        expect(types).toEqual([
          "# TYPE session_routing_api_requests_total counter",
          "# TYPE session_routing_events_total counter",
          "# TYPE session_routing_hosts gauge",
          "# TYPE session_routing_publish_duration_seconds histogram",
          "# TYPE session_routing_publish_to_programmed_seconds histogram",
          "# TYPE session_routing_status_cache_entries gauge",
          "# TYPE session_routing_status_waiters gauge"
        ])
        const values = samples(scrape.body)
        const series = (name: string, labels: string) => values.get(`${name}{${labels}}`)
        // Followed now, both hosts programmed; none left pending.
        expect(series("session_routing_hosts", "mode=\"ingress\",state=\"programmed\"")).toBe(2)
        expect(series("session_routing_hosts", "mode=\"ingress\",state=\"pending\"")).toBe(0)
        const requests = (code: string, resource: string, verb: string) =>
          series("session_routing_api_requests_total", `code="${code}",resource="${resource}",verb="${verb}"`)
        expect(requests("503", "ingresses.networking.k8s.io", "apply")).toBe(1)
        // Dry run, then the write: each created, each a request the server answered.
        expect(requests("201", "ingresses.networking.k8s.io", "apply")).toBe(2)
        expect(requests("201", "services", "apply")).toBe(2)
        expect(series("session_routing_publish_duration_seconds_count", "mode=\"ingress\",result=\"ok\"")).toBe(1)
        expect(series("session_routing_publish_to_programmed_seconds_count", "mode=\"ingress\"")).toBe(2)
        expect(series("session_routing_publish_to_programmed_seconds_bucket", "mode=\"ingress\",le=\"+Inf\"")).toBe(2)

        // The shared watch holds the session's one Ingress; once the follow is under way,
        // each of its two hosts waits on it for the next change.
        const ingresses = "resource=\"ingresses.networking.k8s.io\""
        const following = yield* get(url).pipe(
          Effect.map((later) => samples(later.body)),
          Effect.filterOrFail(
            (later) => later.get(`session_routing_status_waiters{${ingresses}}`) === 2,
            () => "the follow's two hosts never waited on the shared watch"
          ),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))
        )
        expect(following.get(`session_routing_status_cache_entries{${ingresses}}`)).toBe(1)

        expect((yield* get(url.replace(/\/metrics$/, "/other"))).status).toBe(404)
        yield* Fiber.interrupt(cli.fiber)
      })
    ))

  // Both fail before anything is published: the flags reach no cluster.
  const publishWith = (metricsPort: string) =>
    runCli(
      publishArgs(sessionId, [8080], "--metrics-port", metricsPort),
      { SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me" }
    )

  it.live("refuses a metrics port outside 0-65535 with one line and status 1", () =>
    Effect.map(publishWith("70000"), (result) =>
      expect(result).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: --metrics-port 70000 must be a TCP port from 0 to 65535\n"
      })))

  it.live("fails with one line naming the address when the metrics port is taken", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { port } = yield* loopbackServer()
        const result = yield* publishWith(String(port))
        expect(result.exitCode).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr).toBe(
          `error: cannot serve metrics on 127.0.0.1 port ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`
        )
      })
    ))
})
