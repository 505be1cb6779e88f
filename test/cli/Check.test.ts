/**
 * `session-routing check` end to end over HTTP against LocalCluster: every check
 * passing on a cluster set up for sessions, and each one failing on a cluster broken
 * in its way, with the exit status, the marks, and `-o json`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault } from "@session-routing/local-cluster"
import { Duration, Effect } from "effect"
import { join } from "node:path"
import { GatewayClassResource, HttpRouteResource, IngressResource } from "../../src/domain/Resources.js"
import type { CheckReport, CheckStatus } from "../../src/runner/Check.js"
import { untilAccepted } from "../support/RouterHarness.js"
import { type CliCluster, cliCluster, gatewayEnv, tempDir } from "./CliCluster.js"
import { runCli } from "./TestCli.js"

/** `check -o json` on the cluster; the report and the exit status. */
const check = (cluster: CliCluster, env: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>) =>
  Effect.map(runCli(["check", "--kubeconfig", cluster.kubeconfig, "-o", "json", ...args], env), (result) => ({
    exitCode: result.exitCode,
    stderr: result.stderr,
    report: JSON.parse(result.stdout) as CheckReport
  }))

/** Each check's id and mark. */
const marks = (report: CheckReport): Record<string, CheckStatus> =>
  Object.fromEntries(report.checks.map((c) => [c.id, c.status]))

const lineOf = (report: CheckReport, id: string): string => report.checks.find((c) => c.id === id)?.line ?? ""

/** Quick controllers: the round trip waits for them. */
const quick = { ingress: { delay: Duration.millis(50) }, gateway: { delay: Duration.millis(50) } } as const

const FIRST_CHECKS = { server: "ok", api: "ok", namespace: "ok" } as const
// An open LocalCluster allows everything, and its SelfSubjectAccessReviews say so.
const INGRESS_PERMISSIONS = {
  "permissions:services": "ok",
  "permissions:ingresses.networking.k8s.io": "ok",
  "permissions:ingressclasses.networking.k8s.io": "ok",
  "permissions:pods/finalizers": "ok",
  "permissions:events.events.k8s.io": "ok",
  "permissions:events": "ok"
} as const
const GATEWAY_PERMISSIONS = {
  "permissions:services": "ok",
  "permissions:httproutes.gateway.networking.k8s.io": "ok",
  "permissions:gateways.gateway.networking.k8s.io": "ok",
  "permissions:gatewayclasses.gateway.networking.k8s.io": "ok",
  "permissions:pods/finalizers": "ok",
  "permissions:events.events.k8s.io": "ok",
  "permissions:events": "ok"
} as const

