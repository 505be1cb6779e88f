/**
 * What the CLI knows about a session's hosts, folded from the runner's events, and
 * every way it is printed: JSON lines, plain lines, and frames of the live table.
 * Pure functions of their arguments, so each output is tested without a terminal.
 */
import { type Endpoint, type RouteState, UnprogrammedCode } from "../../domain/Routes.js"
import type { SessionEvent } from "../../runner/SessionRunner.js"
import { ExitCode } from "../CliError.js"

/** The `published` event. */
export type PublishedEvent = Extract<SessionEvent, { readonly type: "published" }>

/** One host as the table shows it. */
export interface HostRow {
  readonly port: number
  readonly host: string
  readonly state: RouteState
  readonly reason?: string
  readonly code?: string
  /** The probe through the public path: `200`, or what failed; set once a probe ends. */
  readonly probe?: string
}

/** Everything the events said so far. */
export interface SessionView {
  readonly published?: PublishedEvent
  /** One row per host, ordered by port. */
  readonly rows: ReadonlyArray<HostRow>
  /** The latest `read-error` reason, if one came. */
  readonly readError?: string
  /** Why Events could not be recorded on the Pod, if that happened. */
  readonly eventError?: string
}

/** Before any event. */
export const emptyView: SessionView = { rows: [] }

const rowOf = (event: Extract<SessionEvent, { readonly type: "route" }>): HostRow => ({
  port: event.port,
  host: event.host,
  state: event.state,
  ...(event.reason !== undefined ? { reason: event.reason } : {}),
  ...(event.code !== undefined ? { code: event.code } : {})
})

/**
 * The view after one more event. A `published` event seeds one pending row per route,
 * so the table has its shape before the first `route` event; a later `published` (a
 * reload) keeps the rows of hosts it still routes and drops the others.
 */
export const applyEvent = (view: SessionView, event: SessionEvent): SessionView => {
  switch (event.type) {
    case "published": {
      const known = new Map(view.rows.map((row) => [row.host, row]))
      const rows = event.routes.map((route) =>
        known.get(route.host) ?? { port: route.port, host: route.host, state: "pending" as const }
      )
      return { ...view, published: event, rows: sortRows(rows) }
    }
    case "route": {
      const row = rowOf(event)
      const others = view.rows.filter((r) => r.host !== event.host)
      return { ...view, rows: sortRows([...others, row]) }
    }
    case "read-error":
      return { ...view, readError: event.reason }
    case "probe":
      return {
        ...view,
        rows: view.rows.map((row) => (row.host === event.host ? { ...row, probe: probeText(event) } : row))
      }
    case "endpoints":
      return view
    case "event-error":
      return { ...view, eventError: event.reason }
  }
}

/** A probe's result in few words: `200`, or `503: ...`. */
export const probeText = (event: Extract<SessionEvent, { readonly type: "probe" }>): string =>
  event.ok ? `${event.status ?? "ok"}` : `failed: ${event.reason ?? `${event.status ?? ""}`}`

const sortRows = (rows: ReadonlyArray<HostRow>): ReadonlyArray<HostRow> =>
  [...rows].sort((a, b) => a.port - b.port || a.host.localeCompare(b.host))

/** The view after every event, in order. */
export const viewOf = (events: Iterable<SessionEvent>): SessionView => {
  let view = emptyView
  for (const event of events) view = applyEvent(view, event)
  return view
}

// ---------------------------------------------------------------------------
// Exit statuses
// ---------------------------------------------------------------------------

/**
 * `publish --watch`: 1 when a host's status could not be read to the end, 3 when any
 * host ended `unprogrammed`, else 0 (every host programmed, or nothing was routed, so
 * there was nothing to wait for).
 */
export const publishExitCode = (view: SessionView): number =>
  unreadHosts(view).length > 0
    ? ExitCode.failure
    : view.rows.some((row) => row.state === "unprogrammed")
    ? ExitCode.unprogrammed
    : ExitCode.ok

/**
 * `status`: 0 only when every host is programmed; a host still pending is not served
 * yet, so it counts as not programmed (3), like a rejected one; 1 when a host's status
 * could not be read.
 */
export const statusExitCode = (view: SessionView): number =>
  unreadHosts(view).length > 0
    ? ExitCode.failure
    : view.rows.every((row) => row.state === "programmed")
    ? ExitCode.ok
    : ExitCode.unprogrammed

/**
 * The hosts whose status could not be read to the end. Not a verdict on the route but
 * a failure to learn one, so a command ends 1 for them, never 3 ("a host unprogrammed").
 */
export const unreadHosts = (view: SessionView): ReadonlyArray<HostRow> =>
  view.rows.filter((row) => row.state === "unprogrammed" && row.code === UnprogrammedCode.statusUnreadable)

/** The failure line for hosts whose status could not be read, when there are any. */
export const unreadMessage = (view: SessionView): string | undefined => {
  const unread = unreadHosts(view)
  if (unread.length === 0) return undefined
  return `the route status of ${unread.map((row) => row.host).join(", ")} could not be read: nothing is known of ${
    unread.length === 1 ? "whether it is" : "whether they are"
  } programmed (the reason is on ${unread.length === 1 ? "its line" : "their lines"} above)`
}

// ---------------------------------------------------------------------------
// Lines
// ---------------------------------------------------------------------------

