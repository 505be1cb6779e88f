import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Metric, Schedule, Stream, TestClock } from "effect"
import type { Ingress, ObjectList } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { diffAgainstList, makeKubeClient } from "../../../src/layers/kubeClient/ResumableWatch.js"
import type { KubeClientPrimitives, RawWatchEvent } from "../../../src/services/KubeClient.js"
import { Expired, Forbidden, type KubeError, Transport, Unavailable } from "../../../src/services/KubeError.js"
import { watchRelists, watchRestarts } from "../../../src/services/Telemetry.js"

const ing = (name: string, resourceVersion: string, uid = `uid-${name}`): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: "ns", resourceVersion, uid }
})

/** One scripted watch connection: its events, then a clean close or a failure. */
interface Connection {
  readonly events: ReadonlyArray<RawWatchEvent<Ingress>>
  readonly thenFail?: KubeError
}

const expired = new Expired({ reason: "too old resource version: 1 (9)", code: 410 })

/**
 * Primitives that answer lists and watch connections from a script, in order, and
 * record what was asked. Once the script runs out a watch stays open forever.
 */
const scripted = (script: { lists: Array<ObjectList<Ingress> | KubeError>; connections: Array<Connection> }) => {
  const calls: Array<string> = []
  const die = () => Effect.die("not used")
  const primitives: KubeClientPrimitives = {
    apply: die,
    get: die,
    delete: die,
    list: (() =>
      Effect.suspend(() => {
        calls.push("list")
        const next = script.lists.shift()
        if (next === undefined) return Effect.die("unscripted list")
        return "_tag" in next ? Effect.fail(next) : Effect.succeed(next)
      })) as KubeClientPrimitives["list"],
    watchFrom: ((_resource, _namespace, options) =>
      Stream.suspend(() => {
        calls.push(`watch ${options.resourceVersion}`)
        const next = script.connections.shift()
        if (next === undefined) return Stream.never
        const events = Stream.fromIterable(next.events)
        return next.thenFail !== undefined ? Stream.concat(events, Stream.fail(next.thenFail)) : events
      })) as KubeClientPrimitives["watchFrom"]
  }
  return { calls, primitives }
}

const list = (resourceVersion: string, items: ReadonlyArray<Ingress>): ObjectList<Ingress> => ({
  kind: "IngressList",
  apiVersion: "networking.k8s.io/v1",
  metadata: { resourceVersion },
  items
})

const take = (client: ReturnType<typeof makeKubeClient>, n: number, resourceVersion?: string) =>
  client
    .watch(IngressResource, "ns", resourceVersion !== undefined ? { resourceVersion } : {})
    .pipe(Stream.take(n), Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

// Fixed delays keep the timing assertions exact; the default schedule is jittered.
const fixedSchedule = Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(3)))

