/**
 * The API resource types session-routing touches, described once: where they live
 * on the wire and which server rules apply to them. The live client, the local
 * cluster and the validators all read these descriptors, so they cannot disagree.
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
  readonly singular: string
  readonly namespaced: boolean
  /** Writes to the object keep status; only `/status` changes it. */
  readonly statusSubresource: boolean
  /** `metadata.generation` is kept (Services have none). */
  readonly hasGeneration: boolean
  /** A custom resource (CRD-backed): list items carry kind/apiVersion, PUT needs a resourceVersion. */
  readonly custom: boolean
  readonly shortNames: ReadonlyArray<string>
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
  singular: "namespace",
  namespaced: false,
  statusSubresource: true,
  hasGeneration: false,
  custom: false,
  shortNames: ["ns"]
})

export const ServiceResource = make<Service>({
  kind: "Service",
  group: "",
  version: "v1",
  plural: "services",
  singular: "service",
  namespaced: true,
  statusSubresource: true,
  hasGeneration: false,
  custom: false,
  shortNames: ["svc"]
})

export const IngressResource = make<Ingress>({
  kind: "Ingress",
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingresses",
  singular: "ingress",
  namespaced: true,
  statusSubresource: true,
  hasGeneration: true,
  custom: false,
  shortNames: ["ing"]
})

export const IngressClassResource = make<IngressClass>({
  kind: "IngressClass",
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingressclasses",
  singular: "ingressclass",
  namespaced: false,
  statusSubresource: false,
  hasGeneration: true,
  custom: false,
  shortNames: []
})

export const GatewayResource = make<Gateway>({
  kind: "Gateway",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "gateways",
  singular: "gateway",
  namespaced: true,
  statusSubresource: true,
  hasGeneration: true,
  custom: true,
  shortNames: ["gtw"]
})

export const GatewayClassResource = make<GatewayClass>({
  kind: "GatewayClass",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "gatewayclasses",
  singular: "gatewayclass",
  namespaced: false,
  statusSubresource: true,
  hasGeneration: true,
  custom: true,
  shortNames: ["gc"]
})

export const HttpRouteResource = make<HttpRoute>({
  kind: "HTTPRoute",
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "httproutes",
  singular: "httproute",
  namespaced: true,
  statusSubresource: true,
  hasGeneration: true,
  custom: true,
  shortNames: []
})

export const PodResource = make<Pod>({
  kind: "Pod",
  group: "",
  version: "v1",
  plural: "pods",
  singular: "pod",
  namespaced: true,
  statusSubresource: true,
  hasGeneration: false,
  custom: false,
  shortNames: ["po"]
})

/** Events as core/v1 serves them; `EventV1Resource` is another view of the same objects. */
export const EventResource = make<CoreEvent>({
  kind: "Event",
  group: "",
  version: "v1",
  plural: "events",
  singular: "event",
  namespaced: true,
  statusSubresource: false,
  hasGeneration: false,
  custom: false,
  shortNames: ["ev"]
})

/** Events as events.k8s.io/v1 serves them: the same objects as `EventResource`, with newer field names. */
export const EventV1Resource = make<EventV1>({
  kind: "Event",
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  singular: "event",
  namespaced: true,
  statusSubresource: false,
  hasGeneration: false,
  custom: false,
  shortNames: ["ev"]
})

export const EndpointSliceResource = make<EndpointSlice>({
  kind: "EndpointSlice",
  group: "discovery.k8s.io",
  version: "v1",
  plural: "endpointslices",
  singular: "endpointslice",
  namespaced: true,
  statusSubresource: false,
  hasGeneration: true,
  custom: false,
  shortNames: []
})

export const ServiceAccountResource = make<ServiceAccount>({
  kind: "ServiceAccount",
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  singular: "serviceaccount",
  namespaced: true,
  statusSubresource: false,
  hasGeneration: false,
  custom: false,
  shortNames: ["sa"]
})

const rbac = (kind: string, plural: string, namespaced: boolean) =>
  make<Role & RoleBinding>({
    kind,
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    statusSubresource: false,
    hasGeneration: false,
    custom: false,
    shortNames: []
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
  HttpRouteResource
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
