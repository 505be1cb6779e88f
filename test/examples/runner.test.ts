import { describe, expect, it } from "@effect/vitest"
import { SessionCluster } from "@session-routing/local-cluster"
import { ConfigProvider, Duration, Effect } from "effect"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { main } from "../../examples/runner.js"

describe("the README's runner example", () => {
  it.live("publishes through the live client and streams the session's events to the end", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const sc = yield* SessionCluster.make({ ingress: { delay: Duration.millis(50) }, dataPlane: false })
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-example-"))),
          (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
        )
        const kubeconfig = join(dir, "kubeconfig")
        yield* sc.cluster.writeKubeconfig(kubeconfig)
        // The runner's environment: KUBECONFIG for the client, the rest for RouterConfig.
        const env = new Map([
          ["KUBECONFIG", kubeconfig],
          ["SESSION_ROUTING_BASE_DOMAIN", sc.baseDomain],
          ["SESSION_INGRESS_CLASS", sc.ingressClassName],
          ["SESSION_ROUTE_POLL_INTERVAL_MS", "20"],
          ["SESSION_ROUTE_READY_TIMEOUT_MS", "5000"]
        ])
        const events = yield* main.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(env, { pathDelim: "_" })))
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
