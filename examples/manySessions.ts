/**
 * A runner that follows many sessions at once: each session published by `reportSession`
 * on a fiber of its own, its events handed to a callback as they happen, without a
 * stream or a mailbox per session. A test runs it against LocalCluster over HTTP.
 */
import { Effect } from "effect"
import { reportSession, type SessionEvent } from "session-routing"

/** Each session's events as `reportSession` told them, by session id. */
export type Reported = ReadonlyMap<string, ReadonlyArray<SessionEvent>>

/** Publishes `count` sessions of one tcp port at once; completes when every host is settled. */
export const publishMany = (count: number) =>
  Effect.gen(function*() {
    const reported = new Map<string, Array<SessionEvent>>()
    // One fiber per session, each following its own hosts; a publish that fails fails the whole.
    yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      (i) => {
        const sessionId = `many${i}`
        const events: Array<SessionEvent> = []
        reported.set(sessionId, events)
        return reportSession({
          sessionId,
          podName: `telo-run-${sessionId}`,
          podUid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          ports: [{ port: 8080, protocol: "tcp" }]
        }, (event) => Effect.sync(() => events.push(event)))
      },
      { concurrency: "unbounded", discard: true }
    )
    return reported as Reported
  })
