/**
 * The routing layer of a session: it publishes and unpublishes a session's objects.
 * One layer per implementation (ingress, gateway, none) and one that picks by
 * `RouterConfig` live in `src/layers/SessionRouterLive.ts`. Reading and judging their
 * status is `RouteStatusSource`'s alone.
 */
import { Context, Data, type Effect } from "effect"
import type { SessionSpec } from "../domain/Manifests.js"
import type { PublishedRoute, RoutingMode } from "../domain/Routes.js"
import type { KubeError } from "./KubeError.js"

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

/**
 * The router's interface.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SessionRouter {
  export interface Service {
    readonly layer: RoutingMode
    /**
     * Makes the cluster match the session's ports and returns one route per tcp
     * port. Idempotent; publishing other ports is a reload that removes what the
     * dropped ports no longer need.
     */
    readonly publish: (spec: SessionSpec) => Effect.Effect<ReadonlyArray<PublishedRoute>, PublishError>
    /**
     * The routes the cluster currently holds for the session, read back from its
     * objects (for a status check by a process that did not publish them).
     */
    readonly routesOf: (sessionId: string) => Effect.Effect<ReadonlyArray<PublishedRoute>, PublishError>
    /** Removes every routing object of the session; absent objects are fine. */
    readonly unpublish: (sessionId: string) => Effect.Effect<void, PublishError>
  }
}

/**
 * Publishes and unpublishes a session's routing objects.
 *
 * @since 0.1.0
 * @category services
 */
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
