/**
 * The Events written about a session's Pod: their reasons, names and times, the
 * shape of the first occurrence in either API, repeats, notes cut to 1 KiB, and
 * the spam budget per object.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  eventName,
  EventReason,
  formatMicroTime,
  formatTime,
  MAX_NOTE_LENGTH,
  newCoreEvent,
  newEventV1,
  type Occurrence,
  occurrenceKey,
  podReference,
  repeatPatch,
  REPORTING_CONTROLLER,
  SPAM_BURST,
  SPAM_REFILL_MS,
  spendBudget
} from "../../src/domain/KubeEvents.js"

const occurrence: Occurrence = {
  regarding: podReference("ns", "pod-a", "uid-a"),
  type: "Normal",
  reason: "RouteProgrammed",
  note: "8080-s1.example.com (port 8080) is programmed",
  action: "WatchRoute"
}
const unreadable: Occurrence = {
  regarding: podReference("ns", "pod-a", "uid-a"),
  type: "Warning",
  reason: EventReason.RouteStatusUnreadable,
  note: "could not read the route's status",
  action: "WatchRoute"
}
// 2026-11-30T20:00:00.123456789Z
const nanos = 1_796_068_800_123_456_789n
// 2026-01-02T03:04:05.000007Z: every part of it needs padding.
const paddedNanos = 1_767_323_045_000_007_000n

describe("reasons, names and times", () => {
  it("records the reasons under their own names, as session-routing", () => {
    expect(EventReason).toEqual({
      RoutesPublished: "RoutesPublished",
      RouteProgrammed: "RouteProgrammed",
      RouteUnprogrammed: "RouteUnprogrammed",
      RouteStatusUnreadable: "RouteStatusUnreadable"
    })
    expect(REPORTING_CONTROLLER).toBe("session-routing")
  })

  it("writes MicroTime with six fractional digits and Time with none", () => {
    expect(formatMicroTime(nanos)).toBe("2026-11-30T20:00:00.123456Z")
    expect(formatTime(1_796_068_800_999)).toBe("2026-11-30T20:00:00Z")
  })

  it("pads every part of a time to its width", () => {
    expect(formatMicroTime(paddedNanos)).toBe("2026-01-02T03:04:05.000007Z")
    expect(formatTime(Number(paddedNanos / 1_000_000n))).toBe("2026-01-02T03:04:05Z")
  })

  it("names an Event after its object and the instant in hex, as client-go does", () => {
    expect(eventName("pod-a", 255n)).toBe("pod-a.ff")
  })
})

describe("the first occurrence", () => {
  it("builds the first occurrence in either API, regarding the Pod", () => {
    const stamp = { name: "pod-a.1", instance: "session-routing-host", nanos }
    expect(newEventV1(occurrence, stamp)).toEqual({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "pod-a.1", namespace: "ns" },
      eventTime: "2026-11-30T20:00:00.123456Z",
      reportingController: "session-routing",
      reportingInstance: "session-routing-host",
      action: "WatchRoute",
      reason: "RouteProgrammed",
      regarding: { apiVersion: "v1", kind: "Pod", namespace: "ns", name: "pod-a", uid: "uid-a" },
      note: occurrence.note,
      type: "Normal"
    })
    expect(newCoreEvent(occurrence, stamp)).toMatchObject({
      apiVersion: "v1",
      involvedObject: { kind: "Pod", name: "pod-a", uid: "uid-a" },
      message: occurrence.note,
      count: 1,
      firstTimestamp: "2026-11-30T20:00:00Z",
      lastTimestamp: "2026-11-30T20:00:00Z",
      source: { component: "session-routing" }
    })
  })

  it("writes a core/v1 Event whole", () => {
    expect(newCoreEvent(unreadable, { name: "pod-a.1", instance: "session-routing-host", nanos: paddedNanos })).toEqual(
      {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "pod-a.1", namespace: "ns" },
        involvedObject: { apiVersion: "v1", kind: "Pod", namespace: "ns", name: "pod-a", uid: "uid-a" },
        reason: "RouteStatusUnreadable",
        message: "could not read the route's status",
        source: { component: "session-routing" },
        firstTimestamp: "2026-01-02T03:04:05Z",
        lastTimestamp: "2026-01-02T03:04:05Z",
        count: 1,
        type: "Warning",
        reportingComponent: "session-routing",
        reportingInstance: "session-routing-host",
        action: "WatchRoute"
      }
    )
  })

  it("writes an Event about an object without a namespace into the empty namespace", () => {
    const clusterScoped = { ...unreadable, regarding: { apiVersion: "v1", kind: "Node", name: "node-a" } }
    const stamp = { name: "node-a.1", instance: "i", nanos }
    expect(newEventV1(clusterScoped, stamp).metadata).toEqual({ name: "node-a.1", namespace: "" })
    expect(newCoreEvent(clusterScoped, stamp).metadata).toEqual({ name: "node-a.1", namespace: "" })
  })

  it("writes repeats folded in before the first write as the new Event's series or count", () => {
    const stamp = { name: "pod-a.1", instance: "i", nanos }
    expect(newEventV1(occurrence, stamp, 3).series).toEqual({
      count: 3,
      lastObservedTime: "2026-11-30T20:00:00.123456Z"
    })
    expect(newEventV1(occurrence, stamp).series).toBeUndefined()
    expect(newCoreEvent(occurrence, stamp, 3).count).toBe(3)
  })
})

describe("repeats", () => {
  it("counts repeats per object and reason, whatever the note or action", () => {
    const key = occurrenceKey(unreadable)
    expect(key).toBe("ns/pod-a/uid-a/RouteStatusUnreadable")
    expect(occurrenceKey({ ...unreadable, note: "another note", action: "Publish" })).toBe(key)
    expect(occurrenceKey({ ...unreadable, reason: EventReason.RouteProgrammed })).not.toBe(key)
    expect(occurrenceKey({ ...unreadable, regarding: { kind: "Pod" } })).toBe("///RouteStatusUnreadable")
  })

  it("counts a repeat with series alone in events.k8s.io/v1, where the rest is immutable, and count in core/v1", () => {
    expect(repeatPatch("events.k8s.io/v1", occurrence, 2, nanos)).toEqual({
      series: { count: 2, lastObservedTime: "2026-11-30T20:00:00.123456Z" }
    })
    expect(repeatPatch("v1", occurrence, 3, nanos)).toEqual({
      count: 3,
      lastTimestamp: "2026-11-30T20:00:00Z",
      message: occurrence.note
    })
  })
})

describe("notes", () => {
  it("cuts a note to the 1 KiB the API accepts", () => {
    const note = newEventV1({ ...occurrence, note: "x".repeat(5000) }, { name: "n", instance: "i", nanos }).note ?? ""
    expect(note).toHaveLength(MAX_NOTE_LENGTH)
    expect(note.endsWith("...")).toBe(true)
  })

  it("keeps a note of exactly 1 KiB whole and cuts one byte more, keeping its start, in either API", () => {
    const stamp = { name: "n", instance: "i", nanos: paddedNanos }
    const exact = "y".repeat(MAX_NOTE_LENGTH)
    expect(newEventV1({ ...unreadable, note: exact }, stamp).note).toBe(exact)
    expect(MAX_NOTE_LENGTH).toBe(1024)
    const longer = `${"a".repeat(MAX_NOTE_LENGTH - 3)}bcde`
    const cut = `${"a".repeat(MAX_NOTE_LENGTH - 3)}...`
    expect(newEventV1({ ...unreadable, note: longer }, stamp).note).toBe(cut)
    expect(newCoreEvent({ ...unreadable, note: longer }, stamp).message).toBe(cut)
    expect(repeatPatch("v1", { ...unreadable, note: longer }, 2, paddedNanos).message).toBe(cut)
  })
})

describe("the spam budget", () => {
  it("allows a burst of 25 Events per object, then refuses until a token has refilled", () => {
    let budget = spendBudget(undefined, 0)
    for (let i = 1; i < SPAM_BURST; i++) budget = spendBudget(budget, 0)
    expect(budget).toEqual({ tokens: 0, at: 0 })
    expect(spendBudget(budget, SPAM_REFILL_MS - 1)).toBeUndefined()
    expect(spendBudget(budget, SPAM_REFILL_MS)).toEqual({ tokens: 0, at: SPAM_REFILL_MS })
  })

  it("never refills past the burst, however long the object was quiet", () => {
    expect(spendBudget({ tokens: 3, at: 0 }, 1000 * SPAM_REFILL_MS)).toEqual({
      tokens: SPAM_BURST - 1,
      at: 1000 * SPAM_REFILL_MS
    })
  })
})
