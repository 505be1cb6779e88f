import { describe, expect, it } from "@effect/vitest"
import { jsonLine, plainLine, renderFrame, viewOf } from "../../src/cli/present/SessionView.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"

const host = "8080-s1.example.com"
const events: ReadonlyArray<SessionEvent> = [
  { type: "published", layer: "ingress", routes: [{ host, port: 8080 }], endpoints: [] },
  { type: "route", port: 8080, host, state: "programmed" },
  { type: "endpoints", port: 8080, host, ready: false, reason: "the session Pod is not Ready" },
  { type: "probe", port: 8080, host, ok: false, status: 503, reason: "503: no ready endpoint" },
  { type: "event-error", reason: "could not record Event RouteProgrammed: forbidden" }
]

describe("presenting probes, endpoints and Events", () => {
  it("prints one plain line per follow-up event", () => {
    expect(events.slice(2).map(plainLine)).toEqual([
      `${host} no ready endpoint: the session Pod is not Ready`,
      `${host} probe failed: 503: no ready endpoint`,
      "events: could not record Event RouteProgrammed: forbidden"
    ])
    expect(plainLine({ type: "probe", port: 8080, host, ok: true, status: 200 })).toBe(`${host} probe 200`)
  })

  it("prints each as its JSON line, and shows the probe on the host's row of the table", () => {
    expect(jsonLine({ type: "probe", port: 8080, host, ok: true, status: 200 })).toBe(
      `{"type":"probe","port":8080,"host":"${host}","ok":true,"status":200}`
    )
    expect(renderFrame(viewOf(events), { color: false })).toEqual([
      "  PORT  HOST                 STATE       REASON",
      `✓ 8080  ${host}  programmed  probe failed: 503: no ready endpoint`,
      "events: could not record Event RouteProgrammed: forbidden"
    ])
  })
})
