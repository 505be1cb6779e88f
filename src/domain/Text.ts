/**
 * Text that came from elsewhere (a controller's condition message, an API server's or
 * a proxy's error body, a Pod's label and annotation values) made fit for one line of
 * a reason or a condition: bounded, and unable to forge output lines, drive a terminal
 * or reorder what a reader sees.
 */

/** The most of a server's or controller's own words a reason carries. */
export const MAX_QUOTED_CHARS = 512

// What is escaped rather than shown: controls (C0, DEL, C1), which a terminal acts on;
// format characters, among them the bidi embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069) and marks (U+200E, U+200F, U+061C) that make text
// read in another order than it is stored in, and the zero-width ones that hide a
// difference; the line and paragraph separators (U+2028, U+2029), which some viewers
// break a line at; and halves of a surrogate pair without the other half.

const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

const UNPRINTABLE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu

const escapeCharacter = (c: string): string => {
  switch (c) {
    case "\n":
      return "\\n"
    case "\r":
      return "\\r"
    case "\t":
      return " "
    default: {
      const code = c.codePointAt(0) ?? 0
      return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`
    }
  }
}

/**
 * `text` as one printable line of at most `max` characters, escapes included (an
 * ellipsis after them says it was cut): controls and format characters are written as
 * escapes (`\n`, `\u001b`, `\u202e`), so a message with a newline cannot print a line
 * of its own, an ESC sequence reaches the terminal as text, and a right-to-left
 * override shows as what it is. A cut never splits an escape or a character.
 */
export const printable = (text: string, max: number = MAX_QUOTED_CHARS): string => {
  if (text.length <= max && !UNPRINTABLE.test(text)) return text
  if (text.length <= max) {
    const escaped = text.replace(UNPRINTABLE_ALL, escapeCharacter)
    if (escaped.length <= max) return escaped
  }
  // Escapes only lengthen text, so the walk never needs more than `max` of its characters.
  let out = ""
  for (const c of text) {
    const piece = UNPRINTABLE.test(c) ? escapeCharacter(c) : c
    if (out.length + piece.length > max) return `${out}…`
    out += piece
  }
  return out
}

/**
 * What a server answered in plain text (a proxy's HTML error page, a gateway's
 * banner) cut to its words: tags dropped, whitespace collapsed, bounded, printable.
 */
export const serverText = (text: string): string => {
  const words = /^\s*</.test(text)
    ? text.replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, " ")
    : text
  return printable(words.replace(/\s+/g, " ").trim())
}
