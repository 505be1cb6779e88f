import { describe, expect, it } from "@effect/vitest"
import { eventsTable, shortDuration } from "../../src/cli/present/EventsTable.js"
import type { CoreEvent } from "../../src/domain/Objects.js"

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 30, 20, 0, seconds)).toISOString()
const event = (reason: string, first: number, last: number, count: number, message: string): CoreEvent => ({
  metadata: { name: `telo-run-s1.${reason}` },
  involvedObject: { kind: "Pod", name: "telo-run-s1" },
  type: reason === "RouteUnprogrammed" ? "Warning" : "Normal",
  reason,
  message,
  firstTimestamp: at(first),
  lastTimestamp: at(last),
  count
})

describe("eventsTable", () => {
  it("prints the Events oldest first, with the count of a repeated one, as kubectl events does", () => {
    expect(eventsTable([
      event("RouteProgrammed", 1, 2, 2, "9090-s1.example.com (port 9090) is programmed"),
      event("RoutesPublished", 0, 0, 1, "published 2 hosts")
    ], Date.UTC(2026, 10, 30, 20, 0, 3))).toEqual([
      "LAST SEEN         TYPE     REASON            OBJECT            MESSAGE",
      "3s                Normal   RoutesPublished   Pod/telo-run-s1   published 2 hosts",
      "1s (x2 over 1s)   Normal   RouteProgrammed   Pod/telo-run-s1   9090-s1.example.com (port 9090) is programmed"
    ])
    expect(eventsTable([], 0)).toEqual([])
  })

  it("writes durations as kubectl does", () => {
    expect([shortDuration(999), shortDuration(61_000), shortDuration(3_600_000 + 120_000)]).toEqual([
      "0s",
      "1m1s",
      "1h2m"
    ])
  })
})
