import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { readWatchLine, watchLineReader, type WatchLines } from "../../../src/layers/kubeClient/WatchConnection.js"
import { Expired, Transport } from "../../../src/services/KubeError.js"

const ctx = { verb: "watch", resource: "ingresses.networking.k8s.io", namespace: "ns" }
const server = "http://127.0.0.1:1"
const notJson = new Transport({
  reason: `the watch from ${server} (watch ingresses.networking.k8s.io in namespace "ns") sent a line that is not JSON`
})

const modified = (name: string, resourceVersion: string) => ({
  type: "MODIFIED" as const,
  object: { metadata: { name, resourceVersion } }
})
const line = (event: unknown) => `${JSON.stringify(event)}\n`

describe("readWatchLine", () => {
  it("reads objects, bookmarks and in-band errors", () => {
    const object = { metadata: { name: "a", resourceVersion: "4" }, spec: { anything: true } }
    expect(readWatchLine(ctx, server, JSON.stringify({ type: "MODIFIED", object }))).toEqual(
      Either.right({ type: "MODIFIED", object })
    )
    expect(
      readWatchLine(ctx, server, JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } }))
    )
      .toEqual(Either.right({ type: "BOOKMARK", resourceVersion: "9" }))
    // A bookmark with no resourceVersion gives nothing to resume from: no event.
    expect(readWatchLine(ctx, server, JSON.stringify({ type: "BOOKMARK", object: { metadata: {} } }))).toEqual(
      Either.right(undefined)
    )
    const status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "too old resource version: 1 (9)",
      reason: "Expired",
      code: 410
    } as const
    expect(readWatchLine(ctx, server, JSON.stringify({ type: "ERROR", object: status }))).toEqual(
      Either.right({
        type: "ERROR",
        error: new Expired({ reason: "too old resource version: 1 (9)", code: 410, status })
      })
    )
  })

  it("fails the connection as Transport on a line it cannot read, so the watch resumes instead of skipping an event", () => {
    expect(readWatchLine(ctx, server, "{\"type\":\"ADD")).toEqual(Either.left(notJson))
    const said = (text: string) => Either.isLeft(readWatchLine(ctx, server, text)) ? "failed" : "read"
    expect(said("42")).toBe("failed")
    expect(said(JSON.stringify({ type: "ADDED" }))).toBe("failed")
    expect(said(JSON.stringify({ type: "RENAMED", object: {} }))).toBe("failed")
  })
})

describe("watchLineReader", () => {
  const events = (read: WatchLines<unknown>) => {
    expect(read.error).toBeUndefined()
    return read.events.map((event) => event.type === "MODIFIED" ? event.object : event.type)
  }

  it("reads every complete line of a chunk, and keeps a line split across chunks until its newline", () => {
    const reader = watchLineReader(ctx, server)
    const second = line(modified("b", "2"))
    expect(events(reader.push(line(modified("a", "1")) + second.slice(0, 10)))).toEqual([
      { metadata: { name: "a", resourceVersion: "1" } }
    ])
    expect(events(reader.push(second.slice(10, 20)))).toEqual([])
    expect(events(reader.push(second.slice(20) + "\n" + line(modified("c", "3"))))).toEqual([
      { metadata: { name: "b", resourceVersion: "2" } },
      { metadata: { name: "c", resourceVersion: "3" } }
    ])
    expect(events(reader.end())).toEqual([])
  })

  it("reads a last line the server ended without a newline", () => {
    const reader = watchLineReader(ctx, server)
    expect(events(reader.push(JSON.stringify(modified("a", "1"))))).toEqual([])
    expect(events(reader.end())).toEqual([{ metadata: { name: "a", resourceVersion: "1" } }])
  })

  it("stops at the first line it cannot read: what came before it is delivered, nothing after it", () => {
    const reader = watchLineReader(ctx, server)
    expect(reader.push(line(modified("a", "1")) + "{\"type\":\"ADD\n" + line(modified("b", "2")))).toEqual({
      events: [modified("a", "1")],
      error: notJson
    })
    expect(events(reader.push(line(modified("c", "3"))))).toEqual([])
    expect(events(reader.end())).toEqual([])
  })

  it("fails on a truncated last line when the body ends", () => {
    const reader = watchLineReader(ctx, server)
    reader.push("{\"type\":\"MODIF")
    expect(reader.end()).toEqual({ events: [], error: notJson })
  })
})
