/**
 * `session-routing check --controller` over HTTPS against a LocalCluster that
 * authorizes by RBAC: the controller's ServiceAccount bound to exactly what
 * `render --controller` prints passes every check, and with one verb of the
 * controller's taken out of its Role the check fails on that verb and says how to
 * grant it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, SessionCluster } from "@session-routing/local-cluster"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { inject } from "vitest"
import { CONTROLLER_NAME } from "../../src/domain/ControllerManifest.js"
import type { KubeObject, PolicyRule, Role } from "../../src/domain/Objects.js"
import { allResources, type ResourceType, RoleResource } from "../../src/domain/Resources.js"
import type { CheckReport, CheckStatus } from "../../src/runner/Check.js"
import { tempDir } from "./CliCluster.js"
import { runCli } from "./TestCli.js"

const resourceOf = (object: KubeObject) =>
  allResources.find((r) =>
    (r.group === "" ? "v1" : `${r.group}/${r.version}`) === object.apiVersion && r.kind === object.kind
  ) as ResourceType<KubeObject> | undefined

/**
 * A cluster with RBAC on, holding the RBAC objects `render --controller` prints for
 * `env` (LocalCluster serves no Deployments, and the check needs none), and a
 * kubeconfig for the controller's ServiceAccount.
 */
const securedCluster = (env: (sc: SessionCluster.SessionCluster) => Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const sc = yield* Effect.orDie(SessionCluster.make({ dataPlane: false, auth: { rbac: true } }))
    const rendered = yield* runCli(["render", "--controller", "-o", "json"], env(sc))
    expect(rendered.exitCode).toBe(0)
    const items = (JSON.parse(rendered.stdout) as { items: ReadonlyArray<KubeObject> }).items
    const rbac = items.filter((o) => o.kind !== "Deployment")
    expect(rbac.map((o) => o.kind)).toEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ClusterRole",
      "ClusterRoleBinding"
    ])
    for (const object of rbac) {
      yield* Effect.orDie(sc.cluster.store.create(resourceOf(object)!, object.metadata?.namespace, object))
    }
    const kubeconfig = join(yield* tempDir, "kubeconfig")
    const text = yield* sc.cluster.kubeconfigAs(Credential.serviceAccount(sc.namespace, CONTROLLER_NAME))
    yield* Effect.promise(() => writeFile(kubeconfig, text))
    return { sc, kubeconfig, role: rbac[1] as Role }
  })

const envOf = (sc: SessionCluster.SessionCluster) => ({
  SESSION_ROUTING_BASE_DOMAIN: sc.baseDomain,
  SESSION_INGRESS_CLASS: sc.ingressClassName,
  RUNNER_SESSION_NAMESPACE: sc.namespace
})

const check = (kubeconfig: string, env: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>) =>
  Effect.map(runCli(["check", "--kubeconfig", kubeconfig, "-o", "json", ...args], env), (result) => ({
    exitCode: result.exitCode,
    stderr: result.stderr,
    report: JSON.parse(result.stdout) as CheckReport
  }))

const marks = (report: CheckReport): Record<string, CheckStatus> =>
  Object.fromEntries(report.checks.map((c) => [c.id, c.status]))

/** The controller's Role with `verb` taken out of the rule on `resource`. */
const without = (role: Role, resource: string, verb: string): ReadonlyArray<PolicyRule> =>
  (role.rules ?? []).flatMap((rule) => {
    if (rule.resources?.[0] !== resource) return [rule]
    const verbs = rule.verbs.filter((v) => v !== verb)
    return verbs.length === 0 ? [] : [{ ...rule, verbs }]
  })

/** Runs one hint line as the cluster's admin would, in a shell, with kubectl on the PATH. */
const runHint = (hint: string, adminKubeconfig: string) =>
  Effect.async<{ readonly code: number; readonly output: string }>((resume) => {
    const kubectl = inject("bundledKubectl") ?? process.env.KUBECTL ?? "kubectl"
    const command = hint.replace(/^grant them to this identity: /, "")
    execFile("bash", ["-c", command], {
      env: { ...process.env, KUBECONFIG: adminKubeconfig, PATH: `${dirname(kubectl)}:${process.env.PATH ?? ""}` },
      timeout: 30_000
    }, (error, stdout, stderr) => resume(Effect.succeed({ code: error === null ? 0 : 1, output: stdout + stderr })))
  })

