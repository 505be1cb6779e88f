/**
 * What route health reports: one event per host as its state changes, and the first
 * read that failed. The runner's wire events map one to one onto these.
 */
import { type PublishedRoute, Unprogrammed } from "../domain/Routes.js"
import type { RouteReadError } from "../services/RouteStatusSource.js"

/** A host's state changed: `pending` once up front, then exactly one terminal state. */
export type RouteEvent =
  | { readonly _tag: "Route"; readonly route: PublishedRoute; readonly state: "pending" | "programmed" }
  | {
    readonly _tag: "Route"
    readonly route: PublishedRoute
    readonly state: "unprogrammed"
    readonly reason: string
    readonly code: string
  }

/**
 * The first status read of the watch that failed, once per watch, for the runner's
 * log: a permanent failure (no RBAC grant, an unserved API) otherwise only shows up
 * in the hosts' final reasons. `reason` is the Kubernetes error's own reason.
 */
export interface ReadErrorEvent {
  readonly _tag: "ReadError"
  readonly route: PublishedRoute
  readonly reason: string
  readonly error: RouteReadError
}

/**
 * What the watch emits. Maps one to one onto the runner's wire events:
 * `Route` → `{ type: "route", port, host, state, reason?, code? }`, `ReadError` → `{ type: "read-error", reason }`.
 *
 * @since 0.1.0
 * @category models
 */
export type RouteHealthEvent = RouteEvent | ReadErrorEvent

/**
 * Constructors for `RouteHealthEvent`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const RouteHealthEvent = {
  pending: (route: PublishedRoute): RouteHealthEvent => ({ _tag: "Route", route, state: "pending" }),
  programmed: (route: PublishedRoute): RouteHealthEvent => ({ _tag: "Route", route, state: "programmed" }),
  unprogrammed: (route: PublishedRoute, why: Unprogrammed): RouteHealthEvent => ({
    _tag: "Route",
    route,
    state: "unprogrammed",
    reason: why.reason,
    code: why.code
  }),
  readError: (error: RouteReadError): RouteHealthEvent => ({
    _tag: "ReadError",
    route: error.route,
    reason: error.reason,
    error
  })
} as const

/**
 * What a host gets at the deadline when its last attempt was a failed read: the read
 * failure. Deliberately not the unclaimed advice: that would send an operator to
 * inspect the controller when the runner could not read its own object.
 */
export const readFailure = (error: RouteReadError): Unprogrammed => Unprogrammed.unreadable(error.message)
