/**
 * The garbage collector over HTTP: the router publishes a session through the live
 * client for a Pod that exists, and deleting the Pod with each propagation policy
 * does to the session's Service, Ingress and HTTPRoutes what a real cluster does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SessionRouting } from "session-routing"
import type { Pod } from "session-routing/kubernetes"
import { LABEL_SESSION_ID } from "session-routing/manifests"
import {
  eventually,
  type RouterContext,
  type RouterLayer,
  sessionObjectNames,
  type TestConfig,
  withRouter
} from "../../../test/support/RouterHarness.js"
import { pod } from "./ClusterFixtures.js"
import { call, send } from "./WireFixtures.js"

const SESSION = "gcsession"
const POD = `telo-run-${SESSION}`
const PORTS = [{ port: 8080, protocol: "tcp" as const }, { port: 9090, protocol: "tcp" as const }]
const NONE = { services: [], ingresses: [], httpRoutes: [] }

const podPath = (ctx: RouterContext, name = "") =>
  `/api/v1/namespaces/${ctx.sc.namespace}/pods${name === "" ? "" : `/${name}`}`

/** Creates the session Pod over HTTP and publishes the session for it; returns the Pod as created. */
const publishForPod = (ctx: RouterContext) =>
  Effect.gen(function*() {
    const created = yield* send(
      ctx.sc.cluster.url,
      "POST",
      podPath(ctx),
      pod(POD, { labels: { [LABEL_SESSION_ID]: SESSION } })
    )
    expect(created.status, created.text).toBe(201)
    const uid = (created.body as Pod).metadata!.uid!
    yield* Effect.orDie(ctx.router.publish({ sessionId: SESSION, podName: POD, podUid: uid, ports: PORTS }))
    return created.body as Pod
  })

const deletePod = (ctx: RouterContext, options: Record<string, unknown>) =>
  send(ctx.sc.cluster.url, "DELETE", podPath(ctx, POD), { kind: "DeleteOptions", apiVersion: "v1", ...options })

/** Runs `body` with a router over HTTP on a cluster that runs the garbage collector. */
const collecting = <A, E>(
  body: (ctx: RouterContext) => Effect.Effect<A, E>,
  layer: RouterLayer = SessionRouting.layerIngress,
  config: TestConfig = {}
) => withRouter("over HTTP", layer, body, { cluster: { controllerManager: true }, config })

const objects = (ctx: RouterContext) => sessionObjectNames(ctx.kube, ctx.sc.namespace, SESSION)
const podStatus = (ctx: RouterContext) => Effect.map(call(ctx.sc.cluster.url, podPath(ctx, POD)), (a) => a.status)

describe("garbage collection of a session's objects", () => {
  it.live("deletes the Pod at once in the background and then collects the Service and Ingress it owns", () =>
    collecting((ctx) =>
      Effect.gen(function*() {
        yield* publishForPod(ctx)
        expect(yield* objects(ctx)).toEqual({ services: [POD], ingresses: [POD], httpRoutes: [] })
        const deleted = yield* deletePod(ctx, { propagationPolicy: "Background" })
        expect([deleted.status, deleted.body.metadata.name]).toEqual([200, POD])
        expect(yield* podStatus(ctx)).toBe(404)
        yield* eventually(objects(ctx), (o) => JSON.stringify(o) === JSON.stringify(NONE))
      })
    ))

  it.live("keeps a Pod deleted in the foreground, marked, until its HTTPRoutes and Service are gone", () =>
    collecting(
      (ctx) =>
        Effect.gen(function*() {
          yield* publishForPod(ctx)
          const deleted = yield* deletePod(ctx, { propagationPolicy: "Foreground" })
          expect(deleted.status).toBe(200)
          expect(deleted.body.metadata.deletionTimestamp).toEqual(expect.any(String))
          expect(deleted.body.metadata.finalizers).toEqual(["foregroundDeletion"])
          yield* eventually(podStatus(ctx), (status) => status === 404)
          // Every dependent blocks its owner's deletion: by the time the Pod is gone, they are too.
          expect(yield* objects(ctx)).toEqual(NONE)
        }),
      SessionRouting.layerGateway,
      { mode: "gateway" }
    ))

  it.live("orphans the session's objects when the Pod is deleted with Orphan: they stay, owned by nobody", () =>
    collecting((ctx) =>
      Effect.gen(function*() {
        yield* publishForPod(ctx)
        expect((yield* deletePod(ctx, { propagationPolicy: "Orphan" })).body.metadata.finalizers).toEqual(["orphan"])
        yield* eventually(podStatus(ctx), (status) => status === 404)
        expect(yield* objects(ctx)).toEqual({ services: [POD], ingresses: [POD], httpRoutes: [] })
        const service = yield* call(ctx.sc.cluster.url, `/api/v1/namespaces/${ctx.sc.namespace}/services/${POD}`)
        expect(service.body.metadata.ownerReferences).toBeUndefined()
      })
    ))

  it.live("collects objects that name a Pod uid that does not exist, as `render`'s placeholder warning says", () =>
    collecting((ctx) =>
      Effect.gen(function*() {
        yield* Effect.orDie(
          ctx.router.publish({
            sessionId: SESSION,
            podName: POD,
            podUid: "00000000-0000-0000-0000-000000000000",
            ports: PORTS
          })
        )
        yield* eventually(objects(ctx), (o) => JSON.stringify(o) === JSON.stringify(NONE))
      })
    ))

  it.live("refuses an unknown propagation policy, and one given with orphanDependents, as the server words it", () =>
    collecting((ctx) =>
      Effect.gen(function*() {
        yield* publishForPod(ctx)
        const unknown = yield* deletePod(ctx, { propagationPolicy: "Later" })
        expect([unknown.status, unknown.body.message]).toEqual([
          422,
          `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"`
        ])
        const both = yield* deletePod(ctx, { propagationPolicy: "Orphan", orphanDependents: true })
        expect(both.status).toBe(422)
        expect(yield* podStatus(ctx)).toBe(200)
      })
    ))
})
