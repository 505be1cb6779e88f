/**
 * The credentials a request carried, taken back out of what the server answered: a
 * proxy or a misconfigured server may echo a request's Authorization header in its
 * error page, and that text becomes a reason that is printed, logged and written into
 * Events.
 */

/** Shorter values are left alone: a short password is more likely a word of the answer. */
const MIN_SECRET_CHARS = 8

const REDACTED = "[redacted]"

/** The secret parts of an Authorization header and of a URL's userinfo, as an answer could quote them. */
export const credentialsOf = (authorization: unknown, url?: URL): ReadonlyArray<string> => {
  const secrets: Array<string> = []
  if (typeof authorization === "string") {
    const [scheme = "", value = ""] = authorization.split(/\s+/, 2)
    secrets.push(value)
    if (scheme.toLowerCase() === "basic") {
      const decoded = Buffer.from(value, "base64").toString("utf8")
      secrets.push(decoded, decoded.slice(decoded.indexOf(":") + 1))
    }
  }
  if (url !== undefined && url.password !== "") secrets.push(url.password, decodeURIComponent(url.password))
  return secrets.filter((secret) => secret.length >= MIN_SECRET_CHARS)
}

/** `text` with every occurrence of each secret replaced, longest first (a secret may contain another). */
export const redacted = (text: string, secrets: ReadonlyArray<string>): string =>
  [...secrets].sort((a, b) => b.length - a.length).reduce(
    (out, secret) => out.includes(secret) ? out.replaceAll(secret, REDACTED) : out,
    text
  )
