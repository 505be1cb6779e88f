import { describe, expect, it } from "@effect/vitest"
import {
  eventName,
  formatMicroTime,
  formatTime,
  MAX_NOTE_LENGTH,
  newCoreEvent,
  newEventV1,
  type Occurrence,
  podReference,
  repeatPatch,
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
// 2026-11-30T20:00:00.123456789Z
const nanos = 1_796_068_800_123_456_789n

describe("KubeEvents", () => {
  it("writes MicroTime with six fractional digits and Time with none", () => {
    expect(formatMicroTime(nanos)).toBe("2026-11-30T20:00:00.123456Z")
    expect(formatTime(1_796_068_800_999)).toBe("2026-11-30T20:00:00Z")
  })

  it("names an Event after its object and the instant in hex, as client-go does", () => {
    expect(eventName("pod-a", 255n)).toBe("pod-a.ff")
  })

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

  it("counts a repeat with series in events.k8s.io/v1 and count in core/v1", () => {
    expect(repeatPatch("events.k8s.io/v1", occurrence, 2, nanos)).toEqual({
      series: { count: 2, lastObservedTime: "2026-11-30T20:00:00.123456Z" },
      note: occurrence.note
    })
    expect(repeatPatch("v1", occurrence, 3, nanos)).toEqual({
      count: 3,
      lastTimestamp: "2026-11-30T20:00:00Z",
      message: occurrence.note
    })
  })

  it("cuts a note to the 1 KiB the API accepts", () => {
    const note = newEventV1({ ...occurrence, note: "x".repeat(5000) }, { name: "n", instance: "i", nanos }).note ?? ""
    expect(note).toHaveLength(MAX_NOTE_LENGTH)
    expect(note.endsWith("...")).toBe(true)
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
