/**
 * Where route health learns what the cluster says about each host: one shared watch
 * of the routed kind (`watch`), or a read per host per interval (`poll`). Both speak
 * in observations, so the health rules (last evidence, absolute deadline) are written
 * once, whatever the source.
 */
import { Clock, Context, Data, Duration, Effect, type Schedule, Stream } from "effect"
import type { PublishedRoute, RouteVerdict } from "../domain/Routes.js"
import type { RouteReadError } from "./SessionRouter.js"

/** What a source learned about one host. */
export type Observation =
  /** A read went out at `at` (epoch ms): the poll source says so, so a read the deadline cuts short is known. */
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

/** Which source: one shared watch per routed kind, or reads per host. */
export type StatusSourceKind = "watch" | "poll"

export interface ObserveOptions {
  /** Pause between reads (poll source only). Default: `RouterConfig.routePollIntervalMs`. */
  readonly intervalMs?: number
}

export declare namespace RouteStatusSource {
  export interface Service {
    readonly kind: StatusSourceKind
    /**
     * What the cluster says about `route`, for as long as it is consumed: the current
     * answer first, then each change (watch) or each read (poll). Never fails: a read
     * that fails is an `Unreadable` observation, and the next one may recover.
     */
    readonly observe: (sessionId: string, route: PublishedRoute, options?: ObserveOptions) => Stream.Stream<Observation>
    /**
     * How long route health waits between pulls: a polling source reads once per
     * pull, so its interval; a watching source answers a pull with the next change,
     * so no wait at all.
     */
    readonly cadence: (intervalMs: number) => Schedule.Schedule<unknown, unknown>
  }
}

export class RouteStatusSource
  extends Context.Tag("session-routing/RouteStatusSource")<RouteStatusSource, RouteStatusSource.Service>()
{}

/** The watch source could not use its watch and reads by polling instead; said once per kind. */
export class WatchUnavailable extends Data.TaggedError("WatchUnavailable")<{
  /** `list ingresses.networking.k8s.io in namespace "telo-sessions"`. */
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

/** What one status read answers: the verdict, and whether the object was there. */
export interface StatusRead {
  readonly verdict: RouteVerdict
  readonly present: boolean
}

/**
 * The observations of a polling source: for each pull, `Reading` as a read goes out,
 * then its answer. Nothing is read ahead of a pull: the consumer's schedule paces
 * the reads (see `RouteStatusSource.cadence`).
 */
export const pollObservations = (read: Effect.Effect<StatusRead, RouteReadError>): Stream.Stream<Observation> =>
  Stream.repeatEffect(Effect.void).pipe(
    Stream.flatMap(() =>
      Stream.concat(
        Stream.fromEffect(Effect.map(Clock.currentTimeMillis, Observation.reading)),
        Stream.fromEffect(
          read.pipe(
            Effect.map(({ present, verdict }) => Observation.seen(verdict, present)),
            Effect.catchAll((error) => Effect.succeed(Observation.unreadable(error)))
          )
        )
      )
    )
  )