describe("ResumableWatch", () => {
  it.effect("lists first, emits one ADDED per item, then watches from the list's resourceVersion", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", [ing("a", "3"), ing("b", "7")])],
        connections: [{ events: [{ type: "MODIFIED", object: ing("a", "11") }] }]
      })
      const events = yield* take(makeKubeClient(primitives), 3)
      expect(events).toEqual([
        { type: "ADDED", object: ing("a", "3") },
        { type: "ADDED", object: ing("b", "7") },
        { type: "MODIFIED", object: ing("a", "11") }
      ])
      expect(calls).toEqual(["list", "watch 10"])
    }))

  it.effect("watches from a given resourceVersion without listing", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [],
        connections: [{ events: [{ type: "ADDED", object: ing("c", "21") }] }]
      })
      const events = yield* take(makeKubeClient(primitives), 1, "20")
      expect(events).toEqual([{ type: "ADDED", object: ing("c", "21") }])
      expect(calls).toEqual(["watch 20"])
    }))

  it.effect("treats resourceVersion \"0\" as a list, so a reconnect cannot repeat the synthetic ADDED events", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({ lists: [list("5", [ing("a", "5")])], connections: [] })
      const events = yield* take(makeKubeClient(primitives), 1, "0")
      expect(events).toEqual([{ type: "ADDED", object: ing("a", "5") }])
      expect(calls).toEqual(["list"])
    }))

  it.effect("reconnects from the last object's or bookmark's resourceVersion when a connection ends, without emitting bookmarks", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [],
        connections: [
          { events: [{ type: "ADDED", object: ing("a", "31") }] },
          { events: [{ type: "BOOKMARK", resourceVersion: "40" }] },
          { events: [{ type: "DELETED", object: ing("a", "41") }] }
        ]
      })
      const events = yield* take(makeKubeClient(primitives), 2, "30")
      expect(events).toEqual([
        { type: "ADDED", object: ing("a", "31") },
        { type: "DELETED", object: ing("a", "41") }
      ])
      expect(calls).toEqual(["watch 30", "watch 31", "watch 40"])
    }))

  it.effect("waits out the reconnect schedule after a transient failure, then resumes from the last resourceVersion", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [],
        connections: [
          {
            events: [{ type: "ADDED", object: ing("a", "51") }],
            thenFail: new Transport({ reason: "connection reset by http://127.0.0.1:1" })
          },
          { events: [{ type: "MODIFIED", object: ing("a", "52") }] }
        ]
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 2, "50"))
      yield* TestClock.adjust("999 millis")
      expect(calls).toEqual(["watch 50"])
      yield* TestClock.adjust("1 millis")
      const events = yield* Fiber.join(fiber)
      expect(events.map((e) => e.object.metadata?.resourceVersion)).toEqual(["51", "52"])
      expect(calls).toEqual(["watch 50", "watch 51"])
    }))

  it.effect("fails with the last error once transient failures outlast the schedule", () =>
    Effect.gen(function*() {
      const unavailable = new Unavailable({ reason: "the API server could not answer (503)", code: 503 })
      const { calls, primitives } = scripted({
        lists: [],
        connections: Array.from({ length: 5 }, () => ({ events: [], thenFail: unavailable }))
      })
      const fiber = yield* Effect.fork(
        Effect.exit(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 1, "60"))
      )
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(fiber)).toEqual(Exit.fail(unavailable))
      // One attempt plus three retries allowed by recurs(3).
      expect(calls).toEqual(["watch 60", "watch 60", "watch 60", "watch 60"])
    }))

  it.effect("starts the backoff over after a connection that delivered, so a long watch of flaky connections never gives up", () =>
    Effect.gen(function*() {
      const reset = new Transport({ reason: "reset" })
      // Ten connections, each delivering one change and then failing: more failures
      // in all than the schedule allows in a row.
      const { primitives } = scripted({
        lists: [],
        connections: Array.from({ length: 10 }, (_, i) => ({
          events: [{ type: "MODIFIED" as const, object: ing("a", String(81 + i)) }],
          thenFail: reset
        }))
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 10, "80"))
      yield* TestClock.adjust("10 seconds")
      const events = yield* Fiber.join(fiber)
      expect(events.map((e) => e.object.metadata?.resourceVersion)).toEqual(
        Array.from({ length: 10 }, (_, i) => String(81 + i))
      )
    }))

  it.effect("backs off when connections keep closing without sending anything", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [],
        connections: [{ events: [] }, { events: [] }, { events: [{ type: "ADDED", object: ing("a", "71") }] }]
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 1, "70"))
      yield* TestClock.adjust("1 second")
      expect(calls).toEqual(["watch 70", "watch 70"])
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toEqual([{ type: "ADDED", object: ing("a", "71") }])
    }))

  it.effect("relists on an in-band 410 and emits only the difference: added, modified, deleted, nothing for unchanged", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [
          list("10", [ing("same", "1"), ing("changed", "2"), ing("gone", "3")]),
          list("20", [ing("same", "1"), ing("changed", "15"), ing("new", "18")])
        ],
        connections: [
          { events: [{ type: "BOOKMARK", resourceVersion: "12" }, { type: "ERROR", error: expired }] },
          { events: [{ type: "MODIFIED", object: ing("new", "21") }] }
        ]
      })
      const events = yield* take(makeKubeClient(primitives), 6)
      expect(events).toEqual([
        { type: "ADDED", object: ing("same", "1") },
        { type: "ADDED", object: ing("changed", "2") },
        { type: "ADDED", object: ing("gone", "3") },
        { type: "MODIFIED", object: ing("changed", "15") },
        { type: "ADDED", object: ing("new", "18") },
        { type: "DELETED", object: ing("gone", "3") }
      ])
      expect(calls).toEqual(["list", "watch 10", "list"])
    }))

  it.effect("relists on an Expired failure and then watches from the new list's resourceVersion", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", [ing("a", "1")]), list("30", [ing("a", "25")])],
        connections: [
          { events: [], thenFail: expired },
          { events: [{ type: "DELETED", object: ing("a", "31") }] }
        ]
      })
      const events = yield* take(makeKubeClient(primitives), 3)
      expect(events).toEqual([
        { type: "ADDED", object: ing("a", "1") },
        { type: "MODIFIED", object: ing("a", "25") },
        { type: "DELETED", object: ing("a", "31") }
      ])
      expect(calls).toEqual(["list", "watch 10", "list", "watch 30"])
    }))

  it.effect("backs off instead of relisting in a loop when the server expires even a fresh list's version", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", []), list("11", []), list("12", [ing("a", "12")])],
        connections: [
          { events: [], thenFail: expired },
          { events: [{ type: "ERROR", error: expired }] }
        ]
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 1))
      yield* TestClock.adjust("999 millis")
      expect(calls).toEqual(["list", "watch 10", "list", "watch 11"])
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toEqual([{ type: "ADDED", object: ing("a", "12") }])
    }))

  it.effect("remembers events seen before a 410, so the relist does not repeat them", () =>
    Effect.gen(function*() {
      const { primitives } = scripted({
        lists: [list("10", []), list("30", [ing("a", "12")])],
        connections: [{ events: [{ type: "ADDED", object: ing("a", "12") }, { type: "ERROR", error: expired }] }]
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives), 2))
      yield* TestClock.adjust("1 minute")
      // The watch now hangs on its third connection: only one event ever arrives.
      expect(fiber.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("keeps only what `remember` returns: a deletion a relist finds carries it, and a kept copy still matches by resourceVersion", () =>
    Effect.gen(function*() {
      const withSpec = (name: string, resourceVersion: string): Ingress => ({
        ...ing(name, resourceVersion),
        spec: { rules: [{ host: `${name}.example.test` }] }
      })
      const { primitives } = scripted({
        lists: [list("30", [withSpec("b", "12")])],
        connections: [
          { events: [{ type: "ADDED", object: withSpec("a", "11") }, { type: "ADDED", object: withSpec("b", "12") }] },
          { events: [{ type: "ERROR", error: expired }] }
        ]
      })
      const kept: Array<string> = []
      const events = yield* makeKubeClient(primitives).watch(IngressResource, "ns", {
        resourceVersion: "10",
        known: [withSpec("c", "9")],
        remember: (object) => {
          kept.push(object.metadata?.name ?? "")
          const { spec: _spec, ...rest } = object
          return rest
        }
      }).pipe(Stream.take(4), Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      expect(events).toEqual([
        { type: "ADDED", object: withSpec("a", "11") },
        { type: "ADDED", object: withSpec("b", "12") },
        // Found by the relist: what was kept of them, not the objects as they came.
        { type: "DELETED", object: ing("c", "9") },
        { type: "DELETED", object: ing("a", "11") }
      ])
      // b is unchanged in the list (same resourceVersion): no event for it.
      expect(kept).toEqual(["c", "a", "b", "b"])
    }))

  it.effect("fails the stream on an error that retrying cannot fix, in-band or not", () =>
    Effect.gen(function*() {
      const forbidden = new Forbidden({ reason: "forbidden", code: 403 })
      const inBand = scripted({ lists: [], connections: [{ events: [{ type: "ERROR", error: forbidden }] }] })
      expect(yield* Effect.exit(take(makeKubeClient(inBand.primitives), 1, "5"))).toEqual(Exit.fail(forbidden))
      const failed = scripted({ lists: [forbidden], connections: [] })
      expect(yield* Effect.exit(take(makeKubeClient(failed.primitives), 1))).toEqual(Exit.fail(forbidden))
      expect(failed.calls).toEqual(["list"])
    }))

  it.effect("retries a list that failed transiently", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [new Transport({ reason: "refused" }), list("3", [ing("a", "3")])],
        connections: []
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 1))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toEqual([{ type: "ADDED", object: ing("a", "3") }])
      expect(calls).toEqual(["list", "list"])
    }))

  it("reports a name that now holds a different object as deleted and added", () => {
    const known = new Map([["ns/a", ing("a", "1", "old")]])
    expect(diffAgainstList(known, [ing("a", "9", "new")])).toEqual([
      { type: "DELETED", object: ing("a", "1", "old") },
      { type: "ADDED", object: ing("a", "9", "new") }
    ])
  })

  it.effect("spaces default reconnects (watchReconnectSchedule) by a jittered, capped, doubling delay", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [],
        connections: Array.from({ length: 20 }, () => ({ events: [], thenFail: new Transport({ reason: "reset" }) }))
      })
      const fiber = yield* Effect.fork(Effect.exit(take(makeKubeClient(primitives), 1, "1")))
      // jittered scales each delay by 0.8..1.2: 200ms → ≤240ms, so nothing before 160ms.
      yield* TestClock.adjust("159 millis")
      expect(calls.length).toBe(1)
      yield* TestClock.adjust("81 millis")
      expect(calls.length).toBe(2)
      // 8 retries at most (200, 400, 800, 1600, 3200, then capped at 5000 ×3) ≤ 1.2 × 26.2s.
      yield* TestClock.adjust("32 seconds")
      const exit = yield* Fiber.join(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(calls.length).toBe(9)
    }))

  it.effect("counts a reconnection as a restart and a list after 410 as a relist, never the watch's first list or connection", () =>
    Effect.gen(function*() {
      const counts = Effect.all([
        Metric.value(Metric.tagged(watchRestarts, "resource", "ingresses.networking.k8s.io")),
        Metric.value(Metric.tagged(watchRelists, "resource", "ingresses.networking.k8s.io"))
      ]).pipe(Effect.map(([restarts, relists]) => [restarts.count, relists.count]))
      // Other tests in this file count too: compare with the counts before.
      const [restarts, relists] = yield* counts
      const { calls, primitives } = scripted({
        lists: [list("10", [ing("a", "3")]), list("20", [ing("a", "12")])],
        connections: [
          {
            events: [{ type: "MODIFIED", object: ing("a", "11") }],
            thenFail: new Unavailable({ reason: "the API server could not answer (503)", code: 503 })
          },
          { events: [{ type: "ERROR", error: expired }] }
        ]
      })
      const fiber = yield* Effect.fork(take(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }), 3))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      expect(calls).toEqual(["list", "watch 10", "watch 11", "list"])
      expect(yield* counts).toEqual([restarts! + 1, relists! + 1])
    }))
})
