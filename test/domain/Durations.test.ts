/**
 * Durations in messages read as a person would say the setting: "20 s", never "20s 12ms".
 */
import { describe, expect, it } from "vitest"
import { durationInWords } from "../../src/domain/Durations.js"

describe("durationInWords", () => {
  it("says each duration in the unit a person would use, with a space before it", () => {
    expect(
      [0, 1, 0.5, 200, 999, 1_000, 2_400, 20_000, 20_012, 90_000, 600_000, 7_200_000, -5_000].map(durationInWords)
    ).toEqual([
      "0 ms",
      "1 ms",
      "0.5 ms",
      "200 ms",
      "999 ms",
      "1 s",
      "2.4 s",
      "20 s",
      "20.012 s",
      "90 s",
      "10 min",
      "2 h",
      "-5 s"
    ])
  })

  it("says an unbounded duration as infinity", () => {
    expect(durationInWords(Infinity)).toBe("infinity")
  })
})
