/**
 * Text that came from elsewhere (a controller's condition message, an API server's or
 * a proxy's error body) made fit for one line of a reason: bounded, and unable to
 * forge output lines or drive a terminal.
 */

/** The most of a server's or controller's own words a reason carries. */
export const MAX_QUOTED_CHARS = 512

// C0 controls, DEL and C1 controls: what a terminal acts on instead of printing.

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

const escapeControl = (c: string): string => {
  switch (c) {
    case "\n":
      return "\\n"
    case "\r":
      return "\\r"
    case "\t":
      return " "
    default:
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  }
}

/**
 * `text` as one printable line of at most `max` characters (an ellipsis says where it
 * was cut): control characters are written as escapes (`\n`, `\u001b`), so a message
 * with a newline cannot print a line of its own and an ESC sequence reaches the
 * terminal as text.
 */
export const printable = (text: string, max: number = MAX_QUOTED_CHARS): string => {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text
  return cut.replace(CONTROL, escapeControl)
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
