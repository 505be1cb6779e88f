/**
 * The heap as memory tests read it: after full collections, so that what is counted
 * is what something still holds, not garbage the collector has not reached yet.
 */
import { Effect } from "effect"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * A full collection. vitest starts its workers without `--expose-gc`; the flag can
 * still be set at run time, and a context made after that sees `gc`.
 */
const collect: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as () => void
})()

/** Lets the event loop turn once: what waits on a callback (weak refs, finalizers, I/O) runs. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Bytes of objects on the heap. Machine code is left out: V8 keeps optimising hot
 * functions for a long time, and that code says nothing about what a program holds.
 */
const objectBytes = (): number =>
  getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith("code"))
    .reduce((sum, space) => sum + space.space_used_size, 0)

/**
 * The bytes of objects still held after full collections: the least of a few readings,
 * because one collection can leave what the next one frees.
 */
export const retainedHeap: Effect.Effect<number> = Effect.promise(async () => {
  let least = Number.POSITIVE_INFINITY
  for (let i = 0; i < 4; i++) {
    collect()
    await nextTurn()
    least = Math.min(least, objectBytes())
  }
  return least
})
