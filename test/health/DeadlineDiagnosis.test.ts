/**
 * Every cause a diagnosis names, produced end to end: a LocalCluster set up with that
 * broken link, a session published through the live client over HTTP, and the reason
 * its host is reported with at the route deadline. A diagnosis that cannot be read
 * leaves the generic advice, saying what could not be read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Fault, type FaultSpec, SessionCluster } from "@session-routing/local-cluster"
import { Chunk, Duration, Effect, Layer, Stream } from "effect"
import { DEFAULT_INGRESS_CLASS_ANNOTATION } from "../../src/domain/Diagnosis.js"
import { GatewayResource, IngressClassResource, NamespaceResource } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { publishSession, type SessionEvent } from "../../src/runner/SessionRunner.js"
import { localIngressSilence } from "../support/Causes.js"
import {
  BASE_DOMAIN,
  kubeClientLayer,
  routerConfigLayer,
  startCluster,
  type TestConfig,
  twoPortSession
} from "../support/RouterHarness.js"

const sessionId = "diag1"
const spec = twoPortSession(sessionId, "6c0f6a52-1111-4222-8333-444455556666")
const host = (port: number) => `${port}-${sessionId}.${BASE_DOMAIN}`

interface Setup {
  readonly cluster?: SessionCluster.SessionClusterOptions
  readonly config?: TestConfig
  readonly faults?: ReadonlyArray<FaultSpec>
}

/** What the session's hosts end with, and how many requests each diagnosis read made. */
const atDeadline = (setup: Setup) =>
  Effect.scoped(
    Effect.gen(function*() {
      const sc = yield* startCluster(setup.cluster)
      for (const fault of setup.faults ?? []) yield* sc.cluster.faults.add(fault)
      const layers = SessionRouting.layerConfig.pipe(
        Layer.provideMerge(kubeClientLayer("over HTTP", sc.cluster)),
        Layer.provideMerge(
          routerConfigLayer(sc, { routeReadyTimeoutMs: 500, routePollIntervalMs: 50, ...setup.config })
        )
      )
      const events = yield* Effect.gen(function*() {
        const session = yield* publishSession(spec)
        return Chunk.toReadonlyArray(yield* Stream.runCollect(session.events))
      }).pipe(Effect.provide(layers))
      const reasons = events.flatMap((
        e: SessionEvent
      ) => (e.type === "route" && e.state === "unprogrammed" ? [[e.host, e.reason]] : []))
      const reads = (resource: string) => sc.cluster.metrics.count({ resource })
      return {
        reasons: Object.fromEntries(reasons) as Record<string, string>,
        ingressClassReads: yield* reads(IngressClassResource.plural),
        gatewayClassReads: yield* reads("gatewayclasses"),
        namespaceReads: yield* reads(NamespaceResource.plural)
      }
    })
  )

/** The one reason both hosts share (they share their objects, so their diagnosis). */
const reasonOf = (setup: Setup) =>
  Effect.map(atDeadline(setup), ({ reasons }) => {
    expect(Object.keys(reasons).sort()).toEqual([host(8080), host(9090)])
    expect(reasons[host(9090)]?.replace("9090-", "8080-")).toBe(reasons[host(8080)])
    return reasons[host(8080)] ?? ""
  })

const gatewayMode = (config: TestConfig = {}): TestConfig => ({ mode: "gateway", ...config })
const silentIngress = { delay: "never" } as const

