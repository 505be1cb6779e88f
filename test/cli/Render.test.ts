/**
 * `session-routing render`, run in-process through `Cli.run` (output captured, env
 * from a map) and, for exit statuses and stream separation, as a real process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"
import { PLACEHOLDER_POD_UID } from "../../src/cli/commands/Render.js"
import { runCli } from "./TestCli.js"

const sessionId = "hzyayvabgyvz"
const podUid = "3f6b1e2c-9d4a-4c1b-8e7f-2a5d6c9b0e13"
const env = { SESSION_ROUTING_BASE_DOMAIN: "telo.run", SESSION_INGRESS_CLASS: "nginx" }
const sessionArgs = ["--session", sessionId, "--port", "8080", "--port", "9090/tcp", "--port", "5000/udp"]
const ownedArgs = [...sessionArgs, "--pod", "session-pod", "--pod-uid", podUid]

const metadata = (name: string, namespace = "telo-sessions", extraLabels: Record<string, string> = {}) => ({
  name,
  namespace,
  labels: { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/session-id": sessionId, ...extraLabels },
  ownerReferences: [
    { apiVersion: "v1", kind: "Pod", name: "session-pod", uid: podUid, controller: true, blockOwnerDeletion: true }
  ]
})

const service = (namespace = "telo-sessions") => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: metadata(`telo-run-${sessionId}`, namespace),
  spec: {
    type: "ClusterIP",
    selector: { "telo.run/session-id": sessionId },
    ports: [
      { name: "p8080", port: 8080, targetPort: 8080, protocol: "TCP" },
      { name: "p9090", port: 9090, targetPort: 9090, protocol: "TCP" },
      { name: "p5000", port: 5000, targetPort: 5000, protocol: "UDP" }
    ]
  }
})

const ingressRule = (port: number) => ({
  host: `${port}-${sessionId}.telo.run`,
  http: {
    paths: [
      { path: "/", pathType: "Prefix", backend: { service: { name: `telo-run-${sessionId}`, port: { number: port } } } }
    ]
  }
})

const ingress = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: metadata(`telo-run-${sessionId}`),
  spec: { ingressClassName: "nginx", rules: [ingressRule(8080), ingressRule(9090)] }
}

const httpRoute = (port: number, parentRef: Record<string, string>) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: metadata(`telo-run-${sessionId}-${port}`, "telo-sessions", { "telo.run/port": String(port) }),
  spec: {
    parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", ...parentRef }],
    hostnames: [`${port}-${sessionId}.telo.run`],
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" } }],
        backendRefs: [{ name: `telo-run-${sessionId}`, port }]
      }
    ]
  }
})

/** Every document of a YAML stream, as plain values. */
const yamlDocuments = (text: string): Array<unknown> =>
  YAML.parseAllDocuments(text).map((doc) => {
    expect(doc.errors).toEqual([])
    return doc.toJSON()
  })

