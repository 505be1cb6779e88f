/**
 * Fault injection for LocalCluster: per resource and verb, answer an error the way
 * the real server words it, add latency, hang, drop the connection, or cut and
 * expire watches. Faults change at runtime, may start after N requests or at an
 * instant, and may apply to the next N requests only. The server process itself
 * (paused, stopped, restarted) is `Faults.server`.
 */
import { Clock, DateTime, Deferred, Duration, Effect, Ref, Stream } from "effect"
import { type KubeObject, qualifiedName, type ResourceType, type Status } from "session-routing/kubernetes"
import { forbiddenFor } from "./ApiSecurity.js"
import { makeServerLifecycle, type ServerLifecycle } from "./ServerLifecycle.js"
import type { StoreWatchEvent } from "./Store.js"

/** The verbs RBAC knows; apply is a `patch`. */
export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"

/** What a fault does to a request it matches. */
export type FaultAction =
  /** Answer `code` at once: 429 as plain text with Retry-After, anything else as a Status. */
  | { readonly _tag: "Respond"; readonly code: number; readonly retryAfterSeconds?: number; readonly message?: string }
  /** Answer 403 with the authorizer's wording for `user`. */
  | { readonly _tag: "Forbid"; readonly user: string }
  /** Wait before handling; combines with whatever other fault matches. */
  | { readonly _tag: "Latency"; readonly duration: Duration.Duration }
  /** Never answer: the caller's timeout (or the server's shutdown) ends it. */
  | { readonly _tag: "Hang" }
  /** Drop the connection without an answer. */
  | { readonly _tag: "Reset" }
  /** A watch that ends cleanly after this many events. */
  | { readonly _tag: "CutWatch"; readonly afterEvents: number }
  /** A watch that sends 410 Expired as an ERROR event after this many events, then ends. */
  | { readonly _tag: "ExpireWatch"; readonly afterEvents: number }

/** Which requests a fault applies to; unset fields match anything. */
export interface FaultTarget {
  /** A resource type, or its plural (`ingresses`) or qualified name (`ingresses.networking.k8s.io`). */
  readonly resource?: ResourceType<unknown> | string
  readonly verbs?: ReadonlyArray<Verb>
  readonly namespace?: string
  readonly name?: string
  /** `status` for the status subresource; unset matches both. */
  readonly subresource?: string
}

/**
 * An instant on Effect's `Clock` (so TestClock moves it): epoch milliseconds as
 * `Clock.currentTimeMillis` reads them, or a `DateTime`.
 */
export type FaultInstant = number | DateTime.DateTime

/**
 * A fault: what it matches, what it does, when it starts and for how many requests.
 * A fault starts once it is both in its time window and past its `after` count.
 */
export interface FaultSpec extends FaultTarget {
  readonly action: FaultAction
  /** Applies to `times` matching requests from when it starts, then goes away. Unset: until removed. */
  readonly times?: number
  /**
   * The first `after` matching requests (counted from `from`, if set) pass untouched;
   * the fault applies from the next one. For a fault that starts after things worked.
   */
  readonly after?: number
  /** Requests before this instant pass untouched and do not count towards `after`. */
  readonly from?: FaultInstant
  /** From this instant on the fault is gone, whatever is left of `times`. */
  readonly until?: FaultInstant
}

/** Builders for the actions. */
export const Fault = {
  respond: (
    code: number,
    options: { readonly retryAfterSeconds?: number; readonly message?: string } = {}
  ): FaultAction => ({
    _tag: "Respond",
    code,
    ...options
  }),
  /** 429 as priority-and-fairness answers it. */
  throttle: (retryAfterSeconds = 1): FaultAction => ({ _tag: "Respond", code: 429, retryAfterSeconds }),
  forbid: (user = "system:serviceaccount:default:session-routing"): FaultAction => ({ _tag: "Forbid", user }),
  latency: (duration: Duration.DurationInput): FaultAction => ({
    _tag: "Latency",
    duration: Duration.decode(duration)
  }),
  hang: { _tag: "Hang" } as FaultAction,
  reset: { _tag: "Reset" } as FaultAction,
  cutWatch: (afterEvents: number): FaultAction => ({ _tag: "CutWatch", afterEvents }),
  expireWatch: (afterEvents = 0): FaultAction => ({ _tag: "ExpireWatch", afterEvents })
} as const

/** One request as faults see it. */
export interface FaultRequest {
  readonly verb: Verb
  readonly resource: ResourceType<unknown>
  readonly namespace?: string
  readonly name?: string
  readonly subresource?: string
}

