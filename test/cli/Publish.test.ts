/**
 * `session-routing publish` end to end: the real CLI in-process, the live KubeClient
 * over HTTP to a LocalCluster on 127.0.0.1, with a kubeconfig the test wrote. Each
 * watch is compared event by event, because the event sequence is the contract.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, kubeconfigFor } from "@session-routing/local-cluster"
import { Duration, Effect } from "effect"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { StdoutTerminal } from "../../src/cli/present/Presenter.js"
import { HttpRouteResource, IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import { Unprogrammed } from "../../src/domain/Routes.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"
import { localIngressSilence } from "../support/Causes.js"
import { cliCluster, gatewayEnv, jsonLines, settledInPortOrder, tcpEndpoint, tempDir } from "./CliCluster.js"
import { runCli } from "./TestCli.js"

const sessionId = "hzyayvabgyvz"
const podArgs = [
  "--session",
  sessionId,
  "--pod",
  `telo-run-${sessionId}`,
  "--pod-uid",
  "3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13"
]
const ports = ["--port", "8080", "--port", "9090/tcp", "--port", "5000/udp"]
const hostOf = (port: number, domain = "sessions.localtest.me") => `${port}-${sessionId}.${domain}`

const published = (layer: "ingress" | "gateway"): SessionEvent => ({
  type: "published",
  layer,
  routes: [
    { host: hostOf(8080), port: 8080 },
    { host: hostOf(9090), port: 9090 }
  ],
  endpoints: [tcpEndpoint(hostOf(8080), 8080), tcpEndpoint(hostOf(9090), 9090), {
    host: "",
    port: 5000,
    protocol: "udp"
  }]
})
const route = (port: number, state: "pending" | "programmed"): SessionEvent => ({
  type: "route",
  port,
  host: hostOf(port),
  state
})
/** An unprogrammed host's event; its code is what its reason starts with (a condition reason or a diagnosis code). */
const unprogrammed = (port: number, reason: string): SessionEvent => ({
  type: "route",
  port,
  host: hostOf(port),
  state: "unprogrammed",
  reason,
  code: reason.split(":")[0]!
})

/** A quick controller: long enough that the first read sees `pending`. */
const QUICK = Duration.millis(150)

