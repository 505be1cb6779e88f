/**
 * Leader election on TestClock over Leases in memory: taking a missing, empty or expired
 * Lease, waiting out another holder by this candidate's own clock, renewing, losing
 * leadership at the renew deadline (lead interrupted then, not later), releasing on a
 * stop, races between candidates, hung calls, and the settings it refuses. Then the
 * renew deadline checked before each write (a paused leader writes nothing), deadlines
 * on the monotonic clock while the wall clock steps, and the readiness it tells.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, Deferred, Duration, Effect, Exit, Fiber, Option, Queue, Random, TestClock } from "effect"
import type { Lease } from "../../../src/domain/Objects.js"
import {
  type LeaderElectionSettings,
  type Leadership,
  type LeadershipChange,
  LeadershipLost,
  runElected
} from "../../../src/runner/controller/LeaderElection.js"
import type { LeaseCalls } from "../../../src/services/KubeClient.js"
import { Unavailable } from "../../../src/services/KubeError.js"
import { makeTimeline, type Timeline } from "../../support/LeadershipTimeline.js"
import { type LeaseClient, makeMemoryLeases, type MemoryLeases } from "../../support/MemoryLeases.js"

const T0 = Date.parse("2026-03-01T12:00:00Z")
const NS = "controllers"
const NAME = "session-routing"

/** MicroTime `seconds` after T0. */
const micro = (seconds: number) => new Date(T0 + seconds * 1_000).toISOString().replace("Z", "000Z")

/** Seconds since T0 on the test's clock. */
const since = Effect.map(Clock.currentTimeMillis, (now) => (now - T0) / 1_000)

/** Moves the clock on by `seconds` in steps of `step` seconds, letting every fiber run at each. */
const advance = (seconds: number, step = 0.1) =>
  Effect.gen(function*() {
    for (let i = 0; i < Math.round(seconds / step); i++) yield* TestClock.adjust(Duration.seconds(step))
  })

interface Running {
  readonly client: LeaseClient
  readonly changes: Array<LeadershipChange>
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
}

/** Starts candidate `who` over its own client of `memory`, leading as `timeline` records. */
const start = (
  memory: MemoryLeases,
  timeline: Timeline,
  who: string,
  options: { readonly settings?: Partial<LeaderElectionSettings>; readonly latency?: Duration.DurationInput } = {}
) =>
  Effect.gen(function*() {
    const client = memory.client(who, options.latency)
    const changes: Array<LeadershipChange> = []
    const fiber = yield* Effect.fork(
      runElected(
        client.calls,
        { namespace: NS, name: NAME, identity: who, ...options.settings },
        timeline.lead(who),
        (change) => Effect.sync(() => changes.push(change))
      )
    )
    return { client, changes, fiber } satisfies Running
  })

