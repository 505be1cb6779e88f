/**
 * The resuming watch's progress deadline, on TestClock: a connection that delivers
 * neither an event nor a bookmark for a whole deadline (90 s: kube-apiserver sends a
 * bookmark about every minute) is closed and resumed from its last resourceVersion,
 * without spending the reconnect backoff; a quiet watch that gets its bookmarks, or a
 * consumer slow to take a burst, is left alone.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Schedule, Stream, TestClock } from "effect"
import type { Ingress, ObjectList } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { makeKubeClient, WATCH_PROGRESS_DEADLINE } from "../../../src/layers/kubeClient/ResumableWatch.js"
import type { KubeClientPrimitives, RawWatchEvent, WatchEvent } from "../../../src/services/KubeClient.js"
import type { KubeError } from "../../../src/services/KubeError.js"

const ing = (name: string, resourceVersion: string): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: "ns", resourceVersion, uid: `uid-${name}` }
})

const list = (resourceVersion: string, items: ReadonlyArray<Ingress>): ObjectList<Ingress> => ({
  kind: "IngressList",
  apiVersion: "networking.k8s.io/v1",
  metadata: { resourceVersion },
  items
})

/**
 * Primitives that answer lists and watch connections from a script, in order, and
 * record what was asked (with the instant of each watch). A connection past the
 * script stays open and silent, as a watch whose server stopped sending does.
 */
const scripted = (script: {
  readonly lists: Array<ObjectList<Ingress>>
  readonly connections: Array<Stream.Stream<RawWatchEvent<Ingress>, KubeError>>
}) => {
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
        return next === undefined ? Effect.die("unscripted list") : Effect.succeed(next)
      })) as KubeClientPrimitives["list"],
    watchFrom: ((_resource, _namespace, options) =>
      Stream.suspend(() => {
        calls.push(`watch ${options.resourceVersion}`)
        return script.connections.shift() ?? Stream.never
      })) as KubeClientPrimitives["watchFrom"]
  }
  return { calls, primitives }
}

/** What the watch emits, gathered on a fork as it comes. */
const collecting = (client: ReturnType<typeof makeKubeClient>) =>
  Effect.gen(function*() {
    const seen: Array<WatchEvent<Ingress>> = []
    const fiber = yield* client.watch(IngressResource, "ns").pipe(
      Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
      Effect.fork
    )
    return { seen, fiber }
  })

// Fixed delays, and few of them: a stall that spent them would end the watch.
const fixedSchedule = Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(3)))

const bookmark = (resourceVersion: string): RawWatchEvent<Ingress> => ({ type: "BOOKMARK", resourceVersion })

describe("a watch's progress deadline", () => {
  it("is 90 s: a minute of kube-apiserver's bookmark period and half of it again", () => {
    expect(Duration.toMillis(WATCH_PROGRESS_DEADLINE)).toBe(90_000)
  })

  it.effect("closes a connection that sends nothing for 90 s and resumes from the last resourceVersion it saw", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", [ing("a", "3")])],
        connections: [
          // One change, then silence with the connection open.
          Stream.concat(Stream.make({ type: "MODIFIED" as const, object: ing("a", "11") }), Stream.never),
          Stream.concat(Stream.make({ type: "ADDED" as const, object: ing("b", "12") }), Stream.never)
        ]
      })
      const { fiber, seen } = yield* collecting(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }))
      yield* TestClock.adjust("89999 millis")
      expect(calls).toEqual(["list", "watch 10"])
      yield* TestClock.adjust("1 millis")
      expect(calls).toEqual(["list", "watch 10", "watch 11"])
      // What the server kept meanwhile comes on the new connection, nothing repeated.
      expect(seen).toEqual([
        { type: "ADDED", object: ing("a", "3") },
        { type: "MODIFIED", object: ing("a", "11") },
        { type: "ADDED", object: ing("b", "12") }
      ])
      expect(fiber.unsafePoll()).toBeNull()
    }))

  it.effect("counts the deadline from the last bookmark, and resumes from the bookmark's resourceVersion", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", [])],
        // A bookmark at 60 s, then nothing.
        connections: [
          Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep("60 seconds"), bookmark("40"))), Stream.never)
        ]
      })
      yield* collecting(makeKubeClient(primitives))
      yield* TestClock.adjust("149999 millis")
      expect(calls).toEqual(["list", "watch 10"])
      yield* TestClock.adjust("1 millis")
      expect(calls).toEqual(["list", "watch 10", "watch 40"])
    }))

  it.effect("leaves a quiet watch open while a bookmark comes every minute", () =>
    Effect.gen(function*() {
      let version = 10
      const everyMinute = Stream.repeatEffect(
        Effect.sleep("60 seconds").pipe(Effect.as(bookmark(String(++version))))
      )
      const { calls, primitives } = scripted({ lists: [list("10", [])], connections: [everyMinute] })
      yield* collecting(makeKubeClient(primitives))
      yield* TestClock.adjust("1 hour")
      expect(calls).toEqual(["list", "watch 10"])
    }))

  it.effect("keeps reconnecting a watch that never sends anything, once per deadline, and never gives up on it", () =>
    Effect.gen(function*() {
      // A server that sends no bookmarks, and a namespace where nothing changes. Three
      // reconnects would outlast `fixedSchedule`: a stall must not count as a failure.
      const { calls, primitives } = scripted({ lists: [list("10", [])], connections: [] })
      const { fiber } = yield* collecting(makeKubeClient(primitives, { reconnectSchedule: fixedSchedule }))
      yield* TestClock.adjust(Duration.times(WATCH_PROGRESS_DEADLINE, 10))
      expect(calls).toEqual(["list", ...Array.from({ length: 11 }, () => "watch 10")])
      expect(fiber.unsafePoll()).toBeNull()
    }))

  it.effect("counts only the time spent waiting on the server: a consumer slow to take a burst is no silent server", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({
        lists: [list("10", [])],
        connections: [Stream.concat(Stream.make({ type: "ADDED" as const, object: ing("a", "11") }), Stream.never)]
      })
      // The consumer takes two minutes over the one event.
      const fiber = yield* makeKubeClient(primitives).watch(IngressResource, "ns").pipe(
        Stream.mapEffect((event) => Effect.as(Effect.sleep("120 seconds"), event)),
        Stream.runCollect,
        Effect.fork
      )
      yield* TestClock.adjust("209999 millis")
      expect(calls).toEqual(["list", "watch 10"])
      yield* TestClock.adjust("1 millis")
      expect(calls).toEqual(["list", "watch 10", "watch 11"])
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("takes another deadline from its options", () =>
    Effect.gen(function*() {
      const { calls, primitives } = scripted({ lists: [list("10", [])], connections: [] })
      const fiber = yield* makeKubeClient(primitives, { progressDeadline: "5 seconds" }).watch(IngressResource, "ns")
        .pipe(Stream.runCollect, Effect.map(Chunk.size), Effect.fork)
      yield* TestClock.adjust("5 seconds")
      expect(calls).toEqual(["list", "watch 10", "watch 10"])
      yield* Fiber.interrupt(fiber)
    }))
})
