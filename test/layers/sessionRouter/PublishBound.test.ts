/**
 * A burst of publishes through a router layer: at most `PUBLISHES_AT_ONCE` are under
 * way at once, the rest start in the order they were asked as those finish, and every
 * one of them completes; what the other mode left is looked up in a few shared lists,
 * not one per publish.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { MAX_SESSIONS_PER_LIST } from "../../../src/layers/sessionRouter/SessionLookup.js"
import { PUBLISHES_AT_ONCE } from "../../../src/layers/SessionRouterLive.js"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import { withRouter } from "../../support/RouterHarness.js"

const BURST = PUBLISHES_AT_ONCE + 36

const spec = (i: number) => ({
  sessionId: `burst${i}`,
  podName: `telo-run-burst${i}`,
  podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  ports: [{ port: 8080, protocol: "tcp" as const }]
})

/** Lets the forked publishes run until they block again. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("a router's publishes", () => {
  it.effect(`run at most ${PUBLISHES_AT_ONCE} at once, the rest in the order they came`, () => {
    const started: Array<string> = []
    let routeLists = 0
    const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `telo-run-burst${from + i}`)
    return Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      yield* withRouter("in memory", SessionRouting.layerIngress, ({ router }) =>
        Effect.gen(function*() {
          const fibers = yield* Effect.forEach(
            Array.from({ length: BURST }, (_, i) => i),
            (i) => Effect.fork(router.publish(spec(i)))
          )
          yield* settle
          // Each publish's first write (the dry run of its Service) waits at the gate.
          expect(started).toEqual(names(0, PUBLISHES_AT_ONCE))
          yield* Deferred.succeed(gate, undefined)
          const published = yield* Fiber.joinAll(fibers)
          expect(published).toHaveLength(BURST)
          expect(started).toEqual(names(0, BURST))
          // Ingress mode asks what gateway mode left: the publishes under way share each list.
          expect(routeLists).toBeGreaterThan(0)
          expect(routeLists).toBeLessThanOrEqual(Math.ceil(BURST / MAX_SESSIONS_PER_LIST) + 2)
        }), {
        observe: (call) => {
          if (call.verb === "list" && call.resource.kind === "HTTPRoute") routeLists++
          return call.verb !== "apply" || !call.dryRun || call.resource.kind !== "Service"
            ? Effect.void
            : Effect.suspend(() => {
              started.push(call.name ?? "?")
              return Deferred.await(gate)
            })
        }
      })
    })
  })
})
