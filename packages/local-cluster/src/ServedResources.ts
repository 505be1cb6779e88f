/**
 * The resource types the cluster serves: the library's descriptors (where each type
 * lives on the wire) with what only an API server needs to know of it: which writes
 * keep status, whether `metadata.generation` is kept, whether it is a custom resource,
 * what a PUT may do, and the names discovery gives it. Every part of the cluster reads
 * these, so the HTTP API, the store and discovery cannot disagree; a descriptor a
 * client passes in is looked up here by its group and plural.
 */
import * as Kube from "session-routing/kubernetes"
import type { ResourceType } from "session-routing/kubernetes"

/** A resource type as the cluster serves it. */
export interface ServedResource<A = unknown> extends ResourceType<A> {
  /** Discovery's singular name: the kind in lower case. */
  readonly singular: string
  /** Writes to the object keep status; only `/status` changes it. */
  readonly statusSubresource: boolean
  /** `metadata.generation` is kept (Services have none). */
  readonly hasGeneration: boolean
  /** A custom resource (CRD-backed): list items carry kind/apiVersion. */
  readonly custom: boolean
  /** A PUT of a missing object creates it (the registry's `AllowCreateOnUpdate`); otherwise it is a 404. */
  readonly createOnUpdate: boolean
  /**
   * A PUT without `metadata.resourceVersion` overwrites whatever is stored (the registry's
   * `AllowUnconditionalUpdate`); otherwise it is a 422 naming the field.
   */
  readonly unconditionalUpdate: boolean
  readonly shortNames: ReadonlyArray<string>
}

const serve = <A>(
  resource: ResourceType<A>,
  fields: {
    readonly statusSubresource: boolean
    readonly hasGeneration: boolean
    readonly shortNames?: ReadonlyArray<string>
    readonly createOnUpdate?: boolean
    readonly unconditionalUpdate?: boolean
  }
): ServedResource<A> => {
  // Gateway API is installed as CRDs; everything else here is built in.
  const custom = resource.group === "gateway.networking.k8s.io"
  return {
    ...resource,
    singular: resource.kind.toLowerCase(),
    statusSubresource: fields.statusSubresource,
    hasGeneration: fields.hasGeneration,
    custom,
    createOnUpdate: fields.createOnUpdate ?? false,
    // Custom resources are never updated unconditionally; built-in types are unless their registry says otherwise.
    unconditionalUpdate: fields.unconditionalUpdate ?? !custom,
    shortNames: fields.shortNames ?? []
  }
}

export const NamespaceResource = serve(Kube.NamespaceResource, {
  statusSubresource: true,
  hasGeneration: false,
  shortNames: ["ns"]
})
export const ServiceResource = serve(Kube.ServiceResource, {
  statusSubresource: true,
  hasGeneration: false,
  shortNames: ["svc"],
  createOnUpdate: true
})
export const PodResource = serve(Kube.PodResource, {
  statusSubresource: true,
  hasGeneration: false,
  shortNames: ["po"]
})
export const EventResource = serve(Kube.EventResource, {
  statusSubresource: false,
  hasGeneration: false,
  shortNames: ["ev"]
})
export const EventV1Resource = serve(Kube.EventV1Resource, {
  statusSubresource: false,
  hasGeneration: false,
  shortNames: ["ev"]
})
export const IngressResource = serve(Kube.IngressResource, {
  statusSubresource: true,
  hasGeneration: true,
  shortNames: ["ing"]
})
export const IngressClassResource = serve(Kube.IngressClassResource, { statusSubresource: false, hasGeneration: true })
export const EndpointSliceResource = serve(Kube.EndpointSliceResource, {
  statusSubresource: false,
  hasGeneration: true
})
export const ServiceAccountResource = serve(Kube.ServiceAccountResource, {
  statusSubresource: false,
  hasGeneration: false,
  shortNames: ["sa"]
})
export const RoleResource = serve(Kube.RoleResource, { statusSubresource: false, hasGeneration: false })
export const ClusterRoleResource = serve(Kube.ClusterRoleResource, { statusSubresource: false, hasGeneration: false })
export const RoleBindingResource = serve(Kube.RoleBindingResource, { statusSubresource: false, hasGeneration: false })
export const ClusterRoleBindingResource = serve(Kube.ClusterRoleBindingResource, {
  statusSubresource: false,
  hasGeneration: false
})
export const GatewayClassResource = serve(Kube.GatewayClassResource, {
  statusSubresource: true,
  hasGeneration: true,
  shortNames: ["gc"]
})
export const GatewayResource = serve(Kube.GatewayResource, {
  statusSubresource: true,
  hasGeneration: true,
  shortNames: ["gtw"]
})
export const HttpRouteResource = serve(Kube.HttpRouteResource, { statusSubresource: true, hasGeneration: true })
/**
 * Leases: a PUT may create one, and every update must name the version it read, so
 * two candidates writing from the same read cannot both win.
 */
export const LeaseResource = serve(Kube.LeaseResource, {
  statusSubresource: false,
  hasGeneration: false,
  createOnUpdate: true,
  unconditionalUpdate: false
})

/** Every type the cluster serves, in the order discovery lists them. */
export const servedResources: ReadonlyArray<ServedResource> = [
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
  LeaseResource,
  GatewayClassResource,
  GatewayResource,
  HttpRouteResource
]

const byGroupAndPlural = new Map(servedResources.map((r) => [`${r.group}/${r.plural}`, r]))

/**
 * The served type a descriptor names. A type the cluster does not serve is a
 * programming error of the caller (a client asks only for what the library knows).
 */
export const servedOf = <A>(resource: ResourceType<A>): ServedResource<A> => {
  if ("statusSubresource" in resource) return resource as ServedResource<A>
  const served = byGroupAndPlural.get(`${resource.group}/${resource.plural}`)
  if (served === undefined) throw new Error(`the local cluster does not serve ${resource.plural}.${resource.group}`)
  return served as ServedResource<A>
}