const lease = (spec: NonNullable<Lease["spec"]>, resourceVersion?: string): Lease => ({
  metadata: { name: NAME, namespace: NS, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
  spec
})

/** Writes by `who`, in seconds since T0. */
const writesBy = (memory: MemoryLeases, who: string) =>
  memory.writes().filter((w) => w.by === who).map((w) => (w.at - T0) / 1_000)

/**
 * Interrupts `fibers` with the clock moving: a leader's release takes TestClock time when
 * its calls are slow, up to the renew deadline when they hang.
 */
const stopAll = (fibers: ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>) =>
  Effect.gen(function*() {
    const stopping = yield* Effect.fork(Fiber.interruptAll(fibers))
    yield* advance(10.1)
    yield* Fiber.join(stopping)
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("runElected", () => {
  it.effect("creates a missing Lease naming this candidate, acquired and renewed now, with no transitions, and leads", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(0.1)
      expect(memory.read(NS, NAME)).toEqual(lease({
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        acquireTime: micro(0),
        renewTime: micro(0),
        leaseTransitions: 0
      }, "1"))
      expect(memory.writes().map((w) => w.verb)).toEqual(["create"])
      expect(timeline.starts("a")).toEqual([0])
      expect(a.changes).toEqual([{ _tag: "Leading" }])
    }))

  it.effect("renews every retryPeriod while it leads, keeping its acquireTime and transitions", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      yield* start(memory, timeline, "a")
      yield* advance(6.5)
      expect(writesBy(memory, "a")).toEqual([0, 2, 4, 6])
      expect(memory.read(NS, NAME)?.spec).toEqual({
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        acquireTime: micro(0),
        renewTime: micro(6),
        leaseTransitions: 0
      })
      expect(timeline.stops("a")).toEqual([])
    }))

  // client-go measures a holder's lease from when this candidate saw its record change,
  // never from the renewTime the holder wrote by its own clock: an old renewTime does not
  // make it take the Lease early, a renewTime ahead does not make it wait longer.
  for (const [skew, offset] of [["an hour behind", -3_600], ["an hour ahead", 3_600]] as const) {
    it.effect(`takes a Lease another holds only once it has seen it unchanged for leaseDuration, its holder's clock ${skew}`, () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        yield* memory.put(lease({
          holderIdentity: "old",
          leaseDurationSeconds: 15,
          acquireTime: micro(offset - 60),
          renewTime: micro(offset),
          leaseTransitions: 3
        }))
        const timeline = makeTimeline(since)
        const b = yield* start(memory, timeline, "b")
        yield* advance(14.9)
        expect(timeline.starts("b")).toEqual([])
        // The next try comes within one jittered retryPeriod (2 s to 4.4 s) of the expiry.
        yield* advance(4.5)
        const [at] = timeline.starts("b")
        expect(at).toBeGreaterThanOrEqual(15)
        expect(at).toBeLessThanOrEqual(19.4)
        expect(memory.writes().find((w) => w.by === "b")?.lease.spec).toEqual({
          holderIdentity: "b",
          leaseDurationSeconds: 15,
          acquireTime: micro(at!),
          renewTime: micro(at!),
          leaseTransitions: 4
        })
        expect(b.changes).toEqual([{ _tag: "Following", holder: "old" }, { _tag: "Leading" }])
      }))
  }

  it.effect("waits leaseDuration again from each change of the record it sees", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const held = { holderIdentity: "old", leaseDurationSeconds: 15, acquireTime: micro(0), leaseTransitions: 0 }
      yield* memory.put(lease({ ...held, renewTime: micro(0) }))
      const timeline = makeTimeline(since)
      yield* start(memory, timeline, "b")
      yield* advance(10)
      const current = memory.read(NS, NAME)!
      yield* memory.put({ ...current, spec: { ...held, renewTime: micro(10) } })
      // b sees the renewal at its next try, within 4.4 s: never before 10 + 15.
      yield* advance(14.9)
      expect(timeline.starts("b")).toEqual([])
      yield* advance(9)
      expect(timeline.starts("b")).toHaveLength(1)
      expect(timeline.starts("b")[0]).toBeGreaterThanOrEqual(25)
    }))

  it.effect("takes a Lease with no holder at once, with one more transition and acquireTime now", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      yield* memory.put(lease({
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: micro(-5),
        renewTime: micro(-5),
        leaseTransitions: 2
      }))
      const timeline = makeTimeline(since)
      yield* start(memory, timeline, "b")
      yield* advance(0.1)
      expect(timeline.starts("b")).toEqual([0])
      expect(memory.read(NS, NAME)?.spec).toEqual({
        holderIdentity: "b",
        leaseDurationSeconds: 15,
        acquireTime: micro(0),
        renewTime: micro(0),
        leaseTransitions: 3
      })
    }))

  it.effect("takes over from a holder whose calls hang only leaseDuration after its last renewal, never while it leads", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(0.1)
      const b = yield* start(memory, timeline, "b")
      yield* advance(4.9)
      // a renewed at 0, 2 and 4; from now on none of its calls answers.
      a.client.failNext(Infinity, "hang")
      yield* advance(8.9)
      expect(timeline.stops("a")).toEqual([])
      yield* advance(0.1)
      // Its renew deadline: 10 s after the last renewal it sent.
      expect(timeline.stops("a")).toEqual([14])
      yield* advance(4.9)
      expect(timeline.starts("b")).toEqual([])
      yield* advance(9)
      const [at] = timeline.starts("b")
      // b saw the renewal of 4 s within 4.4 s, and tries again within 4.4 s of 15 s later.
      expect(at).toBeGreaterThanOrEqual(19)
      expect(at).toBeLessThanOrEqual(27.8)
      expect(timeline.overlaps()).toBe(0)
      expect(b.changes).toEqual([{ _tag: "Following", holder: "a" }, { _tag: "Leading" }])
      const lost = failureOf(yield* Fiber.await(a.fiber))
      expect(lost).toBeInstanceOf(LeadershipLost)
      expect((lost as LeadershipLost).message).toEqual(
        `candidate "a" lost Lease controllers/session-routing: no renewal succeeded within the renew deadline of 10 s; the last try: no answer about Lease controllers/session-routing within 3 s, what was left of the renew deadline`
      )
    }))

  it.effect("interrupts lead at the renew deadline when renewals keep failing, and writes nothing after", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(2.5)
      a.client.failNext(Infinity, new Unavailable({ reason: "the server is unavailable", code: 503 }))
      yield* advance(9.4)
      expect(timeline.stops("a")).toEqual([])
      yield* advance(0.1)
      expect(timeline.stops("a")).toEqual([12])
      const calls = a.client.callsMade()
      a.client.heal()
      yield* advance(30)
      expect(a.client.callsMade()).toBe(calls)
      expect(writesBy(memory, "a")).toEqual([0, 2])
      const lost = failureOf(yield* Fiber.await(a.fiber)) as LeadershipLost
      expect(lost.reason).toBe("RenewDeadline")
      expect(lost.cause?._tag).toBe("Unavailable")
      expect(a.changes).toEqual([{ _tag: "Leading" }, { _tag: "Lost", error: lost }])
    }))

  it.effect("stops leading at once when the Lease names someone else", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(3)
      const current = memory.read(NS, NAME)!
      yield* memory.put({ ...current, spec: { ...current.spec, holderIdentity: "intruder" } })
      yield* advance(1.1)
      // The renewal at 4 s met a Conflict, read the Lease, and found it taken.
      expect(timeline.stops("a")).toEqual([4])
      const lost = failureOf(yield* Fiber.await(a.fiber)) as LeadershipLost
      expect(lost.message).toEqual(`candidate "a" lost Lease controllers/session-routing: it names "intruder" now`)
      expect(writesBy(memory, "a")).toEqual([0, 2])
    }))

  it.effect("renews again at once after a Conflict from a change that still names it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      yield* start(memory, timeline, "a")
      yield* advance(3)
      const current = memory.read(NS, NAME)!
      yield* memory.put({ ...current, metadata: { ...current.metadata, labels: { team: "routing" } } })
      yield* advance(3.5)
      expect(writesBy(memory, "a")).toEqual([0, 2, 4, 6])
      expect(memory.read(NS, NAME)?.metadata?.labels).toEqual({ team: "routing" })
      expect(timeline.stops("a")).toEqual([])
    }))

  it.effect("abandons a hung renewal after half the renew deadline and renews with the next try", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(3)
      a.client.failNext(1, "hang")
      yield* advance(17)
      expect(writesBy(memory, "a")).toEqual([0, 2, 9, 11, 13, 15, 17, 19])
      expect(timeline.stops("a")).toEqual([])
    }))

  it.effect("renews from a fresh read when its last renewal was written but its answer never came", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(3)
      a.client.failNext(1, "hang-after-write")
      yield* advance(7)
      // Written at 4 s; at 9 s the Lease's resourceVersion is newer than the last one a knew.
      expect(writesBy(memory, "a")).toEqual([0, 2, 4, 9])
      expect(memory.read(NS, NAME)?.spec?.renewTime).toBe(micro(9))
      expect(timeline.stops("a")).toEqual([])
    }))

  it.effect("abandons a hung call while waiting after its limit and tries again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      yield* memory.put(lease({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 0 }))
      const timeline = makeTimeline(since)
      const client = memory.client("b")
      client.failNext(1, "hang")
      const fiber = yield* Effect.fork(
        runElected(client.calls, { namespace: NS, name: NAME, identity: "b" }, timeline.lead("b"))
      )
      yield* advance(9.5)
      const [at] = timeline.starts("b")
      expect(at).toBeGreaterThanOrEqual(7)
      expect(at).toBeLessThanOrEqual(9.4)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("releases the Lease when stopped, and the other candidate takes over within one jittered retryPeriod", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(0.1)
      const b = yield* start(memory, timeline, "b")
      yield* advance(4.9)
      yield* Fiber.interrupt(a.fiber)
      expect(timeline.stops("a")).toEqual([5])
      expect(memory.read(NS, NAME)?.spec).toEqual({
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: micro(5),
        renewTime: micro(5),
        leaseTransitions: 0
      })
      expect(a.changes).toEqual([{ _tag: "Leading" }, { _tag: "SteppedDown", released: true }])
      yield* advance(4.5)
      const [at] = timeline.starts("b")
      expect(at).toBeGreaterThan(5)
      expect(at).toBeLessThanOrEqual(5 + 2 * 2.2)
      expect(memory.read(NS, NAME)?.spec?.leaseTransitions).toBe(1)
      expect(timeline.overlaps()).toBe(0)
      expect(b.changes).toEqual([{ _tag: "Following", holder: "a" }, { _tag: "Leading" }])
    }))

  it.effect("returns what lead returns, and releases the Lease, when lead ends on its own", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const client = memory.client("a")
      const fiber = yield* Effect.fork(runElected(
        client.calls,
        { namespace: NS, name: NAME, identity: "a" },
        Effect.as(Effect.sleep("3 seconds"), "done")
      ))
      yield* advance(3)
      expect(yield* Fiber.join(fiber)).toBe("done")
      expect(memory.read(NS, NAME)?.spec?.holderIdentity).toBe("")
    }))

  it.effect("gives up the release after the renew deadline when it hangs, and stops", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const a = yield* start(memory, timeline, "a")
      yield* advance(1)
      a.client.failNext(Infinity, "hang")
      const stopping = yield* Effect.fork(Fiber.interrupt(a.fiber))
      yield* advance(9.9)
      expect(stopping.unsafePoll()).toBeNull()
      yield* advance(0.1)
      expect(Exit.isInterrupted(yield* Fiber.join(stopping))).toBe(true)
      expect(a.changes).toEqual([{ _tag: "Leading" }, { _tag: "SteppedDown", released: false }])
      expect(memory.read(NS, NAME)?.spec?.holderIdentity).toBe("a")
    }))

  // Each call waits 50 ms before the store acts, so both candidates read before either writes.
  for (
    const [what, existing] of [
      ["a missing Lease (one create fails with AlreadyExists)", undefined],
      ["a released Lease (one replace fails with Conflict)", { holderIdentity: "", leaseDurationSeconds: 1 }]
    ] as const
  ) {
    it.effect(`lets exactly one of two candidates started together take ${what}`, () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        if (existing !== undefined) yield* memory.put(lease(existing))
        const timeline = makeTimeline(since)
        const a = yield* start(memory, timeline, "a", { latency: "50 millis" })
        const b = yield* start(memory, timeline, "b", { latency: "50 millis" })
        yield* advance(60)
        const leaders = ["a", "b"].filter((who) => timeline.starts(who).length > 0)
        const [winner, loser] = leaders[0] === "a" ? [a, b] : [b, a]
        const changes = [[...winner.changes], [...loser.changes]]
        // Stopped before asserting: a stop left to the end of the test would wait on a clock nobody moves.
        yield* stopAll([a.fiber, b.fiber])
        expect(leaders).toHaveLength(1)
        expect(timeline.starts(leaders[0]!)).toEqual([0.1])
        expect(changes).toEqual([[{ _tag: "Leading" }], [{ _tag: "Following", holder: leaders[0] }]])
        expect(writesBy(memory, leaders[0] === "a" ? "b" : "a")).toEqual([])
      }))
  }

  it.effect("never lets two candidates lead at once while their calls fail, hang and lose answers at random", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const memory = makeMemoryLeases()
      const timeline = makeTimeline(since)
      const who = ["a", "b", "c"]
      const clients = who.map((name) => memory.client(name, "20 millis"))
      // A candidate that loses stands again, as a controller's would.
      const fibers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      for (const [i, name] of who.entries()) {
        fibers[i] = yield* Effect.fork(
          Effect.forever(
            Effect.either(
              runElected(clients[i]!.calls, { namespace: NS, name: NAME, identity: name }, timeline.lead(name))
            )
          )
        )
      }
      const faults = [
        "hang",
        "hang-after-write",
        new Unavailable({ reason: "the server is unavailable", code: 503 })
      ] as const
      for (let second = 0; second < 300; second++) {
        const roll = yield* Random.nextIntBetween(0, 20)
        // Mostly the leader's calls, so that leadership changes hands often.
        const leader = timeline.leader()
        const target = roll < 3 && leader !== undefined ? who.indexOf(leader) : roll % 3
        if (roll < 6) clients[target]!.failNext(yield* Random.nextIntBetween(1, 8), faults[roll % 3]!)
        yield* advance(1, 0.5)
      }
      yield* stopAll(fibers)
      expect(timeline.overlaps()).toBe(0)
      // Leadership changed hands often, so the faults did reach the leaders.
      expect(timeline.events().filter((e) => e.what === "start").length).toBeGreaterThan(5)
    }).pipe(Effect.withRandom(Random.make("leader-election"))))

  describe("settings", () => {
    const refused = (settings: Partial<LeaderElectionSettings>) =>
      Effect.gen(function*() {
        const memory = makeMemoryLeases()
        const client = memory.client("a")
        yield* TestClock.setTime(T0)
        const exit = yield* Effect.exit(
          runElected(client.calls, { namespace: NS, name: NAME, identity: "a", ...settings }, Effect.void)
        )
        const message = (failureOf(exit) as { readonly message: string } | undefined)?.message
        // Refused before any call.
        if (message !== undefined) expect(client.callsMade()).toBe(0)
        return message
      })

    it.effect("refuses a leaseDuration no longer than the renewDeadline, naming both", () =>
      Effect.gen(function*() {
        expect(yield* refused({ leaseDuration: "10 seconds" })).toEqual(
          "invalid leader election settings: leaseDuration 10 s must be longer than renewDeadline 10 s, or another candidate may take the Lease while the holder still leads: lengthen leaseDuration or shorten renewDeadline"
        )
      }))

    it.effect("refuses a renewDeadline no longer than 1.2 × retryPeriod, naming both", () =>
      Effect.gen(function*() {
        expect(yield* refused({ renewDeadline: "2400 millis" })).toEqual(
          "invalid leader election settings: renewDeadline 2.4 s must be longer than 1.2 × retryPeriod 2 s (2.4 s), or a failed renewal is not tried again before the deadline: lengthen renewDeadline or shorten retryPeriod"
        )
      }))

    it.effect("names every bad value in one message", () =>
      Effect.gen(function*() {
        expect(yield* refused({ identity: "", name: "", retryPeriod: 0, leaseDuration: Duration.infinity })).toEqual(
          "invalid leader election settings: name is empty: name the Lease every candidate competes for; identity is empty: give each candidate its own, such as its Pod name; leaseDuration infinity must be a positive, finite duration; retryPeriod 0 ms must be a positive, finite duration"
        )
      }))

    it.effect("accepts the defaults and durations just inside the rules", () =>
      Effect.gen(function*() {
        expect(yield* refused({})).toBeUndefined()
        expect(yield* refused({ leaseDuration: "1001 millis", renewDeadline: "1 second", retryPeriod: "833 millis" }))
          .toBeUndefined()
      }))
  })

  /**
   * A candidate's own clock over the test's: its wall clock can step (NTP) while its
   * monotonic clock runs on, and both can jump at once as a process paused (SIGSTOP) sees
   * them when it runs again. Sleeps stay on TestClock: a paused process's timers are late.
   */
  const ownClock = Effect.map(TestClock.testClock(), (base) => {
    let wall = 0
    let mono = 0
    const clock: Clock.Clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis() + wall,
      currentTimeMillis: Effect.sync(() => base.unsafeCurrentTimeMillis() + wall),
      unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos() + BigInt(mono) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => base.unsafeCurrentTimeNanos() + BigInt(mono) * 1_000_000n),
      sleep: (duration) => base.sleep(duration)
    }
    return {
      clock,
      /** Seconds since T0 on the test's clock, whatever the candidate's reads. */
      since: Effect.sync(() => (base.unsafeCurrentTimeMillis() - T0) / 1_000),
      stepWall: (seconds: number) => void (wall += seconds * 1_000),
      pause: (seconds: number) => {
        wall += seconds * 1_000
        mono += seconds * 1_000
      }
    }
  })

  /** `calls` whose next replace is written at once and answered only when the test says so. */
  const answerLater = (calls: LeaseCalls) => {
    let held: Deferred.Deferred<void> | undefined
    return {
      calls: {
        ...calls,
        replace: (namespace: string, next: Lease) =>
          Effect.tap(calls.replace(namespace, next), () => held === undefined ? Effect.void : Deferred.await(held))
      } satisfies LeaseCalls,
      holdNext: Effect.map(Deferred.make<void>(), (d) => void (held = d)),
      answer: Effect.suspend(() => held === undefined ? Effect.void : Deferred.succeed(held, undefined)).pipe(
        Effect.zipRight(Effect.sync(() => void (held = undefined)))
      )
    }
  }

  describe("the renew deadline before each write", () => {
    /**
     * Leads as `who` on its own clock: each `write` the test asks for runs the guard on a
     * fiber `lead` forks, as the controller's writes run, and is recorded (in seconds since
     * T0) only if the guard lets it through. Answers how that fiber ended.
     */
    const startWriting = (memory: MemoryLeases, who: string, calls?: LeaseCalls) =>
      Effect.gen(function*() {
        const own = yield* ownClock
        const timeline = makeTimeline(own.since)
        const client = memory.client(who)
        const changes: Array<LeadershipChange> = []
        const written: Array<number> = []
        const asked = yield* Queue.unbounded<Deferred.Deferred<Exit.Exit<void>>>()
        const lead = (leadership: Leadership) =>
          Effect.zipRight(
            Effect.fork(Effect.forever(Effect.flatMap(Queue.take(asked), (done) =>
              Effect.fork(
                Effect.flatMap(
                  own.since,
                  (at) => Effect.zipRight(leadership.guard, Effect.sync(() => void written.push(at)))
                )
                  .pipe(Effect.onExit((exit) => Deferred.succeed(done, exit)))
              )))),
            timeline.lead(who)
          )
        const fiber = yield* Effect.fork(
          Effect.withClock(
            runElected(
              calls ?? client.calls,
              { namespace: NS, name: NAME, identity: who },
              lead,
              (change) => Effect.sync(() => changes.push(change))
            ),
            own.clock
          )
        )
        const write = Effect.gen(function*() {
          const done = yield* Deferred.make<Exit.Exit<void>>()
          yield* Queue.offer(asked, done)
          return yield* Deferred.await(done)
        })
        return { client, changes, written, fiber, own, timeline, write }
      })

    it.effect("lets every write through while renewals succeed", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const a = yield* startWriting(memory, "a")
        const timeline = a.timeline
        for (let i = 0; i < 30; i++) {
          yield* advance(1)
          yield* a.write
        }
        expect(a.written).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
        expect(timeline.stops("a")).toEqual([])
      }))

    // What the review found: a leader paused (SIGSTOP) past its renew deadline ran again,
    // and a write woken before its renew loop went out although a successor led by then.
    it.effect("refuses a write woken after a pause longer than the renew deadline, and steps down before it", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const a = yield* startWriting(memory, "a")
        const timeline = a.timeline
        yield* advance(3)
        expect(Exit.isSuccess(yield* a.write)).toBe(true)
        // Paused for 26 s just after the renewal of 2 s, with its next one due at 4 s.
        a.own.pause(26)
        // Not made: the write waits on the guard until the loss interrupts it with `lead`.
        const refused = yield* a.write
        expect(Exit.isInterrupted(refused)).toBe(true)
        expect(a.written).toEqual([3])
        yield* advance(0.1)
        // Stopped then, not when the renew loop wakes at 4 s.
        expect(timeline.stops("a")).toEqual([3])
        const lost = failureOf(yield* Fiber.await(a.fiber)) as LeadershipLost
        expect(lost.reason).toBe("RenewDeadline")
        expect(a.changes).toEqual([{ _tag: "Leading" }, { _tag: "Lost", error: lost }])
        // Nothing written after the loss: the Lease still has the renewal of 2 s.
        expect(writesBy(memory, "a")).toEqual([0, 2])
      }))

    it.effect("refuses a write once renewals have failed for the renew deadline, even before the renew loop notices", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const a = yield* startWriting(memory, "a")
        const timeline = a.timeline
        yield* advance(2.5)
        a.client.failNext(Infinity, new Unavailable({ reason: "the server is unavailable", code: 503 }))
        yield* advance(9.4)
        expect(Exit.isSuccess(yield* a.write)).toBe(true)
        // 12.1 s on its own clock: the renewal of 2 s is more than 10 s old, and the renew
        // loop sleeps until 12 s on the test's.
        a.own.pause(0.2)
        expect(Exit.isInterrupted(yield* a.write)).toBe(true)
        expect(a.written).toEqual([11.9])
        const lost = failureOf(yield* Fiber.await(a.fiber)) as LeadershipLost
        expect(lost.reason).toBe("RenewDeadline")
        expect(timeline.stops("a")).toEqual([11.9])
      }))

    // A renewal on the wire when the process was paused is answered as a success once it
    // runs again: the server wrote it at some time during the pause, and a successor may
    // have taken over since. It counts for nothing.
    it.effect("stops leading at once when a renewal sent before a pause is answered after the renew deadline", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const own = yield* ownClock
        const timeline = makeTimeline(own.since)
        const slow = answerLater(memory.client("a").calls)
        const changes: Array<LeadershipChange> = []
        const fiber = yield* Effect.fork(Effect.withClock(
          runElected(
            slow.calls,
            { namespace: NS, name: NAME, identity: "a" },
            timeline.lead("a"),
            (change) => Effect.sync(() => changes.push(change))
          ),
          own.clock
        ))
        yield* advance(3)
        yield* slow.holdNext
        yield* advance(1.5)
        // The renewal of 4 s is written; its answer comes after a pause of 26 s.
        expect(writesBy(memory, "a")).toEqual([0, 2, 4])
        own.pause(26)
        yield* slow.answer
        yield* advance(0.1)
        // At once, not when the renew loop wakes 2 s later.
        expect(timeline.stops("a")).toEqual([4.5])
        const lost = failureOf(yield* Fiber.await(fiber)) as LeadershipLost
        expect(lost.reason).toBe("RenewDeadline")
        expect(changes).toEqual([{ _tag: "Leading" }, { _tag: "Lost", error: lost }])
        expect(writesBy(memory, "a")).toEqual([0, 2, 4])
      }))
  })

  describe("deadlines on the monotonic clock", () => {
    // client-go counts both on a monotonic clock: a step of the wall clock (NTP) must
    // neither let a candidate take a live Lease early nor keep it waiting on a dead one.
    for (const [step, seconds] of [["forward", 3_600], ["back", -3_600]] as const) {
      it.effect(`takes a Lease another holds after leaseDuration by its own clock when its wall clock steps ${step} an hour`, () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(T0)
          const memory = makeMemoryLeases()
          yield* memory.put(lease({
            holderIdentity: "old",
            leaseDurationSeconds: 15,
            acquireTime: micro(-60),
            renewTime: micro(0),
            leaseTransitions: 3
          }))
          const own = yield* ownClock
          const timeline = makeTimeline(own.since)
          const client = memory.client("b")
          const fiber = yield* Effect.fork(
            Effect.withClock(
              runElected(client.calls, { namespace: NS, name: NAME, identity: "b" }, timeline.lead("b")),
              own.clock
            )
          )
          yield* advance(5)
          own.stepWall(seconds)
          yield* advance(9.9)
          expect(timeline.starts("b")).toEqual([])
          yield* advance(4.5)
          const [at] = timeline.starts("b")
          expect(at).toBeGreaterThanOrEqual(15)
          expect(at).toBeLessThanOrEqual(19.4)
          // What it writes on the Lease stays wall-clock time, stepped as it is.
          const renewed = Date.parse(memory.writes().find((w) => w.by === "b")?.lease.spec?.renewTime ?? "")
          expect((renewed - T0) / 1_000).toBeCloseTo(at! + seconds, 2)
          yield* stopAll([fiber])
        }))
    }

    it.effect("keeps leading when its wall clock steps forward an hour, writing renewTime by the stepped wall clock", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const own = yield* ownClock
        const timeline = makeTimeline(own.since)
        const client = memory.client("a")
        const fiber = yield* Effect.fork(
          Effect.withClock(
            runElected(client.calls, { namespace: NS, name: NAME, identity: "a" }, timeline.lead("a")),
            own.clock
          )
        )
        yield* advance(3)
        own.stepWall(3_600)
        yield* advance(20)
        expect(timeline.stops("a")).toEqual([])
        expect(memory.read(NS, NAME)?.spec?.renewTime).toBe(micro(3_600 + 22))
        yield* stopAll([fiber])
      }))

    it.effect("stops at the renew deadline when its renewals fail and its wall clock steps back an hour", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const own = yield* ownClock
        const timeline = makeTimeline(own.since)
        const client = memory.client("a")
        const fiber = yield* Effect.fork(
          Effect.withClock(
            runElected(client.calls, { namespace: NS, name: NAME, identity: "a" }, timeline.lead("a")),
            own.clock
          )
        )
        yield* advance(2.5)
        client.failNext(Infinity, new Unavailable({ reason: "the server is unavailable", code: 503 }))
        yield* advance(0.5)
        own.stepWall(-3_600)
        yield* advance(8.9)
        expect(timeline.stops("a")).toEqual([])
        yield* advance(0.1)
        expect(timeline.stops("a")).toEqual([12])
        expect((failureOf(yield* Fiber.await(fiber)) as LeadershipLost).reason).toBe("RenewDeadline")
      }))
  })

  describe("readiness", () => {
    it.effect("tells NoLeader once the holder it follows stops renewing and it cannot take the Lease, and Following once it sees a live one", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const held = { leaseDurationSeconds: 15, acquireTime: micro(0), leaseTransitions: 0 }
        yield* memory.put(lease({ ...held, holderIdentity: "old", renewTime: micro(0) }))
        const timeline = makeTimeline(since)
        const b = yield* start(memory, timeline, "b")
        yield* advance(0.1)
        expect(b.changes).toEqual([{ _tag: "Following", holder: "old" }])
        b.client.failNext(Infinity, new Unavailable({ reason: "the server is unavailable", code: 503 }))
        // The record b saw at 0 stays live until 15 s by its clock, whatever b can read.
        yield* advance(14.8)
        expect(b.changes).toEqual([{ _tag: "Following", holder: "old" }])
        yield* advance(4.5)
        expect(b.changes).toEqual([{ _tag: "Following", holder: "old" }, { _tag: "NoLeader", lastHolder: "old" }])
        const current = memory.read(NS, NAME)!
        yield* memory.put({ ...current, spec: { ...held, holderIdentity: "new", renewTime: micro(20) } })
        b.client.heal()
        yield* advance(4.5)
        expect(b.changes).toEqual([
          { _tag: "Following", holder: "old" },
          { _tag: "NoLeader", lastHolder: "old" },
          { _tag: "Following", holder: "new" }
        ])
        expect(timeline.starts("b")).toEqual([])
        yield* stopAll([b.fiber])
      }))

    it.effect("tells Following again for the same holder once it is live again after NoLeader", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const memory = makeMemoryLeases()
        const held = { holderIdentity: "old", leaseDurationSeconds: 15, acquireTime: micro(0), leaseTransitions: 0 }
        yield* memory.put(lease({ ...held, renewTime: micro(0) }))
        const timeline = makeTimeline(since)
        const b = yield* start(memory, timeline, "b")
        yield* advance(0.1)
        b.client.failNext(Infinity, new Unavailable({ reason: "the server is unavailable", code: 503 }))
        yield* advance(20)
        const current = memory.read(NS, NAME)!
        yield* memory.put({ ...current, spec: { ...held, renewTime: micro(20) } })
        b.client.heal()
        yield* advance(4.5)
        expect(b.changes).toEqual([
          { _tag: "Following", holder: "old" },
          { _tag: "NoLeader", lastHolder: "old" },
          { _tag: "Following", holder: "old" }
        ])
        yield* stopAll([b.fiber])
      }))
  })
})
