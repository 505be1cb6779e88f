/**
 * Events as the library's recorder writes them, on both servers: an events.k8s.io/v1
 * Event and the merge patch of its `series` that counts a repeat, the core/v1 Event of
 * the fallback and its `count` and `lastTimestamp`, what each API refuses (and in which
 * words), and one stored Event read through either API.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { EventResource, EventV1Resource, resourcePath } from "session-routing/kubernetes"
import {
  eventName,
  formatMicroTime,
  formatTime,
  MAX_NOTE_LENGTH,
  newCoreEvent,
  newEventV1,
  type Occurrence,
  podReference,
  repeatPatch
} from "../../src/domain/KubeEvents.js"
import { Contract, ContractLive, onRealServer } from "./ContractCluster.js"

const MERGE = "application/merge-patch+json"

/** The recorder's instant for a first occurrence: 2026-01-01T00:00:00.123456789Z. */
const FIRST = 1_767_225_600_123_456_789n
/** A repeat five seconds later, with microseconds that need their padding. */
const REPEAT = 1_767_225_605_000_001_000n

const occurrence = (
  namespace: string,
  note = "8080-s1.sessions.localtest.me (port 8080) is published"
): Occurrence => ({
  regarding: podReference(namespace, "session", "0b7b1c9e-0000-4000-8000-000000000001"),
  type: "Normal",
  reason: "RoutesPublished",
  note,
  action: "Publish"
})

const stamp = (nanos: bigint) => ({ name: eventName("session", nanos), instance: "session-routing-contract", nanos })

/** What the library sent, without its identity: the fields an answer must carry as sent. */
const fieldsOf = (object: object) => {
  const { apiVersion: _v, kind: _k, metadata: _m, ...fields } = object as Record<string, unknown>
  return fields
}

