/**
 * `checkRouting`, check by check, against a LocalCluster whose server questions and
 * authorizer answers the test scripts (it has no RBAC of its own to answer
 * SelfSubjectAccessReview with, unless started with it): the server line, API discovery
 * that fails or serves nothing, the permission checks and the questions they ask, a
 * routing layer that cannot diagnose, a dry run that stores nothing and names the
 * probe's owner, each way the round trip can end, and what it can and cannot tell
 * through a client that has no server to ask.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, Fault, SessionCluster } from "@session-routing/local-cluster"
import { Clock, Effect, Layer } from "effect"
import type { KubeObject } from "../../src/domain/Objects.js"
import { GatewayClassResource, IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { type CheckOptions, type CheckReport, type CheckResult, checkRouting } from "../../src/runner/Check.js"
import { type AccessQuestion, type ClusterQueries, KubeClient } from "../../src/services/KubeClient.js"
import { Forbidden, type KubeError, NotServed } from "../../src/services/KubeError.js"
import { RouteStatusSource } from "../../src/services/RouteStatusSource.js"
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

/** Server questions that answer as an open v1.31 cluster does, unless a test says otherwise. */
const openQueries = (overrides: Partial<ClusterQueries> = {}): ClusterQueries => ({
  server: "https://203.0.113.10:6443",
  version: Effect.succeed({ gitVersion: "v1.31.0" }),
  servedResources: (group) =>
    Effect.succeed(
      group === ""
        ? ["services", "namespaces", "events"]
        : group === "networking.k8s.io"
        ? ["ingresses", "ingressclasses"]
        : ["httproutes", "gateways", "gatewayclasses"]
    ),
  accessReview: () => Effect.succeed({ allowed: true }),
  whoAmI: Effect.succeed({ username: "system:serviceaccount:telo-sessions:runner" }),
  ...overrides
})

interface Run {
  /** How the check reaches the cluster; in memory unless given. */
  readonly face?: Face
  readonly config?: TestConfig
  /** Replaces the client's server questions. */
  readonly queries?: ClusterQueries | undefined
  /** Answers the client's access reviews, where it has a server to ask. */
  readonly review?: Reviewer
  readonly options?: CheckOptions
  /** Changes the router before the check sees it. */
  readonly source?: (source: RouteStatusSource.Service) => RouteStatusSource.Service
  /** Runs on the cluster before the check. */
  readonly before?: (sc: SessionCluster.SessionCluster) => Effect.Effect<void>
}

/** The report on a fresh cluster, and what the dry runs sent and the cluster holds afterwards. */
const run = (setup: Run = {}) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster()
      if (setup.before !== undefined) yield* setup.before(sc)
      const kube = yield* Effect.provide(KubeClient, kubeClientLayer(setup.face ?? "in memory", sc.cluster))
      // The gateway controller accepts its GatewayClass moments after the cluster starts;
      // a check before then rightly reports GatewayClassNotAccepted, which is not what
      // these tests are about.
      if (setup.config?.mode === "gateway") {
        yield* untilAccepted(kube.get(GatewayClassResource, "", sc.gateway.className))
      }
      const applied: Array<{ readonly object: KubeObject; readonly dryRun: boolean }> = []
      const cluster = setup.queries ?? (setup.review !== undefined && kube.cluster !== undefined
        ? { ...kube.cluster, accessReview: setup.review }
        : undefined)
      const recording: KubeClient.Service = {
        ...kube,
        apply: (resource, object, options) => {
          applied.push({ object, dryRun: options?.dryRun === true })
          return kube.apply(resource, object, options)
        },
        ...(cluster !== undefined ? { cluster } : {})
      }
      const config = routerConfigLayer(sc, setup.config)
      const router = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(Layer.succeed(KubeClient, recording)),
        Layer.provideMerge(config)
      )
      const changed = setup.source === undefined ? router : Layer.effect(
        RouteStatusSource,
        Effect.map(RouteStatusSource, setup.source!)
      ).pipe(Layer.provideMerge(router))
      const report: CheckReport = yield* checkRouting(setup.options).pipe(Effect.provide(changed), Effect.orDie)
      const services = yield* Effect.orDie(sc.cluster.store.list(ServiceResource, sc.namespace))
      const ingresses = yield* Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace))
      return { report, applied, stored: [...services.items, ...ingresses.items], sc }
    })
  )

/** The report alone, the client's access reviews answered by `review` when given. */
const reportWith = (face: Face, config: TestConfig, review?: Reviewer): Effect.Effect<CheckReport> =>
  Effect.map(run({ face, config, ...(review !== undefined ? { review } : {}) }), ({ report }) => report)