describe("session-routing check", () => {
  it.live("passes every check on a cluster set up for ingress mode, and exits 0", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        const { exitCode, report, stderr } = yield* check(cluster, cluster.env)
        expect(stderr).toBe("")
        expect(exitCode).toBe(0)
        expect(marks(report)).toEqual({
          ...FIRST_CHECKS,
          ...INGRESS_PERMISSIONS,
          "ingress-class": "ok",
          "dry-run": "ok"
        })
        expect(report.ok).toBe(true)
        expect(lineOf(report, "server")).toMatch(
          /^the kubeconfig's context "local-cluster" reaches http:\/\/127\.0\.0\.1:\d+: Kubernetes v\d+\.\d+/
        )
        expect(lineOf(report, "api")).toBe(
          "the API server serves services, ingresses.networking.k8s.io, ingressclasses.networking.k8s.io"
        )
        expect(lineOf(report, "permissions:ingresses.networking.k8s.io")).toBe(
          "may get, list, create, patch, delete, watch ingresses.networking.k8s.io in namespace \"telo-sessions\""
        )
        expect(lineOf(report, "ingress-class")).toBe(
          "IngressClass \"local\", controller \"session-routing.dev/local-ingress\""
        )
        expect(lineOf(report, "dry-run")).toBe(
          "the API server admits a sample session's Service and Ingress (dry run, nothing stored)"
        )
      })
    ))

  it.live("passes in gateway mode and, with --round-trip, publishes a probe session, sees it programmed and removes it", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        // The controller accepts its GatewayClass moments after the cluster starts; a check
        // before then rightly fails GatewayClassNotAccepted, which is not this test's case.
        yield* untilAccepted(cluster.cluster.store.get(GatewayClassResource, "", cluster.gateway.className))
        const { exitCode, report } = yield* check(cluster, gatewayEnv(cluster), "--round-trip")
        // Which check failed, should one: the exit status alone says nothing to act on.
        expect(exitCode, JSON.stringify(report.checks.filter((c) => c.status === "fail"))).toBe(0)
        expect(marks(report)).toEqual({
          ...FIRST_CHECKS,
          ...GATEWAY_PERMISSIONS,
          gateway: "ok",
          "dry-run": "ok",
          "round-trip": "ok"
        })
        expect(lineOf(report, "gateway")).toMatch(
          /^Gateway telo-sessions\/sessions \(GatewayClass "local", controller "session-routing.dev\/local-gateway"\) is Accepted and Programmed/
        )
        expect(lineOf(report, "round-trip")).toMatch(
          /^probe session routing-check published, programmed and unpublished in \d+ ms$/
        )
        const left = yield* cluster.cluster.store.list(HttpRouteResource, cluster.namespace)
        expect(left.items).toEqual([])
      })
    ))

  it.live("prints one line per check with its mark, a hint under a failure, and a summary (table)", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        const result = yield* runCli(["check", "--kubeconfig", cluster.kubeconfig], {
          ...cluster.env,
          SESSION_INGRESS_CLASS: "nginx"
        })
        expect(result.exitCode).toBe(1)
        const lines = result.stdout.split("\n")
        expect(lines[0]).toMatch(/^✓ the kubeconfig's context "local-cluster" reaches http:/)
        expect(lines).toContain("✓ may get, list, create, patch, delete services in namespace \"telo-sessions\"")
        expect(lines).toContain(
          "✗ IngressClassNotFound: the session Ingress names IngressClass \"nginx\", which does not exist (the cluster has \"local\"): set SESSION_INGRESS_CLASS to a class the cluster has, or install the ingress controller that provides \"nginx\""
        )
        expect(lines.at(-2)).toBe("1 of 11 checks failed")
        // The report is the output: nothing more on stderr.
        expect(result.stderr).toBe("")
      })
    ))

  it.live("fails the server check, and stops there, when the kubeconfig reaches no server", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster()
        yield* cluster.cluster.faults.server.stop
        const { exitCode, report } = yield* check(cluster, { ...cluster.env, SESSION_API_TIMEOUT_MS: "1000" })
        expect(exitCode).toBe(1)
        expect(marks(report)).toEqual({ server: "fail" })
        expect(lineOf(report, "server")).toMatch(
          /^the kubeconfig does not reach an API server: could not get version at http:\/\/127\.0\.0\.1:\d+: the connection was refused/
        )
      })
    ))

  it.live("fails with the kubeconfig as the first check when there is none to load", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster()
        const missing = join(yield* tempDir, "absent")
        const result = yield* runCli(["check", "--kubeconfig", missing, "-o", "json"], cluster.env)
        expect(result.exitCode).toBe(1)
        const report = JSON.parse(result.stdout) as CheckReport
        expect(marks(report)).toEqual({ kubeconfig: "fail" })
      })
    ))

  it.live("fails the API check when the cluster does not serve HTTPRoutes (gateway mode)", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        yield* cluster.cluster.store.setServed(HttpRouteResource, false)
        const { exitCode, report } = yield* check(cluster, gatewayEnv(cluster))
        expect(exitCode).toBe(1)
        expect(marks(report)).toMatchObject({ api: "fail", "dry-run": "fail" })
        expect(lineOf(report, "api")).toBe("the API server does not serve httproutes.gateway.networking.k8s.io/v1")
        expect(report.checks.find((c) => c.id === "api")?.hint).toMatch(/install the Gateway API CRDs/)
      })
    ))

  it.live("fails the namespace check when the session namespace does not exist", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        const { exitCode, report } = yield* check(cluster, cluster.env, "-n", "elsewhere")
        expect(exitCode).toBe(1)
        expect(marks(report)).toMatchObject({ namespace: "fail", "dry-run": "fail" })
        expect(lineOf(report, "namespace")).toBe("namespace \"elsewhere\" does not exist")
      })
    ))

  it.live("fails the Gateway check with the first broken link when the Gateway does not exist", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        const { exitCode, report } = yield* check(cluster, { ...gatewayEnv(cluster), SESSION_GATEWAY_NAME: "missing" })
        expect(exitCode).toBe(1)
        expect(marks(report)).toMatchObject({ gateway: "fail", "dry-run": "ok" })
        expect(lineOf(report, "gateway")).toMatch(/^GatewayNotFound: Gateway telo-sessions\/missing does not exist/)
      })
    ))

  it.live("fails the dry run when admission refuses the session's objects", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster(quick)
        yield* cluster.cluster.faults.add({
          resource: IngressResource,
          verbs: ["patch"],
          action: Fault.respond(422, {
            message: "admission webhook \"policy.example.com\" denied the request: hosts must be approved"
          })
        })
        const { exitCode, report } = yield* check(cluster, cluster.env)
        expect(exitCode).toBe(1)
        expect(marks(report)).toMatchObject({ "ingress-class": "ok", "dry-run": "fail" })
        expect(lineOf(report, "dry-run")).toBe(
          "the API server refuses a sample session's objects (dry run): admission webhook \"policy.example.com\" denied the request: hosts must be approved"
        )
      })
    ))

  it.live("fails the round trip with the host's reason when no controller programs the probe", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: "never" } })
        const { exitCode, report } = yield* check(
          cluster,
          { ...cluster.env, SESSION_ROUTE_READY_TIMEOUT_MS: "400" },
          "--round-trip"
        )
        expect(exitCode).toBe(1)
        expect(marks(report)).toMatchObject({ "ingress-class": "ok", "round-trip": "fail" })
        expect(lineOf(report, "round-trip")).toMatch(
          /^probe host 8080-routing-check\.sessions\.localtest\.me ended unprogrammed: NoIngressStatus: /
        )
        const left = yield* cluster.cluster.store.list(IngressResource, cluster.namespace)
        expect(left.items).toEqual([])
      })
    ))

  it.live("refuses --pod without --pod-uid in one line, before asking the cluster anything", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster()
        const result = yield* runCli(
          ["check", "--kubeconfig", cluster.kubeconfig, "--round-trip", "--pod", "runner-0"],
          cluster.env
        )
        expect(result).toEqual({
          exitCode: 1,
          stdout: "",
          stderr: "error: --pod and --pod-uid go together: name the Pod and its metadata.uid\n"
        })
      })
    ))

  it.live("has nothing to check in mode none, says so, and exits 0", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster()
        const { exitCode, report } = yield* check(cluster, cluster.env, "--mode", "none")
        expect(exitCode).toBe(0)
        expect(report).toEqual({
          ok: true,
          checks: [{
            id: "mode",
            status: "warn",
            line: "nothing to check: mode none publishes nothing",
            hint: "set SESSION_ROUTING_MODE and SESSION_ROUTING_BASE_DOMAIN to the values the runner uses"
          }]
        })
      })
    ))
})
