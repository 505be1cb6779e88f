import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Ref, Runtime, type Scope } from "effect"

import {
  type ClusterHandle,
  Fault,
  type FaultAction,
  type FaultSpec,
  InMemoryKubeClient,
  LocalCluster,
  type Verb
} from "@session-routing/local-cluster"
import { sessionSelector } from "../../../src/domain/Manifests.js"
import type { KubeObject } from "../../../src/domain/Objects.js"
import {
  HttpRouteResource,
  IngressResource,
  type ResourceType,
  ServiceResource
} from "../../../src/domain/Resources.js"
import type { PortMapping } from "../../../src/domain/Session.js"
import * as RouterConfigLive from "../../../src/layers/RouterConfigLive.js"
import * as GatewayRouter from "../../../src/layers/sessionRouter/GatewayRouter.js"
import * as IngressRouter from "../../../src/layers/sessionRouter/IngressRouter.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { RouterConfig } from "../../../src/services/RouterConfig.js"
import type { SessionRouter as SessionRouterService } from "../../../src/services/SessionRouter.js"
import { BASE_DOMAIN, observedKubeClient } from "../../support/RouterHarness.js"

const namespace = "telo-sessions"
const sessionId = "hzyayvabgyvz"
const pod = { podName: "telo-run-hzyayvabgyvz", podUid: "6f1c2d3e-0000-4000-8000-00000000abcd" }
type Mode = "ingress" | "gateway"

// ---------------------------------------------------------------------------
// What a run does

const resources = [ServiceResource, IngressResource, HttpRouteResource] as const
const actions: ReadonlyArray<FaultAction> = [
  Fault.throttle(1),
  Fault.respond(500),
  Fault.respond(503),
  Fault.forbid(),
  Fault.respond(409),
  Fault.respond(422),
  Fault.reset
]
const verbs: ReadonlyArray<Verb> = ["get", "list", "patch", "delete"]

const fault: fc.Arbitrary<FaultSpec> = fc.record({
  resource: fc.constantFrom(...resources),
  verb: fc.constantFrom(...verbs),
  action: fc.constantFrom(...actions)
}).map(({ action, resource, verb }) => ({ resource, verbs: [verb], action, times: 1 }))

/**
 * Faults for one operation: some in force from its start (they tend to land on the
 * reads and dry runs), and one armed after a number of calls, so that real writes and
 * removals fail too.
 */
const faults = fc.record({
  now: fc.array(fault, { maxLength: 3 }),
  armed: fc.option(fc.record({ after: fc.nat({ max: 12 }), fault }), { nil: undefined })
})

const ports: fc.Arbitrary<ReadonlyArray<PortMapping>> = fc.subarray<PortMapping>([
  { port: 7070, protocol: "tcp" },
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" },
  { port: 5000, protocol: "udp" }
])

const mode = fc.constantFrom<Mode>("ingress", "gateway")

type Op =
  | {
    readonly _tag: "publish"
    readonly mode: Mode
    readonly ports: ReadonlyArray<PortMapping>
    readonly faults: typeof faults extends fc.Arbitrary<infer F> ? F : never
  }
  | {
    readonly _tag: "unpublish"
    readonly mode: Mode
    readonly faults: typeof faults extends fc.Arbitrary<infer F> ? F : never
  }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("publish" as const), mode, ports, faults }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("unpublish" as const), mode, faults }) }
)

// ---------------------------------------------------------------------------
// What the cluster holds

/** One stored object: kind, name and uid, so that a delete and re-create shows. */
interface Held {
  readonly kind: string
  readonly name: string
  readonly uid: string
}

const key = (h: Held) => `${h.kind} ${namespace}/${h.name}`

