/**
 * The CLI's presentation of session events without a cluster: the pure view (rows,
 * frames, lines, exit statuses) and the live table drawn on
 * TestClock so spinner ticks are counted, not waited for.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, LogLevel, Stream, TestClock } from "effect"
import { format } from "node:util"
import { cliLogLine, presentSnapshot, presentWatch, SPINNER_INTERVAL } from "../../src/cli/present/Presenter.js"
import {
  jsonLine,
  plainLine,
  publishExitCode,
  redraw,
  renderFrame,
  screenLines,
  statusExitCode,
  unreadMessage,
  viewOf
} from "../../src/cli/present/SessionView.js"
import type { SessionEvent } from "../../src/runner/SessionRunner.js"

const host = (port: number) => `${port}-abc.telo.run`

const published: SessionEvent = {
  type: "published",
  layer: "ingress",
  routes: [
    { host: host(9090), port: 9090 },
    { host: host(8080), port: 8080 }
  ],
  endpoints: [
    { host: host(8080), port: 8080, protocol: "tcp", url: `https://${host(8080)}` },
    { host: host(9090), port: 9090, protocol: "tcp", url: `https://${host(9090)}` },
    { host: "", port: 5000, protocol: "udp" }
  ]
}
const pending = (port: number): SessionEvent => ({ type: "route", port, host: host(port), state: "pending" })
const programmed = (port: number): SessionEvent => ({ type: "route", port, host: host(port), state: "programmed" })
const unprogrammed = (port: number, reason: string): SessionEvent => ({
  type: "route",
  port,
  host: host(port),
  state: "unprogrammed",
  reason
})

/** Runs `self` with a Console whose log lines land in `lines`. */
const capturing = <A, E, R>(self: Effect.Effect<A, E, R>, lines: Array<string>) =>
  Effect.consoleWith((console) =>
    Effect.withConsole(self, {
      ...console,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(format(...args)))
    })
  )

