/**
 * The recorder's correlation, as client-go's correlator does it: a spam budget per
 * object, and one series per (object, reason) that repeats fold into while a write of
 * it is queued or in flight. Both tables are bounded: past the bound the oldest entry
 * goes, a series only once no write of it is queued or in flight.
 */
import { objectKey, type Occurrence, occurrenceKey, type SpamBudget, spendBudget } from "../../domain/KubeEvents.js"
import type { EventProblemSink } from "../../services/EventRecorder.js"
import { eventsRecorded, updateSeries } from "../../services/Telemetry.js"

/**
 * One (object, reason) pair: the Event that stands for it once created, what the API
 * holds of its count, and the occurrences not written yet. At most one write per
 * series is queued or in flight, which is what lets repeats fold into it.
 */
export interface Series {
  occurrence: Occurrence
  api: "events.k8s.io/v1" | "v1" | undefined
  name: string | undefined
  written: number
  pending: number
  state: "idle" | "queued" | "busy"
  /** Where the latest caller hears of problems. */
  problems: EventProblemSink | undefined
}

/** client-go keeps 4096 series (and spam budgets); an evicted one starts a new Event, as the server's TTL does anyway. */
const MAX_SERIES = 4096

/** Counts one occurrence under its outcome. */
export const counted = (outcome: "written" | "aggregated" | "filtered" | "dropped" | "failed") =>
  updateSeries(eventsRecorded, [["outcome", outcome]], 1)

/** Refreshes `key` as the newest entry of `map`, then evicts the oldest entry `canEvict` allows once past `MAX_SERIES`. */
const rememberIn = <V>(map: Map<string, V>, key: string, value: V, canEvict: (value: V) => boolean) => {
  map.delete(key)
  map.set(key, value)
  if (map.size <= MAX_SERIES) return
  for (const [oldKey, old] of map) {
    if (canEvict(old)) {
      map.delete(oldKey)
      return
    }
  }
}

/**
 * Leaves `entry` idle with nothing pending. The sink is the caller's session stream:
 * an idle series must not keep a closed session alive.
 */
export const settleSeries = (entry: Series): void => {
  entry.pending = 0
  entry.state = "idle"
  entry.problems = undefined
}

/**
 * Where one occurrence goes: past its object's spam budget (`filtered`), into a write
 * already queued or in flight (`aggregated`), or a series now to be queued.
 */
export type Folded = "filtered" | "aggregated" | Series

/** The spam budgets and series of one recorder. */
export interface Correlator {
  readonly fold: (occurrence: Occurrence, problems: EventProblemSink | undefined, now: number) => Folded
}

/** An empty correlator. */
export const makeCorrelator = (): Correlator => {
  const series = new Map<string, Series>()
  const budgets = new Map<string, SpamBudget>()
  const fold = (occurrence: Occurrence, problems: EventProblemSink | undefined, now: number): Folded => {
    const budgetKey = objectKey(occurrence)
    const budget = spendBudget(budgets.get(budgetKey), now)
    if (budget === undefined) return "filtered"
    rememberIn(budgets, budgetKey, budget, () => true)

    const key = occurrenceKey(occurrence)
    const entry: Series = series.get(key) ?? {
      occurrence,
      api: undefined,
      name: undefined,
      written: 0,
      pending: 0,
      state: "idle",
      problems
    }
    rememberIn(series, key, entry, (old) => old.state === "idle")
    entry.occurrence = occurrence
    entry.pending += 1
    if (problems !== undefined) entry.problems = problems
    // A write of this series is queued or in flight: it takes this occurrence too.
    if (entry.state !== "idle") return "aggregated"
    entry.state = "queued"
    return entry
  }
  return { fold }
}
