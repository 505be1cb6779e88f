/**
 * Whether a controller has written a routed object's status: an address for an
 * Ingress, a parent entry for an HTTPRoute. Shared by the cluster process, which
 * reports each first write, and the bare watch, which waits for every one.
 */
import type { HttpRoute, Ingress } from "session-routing/kubernetes"

export const statusWritten = (kind: "Ingress" | "HTTPRoute", object: Ingress | HttpRoute): boolean =>
  kind === "Ingress"
    ? ((object as Ingress).status?.loadBalancer?.ingress?.length ?? 0) > 0
    : ((object as HttpRoute).status?.parents?.length ?? 0) > 0
