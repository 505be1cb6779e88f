/**
 * The live client's account of its requests: one span per call (retries included,
 * with the final status and how many times it was sent again) when spans go
 * somewhere, one count per attempt in `session_routing_api_requests_total`, so a
 * retried call shows as the requests the server really got, and one debug line per
 * call when debug logging is on.
 */
import { Cause, Clock, Effect, Exit, Option } from "effect"
import type { KubeError } from "../../services/KubeError.js"
import {
  apiRequests,
  codeLabel,
  SpanAttribute,
  SpanName,
  unsafeUpdateSeries,
  whenTraced
} from "../../services/Telemetry.js"
import { logsDebug } from "./DebugLog.js"
import type { RequestContext } from "./KubeErrorParsing.js"

/** The HTTP method of each verb: server-side apply is a PATCH, list and watch are GETs. */
const METHODS: Readonly<Record<string, string>> = {
  apply: "PATCH",
  create: "POST",
  update: "PUT",
  patch: "PATCH",
  get: "GET",
  delete: "DELETE",
  list: "GET",
  watch: "GET"
}

/** The status of an attempt that failed: the server's answer, or none (no answer, cut short). */
export const failedCode = (cause: Cause.Cause<KubeError>): number | undefined =>
  Option.match(Cause.failureOption(cause), { onNone: () => undefined, onSome: (error) => error.code })

/** Counts one attempt of `ctx` that ended with `code` (undefined or 0: no answer). */
export const countAttempt = (ctx: RequestContext, code: number | undefined): void =>
  unsafeUpdateSeries(apiRequests, [["verb", ctx.verb], ["resource", ctx.resource], ["code", codeLabel(code)]], 1)

/** Wraps one attempt so it is counted; `answered` gives the status of an attempt that succeeded. */
export type ObserveAttempt = <A>(
  attempt: Effect.Effect<A, KubeError>,
  answered: () => number
) => Effect.Effect<A, KubeError>

/** The request as its debug line shows it: the method and the path below the server, query included. */
export interface RequestLine {
  readonly method: string
  readonly path: string
}

/** How a call ended, for its debug line: the last status, or why there was none. */
const endedWith = (exit: Exit.Exit<unknown, KubeError>, lastCode: number | undefined): string =>
  Exit.isSuccess(exit)
    ? String(lastCode ?? "answered")
    : Option.match(Cause.failureOption(exit.cause), {
      onNone: () => "interrupted",
      onSome: (error) =>
        error.code !== undefined
          ? `${error.code} ${error._tag}`
          : error._tag === "Transport"
          ? `no answer (${error.kind ?? "other"})`
          : error._tag
    })

/**
 * One debug line for a call that ended: `GET /api/v1/...?labelSelector=...: 200 in 12 ms`,
 * its retries, and the same as annotations. The path is what the request named below the
 * server: no credential is ever part of it (they travel in headers, never logged).
 */
const logCall = (
  ctx: RequestContext,
  line: RequestLine,
  exit: Exit.Exit<unknown, KubeError>,
  attempts: number,
  lastCode: number | undefined,
  durationMs: number
): Effect.Effect<void> => {
  const status = endedWith(exit, lastCode)
  const retries = Math.max(0, attempts - 1)
  return Effect.logDebug(
    `${line.method} ${line.path}: ${status} in ${durationMs} ms${
      retries > 0 ? `, ${retries} ${retries === 1 ? "retry" : "retries"}` : ""
    }`
  ).pipe(Effect.annotateLogs({
    method: line.method,
    path: line.path,
    status,
    durationMs,
    retries,
    verb: ctx.verb,
    resource: ctx.resource
  }))
}

/**
 * Runs `call` (a whole call, its retries included) in a `kube.<verb>` span when spans
 * go somewhere (`whenTraced`), and with `line` logs it at debug level when the fiber
 * logs debug lines (checked before anything of the line is built). `call` wraps each
 * of its attempts with the `ObserveAttempt` it is given.
 */
export const observeRequest = <A>(
  ctx: RequestContext,
  extra: { readonly dryRun?: boolean; readonly line?: RequestLine },
  call: (observe: ObserveAttempt) => Effect.Effect<A, KubeError>
): Effect.Effect<A, KubeError> =>
  Effect.withFiberRuntime((fiber) => {
    let attempts = 0
    let lastCode: number | undefined
    const observe: ObserveAttempt = (attempt, answered) =>
      Effect.onExit(attempt, (exit) =>
        Effect.sync(() => {
          attempts += 1
          lastCode = Exit.isSuccess(exit) ? answered() : failedCode(exit.cause)
          countAttempt(ctx, lastCode)
        }))
    const { line } = extra
    const logged = line === undefined || !logsDebug(fiber) ?
      call :
      (o: ObserveAttempt) =>
        Effect.flatMap(Clock.currentTimeMillis, (start) =>
          Effect.onExit(call(o), (exit) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (end) => logCall(ctx, line, exit, attempts, lastCode, end - start)
            )))
    return whenTraced(
      () =>
        logged(observe).pipe(
          Effect.onExit(() =>
            Effect.annotateCurrentSpan({
              [SpanAttribute.retryCount]: Math.max(0, attempts - 1),
              ...(lastCode !== undefined && lastCode !== 0 ? { [SpanAttribute.statusCode]: lastCode } : {})
            })
          ),
          Effect.withSpan(SpanName.kubeRequest(ctx.verb), {
            kind: "client",
            // A watch connection outlives the call that opened it: a trace of its own.
            root: ctx.verb === "watch",
            // The call site is always this module: a stack trace per request says nothing,
            // and capturing one is a cost on every request.
            captureStackTrace: false,
            attributes: {
              [SpanAttribute.method]: METHODS[ctx.verb] ?? ctx.verb.toUpperCase(),
              [SpanAttribute.verb]: ctx.verb,
              [SpanAttribute.resource]: ctx.resource,
              ...(ctx.namespace !== undefined && ctx.namespace !== ""
                ? { [SpanAttribute.namespace]: ctx.namespace }
                : {}),
              ...(ctx.name !== undefined ? { [SpanAttribute.name]: ctx.name } : {}),
              ...(extra.dryRun === true ? { [SpanAttribute.dryRun]: true } : {})
            }
          })
        ),
      () => logged(observe)
    )
  })
