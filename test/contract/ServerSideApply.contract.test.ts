/**
 * Server-side apply as the library's publishes use it, on both servers: a create and an
 * update by one field manager, a dry run that stores nothing and answers a create
 * without a resourceVersion (how a publish tells a create from an update), another
 * manager's conflict and its force, managed fields, and a status kept apart from the
 * object's spec.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Contract, ContractLive } from "./ContractCluster.js"

const APPLY = "application/apply-patch+yaml"

const service = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, labels },
  spec: { ports: [{ name: "http", port: 8080, protocol: "TCP" }] }
})

const ingress = (name: string, status?: object) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name },
  spec: {
    // A class no controller serves: on the real control plane Traefik would write status.
    ingressClassName: "contract-unclaimed",
    rules: [{
      host: "8080-contract.sessions.localtest.me",
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "s", port: { number: 8080 } } } }]
      }
    }]
  },
  ...(status !== undefined ? { status } : {})
})

const managers = (object: any): ReadonlyArray<readonly [string, string, string | undefined]> =>
  (object?.metadata?.managedFields ?? []).map((
    entry: any
  ) => [entry.manager, entry.operation, entry.subresource] as const)
    .sort()

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("server-side apply", (it) => {
  it.scoped("creates with 201 and one Apply entry, updates with 200, and answers the same apply unchanged", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = `/api/v1/namespaces/${ns}/services/web`
      const created = yield* admin.call("PATCH", `${path}?fieldManager=first`, service("web", { a: "1" }), APPLY)
      expect(created.status).toBe(201)
      expect(managers(created.body)).toEqual([["first", "Apply", undefined]])
      const updated = yield* admin.call("PATCH", `${path}?fieldManager=first`, service("web", { a: "2" }), APPLY)
      expect([updated.status, updated.body.metadata.labels]).toEqual([200, { a: "2" }])
      const again = yield* admin.call("PATCH", `${path}?fieldManager=first`, service("web", { a: "2" }), APPLY)
      expect(again.body.metadata.resourceVersion).toBe(updated.body.metadata.resourceVersion)
      expect(again.body.metadata.generation).toBe(updated.body.metadata.generation)
    }))

  it.scoped("dry-runs a create without storing it, answering without a resourceVersion, and an update with the live one", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = `/api/v1/namespaces/${ns}/services/dry`
      const dry = yield* admin.call("PATCH", `${path}?fieldManager=first&dryRun=All`, service("dry"), APPLY)
      expect(dry.status).toBe(201)
      expect(dry.body.metadata.resourceVersion ?? "").toBe("")
      expect((yield* admin.call("GET", path)).status).toBe(404)
      const live = yield* admin.call("PATCH", `${path}?fieldManager=first`, service("dry"), APPLY)
      const dryUpdate = yield* admin.call(
        "PATCH",
        `${path}?fieldManager=first&dryRun=All`,
        service("dry", { b: "1" }),
        APPLY
      )
      expect([dryUpdate.status, dryUpdate.body.metadata.resourceVersion]).toEqual([
        200,
        live.body.metadata.resourceVersion
      ])
      expect((yield* admin.call("GET", path)).body.metadata.labels ?? {}).toEqual({})
    }))

  it.scoped("refuses another manager's value with a 409 naming the field and its owner, and takes it on force", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = `/api/v1/namespaces/${ns}/services/owned`
      yield* admin.call("PATCH", `${path}?fieldManager=first`, service("owned", { team: "a" }), APPLY)
      const conflict = yield* admin.call("PATCH", `${path}?fieldManager=second`, service("owned", { team: "b" }), APPLY)
      expect(conflict.status).toBe(409)
      expect(conflict.body).toMatchObject({
        kind: "Status",
        status: "Failure",
        reason: "Conflict",
        code: 409,
        message: `Apply failed with 1 conflict: conflict with "first": .metadata.labels.team`
      })
      expect(conflict.body.details.causes).toEqual([
        { reason: "FieldManagerConflict", message: `conflict with "first"`, field: ".metadata.labels.team" }
      ])
      const forced = yield* admin.call(
        "PATCH",
        `${path}?fieldManager=second&force=true`,
        service("owned", { team: "b" }),
        APPLY
      )
      expect([forced.status, forced.body.metadata.labels]).toEqual([200, { team: "b" }])
      expect(managers(forced.body)).toEqual([["first", "Apply", undefined], ["second", "Apply", undefined]])
    }))

  it.scoped("shares a field another manager owns when applied with the same value: 200, and both own it", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = `/api/v1/namespaces/${ns}/services/shared`
      const created = yield* admin.call("PATCH", `${path}?fieldManager=first`, service("shared", { team: "a" }), APPLY)
      const labelOnly = { apiVersion: "v1", kind: "Service", metadata: { name: "shared", labels: { team: "a" } } }
      const shared = yield* admin.call("PATCH", `${path}?fieldManager=second`, labelOnly, APPLY)
      expect(shared.status, shared.text).toBe(200)
      expect([shared.body.metadata.labels, shared.body.spec.ports]).toEqual([{ team: "a" }, created.body.spec.ports])
      // A conflict is a different value only. The newcomer's entry has no time: the
      // server stamps an entry when its write changed the object, and this one did not
      // (the entries sort by time, an entry without one first).
      const team = { "f:metadata": { "f:labels": { "f:team": {} } } }
      expect(shared.body.metadata.managedFields.map((entry: any) => [entry.manager, entry.time, entry.fieldsV1]))
        .toEqual([
          ["second", undefined, team],
          ["first", created.body.metadata.managedFields[0].time, {
            ...team,
            "f:spec": {
              "f:ports": {
                [`k:{"port":8080,"protocol":"TCP"}`]: { ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {} }
              }
            }
          }]
        ])
    }))

  it.scoped("keeps the status apart: an apply to the object ignores its status, one to /status touches nothing else", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const base = `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/gated`
      const status = { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } }
      const created = yield* admin.call("PATCH", `${base}?fieldManager=runner`, ingress("gated", status), APPLY)
      expect(created.body.status ?? {}).toEqual({ loadBalancer: {} })
      // As controllers write status (and LocalCluster serves no apply on /status: see its README).
      const written = yield* admin.call(
        "PATCH",
        `${base}/status?fieldManager=controller`,
        { status },
        "application/merge-patch+json"
      )
      expect([written.status, written.body.status]).toEqual([200, status])
      expect(written.body.metadata.generation).toBe(created.body.metadata.generation)
      expect(managers(written.body)).toEqual([["controller", "Update", "status"], ["runner", "Apply", undefined]])
      // The next apply of the object, without a status, leaves the controller's status be.
      const reapplied = yield* admin.call("PATCH", `${base}?fieldManager=runner`, ingress("gated"), APPLY)
      expect(reapplied.body.status).toEqual(status)
    }))

  it.scoped("refuses a patch in a media type it does not take with 415", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = `/api/v1/namespaces/${ns}/services/web?fieldManager=first`
      const refused = yield* admin.call("PATCH", path, service("web"), "text/plain")
      expect(refused.status).toBe(415)
      expect(refused.body).toMatchObject({
        kind: "Status",
        status: "Failure",
        reason: "UnsupportedMediaType",
        code: 415
      })
    }))
})
