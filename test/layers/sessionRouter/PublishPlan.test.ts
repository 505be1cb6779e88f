/**
 * `runPublish` on scripted objects: the order of its calls (every list and dry run
 * before the first write, removals last), what it takes back when a step fails, and
 * the reason a person reads. Each object answers as the test says; the log records
 * every call the plan made.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type PublishPlan, runPublish } from "../../../src/layers/sessionRouter/PublishPlan.js"
import type { PlannedWrite, Removal } from "../../../src/layers/sessionRouter/SessionObjects.js"
import {
  Conflict,
  Forbidden,
  Invalid,
  type KubeError,
  NotServed,
  Transport,
  Unavailable
} from "../../../src/services/KubeError.js"

const sessionId = "s1"
const NOT_TRIED = "not tried: the API server stopped answering"

const forbidden = (what: string) => new Forbidden({ reason: `${what} is forbidden` })
const conflict = (what: string) => new Conflict({ reason: `${what} was changed meanwhile`, causes: [] })
const noAnswer = new Transport({ reason: "no answer within 10s", kind: "no-answer" })
const refused = new Transport({ reason: "the connection was refused", kind: "refused" })
const reset = new Transport({ reason: "the connection was reset", kind: "other" })
const unavailable = new Unavailable({ reason: "the server is unavailable" })

const outcome = (result: boolean | KubeError) =>
  typeof result === "boolean" ? Effect.succeed(result) : Effect.fail(result)

interface WriteScript {
  /** The object is stored already: the dry run answers with its resourceVersion. */
  readonly exists?: boolean
  readonly dryRun?: KubeError
  readonly apply?: KubeError
  /** What deleting it answers: true (deleted), false (already gone) or an error. */
  readonly remove?: boolean | KubeError
  /** Another manager owns fields this write sets: an apply without force meets a conflict. */
  readonly foreignFields?: boolean
  /** Why the object at the name is not ours (`notOurs`); unset: it is ours. */
  readonly notOurs?: string
}

/** The server's answer to an apply that meets another manager's fields, as it words it. */
const fieldConflict = new Conflict({
  reason: "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .spec.rules",
  causes: [{ reason: "FieldManagerConflict", message: "conflict with \"kubectl-edit\" using v1", field: ".spec.rules" }]
})

/** A scripted world: planned writes and removals whose every call lands in `log`. */
const world = () => {
  const log: Array<string> = []
  const write = (kind: string, name: string, script: WriteScript = {}): PlannedWrite => ({
    ref: { kind, namespace: "ns", name },
    apply: (options) =>
      Effect.suspend(() => {
        const dryRun = options?.dryRun === true
        const force = options?.force !== false
        log.push(`${dryRun ? "dry-run" : "apply"}${force ? " (force)" : ""} ${kind} ${name}`)
        if (script.foreignFields === true && !force) return Effect.fail(fieldConflict)
        const error = dryRun ? script.dryRun : script.apply
        if (error !== undefined) return Effect.fail(error)
        return Effect.succeed({ metadata: { name, ...(script.exists === true ? { resourceVersion: "41" } : {}) } })
      }),
    remove: Effect.suspend(() => {
      log.push(`delete ${kind} ${name}`)
      return outcome(script.remove ?? true)
    }),
    notOurs: Effect.sync(() => {
      log.push(`read ${kind} ${name}`)
      return script.notOurs
    })
  })
  const removal = (
    kind: string,
    found: ReadonlyArray<readonly [string, boolean | KubeError]> | KubeError
  ): Removal => ({
    kind,
    what: `the session's ${kind} objects`,
    find: Effect.suspend(() => {
      log.push(`list ${kind}`)
      if (!Array.isArray(found)) return Effect.fail(found as KubeError)
      return Effect.succeed(
        (found as ReadonlyArray<readonly [string, boolean | KubeError]>).map(([name, result]) => ({
          ref: { kind, namespace: "ns", name },
          remove: Effect.suspend(() => {
            log.push(`delete ${kind} ${name}`)
            return outcome(result)
          })
        }))
      )
    })
  })
  return { log, write, removal }
}

const plan = (
  writes: ReadonlyArray<PlannedWrite>,
  removals: ReadonlyArray<Removal> = [],
  explain?: PublishPlan["explain"]
): PublishPlan => ({ sessionId, writes, removals, ...(explain !== undefined ? { explain } : {}) })

/** The failure of running `p`, which must fail. */
const failureOf = (p: PublishPlan) => Effect.flip(runPublish(p))

