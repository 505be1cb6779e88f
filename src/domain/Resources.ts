/**
 * The API resource types session-routing touches, described once: where they live
 * on the wire. The live client builds its paths from these, and any other KubeClient
 * (the local cluster's in-memory one) is handed the same descriptors.
 */
import type {
  CoreEvent,
  EndpointSlice,
  EventV1,
  Gateway,
  GatewayClass,
  HttpRoute,
  Ingress,
  IngressClass,
  Lease,
  Namespace,
  Pod,
  Role,
  RoleBinding,
  Service,
  ServiceAccount
} from "./Objects.js"

export interface ResourceType<A> {
  readonly kind: string
  readonly listKind: string
  /** `""` for the core group. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly namespaced: boolean
  /** Phantom field carrying the object type. */
  readonly _A?: A
}

const make = <A>(
  fields: Omit<ResourceType<A>, "_A" | "listKind"> & { readonly listKind?: string }
): ResourceType<A> => ({
  ...fields,
  listKind: fields.listKind ?? `${fields.kind}List`
})

export const NamespaceResource = make<Namespace>({
  kind: "Namespace",
  group: "",
  version: "v1",
  plural: "namespaces",
  namespaced: false
})

export const ServiceResource = make<Service>({
  kind: "Service",
  group: "",
  version: "v1",
  plural: "services",
  namespaced: true
})

export const IngressResource = make<Ingress>({
  kind: "Ingress",
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingresses",
  namespaced: true
})

export const IngressClassResource = make<IngressClass>({
  kind: "IngressClass",
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingressclasses",
  namespaced: false
})

export const GatewayResource = make<Gateway>({
  kind: "Gateway",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "gateways",
  namespaced: true
})

export const GatewayClassResource = make<GatewayClass>({
  kind: "GatewayClass",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "gatewayclasses",
  namespaced: false
})

export const HttpRouteResource = make<HttpRoute>({
  kind: "HTTPRoute",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "httproutes",
  namespaced: true
})

export const PodResource = make<Pod>({
  kind: "Pod",
  group: "",
  version: "v1",
  plural: "pods",
  namespaced: true
})

export const LeaseResource = make<Lease>({
  kind: "Lease",
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  namespaced: true
})

/** Events as core/v1 serves them; `EventV1Resource` is another view of the same objects. */
export const EventResource = make<CoreEvent>({
  kind: "Event",
  group: "",
  version: "v1",
  plural: "events",
  namespaced: true
})

/** Events as events.k8s.io/v1 serves them: the same objects as `EventResource`, with newer field names. */
export const EventV1Resource = make<EventV1>({
  kind: "Event",
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  namespaced: true
})

export const EndpointSliceResource = make<EndpointSlice>({
  kind: "EndpointSlice",
  group: "discovery.k8s.io",
  version: "v1",
  plural: "endpointslices",
  namespaced: true
})

export const ServiceAccountResource = make<ServiceAccount>({
  kind: "ServiceAccount",
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  namespaced: true
})

const rbac = (kind: string, plural: string, namespaced: boolean) =>
  make<Role & RoleBinding>({
    kind,
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural,
    namespaced
  })

/** RBAC's four types: what a runner's least privilege is written in, and what LocalCluster's authorizer reads. */
export const RoleResource: ResourceType<Role> = rbac("Role", "roles", true)
export const ClusterRoleResource: ResourceType<Role> = rbac("ClusterRole", "clusterroles", false)
export const RoleBindingResource: ResourceType<RoleBinding> = rbac("RoleBinding", "rolebindings", true)
export const ClusterRoleBindingResource: ResourceType<RoleBinding> = rbac(
  "ClusterRoleBinding",
  "clusterrolebindings",
  false
)

export const allResources: ReadonlyArray<ResourceType<unknown>> = [
  NamespaceResource,
  ServiceResource,
  PodResource,
  EventResource,
  IngressResource,
  IngressClassResource,
  EventV1Resource,
  EndpointSliceResource,
  ServiceAccountResource,
  RoleResource,
  ClusterRoleResource,
  RoleBindingResource,
  ClusterRoleBindingResource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource,
  LeaseResource
]

/** `apiVersion` as objects carry it: `v1` or `<group>/<version>`. */
export const apiVersionOf = (resource: ResourceType<unknown>): string =>
  resource.group === "" ? resource.version : `${resource.group}/${resource.version}`

/** The qualified resource name the API server uses in messages: `ingresses.networking.k8s.io`. */
export const qualifiedName = (resource: ResourceType<unknown>): string =>
  resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`

/** The path of a collection or object: `/apis/<group>/<version>/namespaces/<ns>/<plural>[/<name>]`. */
export const resourcePath = (resource: ResourceType<unknown>, namespace?: string, name?: string): string => {
  const root = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`
  const scope = resource.namespaced && namespace !== undefined ? `/namespaces/${namespace}` : ""
  return `${root}${scope}/${resource.plural}${name !== undefined ? `/${name}` : ""}`
}
