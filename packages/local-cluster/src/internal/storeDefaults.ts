/**
 * What the store keeps of a body: unknown fields pruned, then the defaults the
 * server fills in, from the CRD schema and from the built-in types' own rules.
 */
import { type KubeObject } from "session-routing/kubernetes"
import { LeaseResource, NamespaceResource, type ServedResource, ServiceResource } from "../ServedResources.js"
import { applyDefaults, isObject, prune, shapeOf } from "../ServerSideApply.js"
import { withoutGatedFields } from "./leaseDescription.js"
import { asJson, type Json, metaOf } from "./storeObjects.js"
import { workloadDefaults } from "./workloadDefaults.js"

/** Unknown fields and nulls dropped; for built-ins, empty lists and maps too. */
export const pruned = (resource: ServedResource<KubeObject>, object: Json): Json => {
  const shape = shapeOf(resource)
  const out = prune(object, shape, !resource.custom) as Json
  if (isObject(out.metadata) && shape._tag === "Struct") {
    out.metadata = prune(out.metadata, shape.fields.metadata!, true)
  }
  return out
}

/**
 * The defaults the server fills in: those its type's description declares (a custom
 * resource's CRD defaults among them), in one pass, then the built-in types' own rules
 * (a Lease also loses the fields of a feature gate that is off, as its strategy clears them).
 */
export const defaulted = (resource: ServedResource<KubeObject>, object: KubeObject): KubeObject => {
  let out = applyDefaults(object, shapeOf(resource)) as KubeObject
  if (resource === ServiceResource) out = serviceDefaults(out)
  if (resource === NamespaceResource) out = namespaceDefaults(out)
  if (resource === LeaseResource) out = withoutGatedFields(out)
  return workloadDefaults(resource, out)
}

export const namespaceDefaults = (object: KubeObject): KubeObject => {
  const json = asJson(object)
  const meta = metaOf(object)
  const spec = isObject(json.spec) ? json.spec : {}
  const status = isObject(json.status) ? json.status : {}
  return {
    ...object,
    metadata: { ...meta, labels: { ...meta.labels, "kubernetes.io/metadata.name": meta.name ?? "" } },
    spec: { ...spec, finalizers: Array.isArray(spec.finalizers) ? spec.finalizers : ["kubernetes"] },
    status: { ...status, phase: typeof status.phase === "string" ? status.phase : "Active" }
  } as KubeObject
}

export const serviceDefaults = (object: KubeObject): KubeObject => {
  const json = asJson(object)
  const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
  const type = typeof spec.type === "string" && spec.type !== "" ? spec.type : "ClusterIP"
  spec.type = type
  if (spec.sessionAffinity === undefined) spec.sessionAffinity = "None"
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((p: unknown) => {
      if (!isObject(p)) return p
      const port: Json = { ...p }
      if (port.protocol === undefined) port.protocol = "TCP"
      if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") port.targetPort = port.port
      return port
    })
  }
  if (type !== "ExternalName") {
    if (spec.internalTrafficPolicy === undefined) spec.internalTrafficPolicy = "Cluster"
  }
  if ((type === "NodePort" || type === "LoadBalancer") && spec.externalTrafficPolicy === undefined) {
    spec.externalTrafficPolicy = "Cluster"
  }
  if (type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts === undefined) {
    spec.allocateLoadBalancerNodePorts = true
  }
  const status = isObject(json.status) ? json.status : {}
  return {
    ...object,
    spec,
    status: { ...status, loadBalancer: isObject(status.loadBalancer) ? status.loadBalancer : {} }
  } as KubeObject
}
