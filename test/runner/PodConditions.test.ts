/**
 * The controller's writes onto its Pods, against a server that, like the API server,
 * applies a request whose caller stopped waiting for it: a newer word must never be
 * overwritten by an older one that was already on the wire.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import type { Pod } from "../../src/domain/Objects.js"
import {
  type PodHost,
  type PodRoutes,
  ROUTES_CONDITION,
  type RoutesCondition,
  routesCondition
} from "../../src/domain/PodRouting.js"
import { makeConditionWriter } from "../../src/runner/internal/PodConditions.js"

import type { PodWrites } from "../../src/services/KubeClient.js"
import { Invalid } from "../../src/services/KubeError.js"

const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "s1-pod", namespace: "sessions", uid: "uid-1" }
}

const host = (state: PodHost["state"]): PodHost => ({ host: "8080-s1.sessions.example.com", state })

/** The Pod as the watch would show it at `resourceVersion`, saying `condition` (none: no condition). */
const seen = (resourceVersion: string, condition?: RoutesCondition): Pod => ({
  ...pod,
  metadata: { ...pod.metadata, resourceVersion },
  ...(condition === undefined ? {} : { status: { conditions: [condition] } })
})

/** A condition someone else wrote. */
const elsewhere = (status: "True" | "False" | "Unknown"): RoutesCondition => ({
  type: ROUTES_CONDITION,
  status,
  reason: "Elsewhere",
  message: "written by someone else"
})

const programmed: PodRoutes = { _tag: "Hosts", hosts: [host("programmed")] }

/**
 * Pods whose writes land on the server after the given delays, in order of request,
 * whether or not the caller still waits; `landed` is what the Pod said, write by write,
 * and each write's answer carries the resource version of its landing (1, 2, ...).
 */
const slowServer = (delays: ReadonlyArray<Duration.DurationInput>) => {
  const landed: Array<string> = []
  const started: Array<string> = []
  let request = 0
  const land = (what: string) =>
    Effect.gen(function*() {
      started.push(what)
      const delay = delays[request++] ?? Duration.zero
      // The server's work goes on without the caller.
      const applied = yield* Effect.forkDaemon(
        Effect.zipRight(Effect.sleep(delay), Effect.sync(() => landed.push(what)))
      )
      const version = yield* Fiber.join(applied)
      return seen(String(version))
    })
  const pods: PodWrites = {
    patchStatus: (_namespace, _name, patch) =>
      land((patch as { status: { conditions: ReadonlyArray<{ status: string }> } }).status.conditions[0]?.status ?? ""),
    patch: (_namespace, _name, patch) =>
      land(JSON.stringify((patch as { metadata: { annotations: unknown } }).metadata.annotations))
  }
  return { pods, landed, started }
}