/** An answer a fault makes the server give. */
export interface FaultResponse {
  readonly code: number
  readonly headers: Readonly<Record<string, string>>
  /** A Status for JSON answers; undefined when the body is plain text. */
  readonly status?: Status
  readonly body: string
  readonly contentType: string
}

/** What to do with a request once faults have had their say. */
export type Decision =
  | {
    readonly _tag: "Proceed"
    /** Watches only: end after this many events, or expire after this many. */
    readonly watch?: { readonly cutAfter?: number; readonly expireAfter?: number }
    /** Watches only: completes when `closeWatches` ends the watches open now. */
    readonly closed?: Effect.Effect<void>
    /** Watches only: waits out a pause before each event, so a paused server sends nothing. */
    readonly answering?: Effect.Effect<unknown>
  }
  | { readonly _tag: "Respond"; readonly response: FaultResponse }
  | { readonly _tag: "Hang" }
  | { readonly _tag: "Reset" }
  /** The server is stopped: the connection is refused before any request is read. */
  | { readonly _tag: "Refused" }

/** A fault in force, with the id `remove` takes and what is left of its counts (`times`, `after`). */
export interface ActiveFault extends FaultSpec {
  readonly id: number
}

/** The faults of one cluster; both the HTTP API and the in-memory client consult them. */
export interface Faults {
  /** Adds a fault; earlier faults take precedence over later ones. */
  readonly add: (spec: FaultSpec) => Effect.Effect<number>
  readonly remove: (id: number) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
  /** The faults still to come or in force now; one whose `until` has passed is gone. */
  readonly active: Effect.Effect<ReadonlyArray<ActiveFault>>
  /**
   * Waits out a paused server, then consumes one use of every fault that matches and
   * waits out any latency. Latency adds up; the first answering fault (status, forbid,
   * hang, reset) decides. A stopped server refuses before any fault is consulted.
   */
  readonly intercept: (request: FaultRequest) => Effect.Effect<Decision>
  /** Ends every open watch cleanly, as a graceful API server shutdown does; clients must reconnect. */
  readonly closeWatches: Effect.Effect<void>
  /**
   * The API server process: `pause` / `resume` (SIGSTOP / SIGCONT), `stop` / `restart`
   * (it dies and comes back on the same port and store), and its state to wait on.
   */
  readonly server: ServerLifecycle
}

const matches = (fault: FaultSpec, request: FaultRequest): boolean => {
  if (fault.resource !== undefined) {
    const r = fault.resource
    const ok = typeof r === "string"
      ? r === request.resource.plural || r === qualifiedName(request.resource)
      : r.plural === request.resource.plural && r.group === request.resource.group
    if (!ok) return false
  }
  if (fault.verbs !== undefined && !fault.verbs.includes(request.verb)) return false
  if (fault.namespace !== undefined && fault.namespace !== request.namespace) return false
  if (fault.name !== undefined && fault.name !== request.name) return false
  if (fault.subresource !== undefined && fault.subresource !== (request.subresource ?? "")) return false
  return true
}

const isWatchModifier = (action: FaultAction) => action._tag === "CutWatch" || action._tag === "ExpireWatch"

const millisOf = (instant: FaultInstant): number =>
  typeof instant === "number" ? instant : DateTime.toEpochMillis(instant)

const started = (fault: FaultSpec, now: number) => fault.from === undefined || now >= millisOf(fault.from)
const ended = (fault: FaultSpec, now: number) => fault.until !== undefined && now >= millisOf(fault.until)

interface FaultState {
  readonly next: number
  readonly faults: ReadonlyArray<ActiveFault>
}