describe("the reason at the deadline names the first broken link (ingress, over HTTP)", () => {
  it.live("IngressClassNotFound: the class configured does not exist", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({ config: { ingressClassName: "nginx" } })
      expect(reason).toBe(
        "IngressClassNotFound: the session Ingress names IngressClass \"nginx\", which does not exist (the cluster has \"local\"): set SESSION_INGRESS_CLASS to a class the cluster has, or install the ingress controller that provides \"nginx\""
      )
    }))

  it.live("NoDefaultIngressClass: no class is configured and none is default", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({ config: { unset: ["ingressClassName"] } })
      expect(reason).toMatch(
        /^NoDefaultIngressClass: no ingressClassName is configured and no IngressClass is marked default \(the cluster has "local"\)/
      )
    }))

  it.live("MultipleDefaultIngressClasses: no class is configured and two are default", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: {
          ingress: { ...silentIngress, defaultClass: true },
          ingressClasses: [{
            metadata: { name: "other", annotations: { [DEFAULT_INGRESS_CLASS_ANNOTATION]: "true" } },
            spec: { controller: "example.com/other" }
          }]
        },
        config: { unset: ["ingressClassName"] }
      })
      expect(reason).toMatch(
        /^MultipleDefaultIngressClasses: .* 2 IngressClasses are marked default \("local", "other"\)/
      )
    }))

  it.live("NoIngressStatus: the class exists and its controller wrote nothing, read once for the session", () =>
    Effect.gen(function*() {
      const result = yield* atDeadline({ cluster: { ingress: silentIngress } })
      expect(result.reasons).toEqual({ [host(8080)]: localIngressSilence(), [host(9090)]: localIngressSilence() })
      // Two hosts, one diagnosis.
      expect(result.ingressClassReads).toBe(1)
    }))

  it.live("NoIngressStatus with the advice of the class's controller (ingress-nginx)", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { ingress: { ...silentIngress, controllerName: "k8s.io/ingress-nginx" } }
      })
      expect(reason).toMatch(
        /^NoIngressStatus: IngressClass "local", controller "k8s.io\/ingress-nginx", exists, .*ingress-nginx writes status only with --update-status/
      )
    }))

  it.live("keeps the generic advice, saying what could not be read, when the IngressClasses cannot be listed", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { ingress: silentIngress },
        faults: [{ resource: IngressClassResource, verbs: ["list"], action: Fault.forbid() }]
      })
      expect(reason).toMatch(
        /^no ingress controller claimed the session Ingress of class "local" .* \(could not read the IngressClasses: ingressclasses\.networking\.k8s\.io is forbidden: /
      )
    }))
})

