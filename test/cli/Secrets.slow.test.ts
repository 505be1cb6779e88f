/**
 * No secret reaches what a runner's operator or a cluster's users can read. The CLI
 * runs as a process with kubeconfigs full of secrets (a client key, a bearer token, a
 * password in the server URL, credential plugins that print secrets on stderr, fail,
 * or answer garbage) against a secured cluster that fails as the fault matrix fails,
 * with its spans exported to a collector of the test's own. Then stdout, stderr, every
 * exported span and every Event the cluster holds are searched for every secret.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, Fault, type FaultAction } from "@session-routing/local-cluster"
import { Duration, Effect } from "effect"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { parse, stringify } from "yaml"
import { EventResource, EventV1Resource } from "../../src/domain/Resources.js"
import { loopbackServer } from "../support/LoopbackServer.js"
import { type CliCluster, cliCluster, tempDir } from "./CliCluster.js"
import { startCli } from "./CliProcess.js"
import { args } from "./FaultMatrix.js"

/** What the cluster must never see echoed: each must be absent from everything captured. */
const PASSWORD = "URL-PASSWORD-7c1f"
const PLUGIN_STDERR = "PLUGIN-STDERR-REFRESH-TOKEN-3b9e"
const PLUGIN_FAILURE = "PLUGIN-FAILED-REFRESH-TOKEN-5d2a"
const PLUGIN_GARBAGE = "PLUGIN-GARBAGE-TOKEN-9e4c"

/** Time limits small enough that every persistent fault ends a command in a few seconds. */
const LIMITS = {
  SESSION_API_TIMEOUT_MS: "800",
  SESSION_ROUTE_READY_TIMEOUT_MS: "1500",
  SESSION_ROUTE_POLL_INTERVAL_MS: "100"
}

/** An OTLP/HTTP receiver on 127.0.0.1 that keeps every body posted to it, as text. */
const collector = Effect.suspend(() => {
  const bodies: Array<string> = []
  return Effect.map(
    loopbackServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        bodies.push(Buffer.concat(chunks).toString("utf8"))
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    }),
    ({ url }) => ({ url, bodies })
  )
})

interface Kubeconfig {
  readonly clusters: Array<{ cluster: { server: string } }>
  readonly users: Array<{ user: Record<string, unknown> }>
}

/** A credential plugin's `node -e` script: `before` runs first, then the credential is printed. */
const plugin = (before: string, token: string) =>
  `${before}; process.stdout.write(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", ` +
  `kind: "ExecCredential", status: { token: ${JSON.stringify(token)} } }))`

/**
 * The kubeconfigs and the secrets they hold: the admin's client key and a token on one
 * user (the server URL carrying a password too), and three credential plugins.
 */
const secretKubeconfigs = (cluster: CliCluster) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const access = cluster.cluster.access!
    const admin = parse(
      yield* access.kubeconfigFor(
        cluster.cluster.url,
        Credential.clientCertificate(
          "kubernetes-admin",
          ["system:masters"]
        )
      )
    ) as Kubeconfig
    const tokenUser = parse(
      yield* access.kubeconfigFor(cluster.cluster.url, Credential.token("kubernetes-admin", ["system:masters"]))
    ) as Kubeconfig
    const token = tokenUser.users[0]!.user["token"] as string
    const keyData = admin.users[0]!.user["client-key-data"] as string
    const keyLine = Buffer.from(keyData, "base64").toString("utf8").split("\n")[2]!
    const url = new URL(cluster.cluster.url)
    url.username = "admin"
    url.password = PASSWORD
    const write = (name: string, user: Record<string, unknown>) =>
      Effect.promise(async () => {
        const path = join(dir, name)
        const config = structuredClone(admin)
        config.clusters[0]!.cluster.server = url.href.replace(/\/$/, "")
        config.users[0]!.user = user
        await writeFile(path, stringify(config), { mode: 0o600 })
        return path
      })
    const exec = (script: string) => ({
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: ["-e", script],
        interactiveMode: "Never"
      }
    })
    return {
      secrets: [PASSWORD, token, keyData, keyLine, PLUGIN_STDERR, PLUGIN_FAILURE, PLUGIN_GARBAGE],
      keyAndToken: yield* write("key-and-token", { ...admin.users[0]!.user, token }),
      pluginThatTalks: yield* write(
        "plugin-stderr",
        exec(plugin(`console.error(${JSON.stringify(`refreshing with ${PLUGIN_STDERR}`)})`, token))
      ),
      pluginThatFails: yield* write(
        "plugin-fails",
        exec(`console.error(${JSON.stringify(`refresh token ${PLUGIN_FAILURE} expired`)}); process.exit(1)`)
      ),
      pluginGarbage: yield* write(
        "plugin-garbage",
        exec(`process.stdout.write(${JSON.stringify(`{"status": {"token": "${PLUGIN_GARBAGE}"`)})`)
      )
    }
  })

