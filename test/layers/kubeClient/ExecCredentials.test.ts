/**
 * Exec credential plugins through the live client, run for real: a credential with no
 * expiry is kept for the process (one run however many requests), and a plugin that
 * fails never has its output (tokens on stderr, half a credential on stdout) repeated
 * in an error, its cause or its string form.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schedule } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { IngressResource } from "../../../src/domain/Resources.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { kubeConfigWithExec } from "../../support/ExecKubeConfig.js"
import { loopbackServer } from "../../support/LoopbackServer.js"

const SECRET = "SUPERSECRET-REFRESH-TOKEN-123"

/** A plugin script that counts its runs in `runs` and then does `body`. */
const plugin = (dir: string, name: string, body: string) => {
  const script = join(dir, `${name}.mjs`)
  writeFileSync(
    script,
    `import { appendFileSync } from "node:fs"\nappendFileSync(${
      JSON.stringify(join(dir, `${name}.runs`))
    }, "x")\n${body}\n`
  )
  return { script, runs: () => readFileSync(join(dir, `${name}.runs`), "utf8").length }
}

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "exec-credentials-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const credential = (expiry?: string) =>
  JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: "plugin-token", ...(expiry !== undefined ? { expirationTimestamp: expiry } : {}) }
  })

describe("exec credential plugins", () => {
  it.scopedLive("runs a plugin whose credential has no expiry once for the process, however many requests", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const tokens: Array<string | undefined> = []
      const { url } = yield* loopbackServer((req, res) => {
        tokens.push(req.headers.authorization)
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 }))
      })
      const { runs, script } = plugin(dir, "steady", `process.stdout.write(${JSON.stringify(credential())})`)
      const client = yield* KubeClientLive.make(kubeConfigWithExec(url, script))
      // Ten at once, then ten one after another.
      yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.either(client.get(IngressResource, "ns", "a")), {
        concurrency: "unbounded"
      })
      for (let i = 0; i < 10; i++) yield* Effect.either(client.get(IngressResource, "ns", "a"))
      expect(tokens.length).toBe(20)
      expect(tokens.every((t) => t === "Bearer plugin-token")).toBe(true)
      expect(runs()).toBe(1)
    }))

  it.scopedLive("runs it again once the credential it gave has expired", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const { url } = yield* loopbackServer((_, res) => res.writeHead(404).end())
      const past = new Date(Date.UTC(2000, 0, 1)).toISOString()
      const { runs, script } = plugin(dir, "expired", `process.stdout.write(${JSON.stringify(credential(past))})`)
      const client = yield* KubeClientLive.make(kubeConfigWithExec(url, script))
      for (let i = 0; i < 3; i++) yield* Effect.either(client.get(IngressResource, "ns", "a"))
      expect(runs()).toBe(3)
    }))

  it.scopedLive("never repeats what a failing plugin printed, and tries it again on the next request", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const { url } = yield* loopbackServer((_, res) => res.writeHead(200).end("{}"))
      const failing = plugin(dir, "failing", `process.stderr.write("refresh failed: ${SECRET}\\n"); process.exit(1)`)
      const garbled = plugin(dir, "garbled", `process.stdout.write("token=${SECRET} not json")`)
      for (const { runs, script } of [failing, garbled]) {
        const client = yield* KubeClientLive.make(kubeConfigWithExec(url, script), { retrySchedule: Schedule.stop })
        const first = yield* Effect.either(client.get(IngressResource, "ns", "a"))
        yield* Effect.either(client.get(IngressResource, "ns", "a"))
        expect(Either.isLeft(first)).toBe(true)
        if (Either.isLeft(first)) {
          const error = first.left
          expect(error.reason).toContain("check the kubeconfig user's credentials")
          for (
            const said of [error.reason, String(error), JSON.stringify(error), String((error.cause as Error)?.stack)]
          ) {
            expect(said).not.toContain(SECRET)
          }
        }
        expect(runs()).toBe(2)
      }
    }))
})
