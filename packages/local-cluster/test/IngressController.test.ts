/**
 * The simulated ingress controller against the real store, on TestClock: it publishes
 * an address for its class after the delay, ignores every other Ingress, and in
 * `never` mode reproduces the controller that claims and never answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { type Ingress } from "session-routing/kubernetes"
import * as IngressController from "../src/IngressController.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { IngressResource, NamespaceResource } from "../src/ServedResources.js"

const NS = "sessions"
const DELAY = Duration.seconds(3)

const ingress = (name: string, ingressClassName?: string, annotations?: Record<string, string>): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, ...(annotations !== undefined ? { annotations } : {}) },
  spec: {
    ...(ingressClassName !== undefined ? { ingressClassName } : {}),
    rules: [{
      host: `${name}.example.test`,
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 8080 } } } }]
      }
    }]
  }
})

const cluster = (options: Partial<IngressController.IngressControllerOptions> = {}) =>
  Effect.gen(function*() {
    const store = yield* makeMemoryStore()
    yield* store.create(NamespaceResource, undefined, { metadata: { name: NS } })
    yield* IngressController.run(store, { className: "local", delay: DELAY, ...options })
    return store
  })

/** Moves the clock and lets every woken fiber finish its writes before the test looks. */
const elapse = (duration: Duration.DurationInput) => Effect.zipRight(TestClock.adjust(duration), TestClock.adjust(0))

describe("IngressController", () => {
  it.scoped("publishes its address for an Ingress of its class once the delay has passed", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(IngressResource, NS, ingress("a", "local"))

      yield* elapse(Duration.subtract(DELAY, Duration.millis(1)))
      expect((yield* store.get(IngressResource, NS, "a")).status?.loadBalancer?.ingress ?? []).toEqual([])

      yield* elapse(Duration.millis(1))
      expect((yield* store.get(IngressResource, NS, "a")).status).toEqual({
        loadBalancer: { ingress: [{ ip: "127.0.0.1" }] }
      })
    }))

  it.scoped("counts the delay from each Ingress's own appearance", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(IngressResource, NS, ingress("first", "local"))
      yield* elapse(Duration.seconds(2))
      yield* store.create(IngressResource, NS, ingress("second", "local"))

      yield* elapse(Duration.seconds(1))
      expect((yield* store.get(IngressResource, NS, "first")).status?.loadBalancer?.ingress).toHaveLength(1)
      expect((yield* store.get(IngressResource, NS, "second")).status?.loadBalancer?.ingress ?? []).toEqual([])

      yield* elapse(Duration.seconds(2))
      expect((yield* store.get(IngressResource, NS, "second")).status?.loadBalancer?.ingress).toHaveLength(1)
    }))

  it.scoped("publishes the configured addresses, a hostname included", () =>
    Effect.gen(function*() {
      const store = yield* cluster({ addresses: [{ hostname: "lb.local.test" }] })
      yield* store.create(IngressResource, NS, ingress("a", "local"))
      yield* elapse(DELAY)
      expect((yield* store.get(IngressResource, NS, "a")).status?.loadBalancer?.ingress).toEqual([
        { hostname: "lb.local.test" }
      ])
    }))

  it.scoped("ignores Ingresses of another class and, unless it is the default, those of none", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      const other = yield* store.create(IngressResource, NS, ingress("other", "nginx"))
      const none = yield* store.create(IngressResource, NS, ingress("none"))
      yield* elapse(Duration.times(DELAY, 10))

      // Not even a status write: an Ingress has no rejection signal, so silence is all there is.
      expect((yield* store.get(IngressResource, NS, "other")).metadata?.resourceVersion).toBe(
        other.metadata?.resourceVersion
      )
      expect((yield* store.get(IngressResource, NS, "none")).metadata?.resourceVersion).toBe(
        none.metadata?.resourceVersion
      )
    }))

  it.scoped("as the default class claims Ingresses that name no class", () =>
    Effect.gen(function*() {
      const store = yield* cluster({ defaultClass: true })
      yield* store.create(IngressResource, NS, ingress("none"))
      yield* store.create(IngressResource, NS, ingress("other", "nginx"))
      yield* elapse(DELAY)

      expect((yield* store.get(IngressResource, NS, "none")).status?.loadBalancer?.ingress).toEqual([{
        ip: "127.0.0.1"
      }])
      expect((yield* store.get(IngressResource, NS, "other")).status?.loadBalancer?.ingress ?? []).toEqual([])
    }))

  it.scoped("honours the legacy kubernetes.io/ingress.class annotation", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(IngressResource, NS, ingress("legacy", undefined, { "kubernetes.io/ingress.class": "local" }))
      yield* elapse(DELAY)
      expect((yield* store.get(IngressResource, NS, "legacy")).status?.loadBalancer?.ingress).toEqual([{
        ip: "127.0.0.1"
      }])
    }))

  it.scoped("settles: its own status write does not make it write again", () =>
    Effect.gen(function*() {
      const store = yield* cluster()
      yield* store.create(IngressResource, NS, ingress("a", "local"))
      yield* elapse(DELAY)
      const written = yield* store.get(IngressResource, NS, "a")
      yield* elapse(Duration.times(DELAY, 5))
      expect((yield* store.get(IngressResource, NS, "a")).metadata?.resourceVersion).toBe(
        written.metadata?.resourceVersion
      )
    }))

  it.scoped("in never mode writes nothing, however long it waits", () =>
    Effect.gen(function*() {
      const store = yield* cluster({ delay: "never" })
      const created = yield* store.create(IngressResource, NS, ingress("a", "local"))
      yield* elapse(Duration.hours(1))
      expect((yield* store.get(IngressResource, NS, "a")).metadata?.resourceVersion).toBe(
        created.metadata?.resourceVersion
      )
    }))

  it("describes its IngressClass, marked default when it claims unclassed Ingresses", () => {
    expect(IngressController.ingressClassFor({ className: "local", defaultClass: true })).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "local", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
      spec: { controller: "session-routing.dev/local-ingress" }
    })
  })
})
