/**
 * The simulated gateway controller against the real store: every route condition
 * comes from Gateway, Service and HTTPRoute objects written to the store, never from
 * canned status, and time runs on TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import {
  type Condition,
  type Gateway,
  type GatewayListener,
  type HttpRoute,
  type RouteParentStatus,
  type Service
} from "session-routing/kubernetes"
import * as GatewayController from "../src/GatewayController.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import {
  EventResource,
  GatewayResource,
  HttpRouteResource,
  NamespaceResource,
  ServiceResource
} from "../src/ServedResources.js"
import type { ClusterStore } from "../src/Store.js"

const NS = "sessions"
const CLASS = "local"
const CONTROLLER = GatewayController.DEFAULT_GATEWAY_CONTROLLER_NAME
const GROUP = "gateway.networking.k8s.io"
const DELAY = Duration.seconds(2)

const httpListener = (overrides: Partial<GatewayListener> = {}): GatewayListener => ({
  name: "http",
  port: 80,
  protocol: "HTTP",
  ...overrides
})

const gateway = (
  listeners: ReadonlyArray<GatewayListener>,
  options: { readonly name?: string; readonly className?: string } = {}
): Gateway => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Gateway",
  metadata: { name: options.name ?? "gw" },
  spec: { gatewayClassName: options.className ?? CLASS, listeners }
})

const service = (name: string, port: number): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { ports: [{ port, protocol: "TCP" }] }
})

const route = (spec: NonNullable<HttpRoute["spec"]>, name = "web"): HttpRoute => ({
  apiVersion: `${GROUP}/v1`,
  kind: "HTTPRoute",
  metadata: { name },
  spec
})

const webRoute = (overrides: Partial<NonNullable<HttpRoute["spec"]>> = {}, name = "web"): HttpRoute =>
  route({
    parentRefs: [{ name: "gw" }],
    hostnames: ["8080-abc.example.test"],
    rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    ...overrides
  }, name)

/** A store with the session namespace (and any others) and the controller running. */
const cluster = (
  options: Partial<GatewayController.GatewayControllerOptions> = {},
  namespaces: ReadonlyArray<string> = []
) =>
  Effect.gen(function*() {
    const store = yield* makeMemoryStore()
    for (const ns of [NS, ...namespaces]) {
      yield* store.create(NamespaceResource, undefined, { metadata: { name: ns } })
    }
    yield* GatewayController.run(store, { gatewayClassName: CLASS, delay: DELAY, ...options })
    return store
  })

/** Moves the clock and lets every woken fiber finish its writes before the test looks. */
const elapse = (duration: Duration.DurationInput) => Effect.zipRight(TestClock.adjust(duration), TestClock.adjust(0))

const getRoute = (store: ClusterStore, name = "web", namespace = NS) => store.get(HttpRouteResource, namespace, name)

const parentsOf = (r: HttpRoute): ReadonlyArray<RouteParentStatus> => r.status?.parents ?? []

const ours = (r: HttpRoute): ReadonlyArray<RouteParentStatus> =>
  parentsOf(r).filter((p) => p.controllerName === CONTROLLER)

/** The parts of a condition a verdict reads; times are checked where they are the point. */
const summary = (conditions: ReadonlyArray<Condition> | undefined) =>
  (conditions ?? []).map(({ observedGeneration, reason, status, type }) => ({
    type,
    status,
    reason,
    observedGeneration
  }))

const condition = (entry: RouteParentStatus | undefined, type: string): Condition | undefined =>
  entry?.conditions?.find((c) => c.type === type)

