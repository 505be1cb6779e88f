/**
 * `session-routing/kubernetes`: the Kubernetes vocabulary the library is written in,
 * for whoever implements or drives a `KubeClient` directly (the local cluster is
 * one such package): the object shapes, the resource descriptors a call names, the
 * client's primitive operations and `makeKubeClient` that builds the full client
 * over them, the errors a call fails with, and the API server's own rules for names
 * and Gateway listeners. A runner that only publishes sessions needs none of it: the
 * main entry is the whole of that.
 */

/** Kubernetes object shapes, as plain JSON. */
export type * from "./domain/Objects.js"
/** The resource types the library calls, and the paths and names the API gives them. */
export {
  allResources,
  apiVersionOf,
  ClusterRoleBindingResource,
  ClusterRoleResource,
  EndpointSliceResource,
  EventResource,
  EventV1Resource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  LeaseResource,
  NamespaceResource,
  PodResource,
  qualifiedName,
  resourcePath,
  type ResourceType,
  RoleBindingResource,
  RoleResource,
  ServiceAccountResource,
  ServiceResource
} from "./domain/Resources.js"
/** The client: its Tag, the primitive operations an implementation provides, and the full client built over them. */
export { makeKubeClient, type ResumableWatchOptions } from "./layers/kubeClient/ResumableWatch.js"
export {
  type EventWrites,
  FIELD_MANAGER,
  KubeClient,
  type KubeClientPrimitives,
  type LeaseCalls,
  type PodWrites,
  type RawWatchEvent,
  type ReadableObject,
  type WatchEvent,
  withoutTransientRetry
} from "./services/KubeClient.js"
/** How an implementation reports a failed call: from a Status body, a response, or a transport failure. */
export {
  describeRequest,
  fromResponse,
  fromStatus,
  type RequestContext,
  requestContext
} from "./layers/kubeClient/KubeErrorParsing.js"
export { type KubeError, Transport } from "./services/KubeError.js"
/** The API server's rules for names, labels, ports and paths, with its own wording of a mismatch. */
export {
  byteLength,
  HTTP_PATH,
  HTTP_PATH_FMT,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isIPAddress,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDns1123Subdomain,
  regexError
} from "./domain/Validation.js"
/** Gateway API's rules for which listener admits a route: hostnames, namespaces, route kinds. */
export {
  hostnameMatches,
  hostnamesIntersect,
  listenerAdmitsNamespace,
  listenerSupportsHttpRoute,
  namespaceLabelsOf
} from "./domain/GatewayListeners.js"
