/**
 * `coordination.k8s.io/v1` Leases as kube-apiserver serves them: optimistic concurrency
 * on every update (a PUT must name the version it read), a PUT that creates, the spec
 * checks of ValidateLeaseSpec, MicroTimes read in their one layout and answered in UTC,
 * the fields of a feature gate that is off cleared, and the Table `kubectl get leases`
 * prints.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { Lease, Status } from "session-routing/kubernetes"
import { parseMicroTime } from "../src/internal/microTime.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { LeaseResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { call, send } from "./WireFixtures.js"

const fresh = makeMemoryStore({ namespaces: [NS] })

const lease = (name: string, spec: Lease["spec"] = {}): Lease => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec
})

const held = (name: string, holder = "candidate-a") =>
  lease(name, {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: "2026-01-02T03:04:05.123456Z",
    renewTime: "2026-01-02T03:04:05.123456Z",
    leaseTransitions: 0
  })

const failureOf = <A>(effect: Effect.Effect<A, Status>) => Effect.flip(effect)

describe("Leases in the store", () => {
  it.effect("creates a Lease with no generation, and answers one sent without a spec with an empty spec", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(LeaseResource, NS, held("leader"))
      expect(created.spec).toEqual(held("leader").spec)
      expect(created.metadata?.generation).toBeUndefined()
      expect((yield* store.create(LeaseResource, NS, { metadata: { name: "bare" } })).spec).toEqual({})
    }))

  it.effect("answers 409 AlreadyExists to a second create of one name", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(LeaseResource, NS, held("leader"))
      expect(yield* failureOf(store.create(LeaseResource, NS, held("leader", "candidate-b")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `leases.coordination.k8s.io "leader" already exists`,
        reason: "AlreadyExists",
        details: { name: "leader", group: "coordination.k8s.io", kind: "leases" },
        code: 409
      })
    }))

  it.effect("replaces a Lease from the version read, and answers 409 Conflict to a replace from an older one", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const read = yield* store.create(LeaseResource, NS, held("leader"))
      const renewed = yield* store.replace(LeaseResource, NS, "leader", {
        ...read,
        spec: { ...read.spec, renewTime: "2026-01-02T03:04:15.000000Z" }
      })
      expect(renewed.created).toBe(false)
      expect(renewed.object.spec?.renewTime).toBe("2026-01-02T03:04:15.000000Z")
      expect(renewed.object.metadata?.resourceVersion).not.toBe(read.metadata?.resourceVersion)
      // A second candidate that read before the renewal loses.
      const stale = yield* failureOf(store.replace(LeaseResource, NS, "leader", {
        ...read,
        spec: { ...read.spec, holderIdentity: "candidate-b", leaseTransitions: 1 }
      }))
      expect(stale).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again`,
        reason: "Conflict",
        details: { name: "leader", group: "coordination.k8s.io", kind: "leases" },
        code: 409
      })
      expect((yield* store.get(LeaseResource, NS, "leader")).spec?.holderIdentity).toBe("candidate-a")
    }))

  // A Lease's registry allows no unconditional update: a write that read nothing could overwrite a holder.
  it.effect("answers 422 to a replace that names no resourceVersion", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      yield* store.create(LeaseResource, NS, held("leader"))
      expect(yield* failureOf(store.replace(LeaseResource, NS, "leader", held("leader", "candidate-b")))).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `leases.coordination.k8s.io "leader" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
        reason: "Invalid",
        details: {
          name: "leader",
          group: "coordination.k8s.io",
          kind: "leases",
          causes: [{
            reason: "FieldValueInvalid",
            message: "Invalid value: 0: must be specified for an update",
            field: "metadata.resourceVersion"
          }]
        },
        code: 422
      })
    }))

  it.effect("creates a Lease that a replace names and that does not exist", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const put = yield* store.replace(LeaseResource, NS, "leader", held("leader"))
      expect([put.created, put.object.spec?.holderIdentity]).toEqual([true, "candidate-a"])
      expect(put.object.metadata?.uid).toBeDefined()
    }))

  it.effect("refuses a duration that is not positive and a negative transition count, naming each field", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(
        store.create(LeaseResource, NS, lease("leader", { leaseDurationSeconds: 0, leaseTransitions: -1 }))
      )
      expect(status).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `Lease.coordination.k8s.io "leader" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]`,
        reason: "Invalid",
        details: {
          name: "leader",
          group: "coordination.k8s.io",
          kind: "Lease",
          causes: [
            {
              reason: "FieldValueInvalid",
              message: "Invalid value: 0: must be greater than 0",
              field: "spec.leaseDurationSeconds"
            },
            {
              reason: "FieldValueInvalid",
              message: "Invalid value: -1: must be greater than or equal to 0",
              field: "spec.leaseTransitions"
            }
          ]
        },
        code: 422
      })
      // The same checks on an update.
      const live = yield* store.create(LeaseResource, NS, held("ok"))
      const update = yield* failureOf(
        store.replace(LeaseResource, NS, "ok", { ...live, spec: { ...live.spec, leaseDurationSeconds: -5 } })
      )
      expect(update.details?.causes).toEqual([{
        reason: "FieldValueInvalid",
        message: "Invalid value: -5: must be greater than 0",
        field: "spec.leaseDurationSeconds"
      }])
    }))

  it.effect("answers a MicroTime with an offset in UTC, its microseconds kept", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(
        LeaseResource,
        NS,
        lease("leader", {
          acquireTime: "2026-01-02T01:30:00.000001+02:00",
          renewTime: "2025-12-31T23:59:59.999999-01:00"
        })
      )
      expect([created.spec?.acquireTime, created.spec?.renewTime]).toEqual([
        "2026-01-01T23:30:00.000001Z",
        "2026-01-01T00:59:59.999999Z"
      ])
    }))

  it.effect("answers 400 to a MicroTime its layout refuses, with the time parser's words", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const status = yield* failureOf(
        store.create(LeaseResource, NS, lease("leader", { renewTime: "2026-01-02T03:04:05Z" }))
      )
      expect([status.code, status.reason, status.message]).toEqual([
        400,
        "BadRequest",
        `Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-02T03:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`
      ])
      const number = yield* failureOf(
        store.create(LeaseResource, NS, { ...lease("leader"), spec: { renewTime: 5 } } as unknown as Lease)
      )
      expect(number.message).toBe(
        `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number into Go struct field Lease.spec.renewTime of type string`
      )
    }))

  it.effect("clears strategy and preferredHolder, which only coordinated leader election (off by default) keeps", () =>
    Effect.gen(function*() {
      const store = yield* fresh
      const created = yield* store.create(
        LeaseResource,
        NS,
        lease("leader", { holderIdentity: "a", strategy: "OldestEmulationVersion", preferredHolder: "b" } as never)
      )
      expect(created.spec).toEqual({ holderIdentity: "a" })
      const replaced = yield* store.replace(LeaseResource, NS, "leader", {
        ...created,
        spec: { ...created.spec, strategy: "OldestEmulationVersion" } as never
      })
      expect(replaced.object.spec).toEqual({ holderIdentity: "a" })
    }))

  it.effect("answers a delete with a Success Status", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const store = yield* fresh
      const created = yield* store.create(LeaseResource, NS, held("leader"))
      expect(yield* store.delete(LeaseResource, NS, "leader")).toEqual({
        status: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: { name: "leader", group: "coordination.k8s.io", kind: "leases", uid: created.metadata?.uid },
          code: 200
        }
      })
    }))
})

describe("MicroTime", () => {
  it.each(
    [
      ["2026-01-02T03:04:05.123456Z", "2026-01-02T03:04:05.123456Z"],
      ["2026-01-02T03:04:05,123456Z", "2026-01-02T03:04:05.123456Z"],
      ["2026-01-02T3:04:05.000000Z", "2026-01-02T03:04:05.000000Z"],
      ["2024-02-29T23:00:00.000000-01:30", "2024-03-01T00:30:00.000000Z"]
    ] as const
  )("reads %s as %s", (text, utc) => {
    expect(parseMicroTime(text)).toEqual({ _tag: "Parsed", utc })
  })

  const layout = `as "2006-01-02T15:04:05.000000Z07:00"`
  it.each(
    [
      ["yesterday", `parsing time "yesterday" ${layout}: cannot parse "yesterday" as "2006"`],
      ["2026-01-02", `parsing time "2026-01-02" ${layout}: cannot parse "" as "T"`],
      [
        "2026-01-02 03:04:05.000000Z",
        `parsing time "2026-01-02 03:04:05.000000Z" ${layout}: cannot parse " 03:04:05.000000Z" as "T"`
      ],
      [
        "2026-01-02T03:04:05.123456789Z",
        `parsing time "2026-01-02T03:04:05.123456789Z" ${layout}: cannot parse "789Z" as "Z07:00"`
      ],
      [
        "2026-1-02T03:04:05.000000Z",
        `parsing time "2026-1-02T03:04:05.000000Z" ${layout}: cannot parse "1-02T03:04:05.000000Z" as "01"`
      ],
      ["2026-13-02T03:04:05.000000Z", `parsing time "2026-13-02T03:04:05.000000Z": month out of range`],
      ["2026-02-29T03:04:05.000000Z", `parsing time "2026-02-29T03:04:05.000000Z": day out of range`],
      ["2026-01-02T24:04:05.000000Z", `parsing time "2026-01-02T24:04:05.000000Z": hour out of range`],
      ["2026-01-02T03:04:05.000000Zulu", `parsing time "2026-01-02T03:04:05.000000Zulu": extra text: "ulu"`],
      [
        "2026-01-02T03:04:05.000000z",
        `parsing time "2026-01-02T03:04:05.000000z" ${layout}: cannot parse "z" as "Z07:00"`
      ]
    ] as const
  )("refuses %s as Go's time.Parse does", (text, message) => {
    expect(parseMicroTime(text)).toEqual({ _tag: "Refused", message })
  })
})

const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

describe("Leases over HTTP", () => {
  it.scopedLive("answers a PUT from a stale read with 409, a PUT of a new name with 201, and a Table with the holder", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const created = yield* send(url, "POST", LEASES, held("leader"))
      expect(created.status, created.text).toBe(201)
      const renewed = yield* send(url, "PUT", `${LEASES}/leader`, {
        ...created.body,
        spec: { ...created.body.spec, renewTime: "2026-01-02T03:04:15.000000Z" }
      })
      expect(renewed.status, renewed.text).toBe(200)
      const stale = yield* send(url, "PUT", `${LEASES}/leader`, {
        ...created.body,
        spec: { ...created.body.spec, holderIdentity: "candidate-b" }
      })
      expect([stale.status, stale.body.reason]).toEqual([409, "Conflict"])
      const other = yield* send(url, "PUT", `${LEASES}/other`, held("other", "candidate-c"))
      expect(other.status, other.text).toBe(201)

      const table = yield* call(url, LEASES, { headers: { accept: TABLE } })
      expect(table.body.columnDefinitions.map((c: { name: string; priority: number }) => [c.name, c.priority]))
        .toEqual([["Name", 0], ["Holder", 0], ["Age", 0]])
      expect(table.body.rows.map((r: { cells: ReadonlyArray<unknown> }) => r.cells.slice(0, 2))).toEqual([
        ["leader", "candidate-a"],
        ["other", "candidate-c"]
      ])
    }))
})