const check = (report: CheckReport, id: string) => report.checks.find((c) => c.id === id)

const permissions = (report: CheckReport): ReadonlyArray<CheckResult> =>
  report.checks.filter((c) => c.id.startsWith("permissions"))

const allowAll: Reviewer = () => Effect.succeed({ allowed: true })
const deny = (verb: string, resource: string): Reviewer => (q) =>
  Effect.succeed({ allowed: !(q.verb === verb && q.resource === resource) })

const NS = `namespace "${SessionCluster.DEFAULT_SESSION_NAMESPACE}"`

describe("the server, the APIs it serves, and the mode", () => {
  it.live("names the server and its version, without a context when the kubeconfig names none", () =>
    Effect.gen(function*() {
      const { report } = yield* run({ queries: openQueries() })
      expect(check(report, "server")).toEqual({
        id: "server",
        status: "ok",
        line: "the kubeconfig reaches https://203.0.113.10:6443: Kubernetes v1.31.0"
      })
      expect(check(report, "api")).toEqual({
        id: "api",
        status: "ok",
        line: "the API server serves services, ingresses.networking.k8s.io, ingressclasses.networking.k8s.io"
      })
      expect(report.ok).toBe(true)
    }))

  it.live("only warns when discovery itself fails, naming why", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        queries: openQueries({
          servedResources: () => Effect.fail(new Forbidden({ reason: "discovery is forbidden" }))
        })
      })
      expect(check(report, "api")).toEqual({
        id: "api",
        status: "warn",
        line: "could not ask which APIs are served: discovery is forbidden"
      })
    }))

  it.live("fails with every resource of a group version that serves nothing, and says how to get the Ingress API", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        queries: openQueries({
          servedResources: (group, version) =>
            group === "networking.k8s.io"
              ? Effect.fail(new NotServed({ reason: "404", resource: `${group}/${version}` }))
              : Effect.succeed(["services"])
        })
      })
      expect(check(report, "api")).toEqual({
        id: "api",
        status: "fail",
        line: "the API server does not serve ingresses.networking.k8s.io/v1, ingressclasses.networking.k8s.io/v1",
        hint:
          "this cluster has no Ingress API (networking.k8s.io/v1, Kubernetes 1.19 or later): upgrade it, or set SESSION_ROUTING_MODE=gateway"
      })
      expect(report.ok).toBe(false)
    }))

  it.live("has nothing to check without a base domain, and says so", () =>
    Effect.gen(function*() {
      const { report } = yield* run({ config: { unset: ["baseDomain"] } })
      expect(report).toEqual({
        ok: true,
        checks: [{
          id: "mode",
          status: "warn",
          line: "nothing to check: no base domain is set, so nothing is published",
          hint: "set SESSION_ROUTING_MODE and SESSION_ROUTING_BASE_DOMAIN to the values the runner uses"
        }]
      })
    }))
})

