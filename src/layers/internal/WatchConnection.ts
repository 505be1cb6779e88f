/**
 * Watch connections over node:http: opened with the client's credentials on a pooled
 * connection, and their body read as the API server writes it, one JSON event per
 * line. The bytes are split and decoded in the socket's own data handler, and each
 * chunk's events enter the stream at once, so an event costs one `JSON.parse` and a
 * share of one stream element, not a trip through a text decoder, a line splitter,
 * two filters and an effect of its own.
 */
import type * as k8s from "@kubernetes/client-node"
import { Chunk, Effect, Either, Stream } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { StringDecoder } from "node:string_decoder"
import type { KubeObject, Status } from "../../domain/Objects.js"
import type { RawWatchEvent } from "../../services/KubeClient.js"
import { type KubeError, Transport } from "../../services/KubeError.js"
import type { ConnectionPools } from "./ConnectionPool.js"
import { describeRequest, fromResponse, fromStatus, type RequestContext } from "./KubeErrorParsing.js"

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
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  const retryAfter = response.headers["retry-after"]
  return {
    ok: false,
    code: response.statusCode ?? 500,
    text: Buffer.concat(chunks).toString("utf8"),
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter
  }
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
        return nothing
      }
      const complete = partial + text.slice(0, lastNewline)
      partial = text.slice(lastNewline + 1)
      return readLines(complete)
    },
    end: (): WatchLines<A> => {
      const rest = partial
      partial = ""
      return failed || rest.trim() === "" ? nothing : readLines(rest)
    }
  }
}

/**
 * The events of an open watch, ending when the server ends the body. Events rather
 * than `for await`: a Readable's async iterator queues `return()` behind a pending
 * `next()`, so an idle watch could never be closed from our side. The buffer is
 * unbounded because dropping a chunk would lose an event; a watch's volume is what
 * the server writes, a few objects per change.
 */
export const watchEvents = <A>(
  response: http.IncomingMessage,
  ctx: RequestContext,
  server: string,
  onError: (error: unknown) => KubeError
): Stream.Stream<RawWatchEvent<A>, KubeError> =>
  Stream.asyncPush<RawWatchEvent<A>, KubeError>(
    (emit) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let ended = false
          const lines = watchLineReader<A>(ctx, server)
          // Multi-byte characters split across chunks are kept whole.
          const decoder = new StringDecoder("utf8")
          // What came before a line that cannot be read is delivered; the line fails the connection.
          const deliver = (read: WatchLines<A>): boolean => {
            if (read.events.length > 0) emit.chunk(Chunk.unsafeFromArray(read.events as Array<RawWatchEvent<A>>))
            if (read.error === undefined) return true
            ended = true
            emit.fail(read.error)
            return false
          }
          response.on("data", (chunk: Buffer) => {
            if (!ended) deliver(lines.push(decoder.write(chunk)))
          })
          response.on("end", () => {
            if (ended) return
            ended = true
            if (deliver(lines.push(decoder.end())) && deliver(lines.end())) emit.end()
          })
          // A connection cut mid-body surfaces as an "aborted" ECONNRESET error.
          response.on("error", (error) => emit.fail(onError(error)))
          response.on("close", () => {
            if (!ended) emit.fail(onError(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
          })
        }),
        () => Effect.sync(() => response.destroy())
      ),
    { bufferSize: "unbounded" }
  )
