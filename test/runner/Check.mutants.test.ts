/**
 * `checkRouting` where mutation testing found it unchecked: the server line without a
 * context, API discovery that fails or serves nothing, the questions its access
 * reviews ask, a routing layer that cannot diagnose, a dry run that stores nothing
 * and names the probe's owner, and each way the round trip can end. Against an
 * in-memory LocalCluster whose server questions the test scripts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, type SessionCluster } from "@session-routing/local-cluster"
import { Clock, Effect, Layer } from "effect"
import type { KubeObject } from "../../src/domain/Objects.js"
import { IngressResource, ServiceResource } from "../../src/domain/Resources.js"
import { SessionRouter } from "../../src/layers/SessionRouterLayers.js"
import { type CheckOptions, type CheckReport, checkRouting } from "../../src/runner/Check.js"
import { type AccessQuestion, type ClusterQueries, KubeClient } from "../../src/services/KubeClient.js"
import { Forbidden, NotServed } from "../../src/services/KubeError.js"
import { SessionRouter as SessionRouterTag } from "../../src/services/SessionRouter.js"
import { kubeClientLayer, routerConfigLayer, startCluster, type TestConfig } from "../support/RouterHarness.js"

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
  ...overrides
})

interface Run {
  readonly config?: TestConfig
  readonly queries?: ClusterQueries | undefined
  readonly options?: CheckOptions
  /** Changes the router before the check sees it. */
  readonly router?: (router: SessionRouterTag.Service) => SessionRouterTag.Service
  /** Runs on the cluster before the check. */
  readonly before?: (sc: SessionCluster.SessionCluster) => Effect.Effect<void>
}

/** The report on a fresh cluster, and what the dry runs sent and the cluster holds afterwards. */
const run = (setup: Run = {}) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster()
      if (setup.before !== undefined) yield* setup.before(sc)
      const kube = yield* Effect.provide(KubeClient, kubeClientLayer("in memory", sc.cluster))
      const applied: Array<{ readonly object: KubeObject; readonly dryRun: boolean }> = []
      const recording: KubeClient.Service = {
        ...kube,
        apply: (resource, object, options) => {
          applied.push({ object, dryRun: options?.dryRun === true })
          return kube.apply(resource, object, options)
        },
        ...(setup.queries !== undefined ? { cluster: setup.queries } : {})
      }
      const config = routerConfigLayer(sc, setup.config)
      const router = SessionRouter.layerConfig.pipe(
        Layer.provideMerge(Layer.succeed(KubeClient, recording)),
        Layer.provideMerge(config)
      )
      const changed = setup.router === undefined ? router : Layer.effect(
        SessionRouterTag,
        Effect.map(SessionRouterTag, setup.router!)
      ).pipe(Layer.provideMerge(router))
      const report: CheckReport = yield* checkRouting(setup.options).pipe(Effect.provide(changed), Effect.orDie)
      const services = yield* Effect.orDie(sc.cluster.store.list(ServiceResource, sc.namespace))
      const ingresses = yield* Effect.orDie(sc.cluster.store.list(IngressResource, sc.namespace))
      return { report, applied, stored: [...services.items, ...ingresses.items], sc }
    })
  )

const check = (report: CheckReport, id: string) => report.checks.find((c) => c.id === id)

describe("checkRouting's server and API checks", () => {
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

describe("checkRouting's access reviews", () => {
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
        ["list", "create", "patch", "delete"].map((verb) => ({
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

describe("checkRouting's routing path", () => {
  it.live("warns when the routing layer cannot say what its routing depends on", () =>
    Effect.gen(function*() {
      const { report } = yield* run({
        router: ({ diagnose: _, ...rest }) => rest
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

describe("checkRouting's dry run", () => {
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

  it.live("names the given Pod as the owner of the probe's objects", () =>
    Effect.gen(function*() {
      const { applied } = yield* run({ options: { probeOwner: { podName: "runner-0", podUid: "uid-runner-0" } } })
      expect(applied[0]!.object.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ kind: "Pod", name: "runner-0", uid: "uid-runner-0" })
      ])
    }))
})

describe("checkRouting's round trip", () => {
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
