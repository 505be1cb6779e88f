/**
 * Measures of the bench process itself, in a module of their own so that a runner
 * process can use them without loading anything else of the bench.
 */
import * as fs from "node:fs"

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

/** The value at fraction `p` (0..1) of an ascending array; 0 for an empty one. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