describe("session-routing render", () => {
  it.effect("prints the Service then the Ingress as a YAML stream by default", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs], env)
      expect(result.exitCode).toBe(0)
      expect(result.stderr).toBe("")
      expect(yamlDocuments(result.stdout)).toEqual([service(), ingress])
    }))

  it.effect("prints one v1 List with -o json", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs, "-o", "json"], env)
      expect(result.exitCode).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual({ apiVersion: "v1", kind: "List", items: [service(), ingress] })
    }))

  it.effect("prints the Service then one HTTPRoute per tcp port in gateway mode", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs], {
        ...env,
        SESSION_ROUTING_MODE: "gateway",
        SESSION_GATEWAY_NAME: "public",
        SESSION_GATEWAY_NAMESPACE: "gateways",
        SESSION_GATEWAY_SECTION: "https"
      })
      const parentRef = { namespace: "gateways", name: "public", sectionName: "https" }
      expect(result.exitCode).toBe(0)
      expect(yamlDocuments(result.stdout)).toEqual([service(), httpRoute(8080, parentRef), httpRoute(9090, parentRef)])
      // The ingress class is set in `env` and does nothing in gateway mode: said on stderr, not stdout.
      expect(result.stderr).toBe("warning: SESSION_INGRESS_CLASS is ignored in gateway mode: no Ingress is published\n")
    }))

  it.effect("lets --mode and -n override the environment, the Gateway following the namespace", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs, "--mode", "gateway", "-n", "dev", "-o", "json"], {
        SESSION_ROUTING_BASE_DOMAIN: "telo.run",
        SESSION_ROUTING_MODE: "none",
        RUNNER_SESSION_NAMESPACE: "prod",
        SESSION_GATEWAY_NAME: "public"
      })
      expect(result.exitCode).toBe(0)
      const items = JSON.parse(result.stdout).items
      expect(items.map((o: { kind: string; metadata: { namespace: string } }) => [o.kind, o.metadata.namespace]))
        .toEqual([
          ["Service", "dev"],
          ["HTTPRoute", "dev"],
          ["HTTPRoute", "dev"]
        ])
      expect(items[1].spec.parentRefs).toEqual([
        { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "dev", name: "public" }
      ])
    }))

  it.effect("accepts the shared flags anywhere among the render flags", () =>
    Effect.gen(function*() {
      // Regression guard: declared on the root command, a shared flag followed by a
      // render flag failed with "Received unknown argument".
      const last = yield* runCli(["render", ...ownedArgs, "-n", "dev"], env)
      const first = yield* runCli(["render", "-n", "dev", ...ownedArgs], env)
      const between = yield* runCli(["render", "--session", sessionId, "-n", "dev", ...ownedArgs.slice(2)], env)
      expect(first).toEqual(last)
      expect(between).toEqual(last)
      expect(yamlDocuments(last.stdout)).toEqual([
        service("dev"),
        { ...ingress, metadata: metadata(`telo-run-${sessionId}`, "dev") }
      ])
    }))

  it.effect("prints the help, listing render, when run without a command", () =>
    Effect.gen(function*() {
      const result = yield* runCli([], env)
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toContain("render")
    }))

  it.effect("prints nothing in none mode, and an empty List with -o json", () =>
    Effect.gen(function*() {
      const yaml = yield* runCli(["render", ...ownedArgs, "--mode", "none"], env)
      expect(yaml).toEqual({ exitCode: 0, stdout: "", stderr: "note: mode none publishes nothing for a session\n" })
      const json = yield* runCli(["render", ...ownedArgs, "--mode", "none", "-o", "json"], env)
      expect(json.exitCode).toBe(0)
      expect(JSON.parse(json.stdout)).toEqual({ apiVersion: "v1", kind: "List", items: [] })
    }))

  it.effect("prints nothing without a base domain, and says which variable to set", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs], {})
      expect(result).toEqual({
        exitCode: 0,
        stdout: "",
        stderr:
          "note: nothing is published without a base domain: set SESSION_ROUTING_BASE_DOMAIN (e.g. sessions.example.com)\n"
      })
    }))

  it.effect("defaults the owner to telo-run-<id> with a placeholder uid, and warns that it is one", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...sessionArgs, "-o", "json"], env)
      expect(result.exitCode).toBe(0)
      const owners = JSON.parse(result.stdout).items.map((o: { metadata: { ownerReferences: unknown } }) =>
        o.metadata.ownerReferences
      )
      const owner = {
        apiVersion: "v1",
        kind: "Pod",
        name: `telo-run-${sessionId}`,
        uid: PLACEHOLDER_POD_UID,
        controller: true,
        blockOwnerDeletion: true
      }
      expect(owners).toEqual([[owner], [owner]])
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1)
      expect(result.stderr).toMatch(/^warning: no --pod-uid given/)
      expect(result.stderr).toContain(`placeholder uid ${PLACEHOLDER_POD_UID}`)
    }))

  it.effect("keeps a TLS block on the Ingress and names the Secret", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", ...ownedArgs, "-o", "json"], {
        ...env,
        SESSION_INGRESS_TLS_SECRET: "wildcard"
      })
      expect(JSON.parse(result.stdout).items[1].spec.tls).toEqual([
        { hosts: [`8080-${sessionId}.telo.run`, `9090-${sessionId}.telo.run`], secretName: "wildcard" }
      ])
    }))

  // kubectl reads YAML 1.1, where a bare `on` is true: the label value reached the API
  // server as a bool and the apply was refused, for a session id the CLI itself accepts.
  it.effect("quotes a value YAML 1.1 reads as a boolean, so kubectl reads the session id it was given", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", "--session", "on", "--port", "8080", "--pod-uid", podUid], env)
      expect(result.exitCode).toBe(0)
      const asKubectlReads = YAML.parseAllDocuments(result.stdout, { version: "1.1" }).map((doc) => doc.toJSON())
      expect(asKubectlReads).toEqual(yamlDocuments(result.stdout))
      expect(asKubectlReads[0]).toMatchObject({
        metadata: { labels: { "telo.run/session-id": "on" } },
        spec: { selector: { "telo.run/session-id": "on" } }
      })
    }))

  it.effect("renders only the Service when no port is tcp", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", "--session", sessionId, "--port", "5000/udp", "--pod-uid", podUid], env)
      expect(yamlDocuments(result.stdout).map((o) => (o as { kind: string }).kind)).toEqual(["Service"])
    }))

  // Each bad input: status 1, nothing on stdout, exactly one line on stderr that
  // names the bad value (and, in the message, what would be valid).
  const badInputs: ReadonlyArray<{
    readonly name: string
    readonly args: ReadonlyArray<string>
    readonly env?: Record<string, string>
    readonly line: string
  }> = [
    {
      name: "a session id with upper case",
      args: ["--session", "Bad", "--port", "8080"],
      line:
        `error: session id "Bad" must be lower-case letters, digits and '-', starting and ending with a letter or digit`
    },
    {
      name: "a session id too long for its HTTPRoute names",
      args: ["--session", "a".repeat(49), "--port", "8080"],
      line: `error: session id "${
        "a".repeat(49)
      }" is 49 characters; at most 48 fit, because the HTTPRoute name "telo-run-${
        "a".repeat(49)
      }-<port>" must be at most 63 characters`
    },
    {
      name: "a port that is not a number",
      args: ["--session", "s1", "--port", "http"],
      line: `error: port "http" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)`
    },
    {
      name: "a port out of range",
      args: ["--session", "s1", "--port", "70000"],
      line: `error: port "70000": 70000 is outside 1..65535`
    },
    {
      name: "an unknown protocol",
      args: ["--session", "s1", "--port", "8080/sctp"],
      line: `error: port "8080/sctp": protocol "sctp" is not tcp or udp`
    },
    {
      name: "a duplicate port",
      args: ["--session", "s1", "--port", "8080", "--port", "8080/tcp"],
      line: "error: port 8080/tcp is listed twice; each port/protocol pair may appear once"
    },
    {
      name: "no port at all",
      args: ["--session", "s1"],
      line: "error: at least one --port is required, e.g. --port 8080 or --port 5000/udp"
    },
    {
      name: "an unknown output format",
      args: ["--session", "s1", "--port", "8080", "-o", "xml"],
      line: `error: --output="xml" must be one of yaml, json`
    },
    {
      name: "an invalid Pod name",
      args: ["--session", "s1", "--port", "8080", "--pod", "Session_Pod"],
      line:
        `error: --pod="Session_Pod" must be a Pod name: at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit`
    },
    {
      name: "gateway mode without a Gateway name",
      args: ["--session", "s1", "--port", "8080"],
      env: { SESSION_ROUTING_MODE: "gateway" },
      line:
        "error: invalid configuration: SESSION_GATEWAY_NAME is not set: set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; SESSION_ROUTING_MODE=gateway)"
    },
    {
      name: "a bad --mode",
      args: ["--session", "s1", "--port", "8080", "--mode", "istio"],
      // A usage error now: @effect/cli refuses the value before the configuration is read.
      line: `error: --mode="istio" must be one of ingress, gateway, none`
    },
    {
      name: "bad environment configuration, every key in the one line",
      args: ["--session", "s1", "--port", "8080"],
      env: { SESSION_ROUTING_BASE_DOMAIN: "Telo.Run", SESSION_ROUTE_POLL_INTERVAL_MS: "2s" },
      line:
        `error: invalid configuration: SESSION_ROUTING_BASE_DOMAIN="Telo.Run" must be a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com (lower case: "telo.run"); SESSION_ROUTE_POLL_INTERVAL_MS="2s" must be a positive whole number of milliseconds, e.g. 60000`
    },
    {
      name: "a missing --session",
      args: ["--port", "8080"],
      line: "error: missing option --session for render"
    }
  ]

  for (const bad of badInputs) {
    it.effect(`refuses ${bad.name} with one line on stderr and nothing on stdout`, () =>
      Effect.gen(function*() {
        const result = yield* runCli(["render", ...bad.args], { ...env, ...bad.env })
        expect(result).toEqual({ exitCode: 1, stdout: "", stderr: `${bad.line}\n` })
      }))
  }
})

