/**
 * The lookups of publishes under way at once share one list: each is answered by a
 * list sent after it asked (as fresh as a list of its own), with its own session's
 * objects only, and neither a failure nor an interruption of one lookup loses another's.
 */
import { describe, expect, it } from "@effect/vitest"
import { LocalCluster, SessionCluster } from "@session-routing/local-cluster"
import { Cause, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { LABEL_MANAGED_BY, LABEL_SESSION_ID } from "../../../src/domain/Manifests.js"
import type { HttpRoute } from "../../../src/domain/Objects.js"
import { HttpRouteResource } from "../../../src/domain/Resources.js"
import * as RouterConfigLive from "../../../src/layers/RouterConfigLive.js"
import {
  batchSelector,
  makeSessionLookup,
  MAX_SESSIONS_PER_LIST,
  RELEASED
} from "../../../src/layers/sessionRouter/SessionLookup.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import type { KubeClient } from "../../../src/services/KubeClient.js"
import { Forbidden } from "../../../src/services/KubeError.js"
import { SessionRouter } from "../../../src/services/SessionRouter.js"

const route = (sessionId: string, port: number): HttpRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: {
    name: `telo-run-${sessionId}-${port}`,
    namespace: "ns",
    labels: { [LABEL_MANAGED_BY]: "runner", [LABEL_SESSION_ID]: sessionId }
  }
})

/**
 * A server holding `stored` routes whose lists each wait for `release` to be called
 * once for them, answering with what is stored when it is (or failing, while `refuse`
 * is set). `selectors` records what each list asked, in order.
 */
const server = Effect.gen(function*() {
  const stored: Array<HttpRoute> = []
  const selectors: Array<string> = []
  const gates: Array<Deferred.Deferred<void>> = []
  let refuse = false
  const asked = (selector: string) => {
    const ids = /in \(([^)]*)\)/.exec(selector)![1]!.split(",")
    return stored.filter((r) => ids.includes(r.metadata!.labels![LABEL_SESSION_ID]!))
  }
  const kube = {
    list: (_resource: unknown, _namespace: string, options?: { readonly labelSelector?: string }) =>
      Effect.gen(function*() {
        const selector = options?.labelSelector ?? ""
        selectors.push(selector)
        const gate = yield* Deferred.make<void>()
        gates.push(gate)
        yield* Deferred.await(gate)
        if (refuse) return yield* new Forbidden({ reason: "routes are not yours to list" })
        return { apiVersion: "v1", kind: "HTTPRouteList", metadata: {}, items: asked(selector) }
      })
  } as unknown as KubeClient.Service
  return {
    kube,
    stored,
    selectors,
    /** Lets the `n`th list (from 0) answer. */
    release: (n: number) => Effect.suspend(() => Deferred.succeed(gates[n]!, undefined)),
    refuse: (on: boolean) => Effect.sync(() => (refuse = on))
  }
})