describe("the reason at the deadline names the first broken link (gateway, over HTTP)", () => {
  // A quick controller (the harness's default delay is replaced along with the rest of the setup).
  const silentRoutes = { routeStatus: false, delay: Duration.millis(20) } as const

  it.live("GatewayNotFound: the Gateway configured does not exist", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({ config: gatewayMode({ gatewayName: "missing" }) })
      expect(reason).toMatch(/^GatewayNotFound: Gateway telo-sessions\/missing does not exist: /)
    }))

  it.live("GatewayClassNotFound: the Gateway's class does not exist", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({ cluster: { gateway: { createClass: false } }, config: gatewayMode() })
      expect(reason).toMatch(
        /^GatewayClassNotFound: Gateway telo-sessions\/sessions names GatewayClass "local", which does not exist: /
      )
    }))

  it.live("GatewayClassNotAccepted: no controller runs for the class", () =>
    Effect.gen(function*() {
      const result = yield* atDeadline({ cluster: { gateway: false }, config: gatewayMode() })
      expect(result.reasons[host(8080)]).toMatch(
        /^GatewayClassNotAccepted: GatewayClass "local" names controller "session-routing.dev\/local-gateway", and no controller has accepted it \(Accepted: Unknown, Pending: Waiting for controller\)/
      )
      // The diagnosis read the class once; the router's controller lookup, at most once more.
      expect(result.gatewayClassReads).toBeLessThanOrEqual(2)
    }))

  it.live("GatewayNotAccepted: the controller refused every listener", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: { ...silentRoutes, listeners: [{ name: "tcp", protocol: "TCP", port: 9000 }] } },
        config: gatewayMode()
      })
      expect(reason).toMatch(
        /^GatewayNotAccepted: Gateway telo-sessions\/sessions was not accepted by "session-routing.dev\/local-gateway" \(ListenersNotValid: No listener is valid\)/
      )
    }))

  it.live("GatewayNotProgrammed: the Gateway has no address", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: { ...silentRoutes, addresses: [] } },
        config: gatewayMode()
      })
      expect(reason).toMatch(
        /^GatewayNotProgrammed: Gateway telo-sessions\/sessions is accepted but not Programmed \(AddressNotAssigned: No address is configured\)/
      )
    }))

  it.live("NoMatchingParent: the configured sectionName names no listener", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: silentRoutes },
        config: gatewayMode({ gatewaySection: "https" })
      })
      expect(reason).toMatch(
        /^NoMatchingParent: Gateway telo-sessions\/sessions has no listener named "https" \(SESSION_GATEWAY_SECTION\); its listeners are "http"/
      )
    }))

  it.live("NotAllowedByListeners: the Gateway lives in another namespace and admits its own (Same)", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: { ...silentRoutes, gatewayNamespace: "infra" } },
        config: gatewayMode()
      })
      expect(reason).toMatch(
        /^NotAllowedByListeners: no listener of Gateway infra\/sessions admits HTTPRoutes from namespace "telo-sessions" \(allowedRoutes\.namespaces\.from "http": Same; the Gateway is in namespace "infra"\)/
      )
    }))

  it.live("NotAllowedByListeners: the listener's selector does not match the session namespace's labels", () =>
    Effect.gen(function*() {
      const result = yield* atDeadline({
        cluster: {
          namespaceLabels: { team: "b" },
          gateway: {
            ...silentRoutes,
            listeners: [{
              name: "http",
              protocol: "HTTP",
              port: 80,
              allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "a" } } } }
            }]
          }
        },
        config: gatewayMode()
      })
      expect(result.reasons[host(8080)]).toMatch(/^NotAllowedByListeners: .*"http": Selector team=a;/)
      expect(result.namespaceReads).toBe(1)
    }))

  it.live("NoMatchingListenerHostname: no listener hostname covers the session hosts", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: { ...silentRoutes, listenerHostname: "*.other.example.com" } },
        config: gatewayMode()
      })
      expect(reason).toBe(
        `NoMatchingListenerHostname: no listener of Gateway telo-sessions/sessions that admits namespace "telo-sessions" covers ${
          host(8080)
        } (listener hostnames: *.other.example.com): add a listener for *.${BASE_DOMAIN} or change SESSION_ROUTING_BASE_DOMAIN`
      )
    }))

  it.live("NoRouteStatus: the controller accepted the Gateway and wrote no status on the route", () =>
    Effect.gen(function*() {
      const result = yield* atDeadline({ cluster: { gateway: silentRoutes }, config: gatewayMode() })
      expect(result.reasons[host(9090)]).toBe(
        `NoRouteStatus: Gateway telo-sessions/sessions (GatewayClass "local", controller "session-routing.dev/local-gateway") is Accepted and Programmed; listener "http" (HTTP *.${BASE_DOMAIN}) admits the route, but "session-routing.dev/local-gateway" wrote no status for the HTTPRoute of ${
          host(9090)
        }: look at the controller's logs for this route, and check that it watches namespace "telo-sessions"`
      )
      // No listener selects by label: the namespace is not read.
      expect(result.namespaceReads).toBe(0)
    }))

  it.live("keeps the generic advice, saying what could not be read, when the Gateway cannot be read", () =>
    Effect.gen(function*() {
      const reason = yield* reasonOf({
        cluster: { gateway: silentRoutes },
        config: gatewayMode(),
        faults: [{ resource: GatewayResource, verbs: ["get"], action: Fault.forbid() }]
      })
      expect(reason).toMatch(
        /^no Gateway controller accepted the HTTPRoute for 8080-diag1\.sessions\.localtest\.me on Gateway telo-sessions\/sessions: .* \(could not read Gateway telo-sessions\/sessions: gateways\.gateway\.networking\.k8s\.io "sessions" is forbidden: /
      )
    }))
})
