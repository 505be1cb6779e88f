/**
 * `render --controller`: what deploys controller mode for the configured mode and
 * namespace, its configuration carried as the Deployment's environment; and
 * deploy/controller.yaml is exactly what it prints for the default configuration.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"
import { DEFAULT_CONTROLLER_IMAGE } from "../../src/cli/commands/Render.js"
import { CONTROLLER_IDENTITY_ENV, CONTROLLER_NAME, type Deployment } from "../../src/domain/ControllerManifest.js"
import type { Role } from "../../src/domain/Objects.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { controllerLeaseName } from "../../src/runner/Controller.js"
import { runCli } from "./TestCli.js"

const deployFile = fileURLToPath(new URL("../../deploy/controller.yaml", import.meta.url))
const NO_BASE_DOMAIN =
  "warning: no base domain is set, so the controller would publish nothing: set SESSION_ROUTING_BASE_DOMAIN before rendering, or in the Deployment's env"

/** Every document, read as kubectl reads it (YAML 1.1), each checked to parse cleanly. */
const documents = (text: string) =>
  YAML.parseAllDocuments(text, { version: "1.1" }).map((doc) => {
    expect(doc.errors).toEqual([])
    return doc.toJS() as { kind: string; metadata: { name: string; namespace?: string } }
  })

const render = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  runCli(["render", "--controller", ...args], env)

const itemsOf = (stdout: string) =>
  (JSON.parse(stdout) as { items: ReadonlyArray<{ kind: string; metadata: { namespace?: string } }> }).items

const containerOf = (deployment: Deployment) => deployment.spec.template.spec.containers[0]!