describe("permissions", () => {
  it.live("passes one check per resource when every verb the ingress mode uses is granted", () =>
    Effect.gen(function*() {
      const report = yield* reportWith("over HTTP", {}, allowAll)
      expect(permissions(report)).toEqual([
        { id: "permissions:services", status: "ok", line: `may get, list, create, patch, delete services in ${NS}` },
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
          `grant them to this identity: kubectl create role session-routing-ingresses-networking-k8s-io -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=watch --resource=ingresses.networking.k8s.io && kubectl create rolebinding session-routing-ingresses-networking-k8s-io -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --role=session-routing-ingresses-networking-k8s-io --user=system:anonymous`
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
            `grant them to this identity: kubectl create role session-routing-events-events-k8s-io -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=create --resource=events.events.k8s.io && kubectl create rolebinding session-routing-events-events-k8s-io -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --role=session-routing-events-events-k8s-io --user=system:anonymous`
        },
        {
          id: "permissions:events",
          status: "warn",
          line: `may not create events in ${NS} (used only for Events on the session Pod)`,
          hint:
            `grant them to this identity: kubectl create role session-routing-events -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --verb=create --resource=events && kubectl create rolebinding session-routing-events -n ${SessionCluster.DEFAULT_SESSION_NAMESPACE} --role=session-routing-events --user=system:anonymous`
        },
        {
          id: "permissions:endpointslices.discovery.k8s.io",
          status: "ok",
          line: `may list endpointslices.discovery.k8s.io in ${NS}`
        }
      ])
      expect(probing.ok).toBe(true)
    }))

  it.live("asks for the controller's Pods, their status and its Lease, required, and grants them in its own Role", () =>
    Effect.gen(function*() {
      const asked: Array<AccessQuestion> = []
      const { report, sc } = yield* run({
        options: { controller: true },
        queries: openQueries({
          accessReview: (question) =>
            Effect.sync(() => {
              asked.push(question)
              return { allowed: !(question.verb === "watch" && question.resource === "pods") }
            })
        })
      })
      expect(permissions(report).map((c) => [c.id, c.status])).toEqual([
        ["permissions:services", "ok"],
        ["permissions:ingresses.networking.k8s.io", "ok"],
        ["permissions:ingressclasses.networking.k8s.io", "ok"],
        ["permissions:pods/finalizers", "ok"],
        ["permissions:pods", "fail"],
        ["permissions:pods/status", "ok"],
        ["permissions:leases.coordination.k8s.io", "ok"],
        ["permissions:events.events.k8s.io", "ok"],
        ["permissions:events", "ok"]
      ])
      expect(check(report, "permissions:pods")).toEqual({
        id: "permissions:pods",
        status: "fail",
        line: `may not watch pods in ${NS}`,
        hint:
          `grant them to this identity: kubectl create role session-routing-controller-pods -n ${sc.namespace} --verb=watch --resource=pods && kubectl create rolebinding session-routing-controller-pods -n ${sc.namespace} --role=session-routing-controller-pods --serviceaccount=telo-sessions:runner`
      })
      expect(report.ok).toBe(false)
      // pods/status is asked as the subresource it is, all of them in the session namespace.
      const inNamespace = { namespace: sc.namespace }
      expect(asked.filter((q) => q.resource === "pods" || q.resource === "leases")).toEqual([
        { verb: "update", group: "", resource: "pods", subresource: "finalizers", ...inNamespace },
        ...["get", "list", "watch", "patch"].map((verb) => ({ verb, group: "", resource: "pods", ...inNamespace })),
        { verb: "patch", group: "", resource: "pods", subresource: "status", ...inNamespace },
        ...["get", "list", "create", "update"].map((verb) => ({
          verb,
          group: "coordination.k8s.io",
          resource: "leases",
          ...inNamespace
        }))
      ])
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

  it.live("asks each verb in the resource's namespace, and cluster-scoped resources without one", () =>
    Effect.gen(function*() {
      const asked: Array<AccessQuestion> = []
      const { report, sc } = yield* run({
        queries: openQueries({
          accessReview: (question) => Effect.sync(() => (asked.push(question), { allowed: true }))
        })
      })
      expect(report.ok).toBe(true)
      expect(asked.filter((q) => q.resource === "services")).toEqual(
        ["get", "list", "create", "patch", "delete"].map((verb) => ({
          verb,
          group: "",
          resource: "services",
          namespace: sc.namespace
        }))
      )
      expect(asked.filter((q) => q.resource === "ingressclasses")).toEqual([
        { verb: "list", group: "networking.k8s.io", resource: "ingressclasses" }
      ])
    }))

  it.live("reports each resource whose review answered, when every review answers", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        queries: openQueries({ accessReview: (q) => Effect.succeed({ allowed: q.verb !== "delete" }) })
      })
      expect(check(report, "permissions:services")).toMatchObject({
        status: "fail",
        line: expect.stringMatching(/^may not delete services in namespace/)
      })
    }))
})

describe("permissions on a LocalCluster that authorizes by RBAC (over HTTPS)", () => {
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
            SessionRouting.layerConfig.pipe(
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

describe("the routing path", () => {
  it.live("warns when the routing layer cannot say what its routing depends on", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        source: ({ diagnose: _, ...rest }) => rest
      })
      expect(check(report, "ingress-class")).toEqual({
        id: "ingress-class",
        status: "warn",
        line: "this routing layer cannot say what its routing depends on"
      })
    }))

  it.live("only warns when a link of the routing could not be read", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        before: (sc) =>
          sc.cluster.faults.add({ resource: "ingressclasses", verbs: ["list"], action: Fault.forbid() }).pipe(
            Effect.asVoid
          )
      })
      expect(check(report, "ingress-class")).toMatchObject({
        id: "ingress-class",
        status: "warn",
        line: expect.stringMatching(/^could not read the IngressClasses: .*forbidden/)
      })
      expect(report.ok).toBe(true)
    }))
})