describe("bin/session-routing.js", () => {
  const bin = fileURLToPath(new URL("../../bin/session-routing.js", import.meta.url))

  /** Runs the executable with exactly `env` (plus PATH), so the developer's shell cannot leak in. */
  const spawn = (args: ReadonlyArray<string>, extraEnv: Record<string, string>) =>
    Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
      const child = execFile(
        process.execPath,
        [bin, ...args],
        { env: { PATH: process.env.PATH ?? "", ...extraEnv } },
        (error, stdout, stderr) => {
          resume(Effect.succeed({ code: error === null ? 0 : (child.exitCode ?? null), stdout, stderr }))
        }
      )
      return Effect.sync(() => child.kill())
    })

  it.live("exits 1 with one line on stderr and an empty stdout on a bad session id", () =>
    Effect.gen(function*() {
      const result = yield* spawn(["render", "--session", "Bad_Id", "--port", "8080"], env)
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr:
          `error: session id "Bad_Id" must be lower-case letters, digits and '-', starting and ending with a letter or digit\n`
      })
    }))

  it.live("exits 0 and prints the stream on stdout for a good render", () =>
    Effect.gen(function*() {
      const result = yield* spawn(["render", ...ownedArgs], env)
      expect(result.code).toBe(0)
      expect(result.stderr).toBe("")
      expect(yamlDocuments(result.stdout)).toEqual([service(), ingress])
    }))
})
