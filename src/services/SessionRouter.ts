/**
 * The routing layer of a session: one service, one layer per implementation
 * (ingress, gateway, none), and a layer that picks by `RouterConfig`. The layers
 * themselves live in `src/layers`.
 */
import { Context, Data, type Effect } from "effect"
import type { RoutingPath } from "../domain/Diagnosis.js"
import type { PublishedRoute, RouteVerdict, RoutingMode } from "../domain/Routes.js"
import type { PortMapping } from "../domain/Session.js"
import type { KubeError } from "./KubeError.js"
import { RouteReadError } from "./RouteStatusSource.js"

export interface PublishArgs {
  readonly sessionId: string
  readonly podName: string
  readonly podUid: string
  readonly ports: ReadonlyArray<PortMapping>
}

/**
 * Publishing (or unpublishing) failed; `reason` says what to do, `error` what the API answered.
 *
 * @since 0.1.0
 * @category errors
 */
export class PublishError extends Data.TaggedError("PublishError")<{
  readonly sessionId: string
  readonly reason: string
  readonly error: KubeError
}> {
  override get message(): string {
    return this.reason
  }
}

/** `verdictFor` fails with it; it is the status sources' error, and kept importable from here. */
export { RouteReadError }

export declare namespace SessionRouter {
  export interface Service {
    readonly layer: RoutingMode
    /**
     * Makes the cluster match the session's ports and returns one route per tcp
     * port. Idempotent; publishing other ports is a reload that removes what the
     * dropped ports no longer need.
     */
    readonly publish: (args: PublishArgs) => Effect.Effect<ReadonlyArray<PublishedRoute>, PublishError>
    /** What the routing layer's status says about one route, or why it could not be read. */
    readonly verdictFor: (sessionId: string, route: PublishedRoute) => Effect.Effect<RouteVerdict, RouteReadError>
    /** What to tell a person when a route is still pending at the deadline and nothing more is known. */
    readonly unclaimedReason: (route: PublishedRoute) => string
    /**
     * Reads what the session's routing depends on, once for all its hosts, and gives
     * each host's path: every link sound, the first broken one, or what could not be
     * read. Each read is bounded; it never fails. Unset: nothing to diagnose (mode `none`).
     */
    readonly diagnose?: (sessionId: string) => Effect.Effect<(route: PublishedRoute) => RoutingPath>
    /**
     * The routes the cluster currently holds for the session, read back from its
     * objects (for a status check by a process that did not publish them).
     */
    readonly routesOf: (sessionId: string) => Effect.Effect<ReadonlyArray<PublishedRoute>, PublishError>
    /** Removes every routing object of the session; absent objects are fine. */
    readonly unpublish: (sessionId: string) => Effect.Effect<void, PublishError>
  }
}

export class SessionRouter
  extends Context.Tag("session-routing/SessionRouter")<SessionRouter, SessionRouter.Service>()
{}

/**
 * A routing layer cannot be built from this configuration (e.g. no base domain for ingress mode).
 *
 * @since 0.1.0
 * @category errors
 */
export class RouterSetupError extends Data.TaggedError("RouterSetupError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}