/** Lets the forked lookups run until they block again. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

const names = (routes: ReadonlyArray<HttpRoute>) => routes.map((r) => r.metadata!.name)

describe("the session lookups of publishes under way at once", () => {
  it.scoped("share the list sent after they asked, each answered with its own session's objects", () =>
    Effect.gen(function*() {
      const s = yield* server
      s.stored.push(route("a", 8080), route("b", 8080), route("b", 9090))
      const lookup = yield* makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner")
      const a = yield* Effect.fork(lookup("a"))
      yield* settle
      // Made after the first list went out: only a list sent later can see it.
      s.stored.push(route("c", 8080))
      const later = yield* Effect.forEach(["b", "c", "d"], (id) => Effect.fork(lookup(id)))
      yield* settle
      expect(s.selectors).toEqual([batchSelector("runner", ["a"])])
      yield* s.release(0)
      expect(names(yield* Fiber.join(a))).toEqual(["telo-run-a-8080"])
      yield* settle
      expect(s.selectors).toEqual([batchSelector("runner", ["a"]), batchSelector("runner", ["b", "c", "d"])])
      yield* s.release(1)
      const [b, c, d] = yield* Effect.forEach(later, Fiber.join)
      expect(names(b!)).toEqual(["telo-run-b-8080", "telo-run-b-9090"])
      expect(names(c!)).toEqual(["telo-run-c-8080"])
      expect(d).toEqual([])
    }))

  it.scoped("selects this runner's objects of the sessions asked for", () =>
    Effect.sync(() => {
      expect(batchSelector("telo-runner", ["s1", "s2"])).toBe(
        "app.kubernetes.io/managed-by=telo-runner,telo.run/session-id in (s1,s2)"
      )
    }))

  it.scoped(`ask for at most ${MAX_SESSIONS_PER_LIST} sessions in one list`, () =>
    Effect.gen(function*() {
      const s = yield* server
      const lookup = yield* makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner")
      const ids = Array.from({ length: MAX_SESSIONS_PER_LIST + 9 }, (_, i) => `s${i}`)
      const first = yield* Effect.fork(lookup("first"))
      yield* settle
      const rest = yield* Effect.forEach(ids, (id) => Effect.fork(lookup(id)))
      yield* settle
      yield* s.release(0)
      yield* settle
      yield* s.release(1)
      yield* settle
      yield* s.release(2)
      yield* Fiber.join(first)
      yield* Effect.forEach(rest, Fiber.join)
      expect(s.selectors).toEqual([
        batchSelector("runner", ["first"]),
        batchSelector("runner", ids.slice(0, MAX_SESSIONS_PER_LIST)),
        batchSelector("runner", ids.slice(MAX_SESSIONS_PER_LIST))
      ])
    }))

  it.scoped("fail together when their list fails, and the next lookup lists again", () =>
    Effect.gen(function*() {
      const s = yield* server
      const lookup = yield* makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner")
      yield* s.refuse(true)
      const both = yield* Effect.forEach(["a", "b"], (id) => Effect.fork(Effect.flip(lookup(id))))
      yield* settle
      yield* s.release(0)
      const errors = yield* Effect.forEach(both, Fiber.join)
      expect(errors.map((e) => e._tag)).toEqual(["Forbidden", "Forbidden"])
      yield* s.refuse(false)
      const again = yield* Effect.fork(lookup("a"))
      yield* settle
      yield* s.release(1)
      expect(yield* Fiber.join(again)).toEqual([])
      expect(s.selectors).toHaveLength(2)
    }))

  it.scoped("leave the list they share going when the publish that started it is interrupted", () =>
    Effect.gen(function*() {
      const s = yield* server
      s.stored.push(route("b", 8080))
      const lookup = yield* makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner")
      const a = yield* Effect.fork(lookup("a"))
      const b = yield* Effect.fork(lookup("b"))
      yield* settle
      expect(Exit.isInterrupted(yield* Fiber.interrupt(a))).toBe(true)
      yield* s.release(0)
      expect(names(yield* Fiber.join(b))).toEqual(["telo-run-b-8080"])
    }))

  it.effect("stop their lists when the router's scope closes, and a lookup still waiting hears so", () =>
    Effect.gen(function*() {
      const s = yield* server
      const waiting = yield* Effect.scoped(
        Effect.gen(function*() {
          const lookup = yield* makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner")
          return yield* Effect.forkDaemon(lookup("a"))
        }).pipe(Effect.tap(() => settle))
      )
      const exit = yield* Fiber.await(waiting)
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))

  it.effect("die at once saying why, rather than wait or read as stopped, when asked after the scope closed", () =>
    Effect.gen(function*() {
      const s = yield* server
      const lookup = yield* Effect.scoped(makeSessionLookup(s.kube, HttpRouteResource, "ns", "runner"))
      const exit = yield* Effect.exit(lookup("a"))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause) && !Cause.isInterrupted(exit.cause)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(RELEASED)
      expect(s.selectors).toEqual([])
    }))
})

describe("a router used after its layer was released", () => {
  it.effect("dies naming the mistake when asked to publish", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.scoped(Effect.gen(function*() {
        const sc = yield* Effect.orDie(SessionCluster.make({ ingress: false, gateway: false, dataPlane: false }))
        // The layer is built and released here: only the service comes out.
        const router = yield* Effect.provide(
          SessionRouter,
          SessionRouting.layerIngress.pipe(
            Layer.provide(LocalCluster.layerKubeClient(sc.cluster)),
            Layer.provide(RouterConfigLive.layerFrom({ sessionNamespace: sc.namespace, baseDomain: sc.baseDomain }))
          )
        )
        return yield* Effect.exit(router.publish({
          sessionId: "late",
          podName: "telo-run-late",
          podUid: "00000000-0000-4000-8000-000000000001",
          ports: [{ port: 8080, protocol: "tcp" }]
        }))
      }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause) && !Cause.isInterrupted(exit.cause)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(RELEASED)
    }))
})
