/**
 * The structural schema of each served type: Namespace and Service here; Ingress,
 * IngressClass, Pod, Event, EndpointSlice, Lease and the Gateway API's (v1) derived
 * from their one description each, defaults included (`describedTypes.ts`).
 */
import type { ServedResource } from "../ServedResources.js"
import { describedShapes } from "./describedTypes.js"
import { rbacShapes } from "./rbacShapes.js"
import {
  atomicList,
  conditions,
  mapList,
  scalar,
  scalars,
  type Shape,
  stringMap,
  struct,
  topLevel,
  unknown
} from "./shape.js"

const portStatus = atomicList(struct(scalars("port", "protocol", "error")))
const loadBalancerStatus = struct({
  ingress: atomicList(struct({ ...scalars("ip", "hostname", "ipMode"), ports: portStatus }))
})

const namespaceShape = topLevel(
  struct({ finalizers: atomicList(scalar) }),
  struct({
    phase: scalar,
    conditions: mapList(["type"], struct(scalars("type", "status", "lastTransitionTime", "reason", "message")))
  })
)

const serviceShape = topLevel(
  struct({
    ports: mapList(
      ["port", "protocol"],
      struct(scalars("name", "protocol", "appProtocol", "port", "targetPort", "nodePort")),
      { protocol: "TCP" }
    ),
    selector: stringMap(true),
    clusterIPs: atomicList(scalar),
    externalIPs: atomicList(scalar),
    loadBalancerSourceRanges: atomicList(scalar),
    ipFamilies: atomicList(scalar),
    sessionAffinityConfig: struct({ clientIP: struct(scalars("timeoutSeconds")) }),
    ...scalars(
      "clusterIP",
      "type",
      "sessionAffinity",
      "loadBalancerIP",
      "externalName",
      "externalTrafficPolicy",
      "healthCheckNodePort",
      "publishNotReadyAddresses",
      "ipFamilyPolicy",
      "allocateLoadBalancerNodePorts",
      "loadBalancerClass",
      "internalTrafficPolicy",
      "trafficDistribution"
    )
  }),
  struct({ loadBalancer: loadBalancerStatus, conditions })
)

const shapes: ReadonlyMap<string, Shape> = new Map([
  ["namespaces", namespaceShape],
  ["services", serviceShape],
  ...describedShapes,
  ...rbacShapes
])

/** The structural schema of a served type; an untyped one for anything else. */
export const shapeOf = (resource: ServedResource<unknown>): Shape =>
  shapes.get(resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`) ??
    topLevel(unknown, unknown)
