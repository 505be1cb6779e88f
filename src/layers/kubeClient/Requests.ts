/**
 * One call of the live client: its turn in the admission queue, each attempt sent
 * with its deadline armed, retries while transient within the call's budget, every
 * attempt counted and the whole call in one span.
 */
import { Clock, Context, Duration, Effect, Either, Exit, type Fiber, FiberRef, type FiberStatus } from "effect"
import type { Runtime, Schedule } from "effect"
import { currentTransientRetry } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { keepsNoSpans } from "../../services/Telemetry.js"
import { type Admission, makeAdmission } from "../Admission.js"
import { type Deadlines, makeDeadlines, runtimeOfFiber } from "../Deadlines.js"
import { attemptTimedOut, type CallLimits, type LimitOptions, retriedAfter, withinLimits } from "../KubeRetry.js"
import { failureOf, outcome } from "./AttemptOutcome.js"
import { MAX_CALL_SOCKETS } from "./ConnectionPool.js"
import { logsDebug } from "./DebugLog.js"
import { describeRequest, type RequestContext } from "./KubeErrorParsing.js"
import { countAttempt, failedCode, observeRequest } from "./RequestTelemetry.js"
import type { RestCall, RestTransport } from "./RestTransport.js"

/** What one client's calls go through: its transport, limits, retries, admission queue and deadline timer. */
export interface Caller {
  readonly transport: RestTransport
  /** What every message names: the address without its userinfo. */
  readonly server: string
  readonly limits: CallLimits
  readonly schedule: Schedule.Schedule<unknown, KubeError>
  /**
   * Calls admitted at once. A call waits here for its turn, and its time limits start
   * once it is admitted: waiting in our own queue behind a burst is not the API server
   * failing to answer, and a limit that counted it failed most of 10,000 publishes.
   * Watches open on a pool of their own without waiting here, so a burst of publishes
   * never delays the status watch that reports on them.
   */
  readonly admission: Admission
  /** The limit of every attempt this client sends, one timer for them all. */
  readonly deadlines: Deadlines
}

/** How a call goes: `dryRun` for its span, `unadmitted` to skip the admission queue. */
export interface RequestExtra {
  readonly dryRun?: boolean
  readonly unadmitted?: boolean
}

/** One request under the client's limits and telemetry, its JSON answer parsed. */
export type Request = (ctx: RequestContext, call: RestCall, extra?: RequestExtra) => Effect.Effect<unknown, KubeError>

/** `self` (the whole of one call of `ctx`) under the client's limits, retried unless the fiber turned retries off. */
export type Limited = <A>(ctx: RequestContext, self: Effect.Effect<A, KubeError>) => Effect.Effect<A, KubeError>

/** A client's `Caller`, with a fresh admission queue and deadline timer. */
export const makeCaller = (
  transport: RestTransport,
  server: string,
  limits: CallLimits,
  schedule: Schedule.Schedule<unknown, KubeError>
): Caller => ({
  transport,
  server,
  limits,
  schedule,
  admission: makeAdmission(MAX_CALL_SOCKETS),
  deadlines: makeDeadlines(Duration.toMillis(limits.attempt))
})

/** `request` and `limited` of one `Caller`. */
export const makeRequests = (caller: Caller): { readonly request: Request; readonly limited: Limited } => ({
  request: (ctx, call, extra) => request(caller, ctx, call, extra),
  limited: (ctx, self) => limited(caller, ctx, self)
})

/** The limits of one call of `ctx`: this client's, retried when `retry`. */
const limitOptions = (caller: Caller, ctx: RequestContext, retry: boolean, attemptBounded: boolean): LimitOptions => ({
  target: { what: describeRequest(ctx), server: caller.server },
  limits: caller.limits,
  retry,
  schedule: caller.schedule,
  attemptBounded
})

/**
 * One call under its time limits, retried unless the fiber turned the client's
 * retries off; `attemptBounded` when each attempt ends itself at `limits.attempt`.
 */
const limited = <A>(caller: Caller, ctx: RequestContext, self: Effect.Effect<A, KubeError>, attemptBounded = false) =>
  Effect.flatMap(
    FiberRef.get(currentTransientRetry),
    (retry) => withinLimits(self, limitOptions(caller, ctx, retry, attemptBounded))
  )

/**
 * Sends one attempt with its deadline armed on `clock`: `done` hears, once, the
 * answer's status and what it means, or (no status) the transport's failure or the
 * deadline's. The result cancels the request and closes its connection, and after
 * `done` does nothing. `runtime` starts the deadlines' sweeper when none runs.
 */
const sendAttempt = (
  caller: Caller,
  ctx: RequestContext,
  call: RestCall,
  clock: Clock.Clock,
  runtime: () => Runtime.Runtime<never>,
  done: (code: number | undefined, result: Either.Either<unknown, KubeError>) => void
): () => void => {
  const { limits, server } = caller
  let over = false
  let cancel = (): void => {}
  const finish = (code: number | undefined, result: Either.Either<unknown, KubeError>) => {
    if (over) return
    over = true
    deadline.disarm()
    done(code, result)
  }
  const deadline = caller.deadlines.unsafeArm(clock, runtime, () => {
    cancel()
    // Made only when it happens: an error captures a stack trace.
    finish(undefined, Either.left(attemptTimedOut({ what: describeRequest(ctx), server }, limits)))
  })
  cancel = caller.transport(
    call,
    (answer) => finish(answer.code, outcome(server, ctx, answer)),
    (error) => finish(undefined, Either.left(failureOf(server, ctx, error)))
  )
  return () => {
    if (over) return
    over = true
    deadline.disarm()
    cancel()
  }
}

