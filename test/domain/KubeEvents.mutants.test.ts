/**
 * Event details that mutation testing found unchecked: the reasons' wire names, the
 * key repeats are counted under, zero-padded times, a note of exactly 1 KiB kept
 * whole, and the core/v1 Event written whole.
 */
import { describe, expect, it } from "@effect/vitest"
import {
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
  REPORTING_CONTROLLER
} from "../../src/domain/KubeEvents.js"

const occurrence: Occurrence = {
  regarding: podReference("ns", "pod-a", "uid-a"),
  type: "Warning",
  reason: EventReason.RouteStatusUnreadable,
  note: "could not read the route's status",
  action: "WatchRoute"
}
// 2026-01-02T03:04:05.000007Z
const nanos = 1_767_323_045_000_007_000n

describe("KubeEvents details", () => {
  it("records the reasons under their own names, as session-routing", () => {
    expect(EventReason).toEqual({
      RoutesPublished: "RoutesPublished",
      RouteProgrammed: "RouteProgrammed",
      RouteUnprogrammed: "RouteUnprogrammed",
      RouteStatusUnreadable: "RouteStatusUnreadable"
    })
    expect(REPORTING_CONTROLLER).toBe("session-routing")
  })

  it("counts repeats per object and reason, whatever the note or action", () => {
    const key = occurrenceKey(occurrence)
    expect(key).toBe("ns/pod-a/uid-a/RouteStatusUnreadable")
    expect(occurrenceKey({ ...occurrence, note: "another note", action: "Publish" })).toBe(key)
    expect(occurrenceKey({ ...occurrence, reason: EventReason.RouteProgrammed })).not.toBe(key)
    expect(occurrenceKey({ ...occurrence, regarding: { kind: "Pod" } })).toBe("///RouteStatusUnreadable")
  })

  it("pads every part of a time to its width", () => {
    expect(formatMicroTime(nanos)).toBe("2026-01-02T03:04:05.000007Z")
    expect(formatTime(Number(nanos / 1_000_000n))).toBe("2026-01-02T03:04:05Z")
  })

  it("keeps a note of exactly 1 KiB whole and cuts one byte more, keeping its start", () => {
    const stamp = { name: "n", instance: "i", nanos }
    const exact = "y".repeat(MAX_NOTE_LENGTH)
    expect(newEventV1({ ...occurrence, note: exact }, stamp).note).toBe(exact)
    expect(MAX_NOTE_LENGTH).toBe(1024)
    const longer = `${"a".repeat(MAX_NOTE_LENGTH - 3)}bcde`
    expect(newEventV1({ ...occurrence, note: longer }, stamp).note).toBe(`${"a".repeat(MAX_NOTE_LENGTH - 3)}...`)
    expect(newCoreEvent({ ...occurrence, note: longer }, stamp).message).toBe(`${"a".repeat(MAX_NOTE_LENGTH - 3)}...`)
    expect(repeatPatch("v1", { ...occurrence, note: longer }, 2, nanos).message).toBe(
      `${"a".repeat(MAX_NOTE_LENGTH - 3)}...`
    )
    expect(repeatPatch("events.k8s.io/v1", { ...occurrence, note: longer }, 2, nanos).note).toBe(
      `${"a".repeat(MAX_NOTE_LENGTH - 3)}...`
    )
  })

  it("writes a core/v1 Event whole", () => {
    expect(newCoreEvent(occurrence, { name: "pod-a.1", instance: "session-routing-host", nanos })).toEqual({
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
    })
  })

  it("writes an Event about an object without a namespace into the empty namespace", () => {
    const clusterScoped = { ...occurrence, regarding: { apiVersion: "v1", kind: "Node", name: "node-a" } }
    const stamp = { name: "node-a.1", instance: "i", nanos }
    expect(newEventV1(clusterScoped, stamp).metadata).toEqual({ name: "node-a.1", namespace: "" })
    expect(newCoreEvent(clusterScoped, stamp).metadata).toEqual({ name: "node-a.1", namespace: "" })
  })
})