describe("session-routing check --controller, with RBAC on", () => {
  // Each refused need's hint is one line a person can paste as is, in any order: its Role
  // and RoleBinding are named after the resource, so no two lines meet AlreadyExists.
  it.scopedLive(
    "says for each refused need a line that grants it when run as printed, after which the check passes",
    () =>
      Effect.gen(function*() {
        const { kubeconfig, sc } = yield* securedCluster(envOf)
        // The rendered Role is gone: nearly everything the controller does is refused.
        yield* Effect.orDie(sc.cluster.store.delete(RoleResource, sc.namespace, CONTROLLER_NAME))
        const refused = yield* check(kubeconfig, envOf(sc), "--controller")
        // The permission checks' hints; the dry run fails too, for the same missing grants.
        const hints = refused.report.checks
          .filter((c) => c.status === "fail" && c.id.startsWith("permissions:"))
          .map((c) => c.hint ?? "")
        expect(hints.length).toBeGreaterThan(3)
        const admin = join(yield* tempDir, "admin.kubeconfig")
        yield* sc.cluster.writeKubeconfig(admin)
        for (const hint of hints) expect([hint, yield* runHint(hint, admin)]).toMatchObject([hint, { code: 0 }])
        const granted = yield* check(kubeconfig, envOf(sc), "--controller")
        expect(granted.report.checks.filter((c) => c.status === "fail")).toEqual([])
        expect(granted.exitCode).toBe(0)
      }),
    60_000
  )

  it.scopedLive(
    "passes every check as the ServiceAccount bound to exactly the rendered Role",
    () =>
      Effect.gen(function*() {
        const { kubeconfig, sc } = yield* securedCluster(envOf)
        const { exitCode, report, stderr } = yield* check(kubeconfig, envOf(sc), "--controller")
        expect(stderr).toBe("")
        expect(marks(report)).toEqual({
          server: "ok",
          api: "ok",
          namespace: "ok",
          "permissions:services": "ok",
          "permissions:ingresses.networking.k8s.io": "ok",
          "permissions:ingressclasses.networking.k8s.io": "ok",
          "permissions:pods/finalizers": "ok",
          "permissions:pods": "ok",
          "permissions:pods/status": "ok",
          "permissions:leases.coordination.k8s.io": "ok",
          "permissions:events.events.k8s.io": "ok",
          "permissions:events": "ok",
          "ingress-class": "ok",
          "dry-run": "ok"
        })
        expect(exitCode).toBe(0)
        const lines = report.checks.filter((c) =>
          ["permissions:pods", "permissions:leases.coordination.k8s.io"].includes(c.id)
        )
          .map((c) => c.line)
        expect(lines).toEqual([
          `may get, list, watch, patch pods in namespace "${sc.namespace}"`,
          `may get, list, create, update leases.coordination.k8s.io in namespace "${sc.namespace}"`
        ])
      }),
    60_000
  )

  it.scopedLive(
    "fails on pods/status patch when the Role lacks it, and says how to grant it",
    () =>
      Effect.gen(function*() {
        const { kubeconfig, role, sc } = yield* securedCluster(envOf)
        yield* Effect.orDie(
          Effect.flatMap(
            sc.cluster.store.get(RoleResource, sc.namespace, CONTROLLER_NAME),
            (live) =>
              sc.cluster.store.replace(RoleResource, sc.namespace, CONTROLLER_NAME, {
                ...live,
                rules: without(role, "pods/status", "patch")
              })
          )
        )
        const { exitCode, report } = yield* check(kubeconfig, envOf(sc), "--controller")
        expect(exitCode).toBe(1)
        expect(report.checks.filter((c) => c.status !== "ok")).toEqual([{
          id: "permissions:pods/status",
          status: "fail",
          line: `may not patch pods/status in namespace "${sc.namespace}"`,
          hint:
            `grant them to this identity: kubectl create role session-routing-controller-pods-status -n ${sc.namespace} --verb=patch --resource=pods/status && kubectl create rolebinding session-routing-controller-pods-status -n ${sc.namespace} --role=session-routing-controller-pods-status --serviceaccount=${sc.namespace}:${CONTROLLER_NAME}`
        }])
        // The runner's check asks nothing of what only the controller does.
        const runner = yield* check(kubeconfig, envOf(sc))
        expect([
          runner.exitCode,
          runner.report.checks.filter((c) => c.id.startsWith("permissions:pods"))
            .map((c) => c.id)
        ]).toEqual([0, ["permissions:pods/finalizers"]])
      }),
    60_000
  )

  it.scopedLive("fails on each Lease verb the Role lacks, in one line", () =>
    Effect.gen(function*() {
      const { kubeconfig, role, sc } = yield* securedCluster(envOf)
      const rules = without({ ...role, rules: without(role, "leases", "update") }, "leases", "create")
      yield* Effect.orDie(
        Effect.flatMap(
          sc.cluster.store.get(RoleResource, sc.namespace, CONTROLLER_NAME),
          (live) => sc.cluster.store.replace(RoleResource, sc.namespace, CONTROLLER_NAME, { ...live, rules })
        )
      )
      const { exitCode, report } = yield* check(kubeconfig, envOf(sc), "--controller")
      expect(exitCode).toBe(1)
      expect(report.checks.filter((c) => c.status !== "ok").map((c) => [c.id, c.line])).toEqual([[
        "permissions:leases.coordination.k8s.io",
        `may not create, update leases.coordination.k8s.io in namespace "${sc.namespace}"`
      ]])
    }), 60_000)
})
