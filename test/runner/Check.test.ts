/**
 * `checkRouting`'s permission checks, with the authorizer's answers scripted over the
 * live client (LocalCluster has no RBAC to answer SelfSubjectAccessReview with): every
 * verb granted, a required verb denied, an optional one denied, and reviews refused.
 * And what it can and cannot tell through a client that has no server to ask.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, SessionCluster } from "@session-routing/local-cluster"
import { Effect, Layer } from "effect"
import { GatewayClassResource } from "../../src/domain/Resources.js"
import { SessionRouter } from "../../src/layers/SessionRouterLayers.js"
import { type CheckReport, type CheckResult, checkRouting } from "../../src/runner/Check.js"
import { type AccessQuestion, KubeClient } from "../../src/services/KubeClient.js"
import { Forbidden, type KubeError, NotServed } from "../../src/services/KubeError.js"
import {
  type Face,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  untilAccepted
} from "../support/RouterHarness.js"
import { grant, liveClientAs } from "../support/SecuredCluster.js"

type Reviewer = (question: AccessQuestion) => Effect.Effect<{ readonly allowed: boolean }, KubeError>

/** The report on a fresh cluster, the client's access reviews answered by `review` when given. */
const reportWith = (face: Face, config: TestConfig, review?: Reviewer): Effect.Effect<CheckReport> =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster()
      const kube = yield* Effect.provide(KubeClient, kubeClientLayer(face, sc.cluster))
      // The gateway controller accepts its GatewayClass moments after the cluster starts;
      // a check before then rightly reports GatewayClassNotAccepted, which is not what
      // these tests are about.
      if (config.mode === "gateway") {
        yield* untilAccepted(kube.get(GatewayClassResource, "", sc.gateway.className))
      }
      const cluster = kube.cluster
      const scripted: KubeClient.Service = review !== undefined && cluster !== undefined
        ? { ...kube, cluster: { ...cluster, accessReview: review } }
        : kube
      return yield* checkRouting().pipe(
        Effect.provide(
          SessionRouter.layerConfig.pipe(
            Layer.provideMerge(Layer.succeed(KubeClient, scripted)),
            Layer.provideMerge(routerConfigLayer(sc, config))
          )
        ),
        Effect.orDie
      )
    })
  )

const permissions = (report: CheckReport): ReadonlyArray<CheckResult> =>
  report.checks.filter((c) => c.id.startsWith("permissions"))

const allowAll: Reviewer = () => Effect.succeed({ allowed: true })
const deny = (verb: string, resource: string): Reviewer => (q) =>
  Effect.succeed({ allowed: !(q.verb === verb && q.resource === resource) })

const NS = `namespace "${SessionCluster.DEFAULT_SESSION_NAMESPACE}"`

