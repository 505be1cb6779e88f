/**
 * Watch connections over node:http: opened with the client's credentials on a pooled
 * connection, and their body read as the API server writes it, one JSON event per
 * line. The bytes are split and decoded in the socket's own data handler, and each
 * chunk's events enter the stream at once, so an event costs one `JSON.parse` and a
 * share of one stream element, not a trip through a text decoder, a line splitter,
 * two filters and an effect of its own.
 */
import type * as k8s from "@kubernetes/client-node"
import { Effect, Either, Exit, Mailbox, Option, Stream } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { StringDecoder } from "node:string_decoder"
import type { KubeObject, Status } from "../../domain/Objects.js"
import type { RawWatchEvent } from "../../services/KubeClient.js"
import { type KubeError, Transport } from "../../services/KubeError.js"
import type { ConnectionPools } from "./ConnectionPool.js"
import { describeRequest, fromResponse, fromStatus, type RequestContext } from "./KubeErrorParsing.js"
import { credentialsOf, redacted } from "./Redaction.js"
import { MAX_ERROR_BODY_BYTES } from "./RestTransport.js"

/** An opened watch: its body to read, or the whole answer of a refusal. */
export type WatchOpening =
  | { readonly ok: true; readonly response: http.IncomingMessage }
  | { readonly ok: false; readonly code: number; readonly text: string; readonly retryAfter: string | undefined }

/**
 * Opens one watch connection and resolves as soon as the response headers arrive
 * (a watch sends its body for as long as it lasts). A non-200 answer is read whole
 * so its Status can be mapped. The client's own `Watch` is not used: it drops the
 * error body, swallows unparseable lines and reports a server close as success.
 */
export const openWatch = async (
  kc: k8s.KubeConfig,
  pools: ConnectionPools,
  url: URL,
  signal: AbortSignal
): Promise<WatchOpening> => {
  const options: https.RequestOptions = {}
  // Same credentials and TLS settings as every call (token refresh included), over a pooled connection.
  await kc.applyToHTTPSOptions(options)
  options.agent = pools.forWatch(options.agent as http.Agent | undefined)
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === "https:" ? https : http).request(url, {
      ...options,
      method: "GET",
      headers: { ...options.headers, Accept: "application/json" },
      signal
    }, resolve)
    request.on("error", reject)
    // A half-dead connection otherwise hangs the watch silently forever.
    request.on("socket", (socket) => socket.setKeepAlive(true, 30_000))
    request.end()
  })
  if (response.statusCode === 200) return { ok: true, response }
  const retryAfter = response.headers["retry-after"]
  return {
    ok: false,
    code: response.statusCode ?? 500,
    // What the refusal echoes of the request's credentials must not become its reason.
    text: redacted(await refusalText(response), credentialsOf(authorizationOf(options.headers), url)),
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter
  }
}

/** The Authorization header client-node set: it sets headers as an object, never as a raw list. */
const authorizationOf = (headers: https.RequestOptions["headers"]): unknown =>
  headers === undefined || Array.isArray(headers)
    ? undefined
    : (headers as http.OutgoingHttpHeaders)["Authorization"] ?? (headers as http.OutgoingHttpHeaders)["authorization"]

/**
 * The body of a refusal, up to `MAX_ERROR_BODY_BYTES`: a Status is a few hundred
 * bytes, and a server that keeps sending is cut off (the connection closed) with what
 * it said so far, rather than read to the end.
 */