describe("session-routing publish", () => {
  it.live("prints published, pending per host, then programmed per host, and exits 0 (-o json --watch)", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: QUICK }, gateway: false })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch",
          "-o",
          "json"
        ], cluster.env)
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(0)
        expect(settledInPortOrder(jsonLines(result.stdout))).toEqual([
          published("ingress"),
          route(8080, "pending"),
          route(9090, "pending"),
          route(8080, "programmed"),
          route(9090, "programmed")
        ])
      })
    ))

  it.live("reports a host the Gateway's listener refuses as unprogrammed with the condition's reason, and exits 3", () =>
    Effect.scoped(
      Effect.gen(function*() {
        // The Gateway lives in another namespace and admits routes from its own only.
        const cluster = yield* cliCluster({
          ingress: false,
          gateway: { delay: QUICK, gatewayNamespace: "gateways", allowedRoutes: "Same" }
        })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch",
          "-o",
          "json"
        ], gatewayEnv(cluster))
        const refused =
          `NotAllowedByListeners: no listener of Gateway gateways/sessions admits HTTPRoutes from namespace "${cluster.namespace}" (allowedRoutes.namespaces.from: Same)`
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(3)
        expect(settledInPortOrder(jsonLines(result.stdout))).toEqual([
          published("gateway"),
          route(8080, "pending"),
          route(9090, "pending"),
          unprogrammed(8080, refused),
          unprogrammed(9090, refused)
        ])
      })
    ))

  it.live("reports hosts no controller claims as unprogrammed at the deadline, with the unclaimed advice, and exits 3", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch",
          "-o",
          "json"
        ], {
          ...cluster.env,
          SESSION_ROUTE_READY_TIMEOUT_MS: "600",
          SESSION_ROUTE_POLL_INTERVAL_MS: "50"
        })
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(3)
        expect(settledInPortOrder(jsonLines(result.stdout))).toEqual([
          published("ingress"),
          route(8080, "pending"),
          route(9090, "pending"),
          unprogrammed(8080, localIngressSilence(cluster.namespace)),
          unprogrammed(9090, localIngressSilence(cluster.namespace))
        ])
      })
    ))

  it.live("prints only the published event without --watch, and leaves the objects in the cluster", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "-o",
          "json"
        ], cluster.env)
        expect(result).toEqual({ exitCode: 0, stdout: JSON.stringify(published("ingress")) + "\n", stderr: "" })
        const ingress = yield* cluster.cluster.store.get(IngressResource, cluster.namespace, `telo-run-${sessionId}`)
        expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual([hostOf(8080), hostOf(9090)])
      })
    ))

  it.live("prints one plain line per change when stdout is not a terminal (-o table)", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: QUICK }, gateway: false })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          "--port",
          "8080",
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch"
        ], cluster.env).pipe(
          Effect.provideService(StdoutTerminal, { isTTY: false, columns: () => undefined })
        )
        expect(result).toEqual({
          exitCode: 0,
          stdout: [
            `published via ingress: 8080/tcp https://${hostOf(8080)}`,
            `${hostOf(8080)} pending`,
            `${hostOf(8080)} programmed`,
            ""
          ].join("\n"),
          stderr: ""
        })
      })
    ))

  it.live("draws the live table on a terminal, in colour unless NO_COLOR is set", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: QUICK }, gateway: false })
        const tty = { isTTY: true, columns: () => 120 }
        const args = ["publish", ...podArgs, "--port", "8080", "--kubeconfig", cluster.kubeconfig, "--watch"]
        const coloured = yield* runCli(args, cluster.env).pipe(Effect.provideService(StdoutTerminal, tty))
        const plain = yield* runCli(args, { ...cluster.env, NO_COLOR: "1" }).pipe(
          Effect.provideService(StdoutTerminal, tty)
        )
        expect(coloured.exitCode).toBe(0)
        expect(coloured.stdout).toContain("\x1b[32m✓\x1b[0m")
        expect(plain.exitCode).toBe(0)
        // The last frame, after the cursor moved back over the one before it.
        const last = plain.stdout.split("\x1b[0J").at(-1)
        expect(last).toBe(
          [
            `  PORT  ${"HOST".padEnd(hostOf(8080).length)}  STATE       REASON`,
            `✓ 8080  ${hostOf(8080)}  programmed`,
            ""
          ].join("\n")
        )
        // Without colour the only escapes are the cursor movements of the redraws.
        expect(plain.stdout.replace(/\r\x1b\[\d+A\x1b\[0J/g, "")).not.toContain("\x1b")
      })
    ))

  it.live("reloads with a second publish: the dropped port's HTTPRoute and Service port are removed", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: { delay: QUICK } })
        const env = gatewayEnv(cluster)
        const first = yield* runCli(["publish", ...podArgs, ...ports, "--kubeconfig", cluster.kubeconfig], env)
        expect(first.exitCode).toBe(0)
        const routeNames = Effect.map(
          cluster.cluster.store.list(HttpRouteResource, cluster.namespace),
          (list) => list.items.map((item) => item.metadata?.name).sort()
        )
        expect(yield* routeNames).toEqual([`telo-run-${sessionId}-8080`, `telo-run-${sessionId}-9090`])

        const second = yield* runCli([
          "publish",
          ...podArgs,
          "--port",
          "8080",
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch",
          "-o",
          "json"
        ], env)
        expect(second.exitCode).toBe(0)
        expect(settledInPortOrder(jsonLines(second.stdout))).toEqual([
          {
            type: "published",
            layer: "gateway",
            routes: [{ host: hostOf(8080), port: 8080 }],
            endpoints: [tcpEndpoint(hostOf(8080), 8080)]
          },
          route(8080, "pending"),
          route(8080, "programmed")
        ])
        expect(yield* routeNames).toEqual([`telo-run-${sessionId}-8080`])
        const service = yield* cluster.cluster.store.get(ServiceResource, cluster.namespace, `telo-run-${sessionId}`)
        expect(service.spec?.ports?.map((port) => `${port.port}/${port.protocol}`)).toEqual(["8080/TCP"])
      })
    ))

  it.live("reloads the Ingress in ingress mode: one rule per remaining port", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        yield* runCli(["publish", ...podArgs, ...ports, "--kubeconfig", cluster.kubeconfig], cluster.env)
        const second = yield* runCli(
          ["publish", ...podArgs, "--port", "9090", "--kubeconfig", cluster.kubeconfig],
          cluster.env
        )
        expect(second.exitCode).toBe(0)
        const ingress = yield* cluster.cluster.store.get(IngressResource, cluster.namespace, `telo-run-${sessionId}`)
        expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual([hostOf(9090)])
      })
    ))

  // The objects name an owner that does not exist: the garbage collector deletes them at
  // once, often before the status watch sees them, so the deadline says what happened.
  it.live(
    "reports hosts whose objects the garbage collector deleted as deleted, never as unclaimed",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* cliCluster({ ingress: { delay: "never" }, gateway: false, controllerManager: true })
          const result = yield* runCli([
            "publish",
            ...podArgs,
            ...ports,
            "--kubeconfig",
            cluster.kubeconfig,
            "--watch",
            "-o",
            "json"
          ], { ...cluster.env, SESSION_ROUTE_READY_TIMEOUT_MS: "2000" })
          expect(result.exitCode).toBe(3)
          expect(settledInPortOrder(jsonLines(result.stdout)).slice(3)).toEqual([
            { ...unprogrammed(8080, Unprogrammed.deleted.reason), code: "RouteDeleted" },
            { ...unprogrammed(9090, Unprogrammed.deleted.reason), code: "RouteDeleted" }
          ])
        })
      )
  )

  it.live("exits 0 at once with nothing to watch in mode none, and needs no cluster for it", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["publish", ...podArgs, ...ports, "--mode", "none", "--watch", "-o", "json"], {
        SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me"
      })
      expect(result).toEqual({
        exitCode: 0,
        stdout: JSON.stringify({
          type: "published",
          layer: "none",
          routes: [],
          endpoints: [
            { host: "", port: 8080, protocol: "tcp" },
            { host: "", port: 9090, protocol: "tcp" },
            { host: "", port: 5000, protocol: "udp" }
          ]
        }) + "\n",
        stderr: "note: mode none publishes nothing for a session: there is no host to watch\n"
      })
    }))

  it.live("exits 1 with the API's refusal on one line when the publish itself fails", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        yield* cluster.cluster.faults.add({
          resource: ServiceResource,
          action: Fault.forbid("system:serviceaccount:runner:runner")
        })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "--watch",
          "-o",
          "json"
        ], cluster.env)
        expect(result.exitCode).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr.split("\n")).toHaveLength(2)
        expect(result.stderr).toMatch(/^error: could not .*Service.*forbidden/i)
      })
    ))

  it.live("exits 1 naming the namespace when the session namespace does not exist", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: false, gateway: false })
        const result = yield* runCli([
          "publish",
          ...podArgs,
          ...ports,
          "--kubeconfig",
          cluster.kubeconfig,
          "-n",
          "nowhere"
        ], cluster.env)
        expect(result.exitCode).toBe(1)
        expect(result.stdout).toBe("")
        expect(result.stderr.split("\n")).toHaveLength(2)
        expect(result.stderr).toContain("nowhere")
      })
    ))
})

