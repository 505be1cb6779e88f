/**
 * What one attempt of a call ended with, as the live client returns it: the parsed
 * body of a 2xx answer of the shape its verb promises, else a `KubeError` that names
 * the call and the server.
 */
import { Either } from "effect"
import { type KubeError, Unexpected } from "../../services/KubeError.js"
import { describeRequest, fromResponse, type RequestContext } from "./KubeErrorParsing.js"
import { OversizedAnswer, type RestAnswer, UnreadableEncoding } from "./RestTransport.js"
import { fromTransportError } from "./TransportErrors.js"

const isObject = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value)

/** What a body that was not read says: the call, the status, and why. */
const unread = (server: string, ctx: RequestContext, code: number, why: string) =>
  new Unexpected({
    reason: `the API server at ${server} answered ${describeRequest(ctx)} (${code}) with ${why}`,
    code
  })

/** What an answer from `server` means: the parsed body of a 2xx, else a `KubeError`. */
export const outcome = (server: string, ctx: RequestContext, answer: RestAnswer): Either.Either<unknown, KubeError> => {
  if (answer.code < 200 || answer.code > 299) {
    return Either.left(fromResponse(ctx, answer.code, answer.text, answer.retryAfter))
  }
  let body: unknown
  try {
    body = JSON.parse(answer.text)
  } catch {
    return Either.left(
      new Unexpected({
        reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body that is not JSON`
      })
    )
  }
  // Every answer of the API is an object (an object, a list, a Status); anything
  // else would reach the caller as if it were one, or break it on first use.
  const shapeProblem = !isObject(body)
    ? "JSON that is not an object"
    : ctx.verb === "list" && !Array.isArray((body as { readonly items?: unknown }).items)
    ? "a list without an items array"
    // A named object's read (not `/version`, which is no object) carries its metadata.
    : ctx.verb === "get" && ctx.name !== undefined && !isObject((body as { readonly metadata?: unknown }).metadata)
    ? "an object without metadata"
    : undefined
  return shapeProblem === undefined
    ? Either.right(body)
    : Either.left(
      new Unexpected({
        reason: `the API server at ${server} answered ${describeRequest(ctx)} with ${shapeProblem}`,
        code: answer.code
      })
    )
}

/** What the transport's failure to bring an answer from `server` means. */
export const failureOf = (server: string, ctx: RequestContext, error: unknown): KubeError =>
  error instanceof OversizedAnswer
    ? unread(server, ctx, error.code, `a body over ${error.limit / 1024} KiB, which was not read`)
    : error instanceof UnreadableEncoding
    ? unread(server, ctx, error.code, `a body in content-encoding "${error.encoding}", which it cannot read`)
    : fromTransportError(ctx, server, error)
