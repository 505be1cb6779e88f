/**
 * Events as `kubectl events --for pod/<name>` prints them: oldest first, one line per
 * Event with its count (`2s (x2 over 3s)`), for the demo's transcript. Pure.
 */
import type { CoreEvent } from "../../domain/Objects.js"

const parse = (time: string | null | undefined): number | undefined => {
  if (time === undefined || time === null) return undefined
  const millis = Date.parse(time)
  return Number.isNaN(millis) ? undefined : millis
}

/** kubectl's short durations: `45s`, `3m12s`, `2h5m`. */
export const shortDuration = (millis: number): string => {
  const seconds = Math.max(0, Math.floor(millis / 1000))
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes}m${seconds % 60 > 0 ? `${seconds % 60}s` : ""}`
  return `${Math.floor(minutes / 60)}h${minutes % 60 > 0 ? `${minutes % 60}m` : ""}`
}

interface Row {
  readonly first: number
  readonly last: number
  readonly count: number
  readonly type: string
  readonly reason: string
  readonly object: string
  readonly message: string
}

const rowOf = (event: CoreEvent): Row => {
  const first = parse(event.firstTimestamp) ?? parse(event.eventTime) ?? 0
  const last = parse(event.series?.lastObservedTime) ?? parse(event.lastTimestamp) ?? first
  return {
    first,
    last,
    count: event.series?.count ?? event.count ?? 1,
    type: event.type ?? "",
    reason: event.reason ?? "",
    object: `${event.involvedObject.kind ?? ""}/${event.involvedObject.name ?? ""}`,
    message: event.message ?? ""
  }
}

/** The table, header first; no Events, no lines. */
export const eventsTable = (events: ReadonlyArray<CoreEvent>, now: number): ReadonlyArray<string> => {
  if (events.length === 0) return []
  const rows = events.map(rowOf).sort((a, b) => a.last - b.last || a.reason.localeCompare(b.reason))
  const cells = rows.map((row) => [
    row.count > 1
      ? `${shortDuration(now - row.last)} (x${row.count} over ${shortDuration(row.last - row.first)})`
      : shortDuration(now - row.last),
    row.type,
    row.reason,
    row.object,
    row.message
  ])
  const header = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i]!.length)))
  const line = (values: ReadonlyArray<string>) =>
    values.map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i]! + 3))).join("").trimEnd()
  return [line(header), ...cells.map(line)]
}