/** A refusal's status, reason and causes: the events view's name differs (README), its causes do not. */
const refusal = (answer: { readonly status: number; readonly body: any }) => ({
  code: answer.status,
  reason: answer.body?.reason,
  name: answer.body?.details?.name,
  kind: answer.body?.details?.kind,
  causes: answer.body?.details?.causes
})

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("events", (it) => {
  it.scoped("creates an events.k8s.io Event as the library writes it, and answers every field as sent", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const first = newEventV1(occurrence(ns), stamp(FIRST))
      const created = yield* admin.call("POST", resourcePath(EventV1Resource, ns), first)
      expect(created.status, created.text).toBe(201)
      expect(created.body).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: first.metadata?.name, namespace: ns },
        ...fieldsOf(first)
      })
      expect(created.body.eventTime).toBe("2026-01-01T00:00:00.123456Z")
      // Repeats folded in before the first write: the series goes with the create.
      const folded = newEventV1(occurrence(ns), stamp(REPEAT), 3)
      const withSeries = yield* admin.call("POST", resourcePath(EventV1Resource, ns), folded)
      expect([withSeries.status, withSeries.body.series]).toEqual([
        201,
        { count: 3, lastObservedTime: "2026-01-01T00:00:05.000001Z" }
      ])
    }))

  it.scoped("counts a repeat with a merge patch of its series, and refuses a new note: an events.k8s.io Event is immutable but for its series", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const first = newEventV1(occurrence(ns), stamp(FIRST))
      const path = resourcePath(EventV1Resource, ns, first.metadata?.name)
      const created = yield* admin.call("POST", resourcePath(EventV1Resource, ns), first)
      const repeated = yield* admin.call(
        "PATCH",
        path,
        repeatPatch("events.k8s.io/v1", occurrence(ns), 2, REPEAT),
        MERGE
      )
      expect(repeated.status, repeated.text).toBe(200)
      expect(repeated.body).toMatchObject({
        ...fieldsOf(first),
        series: { count: 2, lastObservedTime: formatMicroTime(REPEAT) }
      })
      expect(repeated.body.metadata.resourceVersion).not.toBe(created.body.metadata.resourceVersion)
      // The note (stored as the core Event's `message`) cannot follow a later occurrence.
      const renoted = yield* admin.call(
        "PATCH",
        path,
        {
          ...repeatPatch("events.k8s.io/v1", occurrence(ns), 3, REPEAT),
          note: "8080-s2.sessions.localtest.me (port 8080) is published"
        },
        MERGE
      )
      expect(refusal(renoted)).toEqual({
        code: 422,
        reason: "Invalid",
        name: first.metadata?.name,
        kind: "Event",
        causes: [{
          reason: "FieldValueInvalid",
          message: `Invalid value: "8080-s2.sessions.localtest.me (port 8080) is published": field is immutable`,
          field: "message"
        }]
      })
      expect((yield* admin.call("GET", path)).body.series.count).toBe(2)
      // A series that starts below 2 is refused on update too.
      const one = yield* admin.call(
        "PATCH",
        path,
        { series: { count: 1, lastObservedTime: formatMicroTime(REPEAT) } },
        MERGE
      )
      expect(refusal(one).causes).toEqual([
        { reason: "FieldValueInvalid", message: `Invalid value: "": should be at least 2`, field: "series.count" }
      ])
    }))

  it.scoped("creates a core/v1 Event as the library's fallback writes it, and counts a repeat with count, lastTimestamp and a new message", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const first = newCoreEvent(occurrence(ns), stamp(FIRST))
      const created = yield* admin.call("POST", resourcePath(EventResource, ns), first)
      expect(created.status, created.text).toBe(201)
      expect(created.body).toMatchObject({ apiVersion: "v1", kind: "Event", ...fieldsOf(first) })
      expect([created.body.firstTimestamp, created.body.count]).toEqual(["2026-01-01T00:00:00Z", 1])
      const later = occurrence(ns, "8080-s2.sessions.localtest.me (port 8080) is published")
      const repeated = yield* admin.call(
        "PATCH",
        resourcePath(EventResource, ns, first.metadata?.name),
        repeatPatch("v1", later, 2, REPEAT),
        MERGE
      )
      expect(repeated.status, repeated.text).toBe(200)
      expect(repeated.body).toMatchObject({
        ...fieldsOf(first),
        count: 2,
        firstTimestamp: "2026-01-01T00:00:00Z",
        lastTimestamp: formatTime(Number(REPEAT / 1_000_000n)),
        message: later.note
      })
    }))

  it.scoped("serves one stored Event through both APIs: the same uid and resourceVersion, each field under the other API's name", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const newer = newEventV1(occurrence(ns), stamp(FIRST), 2)
      const written = (yield* admin.call("POST", resourcePath(EventV1Resource, ns), newer)).body
      const asCore = yield* admin.call("GET", resourcePath(EventResource, ns, newer.metadata?.name))
      expect(asCore.status).toBe(200)
      expect(asCore.body).toMatchObject({
        apiVersion: "v1",
        kind: "Event",
        metadata: {
          name: newer.metadata?.name,
          namespace: ns,
          uid: written.metadata.uid,
          resourceVersion: written.metadata.resourceVersion
        },
        involvedObject: newer.regarding,
        message: newer.note,
        reportingComponent: newer.reportingController,
        reportingInstance: newer.reportingInstance,
        action: newer.action,
        reason: newer.reason,
        type: newer.type,
        eventTime: newer.eventTime,
        series: newer.series
      })
      for (const field of ["regarding", "note", "reportingController"]) expect(asCore.body).not.toHaveProperty(field)

      const older = newCoreEvent(occurrence(ns), stamp(REPEAT))
      const stored = (yield* admin.call("POST", resourcePath(EventResource, ns), older)).body
      const asNewer = yield* admin.call("GET", resourcePath(EventV1Resource, ns, older.metadata?.name))
      expect(asNewer.body).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { uid: stored.metadata.uid, resourceVersion: stored.metadata.resourceVersion },
        regarding: older.involvedObject,
        note: older.message,
        reportingController: older.reportingComponent,
        deprecatedSource: older.source,
        deprecatedFirstTimestamp: older.firstTimestamp,
        deprecatedLastTimestamp: older.lastTimestamp,
        deprecatedCount: older.count,
        // A core Event has no eventTime: the newer API says so with null.
        eventTime: null
      })
      for (const field of ["involvedObject", "message", "count", "source"]) {
        expect(asNewer.body).not.toHaveProperty(field)
      }
      const listed = yield* admin.call("GET", resourcePath(EventV1Resource, ns))
      expect([listed.body.kind, listed.body.items.map((item: any) => item.metadata.name).sort()]).toEqual([
        "EventList",
        [newer.metadata?.name, older.metadata?.name].sort()
      ])
    }))

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster leaves an Event's unset fields out) answers an Event's unset source and times as {} and null",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const newer = newEventV1(occurrence(ns), stamp(FIRST))
        const created = yield* admin.call("POST", resourcePath(EventV1Resource, ns), newer)
        expect(created.body).toMatchObject({
          deprecatedSource: {},
          deprecatedFirstTimestamp: null,
          deprecatedLastTimestamp: null
        })
        const asCore = yield* admin.call("GET", resourcePath(EventResource, ns, newer.metadata?.name))
        expect(asCore.body).toMatchObject({ source: {}, firstTimestamp: null, lastTimestamp: null })
        const older = yield* admin.call(
          "POST",
          resourcePath(EventResource, ns),
          newCoreEvent(occurrence(ns), stamp(REPEAT))
        )
        expect(older.body.eventTime).toBeNull()
      })
  )

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster records core/v1 names) records an events.k8s.io write's fields under that API's version and names, read the same through either API",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const newer = newEventV1(occurrence(ns), stamp(FIRST))
        const created = yield* admin.call("POST", `${resourcePath(EventV1Resource, ns)}?fieldManager=recorder`, newer)
        // managedFields are kept as written, never converted: `regarding` (atomic) and
        // `note` here, where a core write records `involvedObject` and `message`.
        const recorded = [["recorder", "Update", "events.k8s.io/v1", {
          "f:action": {},
          "f:eventTime": {},
          "f:note": {},
          "f:reason": {},
          "f:regarding": {},
          "f:reportingController": {},
          "f:reportingInstance": {},
          "f:type": {}
        }]]
        const entries = (answer: { readonly body: any }) =>
          answer.body.metadata.managedFields.map((
            entry: any
          ) => [entry.manager, entry.operation, entry.apiVersion, entry.fieldsV1])
        expect(entries(created)).toEqual(recorded)
        const asCore = yield* admin.call("GET", resourcePath(EventResource, ns, newer.metadata?.name))
        expect(entries(asCore)).toEqual(recorded)
      })
  )

  it.scoped("refuses an events.k8s.io Event without eventTime or reportingController with 422, a cause for each rule", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const { eventTime: _t, ...timeless } = newEventV1(occurrence(ns), stamp(FIRST))
      const noTime = yield* admin.call("POST", resourcePath(EventV1Resource, ns), timeless)
      expect(refusal(noTime)).toEqual({
        code: 422,
        reason: "Invalid",
        name: timeless.metadata?.name,
        kind: "Event",
        causes: [{ reason: "FieldValueRequired", message: "Required value", field: "eventTime" }]
      })
      const { reportingController: _c, ...anonymous } = newEventV1(occurrence(ns), stamp(FIRST))
      const noController = yield* admin.call("POST", resourcePath(EventV1Resource, ns), anonymous)
      expect(refusal(noController)).toEqual({
        code: 422,
        reason: "Invalid",
        name: anonymous.metadata?.name,
        kind: "Event",
        causes: [
          { reason: "FieldValueRequired", message: "Required value", field: "reportingController" },
          {
            reason: "FieldValueInvalid",
            message: `Invalid value: "": name part must be non-empty`,
            field: "reportingController"
          },
          {
            reason: "FieldValueInvalid",
            message:
              `Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
            field: "reportingController"
          }
        ]
      })
    }))

  it.scoped("refuses a note over 1 KiB with a cause on the core Event's message, and takes the library's note cut to 1 KiB", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const long = "x".repeat(MAX_NOTE_LENGTH + 1)
      const event = newEventV1(occurrence(ns), stamp(FIRST))
      const refused = yield* admin.call("POST", resourcePath(EventV1Resource, ns), { ...event, note: long })
      expect(refusal(refused)).toEqual({
        code: 422,
        reason: "Invalid",
        name: event.metadata?.name,
        kind: "Event",
        // The server leaves the note out of its own message.
        causes: [{
          reason: "FieldValueInvalid",
          message: `Invalid value: "": can have at most 1024 characters`,
          field: "message"
        }]
      })
      const cut = newEventV1(occurrence(ns, long), stamp(FIRST))
      const created = yield* admin.call("POST", resourcePath(EventV1Resource, ns), cut)
      expect([created.status, created.body.note.length]).toEqual([201, MAX_NOTE_LENGTH])
    }))

  it.scoped("refuses an eventTime with milliseconds, as Date.toISOString writes it, with 400 BadRequest before validation", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const event = { ...newEventV1(occurrence(ns), stamp(FIRST)), eventTime: "2026-01-01T00:00:00.123Z" }
      const refused = yield* admin.call("POST", resourcePath(EventV1Resource, ns), event)
      expect([refused.status, refused.body]).toEqual([400, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          `Event in version "v1" cannot be handled as a Event: parsing time "2026-01-01T00:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"`,
        reason: "BadRequest",
        code: 400
      }])
    }))
})
