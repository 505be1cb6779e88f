/**
 * The configuration of session routing, as a service. `RouterConfig.layer` reads it
 * from the environment (every bad key reported in one message at start-up);
 * `RouterConfig.layerFrom` builds it from values, for tests and embedding runners.
 */
import { Context } from "effect"
import type { GatewayRef } from "../domain/Manifests.js"
import type { RoutingMode } from "../domain/Routes.js"

export type { GatewayRef }


export declare namespace RouterConfig {
  export interface Service {
    readonly mode: RoutingMode
    /** Unset: nothing is published or watched, endpoints are host-less. */
    readonly baseDomain?: string
    readonly ingressClassName?: string
    /** TLS Secret the Ingress presents (ingress mode only; the Gateway owns TLS in gateway mode). */
    readonly tlsSecretName?: string
    /** Set exactly when `mode` is `gateway`. */
    readonly gateway?: GatewayRef
    /** How long a host may stay pending before it is reported `unprogrammed`. */
    readonly routeReadyTimeoutMs: number
    /** Poll interval while waiting. */
    readonly routePollIntervalMs: number
    readonly sessionNamespace: string
    /** `app.kubernetes.io/managed-by` value. */
    readonly managedBy: string
    /** Things worth saying at start-up that are not errors (e.g. an ignored TLS secret). */
    readonly warnings: ReadonlyArray<string>
  }
}

export class RouterConfig extends Context.Tag("session-routing/RouterConfig")<RouterConfig, RouterConfig.Service>() {}