describe("the dry run", () => {
  it.live("sends the sample session's objects as dry runs only, owned by a placeholder Pod, and stores nothing", () =>
    Effect.gen(function*() {
      const { applied, stored } = yield* run()
      expect(applied.map(({ dryRun, object }) => [object.kind, dryRun])).toEqual([
        ["Service", true],
        ["Ingress", true]
      ])
      expect(applied[0]!.object.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: "Pod",
          name: "session-routing-routing-check",
          uid: "00000000-0000-0000-0000-000000000000"
        })
      ])
      expect(stored).toEqual([])
    }))

  // The server's reason (namespaces "x" not found) says what is wrong, not what to do.
  it.live("says how to create the session namespace when the dry run meets none", () =>
    Effect.gen(function*() {
      const { report } = yield* run({ config: { sessionNamespace: "elsewhere" } })
      expect(check(report, "dry-run")).toEqual({
        id: "dry-run",
        status: "fail",
        line: expect.stringMatching(/^the API server refuses a sample session's objects \(dry run\): /),
        hint: "namespace \"elsewhere\" does not exist: create it (kubectl create namespace elsewhere), " +
          "or set RUNNER_SESSION_NAMESPACE / -n to the runner's namespace"
      })
    }))

  it.live("names the given Pod as the owner of the probe's objects", () =>
    Effect.gen(function*() {
      const { applied } = yield* run({ options: { probeOwner: { podName: "runner-0", podUid: "uid-runner-0" } } })
      expect(applied[0]!.object.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ kind: "Pod", name: "runner-0", uid: "uid-runner-0" })
      ])
    }))
})

describe("the round trip", () => {
  it.live("publishes, sees programmed and removes the probe session, and says how long that took", () =>
    Effect.gen(function*() {
      const before = yield* Clock.currentTimeMillis
      const { report, stored, applied } = yield* run({ options: { roundTrip: true } })
      const elapsed = (yield* Clock.currentTimeMillis) - before
      expect(check(report, "round-trip")).toEqual({
        id: "round-trip",
        status: "ok",
        line: expect.stringMatching(/^probe session routing-check published, programmed and unpublished in \d+ ms$/)
      })
      const took = Number(/in (\d+) ms$/.exec(check(report, "round-trip")?.line ?? "")?.[1])
      expect(took).toBeGreaterThanOrEqual(0)
      expect(took).toBeLessThanOrEqual(elapsed)
      expect(applied.filter((a) => !a.dryRun).map((a) => a.object.kind)).toEqual(["Service", "Ingress"])
      expect(stored).toEqual([])
    }))

  it.live("has no round trip unless asked", () =>
    Effect.gen(function*() {
      const { report } = yield* run({ options: { roundTrip: false } })
      expect(report.checks.map((c) => c.id)).not.toContain("round-trip")
    }))

  it.live("fails with the publish's error when the probe session cannot be published", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        options: { roundTrip: true },
        config: { apiTimeoutMs: 1000 },
        before: (sc) =>
          sc.cluster.faults.add({ resource: "services", verbs: ["patch"], action: Fault.forbid() }).pipe(Effect.asVoid)
      })
      expect(check(report, "round-trip")).toEqual({
        id: "round-trip",
        status: "fail",
        line: expect.stringMatching(/^could not publish probe session routing-check: .*forbidden/)
      })
    }))

  it.live("fails and says how to remove the objects by hand when the probe session cannot be unpublished", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        options: { roundTrip: true },
        config: { apiTimeoutMs: 1000 },
        before: (sc) =>
          sc.cluster.faults.add({ resource: "services", verbs: ["delete"], action: Fault.forbid() }).pipe(
            Effect.asVoid
          )
      })
      expect(check(report, "round-trip")).toEqual({
        id: "round-trip",
        status: "fail",
        line: expect.stringMatching(/^could not unpublish probe session routing-check: .*forbidden/),
        hint:
          "remove its objects by hand: kubectl delete service,ingress,httproute -l telo.run/session-id=routing-check"
      })
    }))

  it.live("gives no hint about the probe's owner when a running Pod owns it", () =>
    Effect.gen(function*() {
      const unrouted = yield* run({
        options: { roundTrip: true },
        config: { routeReadyTimeoutMs: 300, ingressClassName: "nobody" }
      })
      expect(check(unrouted.report, "round-trip")).toMatchObject({
        status: "fail",
        line: expect.stringMatching(/^probe host 8080-routing-check\./),
        hint: expect.stringMatching(/name a running Pod with --pod and --pod-uid$/)
      })
      const owned = yield* run({
        options: { roundTrip: true, probeOwner: { podName: "runner-0", podUid: "uid-runner-0" } },
        config: { routeReadyTimeoutMs: 300, ingressClassName: "nobody" }
      })
      expect(check(owned.report, "round-trip")).toEqual({
        id: "round-trip",
        status: "fail",
        line: expect.stringMatching(/^probe host 8080-routing-check\.sessions\.localtest\.me ended unprogrammed: /)
      })
    }))
})