describe("session-routing publish, status and unpublish: bad input", () => {
  const env = { SESSION_ROUTING_BASE_DOMAIN: "sessions.localtest.me" }

  /** A kubeconfig whose server nobody listens on: every case below fails before a request. */
  const kubeconfig = Effect.gen(function*() {
    const path = join(yield* tempDir, "kubeconfig")
    yield* Effect.promise(() => writeFile(path, kubeconfigFor("http://127.0.0.1:9")))
    return path
  })

  const cases: ReadonlyArray<{
    readonly name: string
    readonly args: (kubeconfig: string) => ReadonlyArray<string>
    readonly env?: Record<string, string>
    readonly line: string
  }> = [
    {
      name: "a port that is not a number",
      args: (k) => ["publish", ...podArgs, "--port", "http", "--kubeconfig", k],
      line: `error: port "http" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)`
    },
    {
      name: "a port out of range",
      args: (k) => ["publish", ...podArgs, "--port", "0", "--kubeconfig", k],
      line: `error: port "0": 0 is outside 1..65535`
    },
    {
      // --port is Options.atLeast(1): a missing one is missing like any required option.
      name: "no port",
      args: (k) => ["publish", ...podArgs, "--kubeconfig", k],
      line: "error: missing option --port for publish"
    },
    {
      name: "a missing --session",
      args: (k) => ["publish", "--pod", "p", "--pod-uid", "u", "--port", "8080", "--kubeconfig", k],
      line: "error: missing option --session for publish"
    },
    {
      name: "a missing --pod-uid",
      args: (k) => ["publish", "--session", sessionId, "--pod", "p", "--port", "8080", "--kubeconfig", k],
      line: "error: missing option --pod-uid for publish"
    },
    {
      name: "an unknown output format",
      args: (k) => ["publish", ...podArgs, "--port", "8080", "-o", "yaml", "--kubeconfig", k],
      line: `error: --output="yaml" must be one of table, json`
    },
    {
      name: "an unknown output format for status",
      args: (k) => ["status", "--session", sessionId, "-o", "wide", "--kubeconfig", k],
      line: `error: --output="wide" must be one of table, json`
    },
    {
      name: "a bad session id for unpublish",
      args: (k) => ["unpublish", "--session", "Bad_Id", "--kubeconfig", k],
      line:
        `error: session id "Bad_Id" must be lower-case letters, digits and '-', starting and ending with a letter or digit`
    },
    {
      name: "a poll interval that is not a number",
      args: (k) => ["publish", ...podArgs, "--port", "8080", "--kubeconfig", k],
      env: { SESSION_ROUTE_POLL_INTERVAL_MS: "abc" },
      line:
        `error: invalid configuration: SESSION_ROUTE_POLL_INTERVAL_MS="abc" must be a positive whole number of milliseconds, e.g. 60000`
    },
    {
      name: "gateway mode without a Gateway name",
      args: (k) => ["publish", ...podArgs, "--port", "8080", "--mode", "gateway", "--kubeconfig", k],
      line:
        "error: invalid configuration: SESSION_GATEWAY_NAME is not set: set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; --mode=gateway)"
    },
    {
      // The library would publish nothing (the none layer), which would look like success.
      name: "a publish without a base domain",
      args: (k) => ["publish", ...podArgs, "--port", "8080", "--watch", "--kubeconfig", k],
      env: { SESSION_ROUTING_BASE_DOMAIN: "" },
      line:
        "error: no base domain is set, so there is no host to publish: set SESSION_ROUTING_BASE_DOMAIN (e.g. sessions.example.com), or pass --mode none to publish nothing on purpose"
    },
    {
      name: "a kubeconfig context that does not exist",
      args: (k) => ["unpublish", "--session", sessionId, "--kubeconfig", k, "--context", "prod"],
      line: `error: the kubeconfig KUBECONFIG has no context "prod" (it has: local-cluster)`
    },
    {
      name: "a kubeconfig file that does not exist",
      args: () => ["status", "--session", sessionId, "--kubeconfig", "/nonexistent/kubeconfig"],
      line: "error: could not load the kubeconfig /nonexistent/kubeconfig: the file does not exist"
    }
  ]

  for (const bad of cases) {
    it.live(`refuses ${bad.name} with one line on stderr and nothing on stdout`, () =>
      Effect.scoped(
        Effect.gen(function*() {
          const path = yield* kubeconfig
          const result = yield* runCli(bad.args(path), { ...env, ...bad.env })
          expect(result).toEqual({ exitCode: 1, stdout: "", stderr: `${bad.line.replace("KUBECONFIG", path)}\n` })
        })
      ))
  }
})
