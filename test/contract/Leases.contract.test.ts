/**
 * Leases as the library's leader election and shard check use them, on both servers:
 * a create, a second candidate's create (409 AlreadyExists) and stale renew (409
 * Conflict), an update without a resourceVersion (refused: a Lease has no unconditional
 * update), the bounds of its duration, its MicroTimes as written back, and a list.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { LeaseResource, resourcePath } from "session-routing/kubernetes"
import { Contract, ContractLive } from "./ContractCluster.js"
import { failureStatus } from "./RawApi.js"

const GROUP_VERSION = "coordination.k8s.io/v1"

/** A Lease as a candidate writes one: holder, duration and MicroTimes (`LeaseWrites.ts`). */
const lease = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: GROUP_VERSION,
  kind: "Lease",
  metadata: { name, ...metadata },
  spec: {
    holderIdentity: "candidate-a",
    leaseDurationSeconds: 15,
    acquireTime: "2026-01-01T00:00:00.123000Z",
    renewTime: "2026-01-01T00:00:10.123000Z",
    leaseTransitions: 0,
    ...spec
  }
})

const leaseDetails = (name: string) => ({ name, group: "coordination.k8s.io", kind: "leases" })

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("leases", (it) => {
  it.scoped("creates a Lease with 201, and writes its times back as MicroTime in UTC with six digits", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      // Another offset and the library's padded milliseconds: both are read and written back in UTC.
      const created = yield* admin.call(
        "POST",
        resourcePath(LeaseResource, ns),
        lease("leader", { acquireTime: "2026-01-01T01:00:00.000001+01:00" })
      )
      expect(created.status, created.text).toBe(201)
      expect([created.body.apiVersion, created.body.kind, created.body.metadata.name, created.body.spec]).toEqual([
        GROUP_VERSION,
        "Lease",
        "leader",
        {
          holderIdentity: "candidate-a",
          leaseDurationSeconds: 15,
          acquireTime: "2026-01-01T00:00:00.000001Z",
          renewTime: "2026-01-01T00:00:10.123000Z",
          leaseTransitions: 0
        }
      ])
      const read = yield* admin.call("GET", resourcePath(LeaseResource, ns, "leader"))
      expect(read.body.spec).toEqual(created.body.spec)
    }))

  it.scoped("refuses a time in another layout (Date.toISOString's milliseconds, none at all) with 400 BadRequest", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      for (
        const [time, rest] of [["2026-01-01T00:00:00.123Z", ".123Z"], ["2026-01-01T00:00:00Z", "Z"]] as const
      ) {
        const refused = yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader", { renewTime: time }))
        expect(refused.body).toEqual(failureStatus(
          400,
          "BadRequest",
          `Lease in version "v1" cannot be handled as a Lease: parsing time "${time}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "${rest}" as ".000000"`
        ))
      }
    }))

  it.scoped("refuses a merge or JSON patch that leaves an unparseable MicroTime with 422 on the patched object", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = resourcePath(LeaseResource, ns, "leader")
      yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader"))
      const problem =
        `parsing time "not-a-time" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "not-a-time" as "2006"`
      for (
        const [body, type] of [
          [{ spec: { renewTime: "not-a-time" } }, "application/merge-patch+json"],
          [[{ op: "replace", path: "/spec/renewTime", value: "not-a-time" }], "application/json-patch+json"]
        ] as const
      ) {
        const refused = yield* admin.call("PATCH", path, body, type)
        // Unlike a POST or PUT of the same body (400 BadRequest), the patched object fails
        // to decode as a field error on `patch` of no kind or name, its value the patched
        // object as JSON; the object's serialization differs between the two, so the value
        // is compared for the time alone.
        const cause = refused.body?.details?.causes?.[0]
        const value = /^Invalid value: (".*"): parsing time /.exec(cause?.message ?? "")?.[1]
        expect([
          refused.status,
          refused.body?.reason,
          refused.body?.details?.causes?.length,
          cause?.reason,
          cause?.field
        ])
          .toEqual([422, "Invalid", 1, "FieldValueInvalid", "patch"])
        expect(JSON.parse(JSON.parse(value ?? "null")).spec.renewTime).toBe("not-a-time")
        expect(cause.message).toBe(`Invalid value: ${value}: ${problem}`)
        expect(refused.body.message).toBe(` "" is invalid: patch: ${cause.message}`)
        expect(Object.keys(refused.body.details)).toEqual(["causes"])
      }
      expect((yield* admin.call("GET", path)).body.spec.renewTime).toBe("2026-01-01T00:00:10.123000Z")
    }))

  it.scoped("records no field for an empty spec on create, a Lease's spec being a struct, and so tracks no update after", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const managed = (answer: { readonly body: any }) => answer.body.metadata.managedFields
      const empty = { apiVersion: GROUP_VERSION, kind: "Lease", metadata: { name: "empty" }, spec: {} }
      const created = yield* admin.call("POST", `${resourcePath(LeaseResource, ns)}?fieldManager=creator`, empty)
      expect([created.status, created.body.spec, managed(created)]).toEqual([201, {}, undefined])
      const { spec: _s, ...specless } = { ...empty, metadata: { name: "specless" } }
      const bare = yield* admin.call("POST", `${resourcePath(LeaseResource, ns)}?fieldManager=creator`, specless)
      expect([bare.status, bare.body.spec, managed(bare)]).toEqual([201, {}, undefined])
      // With nothing tracked, an update starts nothing: an apply does.
      const path = resourcePath(LeaseResource, ns, "empty")
      const held = yield* admin.call(
        "PATCH",
        `${path}?fieldManager=holder`,
        { spec: { holderIdentity: "candidate-a" } },
        "application/merge-patch+json"
      )
      expect([held.status, held.body.spec, managed(held)]).toEqual([200, { holderIdentity: "candidate-a" }, undefined])
      const applied = yield* admin.call(
        "PATCH",
        `${path}?fieldManager=applier`,
        { ...empty, spec: { leaseDurationSeconds: 15 } },
        "application/apply-patch+yaml"
      )
      // The first apply hands what stands untracked to a manager of the server's.
      expect(managed(applied).map((entry: any) => [entry.manager, entry.operation, entry.fieldsV1])).toEqual([
        ["applier", "Apply", { "f:spec": { "f:leaseDurationSeconds": {} } }],
        ["before-first-apply", "Update", { "f:spec": { "f:holderIdentity": {} } }]
      ])
    }))

  it.scoped("refuses a second candidate's create of the same Lease with 409 AlreadyExists", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      expect((yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader"))).status).toBe(201)
      const second = yield* admin.call(
        "POST",
        resourcePath(LeaseResource, ns),
        lease("leader", { holderIdentity: "candidate-b" })
      )
      expect([second.status, second.body]).toEqual([
        409,
        failureStatus(
          409,
          "AlreadyExists",
          `leases.coordination.k8s.io "leader" already exists`,
          leaseDetails("leader")
        )
      ])
    }))

  it.scoped("refuses a renew from a stale read with 409 Conflict, and takes one from the latest", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const path = resourcePath(LeaseResource, ns, "leader")
      const created = (yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader"))).body
      const renew = (from: any, renewTime: string) => ({ ...from, spec: { ...from.spec, renewTime } })
      const renewed = yield* admin.call("PUT", path, renew(created, "2026-01-01T00:00:12.000000Z"))
      expect([renewed.status, renewed.body.spec.renewTime]).toEqual([200, "2026-01-01T00:00:12.000000Z"])
      // Another candidate, still holding the Lease as created, writes from it.
      const stale = yield* admin.call("PUT", path, renew(created, "2026-01-01T00:00:14.000000Z"))
      expect([stale.status, stale.body]).toEqual([
        409,
        failureStatus(
          409,
          "Conflict",
          `Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again`,
          leaseDetails("leader")
        )
      ])
      expect((yield* admin.call("GET", path)).body.spec.renewTime).toBe("2026-01-01T00:00:12.000000Z")
    }))

  it.scoped("refuses an update without a resourceVersion with 422 on metadata.resourceVersion: a Lease has no unconditional update", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader"))
      const blind = yield* admin.call(
        "PUT",
        resourcePath(LeaseResource, ns, "leader"),
        lease("leader", { holderIdentity: "candidate-b" })
      )
      // The value in the message differs (`0`, LocalCluster `0x0`: README); the rest agrees.
      expect([
        blind.status,
        blind.body.reason,
        blind.body.details.name,
        blind.body.details.group,
        blind.body.details.kind,
        blind.body.details.causes.map((c: any) => [c.reason, c.field])
      ]).toEqual([422, "Invalid", "leader", "coordination.k8s.io", "leases", [[
        "FieldValueInvalid",
        "metadata.resourceVersion"
      ]]])
      expect(
        (yield* admin.call("GET", resourcePath(LeaseResource, ns, "leader"))).body.spec.holderIdentity
      ).toBe("candidate-a")
    }))

  it.scoped("refuses a leaseDurationSeconds of 0 or below with 422 naming spec.leaseDurationSeconds, on create and on renew", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const invalid = (name: string, causes: ReadonlyArray<{ field: string; message: string }>) =>
        failureStatus(
          422,
          "Invalid",
          `Lease.coordination.k8s.io "${name}" is invalid: ${
            causes.length === 1
              ? `${causes[0]!.field}: ${causes[0]!.message}`
              : `[${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}]`
          }`,
          {
            name,
            group: "coordination.k8s.io",
            kind: "Lease",
            causes: causes.map((c) => ({ reason: "FieldValueInvalid", message: c.message, field: c.field }))
          }
        )
      const zero = yield* admin.call(
        "POST",
        resourcePath(LeaseResource, ns),
        lease("zero", { leaseDurationSeconds: 0 })
      )
      expect([zero.status, zero.body]).toEqual([
        422,
        invalid("zero", [{ field: "spec.leaseDurationSeconds", message: "Invalid value: 0: must be greater than 0" }])
      ])
      const negative = yield* admin.call(
        "POST",
        resourcePath(LeaseResource, ns),
        lease("negative", { leaseDurationSeconds: -5, leaseTransitions: -1 })
      )
      expect(negative.body).toEqual(invalid("negative", [
        { field: "spec.leaseDurationSeconds", message: "Invalid value: -5: must be greater than 0" },
        { field: "spec.leaseTransitions", message: "Invalid value: -1: must be greater than or equal to 0" }
      ]))
      const created = (yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("leader"))).body
      const renewed = yield* admin.call("PUT", resourcePath(LeaseResource, ns, "leader"), {
        ...created,
        spec: { ...created.spec, leaseDurationSeconds: 0 }
      })
      expect(renewed.body).toEqual(
        invalid("leader", [{ field: "spec.leaseDurationSeconds", message: "Invalid value: 0: must be greater than 0" }])
      )
    }))

  it.scoped("lists the Leases of one namespace as a LeaseList, each item without kind or apiVersion", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const other = yield* namespace
      for (const name of ["shard-1", "shard-0"]) yield* admin.call("POST", resourcePath(LeaseResource, ns), lease(name))
      yield* admin.call("POST", resourcePath(LeaseResource, other), lease("elsewhere"))
      const listed = yield* admin.call("GET", resourcePath(LeaseResource, ns))
      expect(listed.status).toBe(200)
      expect([listed.body.kind, listed.body.apiVersion, typeof listed.body.metadata.resourceVersion]).toEqual([
        "LeaseList",
        GROUP_VERSION,
        "string"
      ])
      // In name order, as both keep them.
      expect(listed.body.items.map((item: any) => item.metadata.name)).toEqual(["shard-0", "shard-1"])
      for (const item of listed.body.items) {
        expect([item.kind, item.apiVersion, item.metadata.namespace, item.spec]).toEqual([
          undefined,
          undefined,
          ns,
          lease(item.metadata.name).spec
        ])
      }
    }))
})