/** An empty fault registry. */
export const makeFaults: Effect.Effect<Faults> = Effect.gen(function*() {
  const state = yield* Ref.make<FaultState>({ next: 1, faults: [] })

  const watchesClosed = yield* Ref.make(yield* Deferred.make<void>())
  const closeWatches = Effect.flatMap(
    Deferred.make<void>(),
    (next) => Effect.flatMap(Ref.getAndSet(watchesClosed, next), (current) => Deferred.succeed(current, undefined))
  )
  // A dying server takes its open watches with it.
  const server = yield* makeServerLifecycle(closeWatches)

  /**
   * Whether any fault is registered, kept beside the ref in the same step: with none
   * (a cluster no test is breaking) a request proceeds without a fiber step here.
   */
  let none = true
  const withFaults = (s: FaultState): FaultState => {
    none = s.faults.length === 0
    return s
  }

  const add = (spec: FaultSpec) =>
    Ref.modify(
      state,
      (s) => [s.next, withFaults({ next: s.next + 1, faults: [...s.faults, { ...spec, id: s.next }] })] as const
    )

  const remove = (id: number) =>
    Ref.update(state, (s) => withFaults({ ...s, faults: s.faults.filter((f) => f.id !== id) }))

  const proceed = Effect.succeed<Decision>({ _tag: "Proceed" })

  const intercept = (request: FaultRequest): Effect.Effect<Decision> =>
    Effect.suspend(() =>
      none && request.verb !== "watch" && server.unsafeState() === "running" ? proceed : interceptAny(request)
    )

  const interceptAny = (request: FaultRequest): Effect.Effect<Decision> =>
    Effect.gen(function*() {
      // A dead server refuses the connection; one killed while a pause held the request resets it.
      if ((yield* server.state) === "stopped") return { _tag: "Refused" } as const
      if ((yield* server.awaitAnswering) === "stopped") return { _tag: "Reset" } as const
      const now = yield* Clock.currentTimeMillis
      const taken = yield* Ref.modify(state, (s) => {
        const used: Array<ActiveFault> = []
        // Faults not started yet that this request counts towards.
        const counted: Array<ActiveFault> = []
        let terminal = false
        let watchModifier = false
        for (const fault of s.faults) {
          if (!matches(fault, request) || !started(fault, now) || ended(fault, now)) continue
          if (isWatchModifier(fault.action) && request.verb !== "watch") continue
          if ((fault.after ?? 0) > 0) {
            counted.push(fault)
            continue
          }
          if (isWatchModifier(fault.action)) {
            if (watchModifier) continue
            watchModifier = true
          } else if (fault.action._tag !== "Latency") {
            if (terminal) continue
            terminal = true
          }
          used.push(fault)
        }
        const faults = s.faults
          .map((f) =>
            counted.includes(f)
              ? { ...f, after: f.after! - 1 }
              : used.includes(f) && f.times !== undefined
              ? { ...f, times: f.times - 1 }
              : f
          )
          .filter((f) => (f.times === undefined || f.times > 0) && !ended(f, now))
        return [used, withFaults({ ...s, faults })] as const
      })
      let delay = Duration.zero
      let decision: Decision = { _tag: "Proceed" }
      let watch: { cutAfter?: number; expireAfter?: number } | undefined
      for (const fault of taken) {
        const action = fault.action
        switch (action._tag) {
          case "Latency":
            delay = Duration.sum(delay, action.duration)
            break
          case "CutWatch":
            watch = { cutAfter: action.afterEvents }
            break
          case "ExpireWatch":
            watch = { expireAfter: action.afterEvents }
            break
          case "Hang":
            decision = { _tag: "Hang" }
            break
          case "Reset":
            decision = { _tag: "Reset" }
            break
          case "Respond":
            decision = { _tag: "Respond", response: responseFor(request, action) }
            break
          case "Forbid":
            decision = { _tag: "Respond", response: jsonResponse(forbiddenStatus(request, action.user)) }
            break
        }
      }
      if (Duration.greaterThan(delay, Duration.zero)) {
        yield* Effect.sleep(delay)
        // Paused or killed while the request was being delayed: no answer, or none at all.
        if ((yield* server.awaitAnswering) === "stopped") return { _tag: "Reset" } as const
      }
      if (decision._tag === "Proceed" && request.verb === "watch") {
        const closed = Deferred.await(yield* Ref.get(watchesClosed))
        return { _tag: "Proceed", closed, answering: server.awaitAnswering, ...(watch !== undefined ? { watch } : {}) }
      }
      return decision
    })

  return {
    add,
    remove,
    clear: Ref.update(state, (s) => withFaults({ ...s, faults: [] })),
    active: Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => Effect.map(Ref.get(state), (s) => s.faults.filter((f) => !ended(f, now)))
    ),
    intercept,
    closeWatches,
    server
  }
})

// ---------------------------------------------------------------------------
// Answers, worded as the real server words them
// ---------------------------------------------------------------------------

const jsonResponse = (status: Status, headers: Record<string, string> = {}): FaultResponse => ({
  code: status.code,
  headers,
  status,
  body: JSON.stringify(status),
  contentType: "application/json"
})