describe("the Pod condition writer", () => {
  it.scoped("lets a condition already sent land before the newer one goes, so the newer lands last", () =>
    Effect.gen(function*() {
      const server = slowServer([Duration.seconds(1), Duration.millis(10)])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, { _tag: "Hosts", hosts: [host("pending")] })
      yield* TestClock.adjust(Duration.millis(5))
      yield* writer.report(pod, programmed)
      yield* TestClock.adjust(Duration.millis(100))
      // The newer word waits for the answer to the older one.
      expect(server.started).toEqual(["Unknown"])
      yield* TestClock.adjust(Duration.seconds(2))
      expect(server.landed).toEqual(["Unknown", "True"])
    }))

  it.scoped("sends only the newest of the words that came while a request was out", () =>
    Effect.gen(function*() {
      const server = slowServer([Duration.seconds(1)])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, { _tag: "Hosts", hosts: [host("pending")] })
      yield* writer.report(pod, programmed)
      yield* writer.report(pod, {
        _tag: "Hosts",
        hosts: [{ ...host("unprogrammed"), reason: "no controller claimed it" }]
      })
      yield* TestClock.adjust(Duration.seconds(2))
      expect(server.landed).toEqual(["Unknown", "False"])
    }))

  it.scoped("lets an annotation already sent land before the newer one goes", () =>
    Effect.gen(function*() {
      const server = slowServer([Duration.seconds(1), Duration.millis(10)])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      const endpoint = (port: number) => ({
        host: `${port}-s1.sessions.example.com`,
        port,
        protocol: "tcp" as const,
        url: `https://${port}-s1.sessions.example.com`
      })
      yield* writer.annotate(pod, "s1", [endpoint(8080)])
      yield* TestClock.adjust(Duration.millis(5))
      yield* writer.annotate(pod, "s1", [endpoint(9090)])
      yield* TestClock.adjust(Duration.seconds(2))
      expect(server.landed.map((text) => text.includes("9090"))).toEqual([false, true])
    }))

  it.scoped("forgets a Pod at once, without waiting for its request in flight", () =>
    Effect.gen(function*() {
      const server = slowServer([Duration.minutes(1)])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, { _tag: "Hosts", hosts: [host("pending")] })
      yield* TestClock.adjust(Duration.millis(5))
      const forgotten = yield* Effect.fork(writer.forget("uid-1"))
      yield* TestClock.adjust(Duration.millis(5))
      expect(forgotten.unsafePoll()).not.toBeNull()
    }))

  it.scoped("writes its word again when the watch shows the Pod saying something else", () =>
    Effect.gen(function*() {
      const server = slowServer([])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, programmed)
      yield* TestClock.adjust(Duration.millis(1))
      // A request of a replica gone since, landed late.
      yield* writer.observe(seen("7", elsewhere("Unknown")))
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual(["True", "True"])
      // The Pod saying the word, whoever wrote it, needs nothing.
      yield* writer.observe(seen("9", routesCondition(programmed)))
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual(["True", "True"])
    }))

  it.scoped("takes the echo of its own earlier write for what it is", () =>
    Effect.gen(function*() {
      const server = slowServer([])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, { _tag: "Hosts", hosts: [host("pending")] })
      yield* TestClock.adjust(Duration.millis(1))
      yield* writer.report(pod, programmed)
      yield* TestClock.adjust(Duration.millis(1))
      // The watch, behind, shows the first write after the second has landed.
      yield* writer.observe(seen("1", elsewhere("Unknown")))
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual(["Unknown", "True"])
    }))

  it.scoped("leaves a Pod alone while its own write is under way", () =>
    Effect.gen(function*() {
      const server = slowServer([Duration.seconds(1)])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      yield* writer.report(pod, programmed)
      yield* TestClock.adjust(Duration.millis(5))
      yield* writer.observe(seen("7", elsewhere("Unknown")))
      yield* TestClock.adjust(Duration.seconds(2))
      expect(server.landed).toEqual(["True"])
    }))

  it.scoped("counts a Pod that already says the word as told, and keeps it saying so", () =>
    Effect.gen(function*() {
      const server = slowServer([])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      // The Pod as a new leader first saw it, already saying these very words.
      yield* writer.report(seen("3", routesCondition(programmed)), programmed)
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual([])
      yield* writer.observe(seen("4", elsewhere("Unknown")))
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual(["True"])
    }))

  it.scoped("judges a report against what the watch last showed, not the Pod it was given", () =>
    Effect.gen(function*() {
      const server = slowServer([])
      const writer = yield* makeConditionWriter(server.pods, undefined)
      // Since the Pod was read, a late request changed it.
      yield* writer.observe(seen("5", elsewhere("Unknown")))
      yield* writer.report(seen("3", routesCondition(programmed)), programmed)
      yield* TestClock.adjust(Duration.millis(1))
      expect(server.landed).toEqual(["True"])
    }))
})

describe("the Pod condition writer, the Pod replaced under its name", () => {
  // kube-apiserver answers a patch whose metadata.uid is not the stored Pod's with 422
  // ("field is immutable"): the Pod it was for is gone, and no retry can land it.
  it.scoped("stops at the refusal of a patch naming the old Pod's uid, and tries no more", () =>
    Effect.gen(function*() {
      let requests = 0
      const refused = new Invalid({
        reason: `Pod "s1-pod" is invalid: metadata.uid: Invalid value: "uid-1": field is immutable`,
        code: 422,
        causes: [{ reason: "FieldValueInvalid", message: "field is immutable", field: "metadata.uid" }]
      })
      const pods: PodWrites = {
        patchStatus: () => Effect.suspend(() => (requests++, Effect.fail(refused))),
        patch: () => Effect.suspend(() => (requests++, Effect.fail(refused)))
      }
      const writer = yield* makeConditionWriter(pods, undefined)
      yield* writer.report(pod, programmed)
      yield* TestClock.adjust(Duration.minutes(5))
      expect(requests).toBe(1)
    }))
})
