/**
 * Basic-auth credentials a server echoes never reach a reason: the `user:password` a
 * kubeconfig user sends (node:http writes that Authorization header itself, so it was
 * not among the headers the client knew it sent), a URL's userinfo, and a Basic
 * header's value, whoever's they are. In controller mode a reason becomes a Pod
 * condition's message, readable by anyone who can read the Pod.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect, Schedule, Stream } from "effect"
import { IngressResource } from "../../../src/domain/Resources.js"
import { fromResponse } from "../../../src/layers/kubeClient/KubeErrorParsing.js"
import { credentialsOf, redacted } from "../../../src/layers/kubeClient/Redaction.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { loopbackServer } from "../../support/LoopbackServer.js"

const USER = "deploy-bot"
const PASSWORD = "Pa55-w0rd-echoed-7d1c"
const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString("base64")

/** A kubeconfig whose user authenticates with a user name and password. */
const basicAuthKubeConfig = (server: string): k8s.KubeConfig => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u", username: USER, password: PASSWORD }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc
}

const ctx = { verb: "get", resource: "ingresses.networking.k8s.io", namespace: "demo", name: "a" }

describe("basic-auth credentials echoed by a server", () => {
  it.scopedLive("takes a kubeconfig user's password out of a refusal that quotes the request's headers", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const { url } = yield* loopbackServer((request, res) => {
        seen.push(request.headers.authorization)
        // A proxy's debugging page: the headers it got, and who it thinks asked.
        res.writeHead(502, { "content-type": "text/plain" })
        res.end(
          `bad gateway: ${JSON.stringify(request.headers)} via https://${USER}:${PASSWORD}@upstream.internal:8443/${
            // Bare, for the one-shot calls (whose transport knows the password it sent).
            request.url?.includes("watch=") === true ? "" : ` from ${USER}:${PASSWORD}`}`
        )
      })
      const client = yield* KubeClientLive.make(basicAuthKubeConfig(url), { retrySchedule: Schedule.stop })
      const read = yield* Effect.flip(client.get(IngressResource, "demo", "a"))
      const watched = yield* Effect.flip(
        client.watchFrom(IngressResource, "demo", { resourceVersion: "1" }).pipe(Stream.runDrain)
      )
      // The request did carry them: what is taken out is what was sent.
      expect(seen[0]).toBe(`Basic ${basic(USER, PASSWORD)}`)
      for (const failure of [read, watched]) {
        expect(failure.reason).toContain("bad gateway")
        expect(failure.reason).toContain("[redacted]")
        for (const secret of [PASSWORD, basic(USER, PASSWORD), `${USER}:${PASSWORD}`]) {
          expect(failure.reason).not.toContain(secret)
        }
      }
    }))

  it("takes out a URL's user and password and a Basic header's value the request did not carry", () => {
    const other = basic("someone", "an0ther-secret")
    const text = [
      "upstream https://admin:hunter2@10.0.0.7:6443/api refused;",
      `header Authorization: Basic ${other};`,
      `json {"authorization":"Basic ${other}"}`,
      "and http://user:@example.test/ with an empty password"
    ].join(" ")
    expect(redacted(text, [])).toBe(
      [
        "upstream https://[redacted]@10.0.0.7:6443/api refused;",
        "header Authorization: Basic [redacted];",
        `json {"authorization":"Basic [redacted]"}`,
        "and http://[redacted]@example.test/ with an empty password"
      ].join(" ")
    )
  })

  it("leaves words that only look like a scheme alone: a realm, a failure, an address with a port", () => {
    const text =
      `Basic authentication failed for realm "kubernetes": WWW-Authenticate: Basic realm="x"; see https://host.example:8443/path?q=a:b@c`
    expect(redacted(text, [])).toBe(text)
  })

  it("lists what node:http sends for a user and password among the request's credentials", () => {
    expect(credentialsOf(undefined, undefined, `${USER}:${PASSWORD}`)).toEqual([
      basic(USER, PASSWORD),
      `${USER}:${PASSWORD}`,
      PASSWORD
    ])
  })

  it("takes credentials out of a Status message however it arrived (a watch's ERROR event, the in-memory client)", () => {
    const status = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code: 503,
      message: `etcd at https://root:etcd-pa55word@10.0.0.2:2379 said no to Basic ${basic("root", "etcd-pa55word")}`
    } as const
    const error = fromResponse(ctx, 503, status)
    expect(error.reason).toBe(
      `the API server could not answer get ingresses.networking.k8s.io "a" in namespace "demo" (503: etcd at https://[redacted]@10.0.0.2:2379 said no to Basic [redacted])`
    )
    expect(JSON.stringify(error.status)).not.toContain("etcd-pa55word")
  })
})
