/**
 * The credentials a request carried, taken back out of what the server answered: a
 * proxy or a misconfigured server may echo a request's Authorization header or the
 * URL it was sent to in its error page, and that text becomes a reason that is
 * printed, logged, written into Events and, in controller mode, into a Pod condition.
 */

/** Shorter values are left alone: a short password is more likely a word of the answer. */
const MIN_SECRET_CHARS = 8

const REDACTED = "[redacted]"

/** `user:password` as Basic authentication sends it, and the password alone. */
const basicParts = (decoded: string): ReadonlyArray<string> =>
  decoded.includes(":") ? [decoded, decoded.slice(decoded.indexOf(":") + 1)] : [decoded]

/**
 * The secret parts of an Authorization header, of a URL's userinfo, and of the
 * `user:password` node:http turns into a Basic header itself (`auth`, which client-node
 * sets for a kubeconfig user with a password), as an answer could quote them.
 */
export const credentialsOf = (authorization: unknown, url?: URL, auth?: unknown): ReadonlyArray<string> => {
  const secrets: Array<string> = []
  if (typeof authorization === "string") {
    const [scheme = "", value = ""] = authorization.split(/\s+/, 2)
    secrets.push(value)
    if (scheme.toLowerCase() === "basic") secrets.push(...basicParts(Buffer.from(value, "base64").toString("utf8")))
  }
  if (typeof auth === "string" && auth !== "") {
    secrets.push(Buffer.from(auth, "utf8").toString("base64"), ...basicParts(auth))
  }
  if (url !== undefined && url.password !== "") {
    const password = decodeURIComponent(url.password)
    secrets.push(url.password, password, `${decodeURIComponent(url.username)}:${password}`)
  }
  return secrets.filter((secret) => secret.length >= MIN_SECRET_CHARS)
}

// What an answer may echo of credentials it was not told of (another client's, a
// proxy's own), found by their shape rather than by value: a URL's `user:password@`,
// and the value of a Basic or Bearer Authorization. A Basic value is taken only when it
// decodes to `user:password`, so that "Basic authentication failed" keeps its words.

/** `scheme://user:password@`, the password possibly empty; the scheme and `@` are kept. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*:[^\s/?#@"'<>]*@/gi

/** `Basic <base64>`: the value is replaced when it decodes to printable `user:password`. */
const BASIC_VALUE = /\b(basic\s+)([a-z0-9+/]{4,}={0,2})/gi

/**
 * `Authorization: Bearer <token>`, as a header dump, JSON (`"authorization":"Bearer …"`)
 * or Go's map printing (`Authorization:[Bearer …]`) quotes it.
 */
const AUTHORIZATION_BEARER = /(authorization["']?\s*[:=]\s*[\["']*\s*bearer\s+)[^\s"',;\]]+/gi

const isBasicCredential = (value: string): boolean => {
  const decoded = Buffer.from(value, "base64").toString("utf8")
  return decoded.includes(":") && !/[\u0000-\u001f\u007f-\u009f\ufffd]/.test(decoded)
}

/** `text` with every credential-shaped value (a URL's userinfo, a Basic or Bearer Authorization) replaced. */
export const redactedShapes = (text: string): string =>
  text
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(BASIC_VALUE, (whole, scheme: string, value: string) =>
      isBasicCredential(value) ? `${scheme}${REDACTED}` : whole)
    .replace(AUTHORIZATION_BEARER, `$1${REDACTED}`)

/**
 * `text` with every occurrence of each secret replaced, longest first (a secret may
 * contain another), and then whatever still has the shape of a credential.
 */
export const redacted = (text: string, secrets: ReadonlyArray<string>): string =>
  redactedShapes(
    [...secrets].sort((a, b) => b.length - a.length).reduce(
      (out, secret) => out.includes(secret) ? out.replaceAll(secret, REDACTED) : out,
      text
    )
  )