/** `-o json`: the event itself, one line. */
export const jsonLine = (event: SessionEvent): string => JSON.stringify(event)

const endpointText = (endpoint: Endpoint): string =>
  `${endpoint.port}/${endpoint.protocol} ${endpoint.url ?? (endpoint.host !== "" ? endpoint.host : "(not routed)")}`

/** The `published` event in words: the layer and where each port is reachable. */
export const publishedLine = (event: PublishedEvent): string =>
  `published via ${event.layer}: ${event.endpoints.map(endpointText).join(", ")}`

/** A host's state in words: `<host> programmed`, `<host> unprogrammed: <reason>`. */
export const rowLine = (row: HostRow): string =>
  `${row.host} ${row.state}${row.reason !== undefined ? `: ${row.reason}` : ""}`

/** `-o table` off a terminal: one line per event, nothing redrawn. */
export const plainLine = (event: SessionEvent): string => {
  switch (event.type) {
    case "published":
      return publishedLine(event)
    case "route":
      return rowLine(rowOf(event))
    case "read-error":
      return `read error: ${event.reason}`
    case "probe":
      return `${event.host} probe ${probeText(event)}`
    case "endpoints":
      return `${event.host} no ready endpoint: ${event.reason}`
    case "event-error":
      return `events: ${event.reason}`
  }
}

// ---------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------

/** Braille spinner frames; one per tick while a host is pending. */
export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const

/** How a frame is drawn. */
export interface FrameStyle {
  /** ANSI colours on (a terminal, and `NO_COLOR` unset). */
  readonly color: boolean
  /** Spinner position; undefined draws a still mark for pending hosts (a one-off status). */
  readonly tick?: number
}

/** The colours the presenters use. */
export const ANSI = {
  green: "\x1b[32m",
  red: "\x1b[31m",
  yellow: "\x1b[33m",
  dim: "\x1b[2m",
  reset: "\x1b[0m"
} as const

/** `text` in colour `code` when the style has colours. */
export const paint = (style: Pick<FrameStyle, "color">, code: string, text: string): string =>
  style.color ? `${code}${text}${ANSI.reset}` : text

const mark = (row: HostRow, style: FrameStyle): string => {
  switch (row.state) {
    case "programmed":
      return paint(style, ANSI.green, "✓")
    case "unprogrammed":
      return paint(style, ANSI.red, "✗")
    case "pending":
      return paint(style, ANSI.yellow, style.tick === undefined ? "…" : SPINNER[style.tick % SPINNER.length]!)
  }
}

/**
 * The table as lines: a header, then one row per host (mark, port, host, state,
 * reason), then the latest read error if any. No rows, no lines: the caller says why.
 * Padding is computed on the bare text and colour added after, so columns line up
 * whether or not colours are on.
 */
export const renderFrame = (view: SessionView, style: FrameStyle): ReadonlyArray<string> => {
  if (view.rows.length === 0) return []
  const portWidth = Math.max("PORT".length, ...view.rows.map((row) => String(row.port).length))
  const hostWidth = Math.max("HOST".length, ...view.rows.map((row) => row.host.length))
  const stateWidth = Math.max("STATE".length, ...view.rows.map((row) => row.state.length))
  const header = paint(
    style,
    ANSI.dim,
    `  ${"PORT".padEnd(portWidth)}  ${"HOST".padEnd(hostWidth)}  ${"STATE".padEnd(stateWidth)}  REASON`
  )
  const rows = view.rows.map((row) => {
    const stateColor = row.state === "programmed" ? ANSI.green : row.state === "unprogrammed" ? ANSI.red : ANSI.yellow
    // Padded only when a reason follows, so no line ends in blanks inside a colour.
    const state = paint(style, stateColor, row.reason === undefined ? row.state : row.state.padEnd(stateWidth))
    const reason = row.reason === undefined ? "" : `  ${row.reason}`
    const probe = row.probe === undefined ? "" : `  probe ${row.probe}`
    return `${mark(row, style)} ${String(row.port).padEnd(portWidth)}  ${
      row.host.padEnd(hostWidth)
    }  ${state}${reason}${probe}`
  })
  const readError = view.readError !== undefined ? [paint(style, ANSI.red, `read error: ${view.readError}`)] : []
  const eventError = view.eventError !== undefined ? [paint(style, ANSI.yellow, `events: ${view.eventError}`)] : []
  return [header.trimEnd(), ...rows, ...readError, ...eventError]
}

const ANSI_ESCAPE = /\x1b\[[0-9;]*[A-Za-z]/g

/** How many terminal lines `lines` take at `columns` wide, long ones wrapping. */
export const screenLines = (lines: ReadonlyArray<string>, columns: number | undefined): number =>
  lines.reduce((total, line) => {
    const width = [...line.replace(ANSI_ESCAPE, "")].length
    return total + (columns === undefined || columns <= 0 ? 1 : Math.max(1, Math.ceil(width / columns)))
  }, 0)

/**
 * The text that replaces the `drawn` screen lines above the cursor with `lines`:
 * back to the first of them, clear to the end of the screen, write the new frame.
 * The caller's line writer adds the final newline.
 */
export const redraw = (drawn: number, lines: ReadonlyArray<string>): string =>
  (drawn > 0 ? `\r\x1b[${drawn}A\x1b[0J` : "") + lines.join("\n")
