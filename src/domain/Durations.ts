/**
 * A duration as every message says it: the unit a person would use, spelt out with a
 * space ("20 s", "500 ms", "2.4 s", "10 min"), so that a limit reads as the setting a
 * person gave rather than as a measurement ("20s 12ms").
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** Up to three decimals, without trailing zeros: 2.4, 20.012, 20. */
const decimals = (value: number): string => String(Number(value.toFixed(3)))

/**
 * `ms` in words: whole hours or minutes as such, under a second in milliseconds, and
 * anything else in seconds (to the millisecond).
 */
export const durationInWords = (ms: number): string => {
  if (!Number.isFinite(ms)) return ms > 0 ? "infinity" : String(ms)
  const size = Math.abs(ms)
  if (size < 1_000) return `${decimals(ms)} ms`
  if (size % HOUR === 0) return `${ms / HOUR} h`
  if (size % MINUTE === 0) return `${ms / MINUTE} min`
  return `${decimals(ms / 1_000)} s`
}