/**
 * One attempt: the request sent, its deadline armed, and the fiber suspended once
 * until the answer, the deadline, or an interruption (which cancels the request
 * and closes its connection). `answered` is the status of an answer that succeeded.
 */
const attempt = (caller: Caller, ctx: RequestContext, call: RestCall, answered: (code: number) => void) =>
  Effect.withFiberRuntime<unknown, KubeError>((fiber, status) =>
    Effect.async((resume) => {
      const cancel = sendAttempt(
        caller,
        ctx,
        call,
        Context.get(fiber.currentDefaultServices, Clock.Clock),
        runtimeOfFiber(fiber, status),
        (code, result) => {
          if (code !== undefined && Either.isRight(result)) answered(code)
          resume(result)
        }
      )
      return Effect.sync(cancel)
    })
  )

/** One attempt counted as it ends, for retries after `direct`'s first. */
const countedAttempt = (caller: Caller, ctx: RequestContext, call: RestCall) =>
  Effect.suspend(() => {
    let code = 0
    return Effect.onExit(
      attempt(caller, ctx, call, (answered) => code = answered),
      (exit) => Effect.sync(() => countAttempt(ctx, Exit.isSuccess(exit) ? code : failedCode(exit.cause)))
    )
  })

/**
 * One request when its span would go nowhere: admission, the attempt's deadline, the
 * request and its count, by callbacks in a single suspension of the fiber. The
 * composed path (`admission.admit`, `observeRequest`, `limited`, `attempt`) takes
 * about five times the fiber steps, which at thousands of sessions published at
 * once was the largest part of the runner's CPU. Only a first attempt that fails,
 * with retries on, goes on through `retriedAfter`, holding its permit until the call
 * ends, as an admitted call does.
 */
const direct = (
  caller: Caller,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  status: FiberStatus.Running,
  ctx: RequestContext,
  call: RestCall,
  admitted: boolean
): Effect.Effect<unknown, KubeError> => {
  const { admission } = caller
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const retry = fiber.getFiberRef(currentTransientRetry)
  const runtime = runtimeOfFiber(fiber, status)
  /** Whether this call holds one of the admission's permits. */
  let holding = false
  // The call's time limits start once it is admitted, as in `limited`.
  let start = 0
  let failedAt = 0
  const release = () => {
    if (!holding) return
    holding = false
    admission.unsafeRelease()
  }
  const first = Effect.async<unknown, KubeError>((resume) => {
    let over = false
    /** Set once the attempt is sent; until then the call waits for admission. */
    let cancel: (() => void) | undefined
    const send = () => {
      holding = admitted
      start = clock.unsafeCurrentTimeMillis()
      // The attempt's end: counted once, the permit kept only for a retry to come.
      cancel = sendAttempt(caller, ctx, call, clock, runtime, (code, result) => {
        over = true
        const failure = Either.isLeft(result)
        countAttempt(ctx, code ?? (failure ? result.left.code : undefined))
        if (failure) failedAt = clock.unsafeCurrentTimeMillis()
        if (!(failure && retry)) release()
        resume(result)
      })
    }
    const leave = admitted ? admission.unsafeEnter(send) : (send(), () => {})
    return Effect.sync(() => {
      if (!over) {
        over = true
        // Interrupted: out of the queue, or the request aborted and its connection closed.
        leave()
        if (cancel !== undefined) {
          cancel()
          countAttempt(ctx, undefined)
        }
      }
      // Also when the attempt had ended, kept its permit for a retry, and the
      // interruption came before the retry began.
      release()
    })
  })
  if (!retry) return first
  // The permit a failed first attempt kept goes back however the retries end, even
  // when the fiber is interrupted between the failure and the first retry.
  return Effect.uninterruptibleMask((restore) =>
    Effect.catchAll(restore(first), (error) =>
      Effect.ensuring(
        restore(
          retriedAfter(
            error,
            { start, failedAt },
            countedAttempt(caller, ctx, call),
            limitOptions(caller, ctx, true, true)
          )
        ),
        Effect.sync(release)
      ))
  )
}

/**
 * One request, its answer read once and (when 2xx) parsed once; each attempt within
 * its time limit, retried while transient, counted, and the whole call in one span
 * and, when the fiber logs at debug level, one debug line.
 * Calls wait for admission (`unadmitted` ones do not); interrupting the fiber aborts
 * the request and closes its connection.
 */
const request = (
  caller: Caller,
  ctx: RequestContext,
  call: RestCall,
  extra: RequestExtra = {}
): Effect.Effect<unknown, KubeError> =>
  Effect.withFiberRuntime((fiber, status) =>
    // A debug line needs the attempts counted as the composed path counts them.
    keepsNoSpans(fiber.currentTracer) && !logsDebug(fiber)
      ? direct(caller, fiber, status, ctx, call, extra.unadmitted !== true)
      : observeRequest(ctx, { ...extra, line: { method: call.method, path: call.path } }, (observe) =>
        Effect.suspend(() => {
          let code = 0
          const self = limited(
            caller,
            ctx,
            observe(attempt(caller, ctx, call, (answered) => code = answered), () =>
              code),
            true
          )
          return extra.unadmitted === true ? self : caller.admission.admit(self)
        }))
  )
