/**
 * A kubeconfig for a plain-HTTP server, as `kubectl proxy` users have it
 * (`server: http://127.0.0.1:8001`, no TLS settings), works as it is, as it does for
 * kubectl: calls and watches go over node:http. Credentials it would send unencrypted
 * across a network get one warning line, and the line carries none of them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { LocalCluster } from "@session-routing/local-cluster"
import { Effect, Layer, List, Logger, LogLevel, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { IngressResource, NamespaceResource } from "../../../src/domain/Resources.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { cliCluster } from "../../cli/CliCluster.js"
import { startCli } from "../../cli/CliProcess.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "plain-http-"))
let files = 0

/**
 * What `kubectl proxy` users write: the server, a context, and no TLS setting at all;
 * without `user`, no user either (the proxy authenticates on its own).
 */
const proxyKubeconfig = (server: string, user?: string) => {
  const file = path.join(tmp, `config-${files++}`)
  fs.writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: ${server}
${user === undefined ? "" : `users:\n- name: me\n  user: ${user}\n`}contexts:
- name: proxy
  context:
    cluster: proxy
${user === undefined ? "" : "    user: me\n"}current-context: proxy
`
  )
  return file
}

/** The warnings `self` logged, by message. */
const warningsOf = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => {
        if (logLevel === LogLevel.Warning) warnings.push(List.isList(message) ? "" : [message].flat().join(" "))
      })
    )
    const result = yield* Effect.provide(self, capture)
    return { result, warnings }
  })

const SECRET_TOKEN = "s3cr3t-token-of-the-proxy-user"

describe("a kubeconfig for a plain-HTTP server", () => {
  it.scopedLive("is loaded as it is, and its calls and watches reach the server over plain HTTP", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: ["demo"] })
      const file = proxyKubeconfig(cluster.url)
      const kube = yield* KubeClient.pipe(
        Effect.provide(Layer.fresh(KubeClientLive.layer({ kubeconfigPath: file })))
      )
      const listed = yield* kube.list(NamespaceResource, "")
      expect(listed.items.map((ns) => ns.metadata?.name)).toContain("demo")
      // A watch applies the credentials through client-node as well.
      const first = yield* Stream.runHead(kube.watch(NamespaceResource, ""))
      expect(Option.map(first, (event) => event.type)).toEqual(Option.some("ADDED"))
    }))

  it.effect("leaves the caller's KubeConfig as it was", () =>
    Effect.gen(function*() {
      const kc = new k8s.KubeConfig()
      kc.loadFromFile(proxyKubeconfig("http://127.0.0.1:8001"))
      yield* KubeClientLive.make(kc)
      expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(false)
    }))

  it.effect("warns once, naming no credential, when a token would cross a network unencrypted", () =>
    Effect.gen(function*() {
      const kc = new k8s.KubeConfig()
      // 192.0.2.0/24 is reserved for documentation: nothing is sent, the client is only built.
      kc.loadFromFile(proxyKubeconfig("http://192.0.2.10:8001", `{token: ${SECRET_TOKEN}}`))
      const { warnings } = yield* warningsOf(KubeClientLive.make(kc))
      expect(warnings).toEqual([
        `cluster "proxy" is served over plain HTTP (http://192.0.2.10:8001), so every request carries a bearer ` +
        `token unencrypted across the network; use the server's https address, or kubectl proxy on this machine`
      ])
    }))

  it.effect("does not warn for this machine's own address, nor for a user with nothing to send", () =>
    Effect.gen(function*() {
      const loopback = new k8s.KubeConfig()
      loopback.loadFromFile(proxyKubeconfig("http://127.0.0.1:8001", `{token: ${SECRET_TOKEN}}`))
      const anonymous = new k8s.KubeConfig()
      anonymous.loadFromFile(proxyKubeconfig("http://192.0.2.10:8001", "{}"))
      expect((yield* warningsOf(KubeClientLive.make(loopback))).warnings).toEqual([])
      expect((yield* warningsOf(KubeClientLive.make(anonymous))).warnings).toEqual([])
    }))

  it.scopedLive("serves the CLI's publish through it, as kubectl would", () =>
    Effect.gen(function*() {
      const cluster = yield* cliCluster({ ingress: false, gateway: false })
      const cli = yield* startCli(
        [
          "publish",
          "--session",
          "plainhttp1",
          "--pod",
          "telo-run-plainhttp1",
          "--pod-uid",
          "0b8c7a1e-2f3d-4e5a-9b6c-7d8e9f0a1b2c",
          "--port",
          "8080"
        ],
        { ...cluster.env, SESSION_ROUTING_EVENTS: "false", KUBECONFIG: proxyKubeconfig(cluster.cluster.url) }
      )
      const ended = yield* cli.ended(ENDED_WITHIN)
      expect({ ...ended, stderr: cli.stderr() }).toEqual({ code: 0, signal: null, stderr: "" })
      // What it published is on the server.
      const kc = new k8s.KubeConfig()
      kc.loadFromString(cluster.cluster.kubeconfig())
      const kube = yield* KubeClientLive.make(kc)
      const ingress = yield* kube.get(IngressResource, cluster.namespace, "telo-run-plainhttp1")
      expect(ingress.metadata?.name).toBe("telo-run-plainhttp1")
    }))
})

const ENDED_WITHIN = "20 seconds"
