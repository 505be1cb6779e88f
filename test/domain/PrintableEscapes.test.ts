/**
 * `printable` against text that would reorder or hide what a reader sees: bidi
 * embeddings, overrides, isolates and marks, zero-width characters, line and paragraph
 * separators and lone surrogates are written as escapes, and its bound counts the
 * escapes, never cutting one (or a character) in half.
 */
import { describe, expect, it } from "@effect/vitest"
import { MAX_QUOTED_CHARS, printable } from "../../src/domain/Text.js"

describe("printable", () => {
  it("writes every bidi control as an escape, so text reads in the order it is stored", () => {
    const bidi = [
      "\u202a",
      "\u202b",
      "\u202c",
      "\u202d",
      "\u202e",
      "\u2066",
      "\u2067",
      "\u2068",
      "\u2069",
      "\u200e",
      "\u200f",
      "\u061c"
    ]
    expect(bidi.map((c) => printable(`a${c}b`))).toEqual([
      "a\\u202ab",
      "a\\u202bb",
      "a\\u202cb",
      "a\\u202db",
      "a\\u202eb",
      "a\\u2066b",
      "a\\u2067b",
      "a\\u2068b",
      "a\\u2069b",
      "a\\u200eb",
      "a\\u200fb",
      "a\\u061cb"
    ])
    // The Trojan Source shape: an override that makes "8080-abc" read otherwise.
    expect(printable("port \u202e0808\u202c ok")).toBe("port \\u202e0808\\u202c ok")
  })

  it("writes zero-width characters, line and paragraph separators and lone surrogates as escapes", () => {
    expect(printable("a\u200bb\ufeffc\u2028d\u2029e")).toBe("a\\u200bb\\ufeffc\\u2028d\\u2029e")
    expect(printable("x\ud800y\udc00z")).toBe("x\\ud800y\\udc00z")
    // A whole pair is a character like any other.
    expect(printable("a😀b")).toBe("a😀b")
  })

  it("counts the escapes in its bound and never cuts one, or a surrogate pair, in half", () => {
    const controls = "\u001b".repeat(MAX_QUOTED_CHARS)
    const cut = printable(controls)
    expect(cut.length).toBeLessThanOrEqual(MAX_QUOTED_CHARS + 1)
    expect(cut).toBe(`${"\\u001b".repeat(Math.floor(MAX_QUOTED_CHARS / 6))}…`)
    expect(printable("ab\u202e", 8)).toBe("ab\\u202e")
    expect(printable("ab\u202e", 7)).toBe("ab…")
    expect(printable("a😀", 2)).toBe("a…")
    // 200 KB in, the bound out.
    expect(printable("x".repeat(200_000)).length).toBe(MAX_QUOTED_CHARS + 1)
  })
})
