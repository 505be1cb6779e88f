/**
 * Measures of the bench process itself, in a module of their own so that a runner
 * process can use them without loading anything else of the bench.
 */
import * as fs from "node:fs"
import { PerformanceObserver } from "node:perf_hooks"

/** A full collection when node runs with --expose-gc (the bench passes it); otherwise a no-op. */
export const gc = (): void => (globalThis as { gc?: () => void }).gc?.()

/**
 * The main thread's CPU so far (user + system), ms, from /proc (Linux; undefined
 * elsewhere). `process.cpuUsage` counts every thread of the process.
 */
export const mainThreadCpuMs = (): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime (fields 14 and 15 of the whole line), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/**
 * Now, in ms with a fraction, on the system's monotonic clock: one clock for every
 * process on the machine (CLOCK_MONOTONIC on Linux), so an instant one process prints
 * can be subtracted from another's, to well under a millisecond. Date.now() would cut
 * each end to a whole millisecond, as much as a fast verdict's lag at the median.
 */
export const instantMs = (): number => Number(process.hrtime.bigint()) / 1e6

/** A time in ms as the bench prints it: to a tenth. */
export const shownMs = (ms: number): string => Number.isFinite(ms) ? ms.toFixed(1) : String(ms)

/** The value at fraction `p` (0..1) of an ascending array; 0 for an empty one. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

/** Garbage collection's pauses of the main thread while counted: their total and number. */
export interface GcPauses {
  readonly ms: number
  readonly count: number
}

/** Starts counting each collection's pause as node reports it; the function returned stops and answers. */
export const countGcPauses = (): () => GcPauses => {
  let ms = 0
  let count = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      ms += entry.duration
      count++
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  return () => {
    // What was reported but not yet delivered counts too.
    for (const entry of observer.takeRecords()) {
      ms += entry.duration
      count++
    }
    observer.disconnect()
    return { ms, count }
  }
}
