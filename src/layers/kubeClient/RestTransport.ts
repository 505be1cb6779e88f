/**
 * The live client's one-shot requests (apply, get, delete, list, Events, questions
 * about the server) over node:http/https: the kubeconfig's credentials applied per
 * request exactly as for watches, a pooled keep-alive connection, and the answer read
 * once, bounded, as text.
 */
import type * as k8s from "@kubernetes/client-node"
import * as http from "node:http"
import * as https from "node:https"
import { urlToHttpOptions } from "node:url"
import * as zlib from "node:zlib"
import type { ConnectionPools } from "./ConnectionPool.js"
import { dropExecCredential } from "./ExecCredentialCache.js"
import { credentialsOf, redacted } from "./Redaction.js"

/**
 * The most a successful answer may hold. A list of every session object of a large
 * namespace stays far below it; an answer past it is a server (or proxy) gone wrong,
 * and reading on would only grow the runner's heap.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024

/** The most an error answer may hold: a Status is a few hundred bytes, a proxy's error page a few KiB. */
export const MAX_ERROR_BODY_BYTES = 256 * 1024

/** One request: method, path (with its query) below the server URL, and the body if any. */
export interface RestCall {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Appended to the server URL, which may carry a path of its own (a proxy's prefix). */
  readonly path: string
  readonly body?: string
  /** The body's media type: the patch type for a PATCH, `application/json` for a POST. */
  readonly contentType?: string
}

/** The whole answer: its status, its body as text, and its Retry-After header. */
export interface RestAnswer {
  readonly code: number
  readonly text: string
  readonly retryAfter: string | undefined
}

/**
 * An answer whose body was over its bound (declared or as it arrived). Carries no
 * text: the caller words it, and the connection it came on is closed, not reused.
 */
export class OversizedAnswer extends Error {
  constructor(readonly code: number, readonly limit: number) {
    super(`answer ${code} over ${limit} bytes`)
    this.name = "OversizedAnswer"
  }
}

/** An answer in an encoding this client does not read (it asks for none, so only a misbehaving proxy sends one). */
export class UnreadableEncoding extends Error {
  constructor(readonly code: number, readonly encoding: string) {
    super(`answer ${code} in content-encoding ${encoding}`)
    this.name = "UnreadableEncoding"
  }
}

const limitFor = (code: number): number => (code >= 200 && code < 300 ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES)

const header = (value: string | Array<string> | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value

/** The body's bytes as text, undoing a compression a proxy applied anyway, within the same bound. */
const decode = (code: number, encoding: string | undefined, bytes: Buffer, limit: number): string => {
  if (encoding === undefined || encoding === "" || encoding === "identity") return bytes.toString("utf8")
  const options = { maxOutputLength: limit }
  try {
    if (encoding === "gzip" || encoding === "x-gzip") return zlib.gunzipSync(bytes, options).toString("utf8")
    if (encoding === "deflate") return zlib.inflateSync(bytes, options).toString("utf8")
  } catch (error) {
    if ((error as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") throw new OversizedAnswer(code, limit)
    throw error
  }
  throw new UnreadableEncoding(code, encoding)
}

/** The request's headers: the kubeconfig's, `Accept`, and the body's type and length. */
const requestHeaders = (options: https.RequestOptions, call: RestCall): http.OutgoingHttpHeaders => {
  // client-node sets them as an object (the token, impersonation), never as a raw list.
  const headers: http.OutgoingHttpHeaders = {
    ...(options.headers as http.OutgoingHttpHeaders | undefined),
    Accept: "application/json"
  }
  if (call.body !== undefined) {
    headers["Content-Type"] = call.contentType ?? "application/json"
    headers["Content-Length"] = Buffer.byteLength(call.body)
  }
  return headers
}

/**
 * Reads one response whole, within the bound of its status, then hands it to `answer`
 * (a refusal's text with the request's `credentials` taken out), or why it could not
 * be read to `fail`. `abandon` closes the connection when the rest is not to be read.
 */
const readAnswer = (
  response: http.IncomingMessage,
  credentials: () => ReadonlyArray<string>,
  answer: (value: RestAnswer) => void,
  fail: (error: unknown) => void,
  abandon: () => void
): void => {
  const code = response.statusCode ?? 500
  const limit = limitFor(code)
  const tooLarge = () => {
    fail(new OversizedAnswer(code, limit))
    // Closes the connection too: the rest of the body is never read.
    abandon()
  }
  const declared = Number(response.headers["content-length"])
  if (declared > limit) return tooLarge()
  const chunks: Array<Buffer> = []
  let length = 0
  let complete = false
  response.on("data", (chunk: Buffer) => {
    length += chunk.length
    if (length > limit) return tooLarge()
    chunks.push(chunk)
  })
  response.on("end", () => {
    complete = true
    if (length > limit) return
    try {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)
      const text = decode(code, header(response.headers["content-encoding"]), bytes, limit)
      answer({
        code,
        // A refusal's words become a reason; what it echoes of the request's credentials must not.
        text: code >= 200 && code <= 299 ? text : redacted(text, credentials()),
        retryAfter: header(response.headers["retry-after"])
      })
    } catch (error) {
      fail(error)
    }
  })
  // A connection cut mid-body: what a reset says, so that it reads (and retries) as one.
  response.on("close", () => {
    if (!complete) fail(Object.assign(new Error("aborted"), { code: "ECONNRESET" }))
  })
  response.on("error", fail)
}

/**
 * Whether what `applyToHTTPSOptions` gives a request may differ from one request to
 * the next: a file client-node reads again each time (a rotated client certificate,
 * key or CA), or an authenticator that may refresh the token (an exec plugin, a token
 * file, an auth provider, one the caller added). A kubeconfig with none of them holds
 * everything inline, and its options are the same for every request.
 */
export const credentialsMayChange = (kc: k8s.KubeConfig): boolean => {
  const user = kc.getCurrentUser()
  const cluster = kc.getCurrentCluster()
  const added = (kc as unknown as { readonly custom_authenticators?: ReadonlyArray<unknown> }).custom_authenticators
  return user?.exec !== undefined || user?.authProvider !== undefined || user?.certFile !== undefined ||
    user?.keyFile !== undefined || cluster?.caFile !== undefined || !Array.isArray(added) || added.length > 0
}

/** A request's connection settings: what client-node applies, with its agent swapped for a pooled one. */
interface Applied {
  readonly options: https.RequestOptions
  readonly agent: http.Agent | undefined
}

/**
 * Applies the kubeconfig's credentials to a request and hands them to `use`, or why
 * they could not be applied to `fail`. Credentials that may change are applied anew
 * for each request; fixed ones once, after which `use` is called at once: client-node
 * would otherwise build an agent and decode the certificates again for every request.
 */
const credentialsFor = (kc: k8s.KubeConfig, pools: ConnectionPools) => {
  const apply = (): Promise<Applied> => {
    const options: https.RequestOptions = {}
    return kc.applyToHTTPSOptions(options).then(() => ({
      options,
      agent: pools.forCall(options.agent as http.Agent | undefined)
    }))
  }
  if (credentialsMayChange(kc)) {
    return (use: (applied: Applied) => void, fail: (error: unknown) => void): void => {
      apply().then(use, fail)
    }
  }
  let fixed: Applied | undefined
  let applying: Promise<Applied> | undefined
  return (use: (applied: Applied) => void, fail: (error: unknown) => void): void => {
    if (fixed !== undefined) return use(fixed)
    applying ??= apply().then((applied) => (fixed = applied), (error: unknown) => {
      // A failure is not kept: the next request tries again.
      applying = undefined
      throw error
    })
    applying.then(use, fail)
  }
}

/**
 * Sends one request to `server` and hands over the whole answer, whatever its status,
 * to `onAnswer`; `onFailure` gets the socket's error when no answer came (or it was cut
 * short), or `OversizedAnswer` past the bound. Exactly one of them is called, once,
 * unless the function returned cancels the request first: then neither is, and the
 * connection is closed. The credentials as a watch applies them (`applyToHTTPSOptions`:
 * a token or an exec plugin refreshed when due, a rotated client certificate read
 * again; once for a kubeconfig whose credentials cannot change), then a pooled
 * connection with those TLS settings. The body is written with the headers in one piece.
 * A 401 to an exec plugin's credential is not answered at once: the credential is
 * dropped and the request sent once more, within the same attempt, with a fresh one.
 *
 * Callbacks rather than a promise and an AbortSignal: at thousands of calls a second
 * the signal's listeners and a promise per call were a visible share of the client's CPU.
 */
export const makeRestTransport = (kc: k8s.KubeConfig, pools: ConnectionPools, server: string): RestTransport => {
  const serverUrl = new URL(server)
  const base = urlToHttpOptions(serverUrl)
  const prefix = (base.path ?? "/").replace(/\/+$/, "")
  const secure = base.protocol === "https:"
  const withCredentials = credentialsFor(kc, pools)
  return (call, onAnswer, onFailure) => {
    let request: http.ClientRequest | undefined
    /** Set once a callback has been called or the request cancelled: nothing is said after. */
    let over = false
    const answer = (value: RestAnswer) => {
      if (over) return
      over = true
      onAnswer(value)
    }
    const fail = (error: unknown) => {
      if (over) return
      over = true
      onFailure(error)
    }
    const send = (agent: http.Agent | undefined, options: https.RequestOptions, refreshed: boolean) => {
      const headers = requestHeaders(options, call)
      const authorization = headers["Authorization"] ?? headers["authorization"]
      request = (secure ? https : http).request({
        ...options,
        protocol: base.protocol,
        hostname: base.hostname,
        port: base.port,
        path: prefix + call.path,
        method: call.method,
        headers,
        agent
      }, (response) =>
        readAnswer(
          response,
          () => credentialsOf(authorization, serverUrl, options.auth),
          (value) => {
            // A 401 to an exec plugin's credential: the token may have rotated under a
            // credential kept without an expiry. It is dropped and the call sent once
            // more with a fresh one from the plugin, as client-go does; a second 401 stands.
            if (
              value.code === 401 && !refreshed && !over &&
              dropExecCredential(kc, typeof authorization === "string" ? authorization : undefined)
            ) {
              return sendWithCredentials(true)
            }
            answer(value)
          },
          fail,
          () => request?.destroy()
        ))
      request.on("error", fail)
      request.end(call.body)
    }
    const sendWithCredentials = (refreshed: boolean) =>
      withCredentials(({ agent, options }) => {
        if (over) return
        try {
          send(agent, options, refreshed)
        } catch (error) {
          // node:http refuses a request it cannot form (a header it will not send) by throwing.
          fail(error)
        }
      }, fail)
    sendWithCredentials(false)
    return () => {
      if (over) return
      over = true
      request?.destroy()
    }
  }
}

/**
 * One request sent: its whole answer to `onAnswer`, or why none came to `onFailure`;
 * the function returned cancels it.
 */
export type RestTransport = (
  call: RestCall,
  onAnswer: (answer: RestAnswer) => void,
  onFailure: (error: unknown) => void
) => () => void
