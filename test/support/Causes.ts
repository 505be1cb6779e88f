/**
 * The reasons a SessionCluster gives at the deadline when its controllers stay silent,
 * in full: tests that expect a diagnosis compare whole values, and share them here.
 */
import { SessionCluster } from "@session-routing/local-cluster"

/** The local IngressClass exists and its controller wrote no address. */
export const localIngressSilence = (namespace: string = SessionCluster.DEFAULT_SESSION_NAMESPACE): string =>
  `NoIngressStatus: IngressClass "local", controller "session-routing.dev/local-ingress", exists, but no address was written to the session Ingress's status in namespace "${namespace}": check that the controller "session-routing.dev/local-ingress" is running, watches this namespace, and is configured to publish an address in Ingress status (most controllers need the Service or address that fronts them named)`

/** No controller runs for the local GatewayClass: it keeps the CRD's default status. */
export const localGatewayClassUnaccepted =
  `GatewayClassNotAccepted: GatewayClass "local" names controller "session-routing.dev/local-gateway", and no controller has accepted it (Accepted: Unknown, Pending: Waiting for controller): install or start the Gateway implementation whose controllerName is "session-routing.dev/local-gateway"`