describe("GatewayController", () => {
  it.scoped("accepts a route whose Gateway admits it, only once the delay has passed", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener({ hostname: "*.example.test" })]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())

      yield* elapse(Duration.subtract(DELAY, Duration.millis(1)))
      expect(parentsOf(yield* getRoute(store))).toEqual([])

      yield* elapse(Duration.millis(1))
      expect(parentsOf(yield* getRoute(store))).toEqual([{
        parentRef: { group: GROUP, kind: "Gateway", name: "gw" },
        controllerName: CONTROLLER,
        conditions: [
          {
            type: "Accepted",
            status: "True",
            reason: "Accepted",
            message: "Route is accepted",
            observedGeneration: 1,
            lastTransitionTime: "1970-01-01T00:00:02Z"
          },
          {
            type: "ResolvedRefs",
            status: "True",
            reason: "ResolvedRefs",
            message: "All references resolved",
            observedGeneration: 1,
            lastTransitionTime: "1970-01-01T00:00:02Z"
          }
        ]
      }])
    }))

  it.scoped("programs its Gateway with an address, listener kinds and the attached route count", () =>
    Effect.gen(function*() {
      const store = yield* cluster({ addresses: [{ type: "Hostname", value: "gw.local.test" }] })
      yield* store.create(
        GatewayResource,
        NS,
        gateway([httpListener(), httpListener({ name: "tcp", port: 9000, protocol: "TCP" })])
      )
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(DELAY)
      // The route's write wakes the Gateway again: its count follows once the delay passes once more.
      yield* elapse(DELAY)

      const status = (yield* store.get(GatewayResource, NS, "gw")).status
      expect(status?.addresses).toEqual([{ type: "Hostname", value: "gw.local.test" }])
      expect(summary(status?.conditions)).toEqual([
        { type: "Accepted", status: "True", reason: "ListenersNotValid", observedGeneration: 1 },
        { type: "Programmed", status: "True", reason: "Programmed", observedGeneration: 1 }
      ])
      expect(
        status?.listeners?.map((l) => ({
          name: l.name,
          attachedRoutes: l.attachedRoutes,
          supportedKinds: l.supportedKinds,
          accepted: l.conditions.find((c) => c.type === "Accepted")?.reason
        }))
      ).toEqual([
        {
          name: "http",
          attachedRoutes: 1,
          supportedKinds: [{ group: GROUP, kind: "HTTPRoute" }],
          accepted: "Accepted"
        },
        { name: "tcp", attachedRoutes: 0, supportedKinds: [], accepted: "UnsupportedProtocol" }
      ])
    }))

  it.scoped("answers NotAllowedByListeners when the Gateway admits only its own namespace", () =>
    Effect.gen(function*() {
      const store = yield* cluster({}, ["infra"])
      // allowedRoutes.namespaces.from defaults to Same: a Gateway in infra refuses routes from sessions.
      yield* store.create(GatewayResource, "infra", gateway([httpListener()]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute({ parentRefs: [{ name: "gw", namespace: "infra" }] }))
      yield* elapse(DELAY)

      const entries = ours(yield* getRoute(store))
      expect(entries.map((e) => e.parentRef)).toEqual([{
        group: GROUP,
        kind: "Gateway",
        namespace: "infra",
        name: "gw"
      }])
      expect(summary(entries[0]?.conditions)).toEqual([
        { type: "Accepted", status: "False", reason: "NotAllowedByListeners", observedGeneration: 1 },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", observedGeneration: 1 }
      ])
      expect(condition(entries[0], "Accepted")?.message).toContain(`namespace "${NS}"`)
    }))

  it.scoped("accepts routes from every namespace when a listener allows All", () =>
    Effect.gen(function*() {
      const store = yield* cluster({}, ["infra"])
      yield* store.create(
        GatewayResource,
        "infra",
        gateway([httpListener({ allowedRoutes: { namespaces: { from: "All" } } })])
      )
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute({ parentRefs: [{ name: "gw", namespace: "infra" }] }))
      yield* elapse(DELAY)

      expect(summary(ours(yield* getRoute(store))[0]?.conditions)[0]).toEqual(
        { type: "Accepted", status: "True", reason: "Accepted", observedGeneration: 1 }
      )
    }))

  it.scoped("answers NoMatchingListenerHostname when no listener hostname covers the route's", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener({ hostname: "*.example.test" })]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      // A wildcard needs at least one label in front: the apex itself is not covered.
      yield* store.create(HttpRouteResource, NS, webRoute({ hostnames: ["example.test"] }))
      // Several labels in front are covered.
      yield* store.create(HttpRouteResource, NS, webRoute({ hostnames: ["a.b.example.test"] }, "deep"))
      yield* elapse(DELAY)

      expect(summary(ours(yield* getRoute(store))[0]?.conditions)[0]).toEqual(
        { type: "Accepted", status: "False", reason: "NoMatchingListenerHostname", observedGeneration: 1 }
      )
      expect(summary(ours(yield* getRoute(store, "deep"))[0]?.conditions)[0]).toEqual(
        { type: "Accepted", status: "True", reason: "Accepted", observedGeneration: 1 }
      )
    }))

  it.scoped("answers NoMatchingParent when sectionName names no listener of the Gateway", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute({ parentRefs: [{ name: "gw", sectionName: "https" }] }))
      yield* elapse(DELAY)

      const entries = ours(yield* getRoute(store))
      expect(entries.map((e) => e.parentRef)).toEqual([{
        group: GROUP,
        kind: "Gateway",
        name: "gw",
        sectionName: "https"
      }])
      expect(summary(entries[0]?.conditions)[0]).toEqual(
        { type: "Accepted", status: "False", reason: "NoMatchingParent", observedGeneration: 1 }
      )
    }))

  it.scoped("writes no entry for a Gateway that does not exist or belongs to another class", () =>
    Effect.gen(function*() {
      // The API: parent references an implementation cannot resolve are not added to status.
      const store = yield* cluster()
      const theirs = yield* store.create(
        GatewayResource,
        NS,
        gateway([httpListener()], { name: "theirs", className: "other" })
      )
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute({ parentRefs: [{ name: "missing" }, { name: "theirs" }] }))
      yield* elapse(Duration.times(DELAY, 3))

      expect(parentsOf(yield* getRoute(store))).toEqual([])
      // Untouched: not even a status write (the store may hold the CRD's default status).
      expect((yield* store.get(GatewayResource, NS, "theirs")).metadata?.resourceVersion).toBe(
        theirs.metadata?.resourceVersion
      )
    }))

  it.scoped("answers ResolvedRefs=False/BackendNotFound until the Service exists", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(DELAY)

      const before = ours(yield* getRoute(store))[0]
      expect(summary(before?.conditions)).toEqual([
        { type: "Accepted", status: "True", reason: "Accepted", observedGeneration: 1 },
        { type: "ResolvedRefs", status: "False", reason: "BackendNotFound", observedGeneration: 1 }
      ])
      expect(condition(before, "ResolvedRefs")?.message).toBe(`Service ${NS}/web not found`)

      // A Service appearing re-reconciles the routes of its namespace.
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* elapse(DELAY)

      const after = ours(yield* getRoute(store))[0]
      expect(condition(after, "ResolvedRefs")).toMatchObject({ status: "True", reason: "ResolvedRefs" })
      // Only a condition whose status changed gets a new transition time.
      expect(condition(after, "ResolvedRefs")?.lastTransitionTime).toBe("1970-01-01T00:00:04Z")
      expect(condition(after, "Accepted")?.lastTransitionTime).toBe("1970-01-01T00:00:02Z")
    }))

  it.scoped("answers InvalidKind and RefNotPermitted for backends it cannot use", () =>
    Effect.gen(function*() {
      const store = yield* cluster({}, ["other"])
      yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(ServiceResource, "other", service("web", 8080))
      yield* store.create(
        HttpRouteResource,
        NS,
        webRoute({ rules: [{ backendRefs: [{ group: "example.test", kind: "Bucket", name: "b" }] }] }, "kind")
      )
      yield* store.create(
        HttpRouteResource,
        NS,
        webRoute({ rules: [{ backendRefs: [{ name: "web", namespace: "other", port: 8080 }] }] }, "cross")
      )
      yield* elapse(DELAY)

      expect(condition(ours(yield* getRoute(store, "kind"))[0], "ResolvedRefs")?.reason).toBe("InvalidKind")
      expect(condition(ours(yield* getRoute(store, "cross"))[0], "ResolvedRefs")?.reason).toBe("RefNotPermitted")
    }))

  it.scoped("tracks the route's generation: a spec change is re-observed after the delay", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener({ hostname: "*.example.test" })]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(DELAY)

      const current = yield* getRoute(store)
      yield* store.replace(HttpRouteResource, NS, "web", {
        ...current,
        spec: { ...current.spec, hostnames: ["elsewhere.test"] }
      })
      const edited = yield* getRoute(store)
      expect(edited.metadata?.generation).toBe(2)
      // Until the controller catches up, the stored conditions describe generation 1: stale, not a verdict.
      expect(summary(ours(edited)[0]?.conditions).map((c) => c.observedGeneration)).toEqual([1, 1])

      yield* elapse(DELAY)
      expect(summary(ours(yield* getRoute(store))[0]?.conditions)).toEqual([
        { type: "Accepted", status: "False", reason: "NoMatchingListenerHostname", observedGeneration: 2 },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", observedGeneration: 2 }
      ])
    }))

  it.scoped("keeps other controllers' entries and rewrites only its own", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      const created = yield* store.create(
        HttpRouteResource,
        NS,
        webRoute({ parentRefs: [{ name: "gw" }, { name: "mesh" }] })
      )
      const foreign: RouteParentStatus = {
        parentRef: { group: GROUP, kind: "Gateway", name: "mesh" },
        controllerName: "example.test/other-controller",
        conditions: [{
          type: "Accepted",
          status: "True",
          reason: "Accepted",
          message: "theirs",
          observedGeneration: 1,
          lastTransitionTime: "1970-01-01T00:00:00Z"
        }]
      }
      yield* store.replaceStatus(HttpRouteResource, NS, "web", { ...created, status: { parents: [foreign] } })
      yield* elapse(DELAY)

      const parents = parentsOf(yield* getRoute(store))
      expect(parents.map((p) => [p.controllerName, p.parentRef.name])).toEqual([
        ["example.test/other-controller", "mesh"],
        [CONTROLLER, "gw"]
      ])
      expect(parents[0]).toEqual(foreign)
    }))

  it.scoped("settles: its own writes do not make it write again", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(DELAY)
      yield* elapse(DELAY)
      const route = yield* getRoute(store)
      const gw = yield* store.get(GatewayResource, NS, "gw")

      yield* elapse(Duration.times(DELAY, 5))
      expect((yield* getRoute(store)).metadata?.resourceVersion).toBe(route.metadata?.resourceVersion)
      expect((yield* store.get(GatewayResource, NS, "gw")).metadata?.resourceVersion).toBe(gw.metadata?.resourceVersion)
    }))

  it.scoped("in never mode writes nothing, however long it waits", () =>
    Effect.gen(function*() {
      const store = yield* cluster({ delay: "never" })
      const gw = yield* store.create(GatewayResource, NS, gateway([httpListener()]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(Duration.hours(1))

      expect(parentsOf(yield* getRoute(store))).toEqual([])
      expect((yield* store.get(GatewayResource, NS, "gw")).metadata?.resourceVersion).toBe(gw.metadata?.resourceVersion)
    }))

  it.scoped("records an Event for each verdict it writes: accepted, then refused with the condition's reason", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(GatewayResource, NS, gateway([httpListener({ hostname: "*.example.test" })]))
      yield* store.create(ServiceResource, NS, service("web", 8080))
      yield* store.create(HttpRouteResource, NS, webRoute())
      yield* elapse(DELAY)
      const live = yield* getRoute(store)
      yield* store.replace(HttpRouteResource, NS, "web", {
        ...live,
        spec: { ...live.spec, hostnames: ["8080-abc.other.test"] }
      })
      yield* elapse(DELAY)

      const events = yield* store.list(EventResource, NS, {
        fieldSelector: "involvedObject.kind=HTTPRoute,involvedObject.name=web"
      })
      expect(events.items.map((e) => [e.type, e.reason, e.message, e.source?.component, e.count])).toEqual([
        ["Normal", "Accepted", `Route is accepted (parent Gateway ${NS}/gw)`, CONTROLLER, 1],
        [
          "Warning",
          "NoMatchingListenerHostname",
          condition(ours(yield* getRoute(store))[0], "Accepted")?.message,
          CONTROLLER,
          1
        ]
      ])
    }))
})
