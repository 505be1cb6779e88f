/**
 * What a routing mode needs of a cluster: the resource types it must find served and
 * the verbs it must be granted on each, in which namespace. `check` asks the server
 * about each. `RbacManifest` grants the same; a test holds the two together.
 */
import {
  EndpointSliceResource,
  EventResource,
  EventV1Resource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  LeaseResource,
  PodResource,
  qualifiedName,
  type ResourceType,
  ServiceResource
} from "./Resources.js"

/** One resource type a mode uses, and how. */
export interface Need {
  readonly resource: ResourceType<unknown>
  /** A subresource of it (`finalizers`), when the need is on that alone. */
  readonly subresource?: string
  /** The RBAC verbs it must be granted (server-side apply is `patch`, plus `create` for a new object). */
  readonly verbs: ReadonlyArray<string>
  /** Where; undefined for a cluster-scoped type. */
  readonly namespace: string | undefined
  /** False: only a diagnosis uses it, and routing works without it. */
  readonly required: boolean
  /** What it is used for, for the line a person reads. */
  readonly use: string
}

/** What decides the needs besides the mode. */
export interface NeedsSettings {
  readonly sessionNamespace: string
  /** The Gateway's namespace (gateway mode). */
  readonly gatewayNamespace?: string
  /** The shared watch lists and watches the routed kind; polling only gets. */
  readonly watch: boolean
  /** Events are recorded on the session Pod (`SESSION_ROUTING_EVENTS`). */
  readonly events?: boolean
  /** Programmed hosts are probed, reading the Service's EndpointSlices (`SESSION_ROUTE_PROBE`). */
  readonly probe?: boolean
}

const WRITE_VERBS = ["get", "list", "create", "patch", "delete"] as const

/** What the side features use (Events, probes): a refusal costs that feature, never the routing. */
export const featureNeeds = (settings: NeedsSettings): ReadonlyArray<Need> => [
  // events.k8s.io first; core/v1 where that is not served: the recorder uses either.
  ...(settings.events === true
    ? [EventV1Resource, EventResource].map((resource) => ({
      resource,
      verbs: ["create", "patch"],
      namespace: settings.sessionNamespace,
      required: false,
      use: "Events on the session Pod"
    }))
    : []),
  ...(settings.probe === true
    ? [{
      resource: EndpointSliceResource,
      verbs: ["list"],
      namespace: settings.sessionNamespace,
      required: false,
      use: "probing programmed hosts"
    }]
    : [])
]

/**
 * What controller mode needs beyond routing, all required: without any one it cannot
 * find its Pods, report on them, or know it is the one replica that routes.
 */
export const controllerNeeds = (sessionNamespace: string): ReadonlyArray<Need> => [
  {
    resource: PodResource,
    verbs: ["get", "list", "watch", "patch"],
    namespace: sessionNamespace,
    required: true,
    use: "finding the session Pods and writing their session label and endpoints annotation"
  },
  {
    resource: PodResource,
    subresource: "status",
    verbs: ["patch"],
    namespace: sessionNamespace,
    required: true,
    use: "the Pods' RoutesProgrammed condition"
  },
  {
    resource: LeaseResource,
    verbs: ["get", "list", "create", "update"],
    namespace: sessionNamespace,
    required: true,
    use: "electing the replica that routes (list: no replica runs with another --shards)"
  }
]

/** The resource types and verbs routing in `mode` uses, required ones first. */
export const routingNeeds = (mode: "ingress" | "gateway", settings: NeedsSettings): ReadonlyArray<Need> => {
  const ns = settings.sessionNamespace
  const routed = (resource: ResourceType<unknown>, use: string): Need => ({
    resource,
    verbs: settings.watch ? [...WRITE_VERBS, "watch"] : WRITE_VERBS,
    namespace: ns,
    required: true,
    use
  })
  // Applied, found by label and deleted; read when a publish would update one, to make
  // sure it is the session's own (a publish refuses, rather than takes over, another's).
  const service: Need = {
    resource: ServiceResource,
    verbs: WRITE_VERBS,
    namespace: ns,
    required: true,
    use: "the session Service"
  }
  // The routing objects' owner reference blocks the Pod's deletion until they are
  // collected; where OwnerReferencesPermissionEnforcement is on (OpenShift), setting
  // one takes `update` on the owner's finalizers.
  const ownerFinalizers: Need = {
    resource: PodResource,
    subresource: "finalizers",
    verbs: ["update"],
    namespace: ns,
    required: false,
    use: "owner references that block the Pod's deletion, where OwnerReferencesPermissionEnforcement is on"
  }
  if (mode === "ingress") {
    return [
      service,
      routed(IngressResource, "the session Ingress and its status"),
      {
        resource: IngressClassResource,
        verbs: ["list"],
        namespace: undefined,
        required: false,
        use: "diagnosing an unclaimed Ingress"
      },
      ownerFinalizers
    ]
  }
  return [
    service,
    routed(HttpRouteResource, "the session HTTPRoutes and their status"),
    {
      resource: GatewayResource,
      verbs: ["get"],
      namespace: settings.gatewayNamespace ?? ns,
      required: false,
      use: "learning the Gateway's controller and diagnosing an unaccepted route"
    },
    {
      resource: GatewayClassResource,
      verbs: ["get"],
      namespace: undefined,
      required: false,
      use: "the same, through the GatewayClass"
    },
    ownerFinalizers
  ]
}

/** What a need is granted on, as RBAC and kubectl name it: `ingresses.networking.k8s.io`, `pods/finalizers`. */
export const needResource = (need: Need): string =>
  `${qualifiedName(need.resource)}${need.subresource !== undefined ? `/${need.subresource}` : ""}`

/** The need in words: `ingresses.networking.k8s.io in namespace "x"`. */
export const describeNeed = (need: Need): string =>
  `${needResource(need)}${need.namespace !== undefined ? ` in namespace "${need.namespace}"` : " (cluster-wide)"}`

/**
 * How `kubectl create rolebinding` names the identity `username` (as the API server's
 * authenticator gives it): a ServiceAccount by `--serviceaccount`, anyone else by `--user`.
 * Unknown: the shell asks the server who the current kubeconfig is.
 */
export const bindingSubject = (username: string | undefined): string => {
  const account = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username ?? "")
  if (account !== null) return `--serviceaccount=${account[1]}:${account[2]}`
  return username !== undefined && username !== ""
    ? `--user=${username}`
    : `--user="$(kubectl auth whoami -o jsonpath='{.status.userInfo.username}')"`
}

/**
 * The commands that grant a set of verbs on one need's resource to `subject`
 * (`bindingSubject`), as one line a person can run as is: a Role and its RoleBinding (a
 * ClusterRole and ClusterRoleBinding for a cluster-scoped need), each named after the
 * resource, so the lines of several refused needs never collide on one name.
 */
export const grantHint = (
  need: Need,
  verbs: ReadonlyArray<string>,
  subject: string,
  role: string = "session-routing"
): string => {
  // The qualified name keeps the two Events APIs apart: `events` and `events.events.k8s.io`.
  const name = `${role}-${needResource(need).replace(/[./]/g, "-")}`
  const rules = `--verb=${verbs.join(",")} --resource=${needResource(need)}`
  return need.namespace !== undefined
    ? `grant them to this identity: kubectl create role ${name} -n ${need.namespace} ${rules} && ` +
      `kubectl create rolebinding ${name} -n ${need.namespace} --role=${name} ${subject}`
    : `grant them to this identity: kubectl create clusterrole ${name} ${rules} && ` +
      `kubectl create clusterrolebinding ${name} --clusterrole=${name} ${subject}`
}