describe("session view", () => {
  it("orders rows by port whatever order the events came in", () => {
    const view = viewOf([published, pending(9090), pending(8080), unprogrammed(9090, "NoAddress"), programmed(8080)])
    expect(view.rows).toEqual([
      { port: 8080, host: host(8080), state: "programmed" },
      { port: 9090, host: host(9090), state: "unprogrammed", reason: "NoAddress" }
    ])
  })

  it("exits 3 from a watch when any host ended unprogrammed, else 0", () => {
    expect(publishExitCode(viewOf([published, programmed(8080), programmed(9090)]))).toBe(0)
    expect(publishExitCode(viewOf([published, programmed(8080), unprogrammed(9090, "x")]))).toBe(3)
    // Nothing routed: nothing to wait for, and nothing failed.
    expect(publishExitCode(viewOf([{ ...published, routes: [] }]))).toBe(0)
  })

  it("exits 1, naming the hosts, when a host's status could not be read to the end, whatever the others say", () => {
    const unread = (port: number): SessionEvent => ({
      type: "route",
      port,
      host: host(port),
      state: "unprogrammed",
      reason: "route status could not be read: the connection was refused",
      code: "RouteStatusUnreadable"
    })
    const view = viewOf([published, unread(8080), unprogrammed(9090, "x")])
    expect([publishExitCode(view), statusExitCode(view)]).toEqual([1, 1])
    expect(unreadMessage(view)).toBe(
      `the route status of ${
        host(8080)
      } could not be read: nothing is known of whether it is programmed (the reason is on its line above)`
    )
    expect(unreadMessage(viewOf([published, unprogrammed(9090, "x")]))).toBeUndefined()
  })

  it("exits 3 from a status read when a host is still pending, not only when it is unprogrammed", () => {
    expect(statusExitCode(viewOf([programmed(8080), programmed(9090)]))).toBe(0)
    expect(statusExitCode(viewOf([programmed(8080), pending(9090)]))).toBe(3)
    expect(statusExitCode(viewOf([]))).toBe(0)
  })

  it("prints one plain line per event", () => {
    expect(
      [
        published,
        pending(8080),
        programmed(8080),
        unprogrammed(9090, "NoAddress: no IP"),
        { type: "read-error", reason: "Forbidden" } as const
      ].map(plainLine)
    ).toEqual([
      `published via ingress: 8080/tcp https://${host(8080)}, 9090/tcp https://${host(9090)}, 5000/udp (not routed)`,
      `${host(8080)} pending`,
      `${host(8080)} programmed`,
      `${host(9090)} unprogrammed: NoAddress: no IP`,
      "read error: Forbidden"
    ])
  })

  it("prints the event itself as its JSON line", () => {
    expect(JSON.parse(jsonLine(published))).toEqual(published)
  })

  it("draws a frame with a spinner for pending hosts and marks for settled ones, colourless when asked", () => {
    const view = viewOf([published, programmed(8080), unprogrammed(9090, "NotAllowedByListeners")])
    expect(renderFrame(viewOf([published]), { color: false, tick: 1 })).toEqual([
      "  PORT  HOST               STATE    REASON",
      `⠙ 8080  ${host(8080)}  pending`,
      `⠙ 9090  ${host(9090)}  pending`
    ])
    expect(renderFrame(view, { color: false, tick: 0 })).toEqual([
      "  PORT  HOST               STATE         REASON",
      `✓ 8080  ${host(8080)}  programmed`,
      `✗ 9090  ${host(9090)}  unprogrammed  NotAllowedByListeners`
    ])
    // Without a tick (a one-off status) a pending host gets a still mark.
    expect(renderFrame(viewOf([pending(8080)]), { color: false })[1]).toBe(`… 8080  ${host(8080)}  pending`)
  })

  it("colours marks and states only when colour is on, keeping the columns aligned", () => {
    const view = viewOf([published, programmed(8080), unprogrammed(9090, "x")])
    const plain = renderFrame(view, { color: false, tick: 0 })
    const coloured = renderFrame(view, { color: true, tick: 0 })
    expect(coloured.join("\n")).toContain("\x1b[32m✓\x1b[0m")
    expect(coloured.map((line) => line.replace(/\x1b\[[0-9;]*m/g, ""))).toEqual(plain)
    expect(plain.join("\n")).not.toContain("\x1b")
  })

  it("counts wrapped lines so a redraw moves back over all of them", () => {
    expect(screenLines(["a".repeat(10), "b".repeat(25), ""], 10)).toBe(1 + 3 + 1)
    expect(screenLines(["\x1b[31m" + "a".repeat(10) + "\x1b[0m"], 10)).toBe(1)
    expect(redraw(0, ["x"])).toBe("x")
    expect(redraw(3, ["x", "y"])).toBe("\r\x1b[3A\x1b[0Jx\ny")
  })
})

describe("log lines", () => {
  it("prints a log entry as one labelled line, without timestamps or fiber ids", () => {
    expect(cliLogLine(LogLevel.Warning, "cannot watch: forbidden")).toBe("warning: cannot watch: forbidden")
    expect(cliLogLine(LogLevel.Error, ["could not", "read"])).toBe("error: could not read")
    expect(cliLogLine(LogLevel.Info, "first\n  second")).toBe("note: first; second")
    // --log-level debug's request lines are not notes.
    expect(cliLogLine(LogLevel.Debug, "GET /version: 200 in 3 ms")).toBe("debug: GET /version: 200 in 3 ms")
    expect(cliLogLine(LogLevel.Trace, "x")).toBe("debug: x")
  })
})

describe("presenters", () => {
  it.effect("draws the live table in place, ticking the spinner on the schedule until the last host settles", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const events = Stream.concat(
        Stream.make(published, pending(8080), pending(9090)),
        Stream.fromEffect(Effect.as(Effect.sleep(Duration.millis(250)), programmed(8080))).pipe(
          Stream.concat(Stream.make(unprogrammed(9090, "unclaimed")))
        )
      )
      const fiber = yield* capturing(
        presentWatch({ _tag: "Live", color: false, columns: () => 200 }, events),
        lines
      ).pipe(Effect.fork)
      yield* TestClock.adjust(Duration.millis(250))
      const view = yield* Fiber.join(fiber)
      expect(publishExitCode(view)).toBe(3)
      const header = "  PORT  HOST               STATE    REASON"
      const frame = (mark: string) =>
        [header, `${mark} 8080  ${host(8080)}  pending`, `${mark} 9090  ${host(9090)}  pending`].join("\n")
      const back = "\r\x1b[3A\x1b[0J"
      expect(lines).toEqual([
        `published via ingress: 8080/tcp https://${host(8080)}, 9090/tcp https://${host(9090)}, 5000/udp (not routed)`,
        frame("⠋"),
        // One redraw per spinner tick: 100 ms and 200 ms of the 250 ms wait.
        back + frame("⠙"),
        back + frame("⠹"),
        back +
        [
          "  PORT  HOST               STATE       REASON",
          `✓ 8080  ${host(8080)}  programmed`,
          `⠹ 9090  ${host(9090)}  pending`
        ].join("\n"),
        back +
        [
          "  PORT  HOST               STATE         REASON",
          `✓ 8080  ${host(8080)}  programmed`,
          `✗ 9090  ${host(9090)}  unprogrammed  unclaimed`
        ].join("\n")
      ])
      expect(SPINNER_INTERVAL).toEqual(Duration.millis(100))
    }))

  it.effect("prints a status read as one still table on a terminal", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      yield* capturing(
        presentSnapshot({ _tag: "Live", color: false, columns: () => 80 }, [programmed(8080), pending(9090)]),
        lines
      )
      expect(lines).toEqual([
        [
          "  PORT  HOST               STATE       REASON",
          `✓ 8080  ${host(8080)}  programmed`,
          `… 9090  ${host(9090)}  pending`
        ].join("\n")
      ])
    }))
})