describe("checkRouting's permissions", () => {
  it.live("passes one check per resource when every verb the ingress mode uses is granted", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("over HTTP", {}, allowAll)
      expect(permissions(report)).toEqual([
        { id: "permissions:services", status: "ok", line: `may list, create, patch, delete services in ${NS}` },
        {
          id: "permissions:ingresses.networking.k8s.io",
          status: "ok",
          line: `may get, list, create, patch, delete, watch ingresses.networking.k8s.io in ${NS}`
        },
        {
          id: "permissions:ingressclasses.networking.k8s.io",
          status: "ok",
          line: "may list ingressclasses.networking.k8s.io (cluster-wide)"
        },
        { id: "permissions:pods/finalizers", status: "ok", line: `may update pods/finalizers in ${NS}` },
        {
          id: "permissions:events.events.k8s.io",
          status: "ok",
          line: `may create, patch events.events.k8s.io in ${NS}`
        },
        { id: "permissions:events", status: "ok", line: `may create, patch events in ${NS}` }
      ])
      expect(report.ok).toBe(true)
    }))

  it.live("asks only for get where route status is polled", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("over HTTP", { statusSource: "poll" }, allowAll)
      expect(permissions(report)[1]?.line).toBe(
        `may get, list, create, patch, delete ingresses.networking.k8s.io in ${NS}`
      )
    }))

  it.live("fails when a verb the routing needs is denied, and says how to grant it", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("over HTTP", {}, deny("watch", "ingresses"))
      expect(permissions(report)[1]).toEqual({
        id: "permissions:ingresses.networking.k8s.io",
        status: "fail",
        line: `may not watch ingresses.networking.k8s.io in ${NS}`,
        hint:
          `grant them in a Role bound to this identity: kubectl create role session-routing -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=watch --resource=ingresses.networking.k8s.io`
      })
      expect(report.ok).toBe(false)
    }))

  it.live("only warns when a verb only the diagnosis uses is denied (gateway mode)", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("over HTTP", { mode: "gateway" }, deny("get", "gatewayclasses"))
      expect(permissions(report).map((c) => [c.id, c.status])).toEqual([
        ["permissions:services", "ok"],
        ["permissions:httproutes.gateway.networking.k8s.io", "ok"],
        ["permissions:gateways.gateway.networking.k8s.io", "ok"],
        ["permissions:gatewayclasses.gateway.networking.k8s.io", "warn"],
        ["permissions:pods/finalizers", "ok"],
        ["permissions:events.events.k8s.io", "ok"],
        ["permissions:events", "ok"]
      ])
      expect(permissions(report)[3]?.line).toBe(
        "may not get gatewayclasses.gateway.networking.k8s.io (cluster-wide) (used only for the same, through the GatewayClass)"
      )
      expect(report.ok).toBe(true)
    }))

  it.live("asks for what Events and probes use only when they are on, and only warns when it is denied", () =>
    Effect.gen(function*() {
      const quiet = yield* reportWith("over HTTP", { events: false }, allowAll)
      expect(permissions(quiet).map((c) => c.id)).not.toContain("permissions:events.events.k8s.io")
      const probing = yield* reportWith("over HTTP", { routeProbe: "http" }, deny("create", "events"))
      expect(permissions(probing).slice(4)).toEqual([
        {
          id: "permissions:events.events.k8s.io",
          status: "warn",
          line: `may not create events.events.k8s.io in ${NS} (used only for Events on the session Pod)`,
          hint:
            `grant them in a Role bound to this identity: kubectl create role session-routing -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=create --resource=events.events.k8s.io`
        },
        {
          id: "permissions:events",
          status: "warn",
          line: `may not create events in ${NS} (used only for Events on the session Pod)`,
          hint:
            `grant them in a Role bound to this identity: kubectl create role session-routing -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=create --resource=events`
        },
        {
          id: "permissions:endpointslices.discovery.k8s.io",
          status: "ok",
          line: `may list endpointslices.discovery.k8s.io in ${NS}`
        }
      ])
      expect(probing.ok).toBe(true)
    }))

  it.live("says the permissions were not checked, once, when access reviews are refused", () =>
    Effect.gen(function*() {
      const refused: Reviewer = () =>
        Effect.fail(
          new Forbidden({
            reason: "selfsubjectaccessreviews.authorization.k8s.io is forbidden: User \"u\" cannot create resource"
          })
        )
      const report = yield* reportWith("over HTTP", {}, refused)
      expect(permissions(report)).toEqual([{
        id: "permissions",
        status: "warn",
        line:
          "permissions not checked: SelfSubjectAccessReview failed: selfsubjectaccessreviews.authorization.k8s.io is forbidden: User \"u\" cannot create resource",
        hint: "check them by hand: kubectl auth can-i --list -n <namespace>"
      }])
      expect(report.ok).toBe(true)
    }))

  it.live("says the permissions were not checked when the server does not serve access reviews", () =>
    Effect.gen(function*() {
      const unserved: Reviewer = () =>
        Effect.fail(
          new NotServed({ reason: "404 page not found", resource: "selfsubjectaccessreviews.authorization.k8s.io" })
        )
      const report = yield* reportWith("over HTTP", {}, unserved)
      expect(permissions(report).map((c) => [c.id, c.status, c.line])).toEqual([
        ["permissions", "warn", "permissions not checked: the API server does not answer SelfSubjectAccessReview"]
      ])
    }))

  it.live("warns about what it cannot ask through a client with no server (in memory), and checks the rest", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("in memory", {})
      expect(report.checks.map((c) => [c.id, c.status])).toEqual([
        ["server", "warn"],
        ["api", "warn"],
        ["namespace", "ok"],
        ["permissions", "warn"],
        ["ingress-class", "ok"],
        ["dry-run", "ok"]
      ])
    }))
})

describe("checkRouting against a LocalCluster that authorizes by RBAC (over HTTPS)", () => {
  it.live("fails the verb a Role does not grant, and only warns about the reads the Role cannot cover", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const sc = yield* Effect.orDie(SessionCluster.make({ dataPlane: false, auth: { rbac: true } }))
        const ns = sc.namespace
        // What a namespaced Role can grant a runner: everything but watch on Ingresses.
        yield* grant(sc.cluster, ns, "session-routing", { user: "runner" }, [
          { verbs: ["get", "list", "create", "patch", "delete"], apiGroups: [""], resources: ["services"] },
          {
            verbs: ["get", "list", "create", "patch", "delete"],
            apiGroups: ["networking.k8s.io"],
            resources: ["ingresses"]
          }
        ])
        const report = yield* checkRouting().pipe(
          Effect.provide(
            SessionRouter.layerConfig.pipe(
              Layer.provideMerge(liveClientAs(sc.cluster, Credential.clientCertificate("runner"))),
              Layer.provideMerge(routerConfigLayer(sc))
            )
          ),
          Effect.orDie
        )
        expect(report.checks.map((c) => [c.id, c.status])).toEqual([
          ["server", "ok"],
          ["api", "ok"],
          // Namespaces are cluster-scoped: a Role cannot grant reading one.
          ["namespace", "warn"],
          ["permissions:services", "ok"],
          ["permissions:ingresses.networking.k8s.io", "fail"],
          ["permissions:ingressclasses.networking.k8s.io", "warn"],
          ["permissions:pods/finalizers", "warn"],
          ["permissions:events.events.k8s.io", "warn"],
          ["permissions:events", "warn"],
          ["ingress-class", "warn"],
          ["dry-run", "ok"]
        ])
        expect(report.checks.find((c) => c.id === "permissions:ingresses.networking.k8s.io")?.line).toBe(
          `may not watch ingresses.networking.k8s.io in namespace "${ns}"`
        )
        expect(report.checks.find((c) => c.id === "ingress-class")?.line).toMatch(
          /^could not read the IngressClasses: ingressclasses\.networking\.k8s\.io is forbidden: User "runner" cannot list/
        )
        expect(report.ok).toBe(false)
      })
    ))
})