describe("runPublish, the order of its calls", () => {
  it.effect("dry-runs and lists everything before the first write, then writes in order and removes last", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      yield* runPublish(plan(
        [write("Service", "web", { exists: true }), write("HTTPRoute", "web-8080")],
        [removal("HTTPRoute", [["web-9090", true]]), removal("Ingress", [["web", false]])]
      ))
      expect(log).toEqual([
        "dry-run Service web",
        // It exists: it is checked to be ours before anything is written.
        "read Service web",
        "dry-run HTTPRoute web-8080",
        "list HTTPRoute",
        "list Ingress",
        "apply Service web",
        "apply HTTPRoute web-8080",
        "delete HTTPRoute web-9090",
        "delete Ingress web"
      ])
    }))
})

describe("runPublish, fields another manager set", () => {
  it.effect("writes without force when no other manager holds the fields, once the object is found ours", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      yield* runPublish(plan([write("Service", "web", { exists: true })]))
      expect(log).toEqual(["dry-run Service web", "read Service web", "apply Service web"])
    }))

  it.effect("creates without reading: an object that is not there is nobody's", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      yield* runPublish(plan([write("Service", "web")]))
      expect(log).toEqual(["dry-run Service web", "apply Service web"])
    }))

  // No field in the way is no proof of ownership: a user's object at our name merges silently.
  it.effect("refuses an object that is not ours even when no field conflicts, and writes nothing", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const notOurs = "it has no app.kubernetes.io/managed-by label, so it was not published by this runner"
      const failure = yield* failureOf(plan([
        write("Service", "web", { exists: true, notOurs }),
        write("Ingress", "web")
      ]))
      expect(failure.reason).toBe(
        `could not apply Service ns/web: Service ns/web already exists; it was left as it is: ${notOurs}; nothing was changed`
      )
      expect(log).toEqual(["dry-run Service web", "read Service web"])
    }))

  it.effect("takes the fields over on an object that is ours, and only that object", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      yield* runPublish(plan([write("Service", "web", { exists: true, foreignFields: true }), write("Ingress", "web")]))
      expect(log).toEqual([
        "dry-run Service web",
        "read Service web",
        "dry-run (force) Service web",
        "dry-run Ingress web",
        "apply (force) Service web",
        "apply Ingress web"
      ])
    }))

  it.effect("leaves someone else's object at one of its names as it is, with the server's words and why", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const notOurs = "it has no app.kubernetes.io/managed-by label, so it was not published by this runner"
      const failure = yield* failureOf(
        plan([write("Service", "web"), write("Ingress", "web", { exists: true, foreignFields: true, notOurs })])
      )
      expect(failure.error).toBe(fieldConflict)
      expect(failure.reason).toBe(
        `could not apply Ingress ns/web: ${fieldConflict.reason}; it was left as it is: ${notOurs}; nothing was changed`
      )
      expect(log).toEqual(["dry-run Service web", "dry-run Ingress web", "read Ingress web"])
    }))

  it.effect("reports a conflict that is not about fields as it is, without reading the object", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      // A conflict with causes, none of them another manager's fields.
      const changed = new Conflict({
        reason: "web was changed meanwhile",
        causes: [{ reason: "FieldValueInvalid", message: "the object has been modified", field: "metadata" }]
      })
      const failure = yield* failureOf(plan([write("Service", "web", { dryRun: changed })]))
      expect(failure.reason).toBe("could not apply Service ns/web: web was changed meanwhile; nothing was changed")
      expect(log).toEqual(["dry-run Service web"])
    }))
})

