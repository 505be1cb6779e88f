import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { main } from "../../examples/runner.js"
import { startClusterProcess } from "../cli/ClusterProcess.js"
import { runnerEnvironment } from "../support/RunnerEnvironment.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The README's section on the runner example, up to the next heading. */
const runnerSection = (readme: string): string => (readme.split("## In an Effect runner")[1] ?? "").split("\n## ")[0]!

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

describe("the README's command for the example", () => {
  it.live(
    "runs it in the clone against session-routing cluster, with the variables the cluster prints",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const readme = yield* Effect.promise(() => readFile(new URL("../../README.md", import.meta.url), "utf8"))
          // The shell block after the example: the command a newcomer copies.
          const after = runnerSection(readme).split("```ts")[1]?.split("```").slice(1).join("```") ?? ""
          const command = /```sh\n([\s\S]*?)```/.exec(after)?.[1] ?? ""
          expect(command).toContain("npx tsx")
          const proc = yield* startClusterProcess(["--controller-delay", "50"])
          const variable = (name: string) => new RegExp(`\\b${name}=(\\S+)`).exec(command)?.[1]
          // What it sets is what the cluster prints (the kubeconfig's path aside, which is the reader's).
          expect({
            "base-domain": variable("SESSION_ROUTING_BASE_DOMAIN"),
            "ingress-class": variable("SESSION_INGRESS_CLASS")
          }).toEqual({ "base-domain": proc.info["base-domain"], "ingress-class": proc.info["ingress-class"] })
          const kubeconfig = variable("KUBECONFIG") ?? ""
          expect(kubeconfig).not.toBe("")
          const ran = yield* Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
            const child = execFile("sh", ["-c", command.replaceAll(kubeconfig, proc.info.kubeconfig)], {
              cwd: ROOT,
              env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
              timeout: 60_000
            }, (error, stdout, stderr) =>
              resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
            return Effect.sync(() =>
              child.kill()
            )
          })
          expect(ran.code, ran.stderr).toBe(0)
          const host = `8080-hzyayvabgyvz.${proc.info["base-domain"]}`
          expect(ran.stdout).toContain(JSON.stringify({ type: "route", port: 8080, host, state: "programmed" }))
          proc.child.kill("SIGTERM")
          yield* proc.ended()
        })
      ),
    90_000
  )
})
