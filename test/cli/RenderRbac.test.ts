/**
 * `render --rbac`: the RBAC objects for the configured mode and namespaces, and
 * deploy/rbac.yaml is exactly what it prints for the default configuration, so the
 * file cannot drift from the manifest the least-privilege test proves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"
import { runCli } from "./TestCli.js"

const documents = (text: string) => YAML.parseAllDocuments(text).map((d) => d.toJS())
const deployFile = fileURLToPath(new URL("../../deploy/rbac.yaml", import.meta.url))

describe("render --rbac", () => {
  it.live("prints deploy/rbac.yaml for the default configuration", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", "--rbac"])
      expect([result.exitCode, result.stderr]).toEqual([0, ""])
      expect(documents(result.stdout)).toEqual(documents(readFileSync(deployFile, "utf8")))
    }), 30_000)

  it.live(
    "grants the gateway mode's reads, with the Gateway's own namespace in a Role there",
    () =>
      Effect.gen(function*() {
        const result = yield* runCli(["render", "--rbac", "-o", "json", "--mode", "gateway", "-n", "sessions"], {
          SESSION_GATEWAY_NAME: "web",
          SESSION_GATEWAY_NAMESPACE: "infra",
          SESSION_ROUTE_STATUS_SOURCE: "poll"
        })
        expect(result.exitCode).toBe(0)
        const items = JSON.parse(result.stdout).items as Array<
          { kind: string; metadata: { namespace?: string }; rules?: unknown }
        >
        expect(items.map((i) => [i.kind, i.metadata.namespace])).toEqual([
          ["ServiceAccount", "sessions"],
          ["Role", "sessions"],
          ["RoleBinding", "sessions"],
          ["Role", "infra"],
          ["RoleBinding", "infra"],
          ["ClusterRole", undefined],
          ["ClusterRoleBinding", undefined]
        ])
        // Polling reads each object and never watches.
        expect(items[1]!.rules).toContainEqual({
          apiGroups: ["gateway.networking.k8s.io"],
          resources: ["httproutes"],
          verbs: ["create", "delete", "get", "list", "patch"]
        })
        expect(items[3]!.rules).toEqual([{
          apiGroups: ["gateway.networking.k8s.io"],
          resources: ["gateways"],
          verbs: ["get"]
        }])
        expect(items[5]!.rules).toEqual([{
          apiGroups: ["gateway.networking.k8s.io"],
          resources: ["gatewayclasses"],
          verbs: ["get"]
        }])
      }),
    30_000
  )

  it.live("prints nothing in mode none, and says why", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", "--rbac", "--mode", "none"])
      expect([result.exitCode, result.stdout, result.stderr.trim()]).toEqual([
        0,
        "",
        "note: mode none publishes nothing, so it needs no permissions"
      ])
    }), 30_000)

  // The RBAC is the same for every session: a --session it ignored in silence looked honoured.
  for (
    const [args, line] of [
      [["--rbac", "--session", "s1"], "--session does not go with --rbac"],
      [["--rbac", "--port", "8080"], "--port does not go with --rbac"],
      [["--controller", "--pod-uid", "u-1"], "--pod-uid does not go with --controller"]
    ] as const
  ) {
    it.live(
      `refuses ${args.join(" ")} with one line naming the option and prints nothing`,
      () =>
        Effect.gen(function*() {
          const result = yield* runCli(["render", ...args], { SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com" })
          expect([result.exitCode, result.stdout, result.stderr]).toEqual([
            1,
            "",
            `error: ${line}: it prints the same objects for every session\n`
          ])
        }),
      30_000
    )
  }
})
