import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { main } from "../../examples/runner.js"
import { runnerEnvironment } from "../support/RunnerEnvironment.js"

describe("the README's runner example", () => {
  it.live("publishes through the live client and streams the session's events to the end", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const { config, sc } = yield* runnerEnvironment({
          SESSION_ROUTE_POLL_INTERVAL_MS: "20",
          SESSION_ROUTE_READY_TIMEOUT_MS: "5000"
        })
        const events = yield* main.pipe(Effect.withConfigProvider(config))
        const host = `8080-hzyayvabgyvz.${sc.baseDomain}`
        expect(events).toEqual([
          {
            type: "published",
            layer: "ingress",
            routes: [{ host, port: 8080 }],
            endpoints: [
              { host, port: 8080, protocol: "tcp", url: `https://${host}` },
              { host: "", port: 5000, protocol: "udp" }
            ]
          },
          { type: "route", port: 8080, host, state: "pending" },
          { type: "route", port: 8080, host, state: "programmed" }
        ])
      })
    ))
})

describe("the README's copy of the example", () => {
  it("shows lines of examples/runner.ts only, in their order", async () => {
    // The README quotes the example without its comments; a line it shows that the
    // file no longer has means the two drifted apart.
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8")
    const source = (await readFile(new URL("../../examples/runner.ts", import.meta.url), "utf8")).split("\n")
    const section = readme.split("## In an Effect runner")[1] ?? ""
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? ""
    const shown = snippet.split("\n").filter((line) => line.trim() !== "")
    expect(shown.length).toBeGreaterThan(10)
    let at = 0
    for (const line of shown) {
      const found = source.indexOf(line, at)
      expect(found, `README line not in examples/runner.ts (in order): ${line}`).toBeGreaterThanOrEqual(0)
      at = found + 1
    }
  })
})