const refusalText = async (response: http.IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  let length = 0
  for await (const chunk of response) {
    const bytes = chunk as Buffer
    chunks.push(bytes)
    length += bytes.length
    if (length >= MAX_ERROR_BODY_BYTES) {
      response.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString("utf8")
}

const isStatus = (value: unknown): value is Status =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "Status"

/**
 * One line of a watch as an event; `undefined` for a bookmark without a
 * resourceVersion (nothing to resume from). A line we cannot read is a `Transport`
 * failure rather than skipped: the resuming watch then reconnects from the last
 * resourceVersion it saw, so the event behind the garbage is not lost.
 */
export const readWatchLine = <A>(
  ctx: RequestContext,
  server: string,
  line: string
): Either.Either<RawWatchEvent<A> | undefined, KubeError> => {
  const garbled = (what: string) =>
    Either.left(new Transport({ reason: `the watch from ${server} (${describeRequest(ctx)}) sent ${what}` }))
  let parsed: { type?: unknown; object?: unknown }
  try {
    parsed = JSON.parse(line) as { type?: unknown; object?: unknown }
  } catch {
    return garbled("a line that is not JSON")
  }
  if (typeof parsed !== "object" || parsed === null) return garbled("a line that is not an event")
  const object = parsed.object as KubeObject | undefined
  switch (parsed.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED":
      if (typeof object !== "object" || object === null) return garbled(`a ${parsed.type} event without an object`)
      return Either.right({ type: parsed.type, object: object as A })
    case "BOOKMARK": {
      const resourceVersion = object?.metadata?.resourceVersion
      return Either.right(resourceVersion !== undefined ? { type: "BOOKMARK", resourceVersion } : undefined)
    }
    case "ERROR":
      return Either.right({
        type: "ERROR",
        error: isStatus(parsed.object)
          ? fromStatus(ctx, parsed.object)
          : fromResponse(ctx, 500, JSON.stringify(parsed.object ?? null))
      })
    default:
      return garbled(`an event of unknown type ${JSON.stringify(parsed.type)}`)
  }
}

/**
 * The longest watch line read. An event is one object, and the API server stores
 * none over 1.5 MiB (etcd's request limit) nor accepts a body over 3 MiB; a line past
 * this bound is a server gone wrong, and reading on would grow the heap until the
 * process dies.
 */
export const MAX_WATCH_LINE_CHARS = 8 * 1024 * 1024

/** What a piece of a watch body held: its complete events, then the line that failed, if one did. */
export interface WatchLines<A> {
  readonly events: ReadonlyArray<RawWatchEvent<A>>
  readonly error?: KubeError
}

/**
 * Splits text that arrives in pieces into lines and reads each non-blank one.
 * `push` answers the events complete so far, up to the first line it could not read
 * (after which it reads nothing more); `end` reads what is left without a newline.
 */
export const watchLineReader = <A>(ctx: RequestContext, server: string) => {
  let partial = ""
  let failed = false
  const overlong = {
    events: [],
    error: new Transport({
      reason: `the watch from ${server} (${describeRequest(ctx)}) sent a line of over ${
        MAX_WATCH_LINE_CHARS / (1024 * 1024)
      } MiB without a newline, far above any object the API server stores`
    })
  } as const
  const readLines = (text: string): WatchLines<A> => {
    const events: Array<RawWatchEvent<A>> = []
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue
      const read = readWatchLine<A>(ctx, server, line)
      if (Either.isLeft(read)) {
        failed = true
        return { events, error: read.left }
      }
      if (read.right !== undefined) events.push(read.right)
    }
    return { events }
  }
  const nothing: WatchLines<A> = { events: [] }
  return {
    push: (text: string): WatchLines<A> => {
      if (failed) return nothing
      const lastNewline = text.lastIndexOf("\n")
      if (lastNewline < 0) {
        partial += text
        if (partial.length <= MAX_WATCH_LINE_CHARS) return nothing
        partial = ""
        failed = true
        return overlong
      }
      const complete = partial + text.slice(0, lastNewline)
      partial = text.slice(lastNewline + 1)
      const read = readLines(complete)
      if (read.error !== undefined || partial.length <= MAX_WATCH_LINE_CHARS) return read
      partial = ""
      failed = true
      return { events: read.events, error: overlong.error }
    },
    end: (): WatchLines<A> => {
      const rest = partial
      partial = ""
      return failed || rest.trim() === "" ? nothing : readLines(rest)
    }
  }
}

/**
 * The most events held for a consumer that has not taken them yet. Past it the socket
 * is paused (TCP then pushes back on the server) until the consumer catches up: no
 * event is dropped, and a server that writes faster than we read cannot grow the heap.
 */
export const WATCH_BUFFER_EVENTS = 4_096

/**
 * The events of an open watch, ending when the server ends the body. Events rather
 * than `for await`: a Readable's async iterator queues `return()` behind a pending
 * `next()`, so an idle watch could never be closed from our side.
 */
export const watchEvents = <A>(
  response: http.IncomingMessage,
  ctx: RequestContext,
  server: string,
  onError: (error: unknown) => KubeError
): Stream.Stream<RawWatchEvent<A>, KubeError> =>
  Effect.gen(function*() {
    const mailbox = yield* Effect.acquireRelease(
      Mailbox.make<RawWatchEvent<A>, KubeError>(),
      (mailbox) => mailbox.shutdown
    )
    let paused = false
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        let ended = false
        const lines = watchLineReader<A>(ctx, server)
        // Multi-byte characters split across chunks are kept whole.
        const decoder = new StringDecoder("utf8")
        const fail = (error: KubeError) => {
          ended = true
          mailbox.unsafeDone(Exit.fail(error))
        }
        // What came before a line that cannot be read is delivered; the line fails the connection.
        const deliver = (read: WatchLines<A>): boolean => {
          if (read.events.length > 0) mailbox.unsafeOfferAll(read.events)
          if (read.error === undefined) return true
          fail(read.error)
          return false
        }
        response.on("data", (chunk: Buffer) => {
          if (ended || !deliver(lines.push(decoder.write(chunk)))) return
          if (Option.getOrElse(mailbox.unsafeSize(), () => 0) > WATCH_BUFFER_EVENTS) {
            paused = true
            response.pause()
          }
        })
        response.on("end", () => {
          if (ended) return
          ended = true
          if (deliver(lines.push(decoder.end())) && deliver(lines.end())) mailbox.unsafeDone(Exit.void)
        })
        // A connection cut mid-body surfaces as an "aborted" ECONNRESET error.
        response.on("error", (error) => {
          if (!ended) fail(onError(error))
        })
        response.on("close", () => {
          if (!ended) fail(onError(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
        })
      }),
      () => Effect.sync(() => response.destroy())
    )
    // Each pull takes everything buffered: what was held is then taken, and reading resumes.
    return Mailbox.toStream(mailbox).pipe(Stream.mapChunks((chunk) => {
      if (paused) {
        paused = false
        response.resume()
      }
      return chunk
    }))
  }).pipe(Stream.unwrapScoped)