/** The faults each command meets, on every request: the matrix's, the ones that carry text first. */
const FAULTS: ReadonlyArray<readonly [string, FaultAction | undefined]> = [
  ["no fault", undefined],
  ["401", Fault.respond(401)],
  ["403", Fault.forbid("kubernetes-admin")],
  ["503 with a message", Fault.respond(503, { message: "etcd leader unavailable" })],
  ["reset", Fault.reset],
  ["hang", Fault.hang]
]

describe("secrets in a kubeconfig", () => {
  it.live(
    "appear in no output, span or Event, whatever the cluster answers and whatever the credential plugin prints",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* cliCluster({ auth: {}, ingress: { delay: Duration.millis(20) }, gateway: false })
          const otlp = yield* collector
          const kubeconfigs = yield* secretKubeconfigs(cluster)
          const captured: Array<string> = []
          const run = (kubeconfig: string, argv: ReadonlyArray<string>) =>
            Effect.gen(function*() {
              const withKubeconfig = argv.map((arg) => (arg === cluster.kubeconfig ? kubeconfig : arg))
              const cli = yield* startCli(withKubeconfig, {
                ...cluster.env,
                ...LIMITS,
                OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
                OTEL_SERVICE_NAME: "session-routing-secrets"
              })
              const ended = yield* cli.ended(Duration.seconds(30))
              captured.push(cli.stdout(), cli.stderr())
              return ended.code
            })
          const publish = args(cluster, "publish", "--watch", "-o", "json")
          const check = ["check", "--kubeconfig", cluster.kubeconfig]
          // Plain and JSON output both: each words failures its own way.
          const commands = [publish, args(cluster, "status"), check]
          const codes: Array<string> = []
          for (const [name, action] of FAULTS) {
            const id = action === undefined ? undefined : yield* cluster.cluster.faults.add({ action })
            for (const command of commands) {
              codes.push(`${name}, ${command[0]}: ${yield* run(kubeconfigs.keyAndToken, command)}`)
            }
            if (id !== undefined) yield* cluster.cluster.faults.remove(id)
          }
          const plugins = [
            ["plugin with stderr", kubeconfigs.pluginThatTalks],
            ["plugin that fails", kubeconfigs.pluginThatFails],
            ["plugin with garbage", kubeconfigs.pluginGarbage]
          ] as const
          for (const [name, kubeconfig] of plugins) {
            for (const command of [publish, check]) {
              codes.push(`${name}, ${command[0]}: ${yield* run(kubeconfig, command)}`)
            }
          }
          codes.push(`no fault, unpublish: ${yield* run(kubeconfigs.keyAndToken, args(cluster, "unpublish"))}`)
          // Each run reached the cluster and failed where its fault says: the search is not of empty output.
          expect(codes).toEqual([
            ...FAULTS.flatMap(([name, action]) =>
              ["publish", "status", "check"].map((command) => `${name}, ${command}: ${action === undefined ? 0 : 1}`)
            ),
            "plugin with stderr, publish: 0",
            "plugin with stderr, check: 0",
            "plugin that fails, publish: 1",
            "plugin that fails, check: 1",
            "plugin with garbage, publish: 1",
            "plugin with garbage, check: 1",
            "no fault, unpublish: 0"
          ])
          const events = [
            ...(yield* Effect.orDie(cluster.cluster.store.list(EventResource, cluster.namespace))).items,
            ...(yield* Effect.orDie(cluster.cluster.store.list(EventV1Resource, cluster.namespace))).items
          ]
          expect(events.length).toBeGreaterThan(0)
          expect(otlp.bodies.length).toBeGreaterThan(0)
          const everything = [...captured, ...otlp.bodies, JSON.stringify(events)].join("\n")
          for (const secret of kubeconfigs.secrets) expect(everything, secret).not.toContain(secret)
        })
      ),
    240_000
  )
})