/** The authorizer's 403: `ingresses.networking.k8s.io "x" is forbidden: User "u" cannot get resource ...`. */
export const forbiddenStatus = (request: FaultRequest, user: string): Status =>
  forbiddenFor({
    user: { name: user, groups: [] },
    verb: request.verb,
    resourceRequest: true,
    path: "",
    apiGroup: request.resource.group,
    resource: request.resource.plural,
    subresource: request.subresource ?? "",
    namespace: request.namespace !== undefined && request.resource.namespaced ? request.namespace : "",
    name: request.name ?? ""
  })

/** The Status a watch ERROR event carries when its version fell out of the window. */
export const expiredStatus = (requested: string, oldest: string): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `too old resource version: ${requested} (${oldest})`,
  reason: "Expired",
  code: 410
})

/**
 * A watch stream as a decision shapes it: cut after N events, or expired (an ERROR
 * event with 410) after N events, naming the last version the watcher saw.
 */
export const shapeWatch = <E>(
  events: Stream.Stream<StoreWatchEvent, E>,
  decision: Decision,
  requestedVersion: string | undefined
): Stream.Stream<StoreWatchEvent, E> => {
  if (decision._tag === "Proceed" && decision.answering !== undefined) {
    // The store keeps queueing changes meanwhile: a resumed watch delivers them all.
    const answering = decision.answering
    events = Stream.mapEffect(events, (event) => Effect.as(answering, event))
  }
  if (decision._tag === "Proceed" && decision.closed !== undefined) {
    events = Stream.interruptWhen(events, decision.closed)
  }
  const modifier = decision._tag === "Proceed" ? decision.watch : undefined
  if (modifier?.cutAfter !== undefined) return Stream.take(events, modifier.cutAfter)
  if (modifier?.expireAfter !== undefined) {
    let last = requestedVersion === undefined || requestedVersion === "" ? "0" : requestedVersion
    return Stream.take(events, modifier.expireAfter).pipe(
      Stream.tap((event) =>
        Effect.sync(() => {
          const version = (event.object as KubeObject).metadata?.resourceVersion
          if (typeof version === "string") last = version
        })
      ),
      Stream.concat(
        Stream.sync((): StoreWatchEvent => ({ type: "ERROR", object: expiredStatus(last, String(Number(last) + 1)) }))
      )
    )
  }
  return events
}

const THROTTLED = "Too many requests, please try again later.\n"

const responseFor = (request: FaultRequest, action: Extract<FaultAction, { _tag: "Respond" }>): FaultResponse => {
  const retryHeader: Record<string, string> = action.retryAfterSeconds !== undefined
    ? { "retry-after": String(action.retryAfterSeconds) }
    : {}
  if (action.code === 429) {
    // Priority and fairness answers with Go's http.Error: plain text, never a Status.
    return {
      code: 429,
      headers: { "retry-after": String(action.retryAfterSeconds ?? 1), "x-content-type-options": "nosniff" },
      body: action.message !== undefined ? `${action.message}\n` : THROTTLED,
      contentType: "text/plain; charset=utf-8"
    }
  }
  const name = request.name ?? ""
  const qualified = qualifiedName(request.resource)
  const details: NonNullable<Status["details"]> = {
    ...(name !== "" ? { name } : {}),
    ...(request.resource.group !== "" ? { group: request.resource.group } : {}),
    kind: request.resource.plural,
    ...(action.retryAfterSeconds !== undefined ? { retryAfterSeconds: action.retryAfterSeconds } : {})
  }
  const [reason, message] = wording(action.code, qualified, name)
  return jsonResponse(
    {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: action.message ?? message,
      ...(reason !== "" ? { reason } : {}),
      details,
      code: action.code
    },
    retryHeader
  )
}

const wording = (code: number, qualified: string, name: string): readonly [string, string] => {
  const what = name === "" ? qualified : `${qualified} "${name}"`
  switch (code) {
    case 400:
      return ["BadRequest", "the server rejected our request for an unknown reason"]
    case 401:
      return ["Unauthorized", "Unauthorized"]
    case 403:
      return ["Forbidden", `${what} is forbidden`]
    case 404:
      return ["NotFound", name === "" ? "the server could not find the requested resource" : `${what} not found`]
    case 409:
      return [
        "Conflict",
        `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`
      ]
    case 410:
      return ["Expired", "too old resource version: 1 (2)"]
    case 422:
      return ["Invalid", `${what} is invalid`]
    case 500:
      return ["InternalError", "Internal error occurred: injected fault"]
    case 503:
      return ["ServiceUnavailable", "the server is currently unable to handle the request"]
    case 504:
      return ["Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded"]
    default:
      return ["", `the server responded with the status code ${code} but did not return more information`]
  }
}