describe("render --controller", () => {
  it.live(
    "prints deploy/controller.yaml for the default configuration, and warns that it has no base domain",
    () =>
      Effect.gen(function*() {
        const result = yield* render([])
        expect([result.exitCode, result.stderr]).toEqual([0, NO_BASE_DOMAIN + "\n"])
        // The file is the output after its comment: regenerate it with
        // `session-routing render --controller 2>/dev/null` below the comment when this fails.
        const file = readFileSync(deployFile, "utf8")
        expect(file.replace(/^(#.*\n)+/, "")).toBe(result.stdout)
        expect(documents(file).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
          "ServiceAccount/session-routing-controller",
          "Role/session-routing-controller",
          "RoleBinding/session-routing-controller",
          "ClusterRole/session-routing-controller:telo-sessions:ingress",
          "ClusterRoleBinding/session-routing-controller:telo-sessions:ingress",
          "Deployment/session-routing-controller"
        ])
      }),
    30_000
  )

  it.live("grants exactly the runner's rules for the mode plus the controller's", () =>
    Effect.gen(function*() {
      const runner = yield* runCli(["render", "--rbac", "-o", "json"])
      const controller = yield* render(["-o", "json"])
      const roleOf = (stdout: string) => itemsOf(stdout)[1] as Role
      expect(roleOf(controller.stdout).rules).toEqual([
        ...roleOf(runner.stdout).rules!,
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "patch", "watch"] },
        { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "list", "update"] }
      ])
    }), 30_000)

  it.live(
    "carries the configuration as the Deployment's environment, which reads back as the same configuration",
    () =>
      Effect.gen(function*() {
        const env = {
          SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com",
          SESSION_GATEWAY_NAME: "web",
          SESSION_GATEWAY_NAMESPACE: "infra",
          SESSION_ROUTE_STATUS_SOURCE: "poll",
          SESSION_ROUTING_EVENTS: "false"
        }
        const result = yield* render(["--mode", "gateway", "-n", "dev", "-o", "json"], env)
        expect([result.exitCode, result.stderr]).toEqual([0, ""])
        const items = itemsOf(result.stdout)
        expect(items.map((i) => [i.kind, i.metadata.namespace])).toEqual([
          ["ServiceAccount", "dev"],
          ["Role", "dev"],
          ["RoleBinding", "dev"],
          ["Role", "infra"],
          ["RoleBinding", "infra"],
          ["ClusterRole", undefined],
          ["ClusterRoleBinding", undefined],
          ["Deployment", "dev"]
        ])
        const container = containerOf(items.at(-1) as Deployment)
        expect(container.env).toEqual([
          { name: "SESSION_ROUTING_MODE", value: "gateway" },
          { name: "RUNNER_SESSION_NAMESPACE", value: "dev" },
          { name: "SESSION_ROUTING_BASE_DOMAIN", value: "sessions.example.com" },
          { name: "SESSION_GATEWAY_NAME", value: "web" },
          { name: "SESSION_GATEWAY_NAMESPACE", value: "infra" },
          { name: "SESSION_ROUTE_STATUS_SOURCE", value: "poll" },
          { name: "SESSION_ROUTE_PROBE", value: "off" },
          { name: "SESSION_ROUTING_EVENTS", value: "false" },
          { name: "SESSION_ROUTING_CONTROLLER_IDENTITY", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }
        ])
        // What the process in the Pod reads is what this command was configured with, the flags included.
        const inPod = new Map(container.env.flatMap((v) => v.value !== undefined ? [[v.name, v.value] as const] : []))
        const here = { ...env, SESSION_ROUTING_MODE: "gateway", RUNNER_SESSION_NAMESPACE: "dev" }
        const read = (vars: Map<string, string>) =>
          RouterConfigLive.fromEnv().pipe(
            Effect.withConfigProvider(ConfigProvider.fromMap(vars, { pathDelim: "_" }))
          )
        expect(yield* read(inPod)).toEqual(yield* read(new Map(Object.entries(here))))
        expect(container.image).toBe(DEFAULT_CONTROLLER_IMAGE)
      }),
    30_000
  )

  it.live("runs the image --image names, this release's by default", () =>
    Effect.gen(function*() {
      const result = yield* render(["--image", "registry.example.com/sr:dev", "-o", "json"])
      expect(result.exitCode).toBe(0)
      expect(containerOf(itemsOf(result.stdout).at(-1) as Deployment).image).toBe("registry.example.com/sr:dev")
      expect(DEFAULT_CONTROLLER_IMAGE).toMatch(/^ghcr\.io\/session-routing\/session-routing:\d+\.\d+\.\d+/)
    }), 30_000)

  it.live("prints nothing in mode none, and says why", () =>
    Effect.gen(function*() {
      const result = yield* render(["--mode", "none"])
      expect([result.exitCode, result.stdout, result.stderr]).toEqual([
        0,
        "",
        "note: mode none publishes nothing, so there is no controller to deploy\n"
      ])
    }), 30_000)

  for (
    const [name, args, line] of [
      [
        "--rbac beside it",
        ["--rbac"],
        "--rbac and --controller go apart: --controller already prints the controller's RBAC"
      ],
      ["a blank --image", ["--image", " "], "--image \" \" must name an image, e.g. " + DEFAULT_CONTROLLER_IMAGE]
    ] as const
  ) {
    it.live(`refuses ${name} with one line and prints nothing`, () =>
      Effect.gen(function*() {
        const result = yield* render(args)
        expect([result.exitCode, result.stdout, result.stderr]).toEqual([1, "", `error: ${line}\n`])
      }), 30_000)
  }

  it.live("refuses --image without --controller", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["render", "--rbac", "--image", "x"])
      expect([result.exitCode, result.stdout, result.stderr]).toEqual([
        1,
        "",
        "error: --image goes with --controller\n"
      ])
    }), 30_000)

  it.live(
    "runs the controller command with options it has, and names each replica in the variable it reads",
    () =>
      Effect.gen(function*() {
        const container = containerOf(itemsOf((yield* render(["-o", "json"])).stdout).at(-1) as Deployment)
        const [command, ...flags] = container.args
        expect([...container.command, command]).toEqual(["session-routing", "controller"])
        const help = yield* runCli(["controller", "--help"])
        for (const flag of flags.filter((arg) => arg.startsWith("--"))) {
          expect(help.stdout).toMatch(new RegExp(`^  ${flag} `, "m"))
        }
        expect(container.env.at(-1)?.name).toBe(CONTROLLER_IDENTITY_ENV)
        // The Lease an unsharded controller stands for is named as its other objects are.
        expect(controllerLeaseName(undefined)).toBe(CONTROLLER_NAME)
      }),
    30_000
  )
})
