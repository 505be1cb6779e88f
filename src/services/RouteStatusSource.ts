/**
 * The one reader and judge of route status: where route health learns what the
 * cluster says about each host, from one shared watch of the routed kind (`watch`) or
 * a read per host per interval (`poll`), and what a one-off `status` reads. Both
 * speak in observations, so the health rules (last evidence, absolute deadline) are
 * written once, whatever the source. `SessionRouter` publishes; this reads.
 */
import { Context, Data, Duration, type Effect, type Schedule } from "effect"
import type { RoutingPath } from "../domain/Diagnosis.js"
import type { PublishedRoute, RouteVerdict } from "../domain/Routes.js"
import type { KubeError } from "./KubeError.js"

/**
 * A route's status could not be read. Never a verdict: it says nothing about the route.
 *
 * @since 0.1.0
 * @category errors
 */
export class RouteReadError extends Data.TaggedError("RouteReadError")<{
  readonly route: PublishedRoute
  readonly error: KubeError
}> {
  get reason(): string {
    return this.error.reason
  }
  override get message(): string {
    return `route status could not be read: ${this.error.reason}`
  }
}

/** What a source learned about one host. */
export type Observation =
  /**
   * Nothing known yet: the watch has been starting since `at` (epoch ms). Like a read
   * that is out: if it never answers, the deadline says the status could not be read.
   */
  | { readonly _tag: "Reading"; readonly at: number }
  /**
   * The cluster's answer: the verdict from the host's object as it is now. `present`
   * is false when the object does not exist (a verdict of pending).
   */
  | { readonly _tag: "Seen"; readonly verdict: RouteVerdict; readonly present: boolean }
  /** The status could not be read: a failed read, or a watch that cannot be opened or resumed. */
  | { readonly _tag: "Unreadable"; readonly error: RouteReadError }

/** Constructors for `Observation`. */
export const Observation = {
  reading: (at: number): Observation => ({ _tag: "Reading", at }),
  seen: (verdict: RouteVerdict, present: boolean): Observation => ({ _tag: "Seen", verdict, present }),
  unreadable: (error: RouteReadError): Observation => ({ _tag: "Unreadable", error })
} as const

/**
 * Which source: one shared watch per routed kind, or reads per host.
 *
 * @since 0.1.0
 * @category models
 */
export type StatusSourceKind = "watch" | "poll"

/** An observation, and its place in the sequence of what the source learned about the host. */
export interface Sequenced {
  /** Grows with every change the source learns of; pass it back to `next` to wait for a newer one. */
  readonly seq: number
  readonly observation: Observation
}

/**
 * The source's interface.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RouteStatusSource {
  export interface Service {
    readonly kind: StatusSourceKind
    /**
     * One read of the host's object now (with the client's own retries), for a caller
     * that follows nothing: a status asked once by a process that did not publish the
     * session. Starts no watch.
     */
    readonly read: (sessionId: string, route: PublishedRoute) => Effect.Effect<RouteVerdict, RouteReadError>
    /**
     * The next observation of `route` newer than `after` (0 at first). A polling
     * source reads once per call, whatever `after` is; a watching source answers at
     * once with what it holds when that is newer, else when the host's object (or the
     * watch itself) next changes. Never fails: a read that fails is an `Unreadable`
     * observation, and a later one may recover.
     */
    readonly next: (sessionId: string, route: PublishedRoute, after: number) => Effect.Effect<Sequenced>
    /**
     * How long to wait between calls of `next` after an answer: a polling source's
     * interval; a watching source needs no wait (a call waits for the next change).
     */
    readonly cadence: (intervalMs: number) => Schedule.Schedule<unknown, unknown>
    /**
     * Set on a source that watches: lets one fiber follow all of a session's hosts
     * at once, instead of a fiber per host waiting in `next`.
     */
    readonly changes?: ChangeFeed | undefined
    /**
     * Reads what the session's routing depends on, once for all its hosts, and gives
     * each host's path: every link sound, the first broken one, or what could not be
     * read. Each read is bounded; it never fails. Route health asks it, once per
     * session, when a host the cluster answered for is still pending at its deadline.
     * Unset: nothing to diagnose (mode `none`).
     */
    readonly diagnose?: (sessionId: string) => Effect.Effect<(route: PublishedRoute) => RoutingPath>
    /** What to tell a person when a route is still pending at the deadline and nothing more is known. */
    readonly unclaimedReason: (route: PublishedRoute) => string
  }
}

/**
 * How a watching source tells a session's one fiber that something changed: a host's
 * observation is newer than what the session saw when `seqOf` exceeds it, and
 * `awaitAny` sleeps until that is so for any host (or until a given instant).
 */
export interface ChangeFeed {
  /** The sequence number `next` would answer for the host now. */
  readonly seqOf: (sessionId: string, route: PublishedRoute) => number
  /**
   * Returns once any of `hosts` has an observation newer than the `seen` it was
   * given, once the source stops watching (it fell back to polling), or once the
   * clock reaches `until` (epoch ms), whichever comes first. Costs no fiber while it
   * waits.
   */
  readonly awaitAny: (
    sessionId: string,
    hosts: ReadonlyArray<{ readonly route: PublishedRoute; readonly seen: number }>,
    until: number
  ) => Effect.Effect<void>
}

/**
 * Reads and judges route status, for route health and for a status asked once.
 *
 * @since 0.1.0
 * @category services
 */
export class RouteStatusSource
  extends Context.Tag("session-routing/RouteStatusSource")<RouteStatusSource, RouteStatusSource.Service>()
{}

/**
 * The watch source could not use its watch and reads by polling instead; said once per kind.
 *
 * @since 0.1.0
 * @category errors
 */
export class WatchUnavailable extends Data.TaggedError("WatchUnavailable")<{
  /** `list and watch ingresses.networking.k8s.io in namespace "telo-sessions"`. */
  readonly what: string
  readonly reason: string
}> {
  override get message(): string {
    return `cannot ${this.what}: ${this.reason}; route status is polled instead`
  }
}

/**
 * Reads refused for good (401, 403, an API not served) back off to at most this
 * pause: they are still read, since a person may fix RBAC meanwhile, but they no
 * longer cost the API server one request per host per interval.
 */
export const PERMANENT_FAILURE_BACKOFF_CAP = Duration.seconds(30)
