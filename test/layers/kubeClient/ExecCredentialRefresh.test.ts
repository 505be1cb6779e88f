/**
 * An exec plugin's credential refreshed on a 401, run for real: the plugin is a script
 * on disk that hands out whatever token is current, and the server takes only the
 * current one. A credential without an expiry is kept for the process, but not past a
 * 401: the call is sent once more with a fresh credential from the plugin (client-go
 * refreshes exec credentials on a 401 too). Once the token rotated, every call used to
 * fail with the stale one for the rest of the process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schedule } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { IngressResource } from "../../../src/domain/Resources.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { kubeConfigWithExec } from "../../support/ExecKubeConfig.js"
import { kubeConfigFor } from "../../support/KubeConfigs.js"
import { loopbackServer } from "../../support/LoopbackServer.js"

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "exec-refresh-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/**
 * A plugin that prints a credential with the token in `dir/token` (an expiry when
 * `expiry` is given) and counts its runs; `rotate` changes the token it hands out next.
 */
const rotatingPlugin = (dir: string, expiry?: string) => {
  const script = join(dir, "plugin.mjs")
  const tokenFile = join(dir, "token")
  const runsFile = join(dir, "runs")
  writeFileSync(tokenFile, "token-1")
  writeFileSync(runsFile, "")
  writeFileSync(
    script,
    [
      `import { appendFileSync, readFileSync } from "node:fs"`,
      `appendFileSync(${JSON.stringify(runsFile)}, "x")`,
      `const token = readFileSync(${JSON.stringify(tokenFile)}, "utf8")`,
      `process.stdout.write(JSON.stringify({`,
      `  apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential",`,
      `  status: { token${expiry !== undefined ? `, expirationTimestamp: ${JSON.stringify(expiry)}` : ""} }`,
      `}))`
    ].join("\n")
  )
  return {
    script,
    rotate: (token: string) => writeFileSync(tokenFile, token),
    runs: () => readFileSync(runsFile, "utf8").length
  }
}

/** A server that answers 404 (a readable answer) to `Bearer <accepted()>` and 401 to anything else, recording each token. */
const rotatingServer = (accepted: () => string) =>
  Effect.gen(function*() {
    const seen: Array<string | undefined> = []
    const { url } = yield* loopbackServer((req, res) => {
      seen.push(req.headers.authorization)
      const ok = req.headers.authorization === `Bearer ${accepted()}`
      res.writeHead(ok ? 404 : 401, { "content-type": "application/json" })
      res.end(JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        reason: ok ? "NotFound" : "Unauthorized",
        code: ok ? 404 : 401
      }))
    })
    return { url, seen }
  })

/** What a get ended with: the error's tag (NotFound: the server took the token). */
const tagOf = (result: Either.Either<unknown, { readonly _tag: string }>) =>
  Either.isLeft(result) ? result.left._tag : "ok"

describe("exec credentials on a 401", () => {
  it.scopedLive("drops a credential kept without an expiry and retries the call once with a fresh one from the plugin", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      let current = "token-1"
      const { seen, url } = yield* rotatingServer(() => current)
      const plugin = rotatingPlugin(dir)
      const client = yield* KubeClientLive.make(kubeConfigWithExec(url, plugin.script), {
        retrySchedule: Schedule.stop
      })
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("NotFound")
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("NotFound")
      expect(plugin.runs()).toBe(1)
      // The token rotates: the server refuses the old one, the plugin hands out the new.
      current = "token-2"
      plugin.rotate("token-2")
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("NotFound")
      expect(plugin.runs()).toBe(2)
      // Kept again, until the next 401.
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("NotFound")
      expect(plugin.runs()).toBe(2)
      expect(seen).toEqual([
        "Bearer token-1",
        "Bearer token-1",
        "Bearer token-1",
        "Bearer token-2",
        "Bearer token-2"
      ])
    }))

  it.scopedLive("runs the plugin once for calls refused together, and gives up after one retry when the fresh one is refused too", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      let current = "token-1"
      const { seen, url } = yield* rotatingServer(() => current)
      const plugin = rotatingPlugin(dir)
      const client = yield* KubeClientLive.make(kubeConfigWithExec(url, plugin.script), {
        retrySchedule: Schedule.stop
      })
      yield* Effect.either(client.get(IngressResource, "ns", "a"))
      current = "token-2"
      plugin.rotate("token-2")
      const together = yield* Effect.forEach(
        Array.from({ length: 8 }),
        () => Effect.either(client.get(IngressResource, "ns", "a")),
        { concurrency: "unbounded" }
      )
      expect(together.map(tagOf)).toEqual(Array(8).fill("NotFound"))
      // One run for the eight: the first 401 drops the stale credential, the others share its replacement.
      expect(plugin.runs()).toBe(2)
      // A server that takes no token the plugin gives: one retry, then the 401 stands.
      current = "nobody"
      seen.length = 0
      const refused = yield* Effect.either(client.get(IngressResource, "ns", "a"))
      expect(tagOf(refused)).toBe("Unauthorized")
      expect(seen).toEqual(["Bearer token-2", "Bearer token-2"])
      expect(plugin.runs()).toBe(3)
    }))

  it.scopedLive("drops a credential with an expiry still to come on a 401 too", () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      let current = "token-1"
      const { url } = yield* rotatingServer(() => current)
      const plugin = rotatingPlugin(dir, "2999-01-01T00:00:00Z")
      const client = yield* KubeClientLive.make(kubeConfigWithExec(url, plugin.script), {
        retrySchedule: Schedule.stop
      })
      yield* Effect.either(client.get(IngressResource, "ns", "a"))
      expect(plugin.runs()).toBe(1)
      // Revoked before it expired.
      current = "token-2"
      plugin.rotate("token-2")
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("NotFound")
      expect(plugin.runs()).toBe(2)
    }))

  it.scopedLive("sends a call refused with a static token once: no plugin, nothing fresher to send", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* rotatingServer(() => "the-right-one")
      const client = yield* KubeClientLive.make(kubeConfigFor(url, "the-wrong-one"), { retrySchedule: Schedule.stop })
      expect(tagOf(yield* Effect.either(client.get(IngressResource, "ns", "a")))).toBe("Unauthorized")
      expect(seen).toEqual(["Bearer the-wrong-one"])
    }))
})
