/**
 * Who led when, for the leader-election tests (on TestClock and over HTTP alike):
 * `lead(who)` is the work a candidate runs while it leads, and the timeline records
 * each start and stop at the time `now` reads, and counts starts while another
 * candidate still led (two leaders at once, the one thing an election must prevent).
 */
import { Clock, Effect } from "effect"

/** A start or a stop of `who`'s leading, at the time `now` read. */
export interface LeadershipEvent {
  readonly who: string
  readonly what: "start" | "stop"
  readonly at: number
}

/** A timeline whose times are what `now` reads (default: Clock millis). */
export const makeTimeline = (now: Effect.Effect<number> = Clock.currentTimeMillis) => {
  const leading = new Set<string>()
  const events: Array<LeadershipEvent> = []
  let overlaps = 0
  const timesOf = (who: string, what: LeadershipEvent["what"]) =>
    events.filter((e) => e.who === who && e.what === what).map((e) => e.at)
  return {
    /** Leads as `who` until interrupted; never ends by itself. */
    lead: (who: string): Effect.Effect<never> =>
      Effect.gen(function*() {
        if (leading.size > 0) overlaps++
        leading.add(who)
        events.push({ who, what: "start", at: yield* now })
        return yield* Effect.never
      }).pipe(
        Effect.onExit(() =>
          Effect.map(now, (at) => {
            leading.delete(who)
            events.push({ who, what: "stop", at })
          })
        )
      ),
    events: (): ReadonlyArray<LeadershipEvent> => events,
    starts: (who: string) => timesOf(who, "start"),
    stops: (who: string) => timesOf(who, "stop"),
    overlaps: () => overlaps,
    /** Who leads now, if anyone. */
    leader: (): string | undefined => leading.values().next().value,
    /** Everyone leading now, as an effect to poll. */
    leaders: Effect.sync(() => [...leading])
  }
}

export type Timeline = ReturnType<typeof makeTimeline>
