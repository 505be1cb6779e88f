/**
 * The public path of a programmed host: a request through the address the routing
 * layer published, with the host's Host header and SNI, and a look at whether the
 * session Service's port has a ready endpoint. Opt-in (`SESSION_ROUTE_PROBE`).
 */
import { Context, type Effect } from "effect"
import type { EndpointReadiness, ProbeOutcome } from "../domain/RouteProbe.js"
import type { PublishedRoute } from "../domain/Routes.js"

/**
 * The probe's interface.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RouteProbe {
  export interface Service {
    /** Requests the host until it is served or the attempts run out; the last outcome decides. */
    readonly probe: (sessionId: string, route: PublishedRoute) => Effect.Effect<ProbeOutcome>
    /** Whether the session Service's port has a ready endpoint; none when the EndpointSlices could not be read. */
    readonly endpoints: (sessionId: string, route: PublishedRoute) => Effect.Effect<EndpointReadiness | undefined>
  }
}

/**
 * Probes a programmed host's public path.
 *
 * @since 0.1.0
 * @category services
 */
export class RouteProbe extends Context.Tag("session-routing/RouteProbe")<RouteProbe, RouteProbe.Service>() {}