/** The session's objects, read from the store itself: faults must not blur the picture. */
const snapshot = (cluster: ClusterHandle) => {
  const of = (resource: ResourceType<KubeObject>) =>
    cluster.store.list(resource, namespace, { labelSelector: sessionSelector(sessionId) }).pipe(
      Effect.orDie,
      Effect.map((list) =>
        list.items.map((item): Held => ({
          kind: resource.kind,
          name: item.metadata?.name ?? "",
          uid: item.metadata?.uid ?? ""
        }))
      )
    )
  return Effect.map(
    Effect.all(resources.map((r) => of(r as ResourceType<KubeObject>))),
    (lists) => lists.flat().sort((a, b) => key(a).localeCompare(key(b)))
  )
}

/** The names (as `Kind ns/name`) a successful publish leaves. */
const targetOf = (mode: Mode, ports: ReadonlyArray<PortMapping>): ReadonlySet<string> => {
  const tcp = ports.filter((p) => p.protocol === "tcp")
  const object = `telo-run-${sessionId}`
  const names: Array<string> = []
  if (ports.length > 0) names.push(`Service ${namespace}/${object}`)
  if (mode === "ingress" && tcp.length > 0) names.push(`Ingress ${namespace}/${object}`)
  if (mode === "gateway") { for (const p of tcp) names.push(`HTTPRoute ${namespace}/${object}-${p.port}`) }
  return new Set(names)
}

const otherKind = (mode: Mode) => (mode === "ingress" ? "HTTPRoute" : "Ingress")

// ---------------------------------------------------------------------------
// The checks

/** After a failed publish: what it held before, or, where the reason says otherwise, exactly what it says. */
const checkFailedPublish = (
  before: ReadonlyArray<Held>,
  after: ReadonlyArray<Held>,
  target: ReadonlySet<string>,
  reason: string
) => {
  const beforeKeys = new Set(before.map(key))
  const afterKeys = new Set(after.map(key))
  if (reason.includes("the session's new objects are in place")) {
    // A removal failed after another had succeeded: the old state was already gone,
    // so the new one stays whole, and every old object it kept is named.
    for (const name of target) expect(afterKeys).toContain(name)
    for (const held of after) {
      if (target.has(key(held))) continue
      expect(beforeKeys).toContain(key(held))
      expect(reason).toContain(key(held))
    }
    return
  }
  // Nothing that existed before is gone, or was deleted and created again.
  for (const held of before) expect(after).toContainEqual(held)
  if (reason.includes("so these remain")) {
    // Taking back a created object failed too: each one left is named.
    for (const held of after) if (!beforeKeys.has(key(held))) expect(reason).toContain(key(held))
    return
  }
  expect(after).toEqual(before)
}

/** After a successful publish: the target, plus only what the other mode had and could not be seen. */
const checkPublished = (
  before: ReadonlyArray<Held>,
  after: ReadonlyArray<Held>,
  target: ReadonlySet<string>,
  mode: Mode
) => {
  const afterKeys = new Set(after.map(key))
  for (const name of target) expect(afterKeys).toContain(name)
  for (const held of after) {
    if (target.has(key(held))) {
      // Objects that stay are updated in place, never replaced.
      const old = before.find((b) => key(b) === key(held))
      if (old !== undefined) expect(held.uid).toBe(old.uid)
    } else {
      // Removing the other mode's objects is best effort (403, unserved); nothing else may linger.
      expect(held.kind).toBe(otherKind(mode))
      expect(before).toContainEqual(held)
    }
  }
}

/** After a failed unpublish, every object left of the mode's own types is named. */
const checkFailedUnpublish = (after: ReadonlyArray<Held>, mode: Mode, reason: string) => {
  for (const held of after) {
    if (held.kind === otherKind(mode)) continue
    const named = reason.includes(key(held)) || reason.includes(`the session's ${held.kind} objects`)
    expect(named, `${key(held)} is left and not named in: ${reason}`).toBe(true)
  }
}

// ---------------------------------------------------------------------------

/** The two modes' settings, validated once: every run shares them. */
const configs = Effect.runSync(
  Effect.all({
    ingress: RouterConfigLive.make(settingsFor("ingress")),
    gateway: RouterConfigLive.make(settingsFor("gateway"))
  })
)