describe("runPublish, a failure before the first write", () => {
  it.effect("changes nothing and says so when a list of what to remove fails", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const error = forbidden("listing ingresses")
      const failure = yield* failureOf(plan(
        [write("Service", "web")],
        [removal("HTTPRoute", []), removal("Ingress", error)]
      ))
      expect(failure.error).toBe(error)
      expect(failure.sessionId).toBe(sessionId)
      expect(failure.reason).toBe(
        "could not list the Ingress objects of session s1: listing ingresses is forbidden; nothing was changed"
      )
      expect(log).toEqual(["dry-run Service web", "list HTTPRoute", "list Ingress"])
    }))

  it.effect("changes nothing and says so when a dry run is refused", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const error = new Invalid({ reason: "web-8080 is invalid", causes: [] })
      const failure = yield* failureOf(
        plan([write("Service", "web"), write("HTTPRoute", "web-8080", { dryRun: error })])
      )
      expect(failure.reason).toBe("could not apply HTTPRoute ns/web-8080: web-8080 is invalid; nothing was changed")
      expect(log).toEqual(["dry-run Service web", "dry-run HTTPRoute web-8080"])
    }))

  it.effect("words a failure as explain does when it has words for it, and plainly when it has none", () =>
    Effect.gen(function*() {
      const explain = (error: KubeError) => error._tag === "NotServed" ? "install the Gateway API CRDs" : undefined
      const notServed = new NotServed({ reason: "httproutes are not served", resource: "httproutes" })
      const { write } = world()
      const explained = yield* failureOf(plan([write("HTTPRoute", "web-8080", { dryRun: notServed })], [], explain))
      expect(explained.reason).toBe("install the Gateway API CRDs; nothing was changed")
      const plain = yield* failureOf(
        plan([write("HTTPRoute", "web-8080", { dryRun: forbidden("patching httproutes") })], [], explain)
      )
      expect(plain.reason).toBe(
        "could not apply HTTPRoute ns/web-8080: patching httproutes is forbidden; nothing was changed"
      )
    }))
})

describe("runPublish, a write that fails midway", () => {
  it.effect("takes back what this publish created, newest first, and leaves what existed before", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const failure = yield* failureOf(plan(
        [
          write("Service", "web", { exists: true }),
          write("HTTPRoute", "r1"),
          write("HTTPRoute", "r2"),
          write("HTTPRoute", "r3", { apply: forbidden("patching r3") })
        ],
        [removal("HTTPRoute", [["old", true]])]
      ))
      expect(failure.reason).toBe(
        "could not apply HTTPRoute ns/r3: patching r3 is forbidden; removed what this publish had created (HTTPRoute ns/r2, HTTPRoute ns/r1)"
      )
      // A refusal (4xx) stored nothing: r3 is not deleted; the Service was there before.
      expect(log.slice(log.indexOf("apply HTTPRoute r3"))).toEqual([
        "apply HTTPRoute r3",
        "delete HTTPRoute r2",
        "delete HTTPRoute r1"
      ])
    }))

  it.effect.each([["a 503", unavailable], ["a reset", reset]] as const)(
    "also deletes a created write that failed with %s, which the server may have stored, naming it only if it was there",
    ([, error]) =>
      Effect.gen(function*() {
        for (const stored of [true, false]) {
          const { log, write } = world()
          const failure = yield* failureOf(plan([
            write("HTTPRoute", "r1"),
            write("HTTPRoute", "r2", { apply: error, remove: stored })
          ]))
          expect(failure.reason).toBe(
            `could not apply HTTPRoute ns/r2: ${error.reason}; removed what this publish had created (${
              stored ? "HTTPRoute ns/r2, " : ""
            }HTTPRoute ns/r1)`
          )
          expect(log.slice(-2)).toEqual(["delete HTTPRoute r2", "delete HTTPRoute r1"])
        }
      })
  )

  it.effect("leaves an update whose answer was lost alone: the object was there before", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const failure = yield* failureOf(plan([
        write("Service", "web", { exists: true }),
        write("HTTPRoute", "r1", { exists: true, apply: unavailable })
      ]))
      expect(failure.reason).toBe("could not apply HTTPRoute ns/r1: the server is unavailable")
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([])
    }))

  it.effect("tries no delete once the server stopped answering, and names everything that may remain", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const failure = yield* failureOf(plan([
        write("HTTPRoute", "r1"),
        write("HTTPRoute", "r2"),
        write("HTTPRoute", "r3", { apply: noAnswer })
      ]))
      expect(failure.error).toBe(noAnswer)
      expect(failure.reason).toBe(
        "could not apply HTTPRoute ns/r3: no answer within 10s; could not remove what this publish created, so these remain: " +
          `HTTPRoute ns/r3 (${NOT_TRIED}); HTTPRoute ns/r2 (${NOT_TRIED}); HTTPRoute ns/r1 (${NOT_TRIED})`
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([])
    }))

  it.effect("goes on taking back after a refused delete, and names what it removed and what remains", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const failure = yield* failureOf(plan([
        write("HTTPRoute", "r1"),
        write("HTTPRoute", "r2"),
        write("HTTPRoute", "r3", { remove: forbidden("deleting r3") }),
        write("HTTPRoute", "r4", { apply: forbidden("patching r4") })
      ]))
      expect(failure.reason).toBe(
        "could not apply HTTPRoute ns/r4: patching r4 is forbidden; removed what this publish had created (HTTPRoute ns/r2, HTTPRoute ns/r1); " +
          "could not remove what this publish created, so these remain: HTTPRoute ns/r3 (could not delete it: deleting r3 is forbidden)"
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([
        "delete HTTPRoute r3",
        "delete HTTPRoute r2",
        "delete HTTPRoute r1"
      ])
    }))

  it.effect("stops taking back at a delete whose connection is refused, and names the rest as not tried", () =>
    Effect.gen(function*() {
      const { log, write } = world()
      const failure = yield* failureOf(plan([
        write("HTTPRoute", "r1"),
        write("HTTPRoute", "r2"),
        write("HTTPRoute", "r3", { remove: refused }),
        write("HTTPRoute", "r4", { apply: forbidden("patching r4") })
      ]))
      expect(failure.reason).toBe(
        "could not apply HTTPRoute ns/r4: patching r4 is forbidden; could not remove what this publish created, so these remain: " +
          `HTTPRoute ns/r3 (could not delete it: the connection was refused); HTTPRoute ns/r2 (${NOT_TRIED}); HTTPRoute ns/r1 (${NOT_TRIED})`
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual(["delete HTTPRoute r3"])
    }))
})

describe("runPublish, a removal that fails", () => {
  it.effect("goes back when no old object is gone yet, so the old state stays whole", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const error = conflict("old2")
      const failure = yield* failureOf(plan(
        [write("Service", "web", { exists: true }), write("HTTPRoute", "r1")],
        // old1 was already gone: its delete removed nothing of the old state.
        [removal("HTTPRoute", [["old1", false], ["old2", error]]), removal("Ingress", [["web", true]])]
      ))
      expect(failure.error).toBe(error)
      expect(failure.reason).toBe(
        "could not delete HTTPRoute ns/old2: old2 was changed meanwhile; removed what this publish had created (HTTPRoute ns/r1)"
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([
        "delete HTTPRoute old1",
        "delete HTTPRoute old2",
        "delete HTTPRoute r1"
      ])
    }))

  it.effect("keeps the new objects once an old one is gone, tries every other, and names those left", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const first = conflict("old2")
      const failure = yield* failureOf(plan(
        [write("HTTPRoute", "r1")],
        [
          removal("HTTPRoute", [["old1", true], ["old2", first], ["old3", forbidden("deleting old3")]]),
          removal("Ingress", [["web", true]])
        ]
      ))
      expect(failure.error).toBe(first)
      expect(failure.reason).toBe(
        "could not delete HTTPRoute ns/old2: old2 was changed meanwhile; the session's new objects are in place, and these objects it no longer needs remain: " +
          "HTTPRoute ns/old2 (could not delete it: old2 was changed meanwhile); HTTPRoute ns/old3 (could not delete it: deleting old3 is forbidden)"
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([
        "delete HTTPRoute old1",
        "delete HTTPRoute old2",
        "delete HTTPRoute old3",
        "delete Ingress web"
      ])
    }))

  it.effect("stops removing once the server stops answering, and names the rest as not tried", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const failure = yield* failureOf(plan(
        [write("HTTPRoute", "r1")],
        [removal("HTTPRoute", [["old1", true], ["old2", noAnswer], ["old3", true]])]
      ))
      expect(failure.reason).toBe(
        "could not delete HTTPRoute ns/old2: no answer within 10s; the session's new objects are in place, and these objects it no longer needs remain: " +
          `HTTPRoute ns/old2 (could not delete it: no answer within 10s); HTTPRoute ns/old3 (${NOT_TRIED})`
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual([
        "delete HTTPRoute old1",
        "delete HTTPRoute old2"
      ])
    }))

  it.effect("takes nothing back when the first removal gets no answer, and names what this publish created", () =>
    Effect.gen(function*() {
      const { log, removal, write } = world()
      const failure = yield* failureOf(plan(
        [write("HTTPRoute", "r1")],
        [removal("HTTPRoute", [["old1", noAnswer]])]
      ))
      expect(failure.reason).toBe(
        "could not delete HTTPRoute ns/old1: no answer within 10s; could not remove what this publish created, so these remain: " +
          `HTTPRoute ns/r1 (${NOT_TRIED})`
      )
      expect(log.filter((call) => call.startsWith("delete"))).toEqual(["delete HTTPRoute old1"])
    }))
})