function settingsFor(mode: Mode): RouterConfigLive.RouterConfigValues {
  return {
    mode,
    sessionNamespace: namespace,
    baseDomain: BASE_DOMAIN,
    ingressClassName: "local",
    gatewayName: "sessions"
  }
}

/**
 * A cluster with both routers over one in-memory client, and a fault armed after N
 * calls. Built with plain services rather than layers: a thousand runs each building
 * layers spend most of their time there.
 */
const setup = Effect.gen(function*() {
  const cluster = yield* LocalCluster.makeInMemory({ namespaces: [namespace] })
  const kube = yield* InMemoryKubeClient.make(cluster.store, { faults: cluster.faults })
  const armed = yield* Ref.make<{ readonly after: number; readonly fault: FaultSpec } | undefined>(undefined)
  const observed = observedKubeClient(kube, () =>
    Effect.flatMap(
      Ref.modify(armed, (a) =>
        a === undefined
          ? [undefined, a]
          : a.after === 0
          ? [a.fault, undefined]
          : [undefined, { ...a, after: a.after - 1 }]),
      (due) => (due !== undefined ? Effect.asVoid(cluster.faults.add(due)) : Effect.void)
    ))
  const routerOf = <E>(
    make: Effect.Effect<SessionRouterService.Service, E, KubeClient | RouterConfig | Scope.Scope>,
    mode: Mode
  ) =>
    make.pipe(
      Effect.provideService(KubeClient, observed),
      Effect.provideService(RouterConfig, configs[mode]),
      Effect.orDie
    )
  const routers: Record<Mode, SessionRouterService.Service> = {
    ingress: yield* routerOf(IngressRouter.make, "ingress"),
    gateway: yield* routerOf(GatewayRouter.make, "gateway")
  }
  const prepare = (f: Op["faults"]) =>
    Effect.gen(function*() {
      yield* cluster.faults.clear
      for (const spec of f.now) yield* cluster.faults.add(spec)
      yield* Ref.set(armed, f.armed)
    })
  return { cluster, routers, prepare }
})

/** One sequence of operations on a fresh cluster, then a fault-free unpublish. */
const run = (ops: ReadonlyArray<Op>, last: Mode) =>
  Effect.scoped(
    Effect.gen(function*() {
      const { cluster, prepare, routers } = yield* setup
      for (const step of ops) {
        const before = yield* snapshot(cluster)
        yield* prepare(step.faults)
        const router = routers[step.mode]
        if (step._tag === "publish") {
          const result = yield* Effect.either(router.publish({ sessionId, ...pod, ports: step.ports }))
          const after = yield* snapshot(cluster)
          const target = targetOf(step.mode, step.ports)
          if (Either.isLeft(result)) checkFailedPublish(before, after, target, result.left.reason)
          else checkPublished(before, after, target, step.mode)
        } else {
          const result = yield* Effect.either(router.unpublish(sessionId))
          const after = yield* snapshot(cluster)
          if (Either.isLeft(result)) checkFailedUnpublish(after, step.mode, result.left.reason)
          // Only the other mode's objects may stay, where it could not see them (403, unserved).
          else for (const held of after) expect(held.kind).toBe(otherKind(step.mode))
        }
      }
      yield* prepare({ now: [], armed: undefined })
      yield* routers[last].unpublish(sessionId)
      expect(yield* snapshot(cluster)).toEqual([])
    })
  )

describe("publish atomicity under random faults", () => {
  // One test environment for all runs, each run synchronous on it: nothing here waits
  // on time (no latency or hang faults), and a test environment per run would cost
  // more than the runs themselves.
  it.effect("a failed publish leaves what was there, and a final unpublish leaves nothing", () =>
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<never>()
      fc.assert(
        fc.property(fc.array(op, { minLength: 1, maxLength: 6 }), mode, (ops, last) => {
          Runtime.runSync(runtime)(run(ops, last))
        }),
        { numRuns: 1000 }
      )
    }))
})
