/**
 * The structural schema of each served type: Namespace, Service, Ingress,
 * IngressClass; the Gateway API's (v1) are derived from their one description, with
 * their CRD's defaults (`describedTypes.ts`).
 */
import type { ResourceType } from "../../domain/Resources.js"
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
import { workloadShapes } from "./workloadShapes.js"

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

const ingressBackend = struct({
  service: struct({ name: scalar, port: struct(scalars("name", "number")) }),
  resource: struct(scalars("apiGroup", "kind", "name"))
})

const ingressShape = topLevel(
  struct({
    ingressClassName: scalar,
    defaultBackend: ingressBackend,
    tls: atomicList(struct({ hosts: atomicList(scalar), secretName: scalar })),
    rules: atomicList(
      struct({
        host: scalar,
        http: struct({ paths: atomicList(struct({ path: scalar, pathType: scalar, backend: ingressBackend })) })
      })
    )
  }),
  struct({ loadBalancer: struct({ ingress: atomicList(struct({ ...scalars("ip", "hostname"), ports: portStatus })) }) })
)

const ingressClassShape = topLevel(
  struct({ controller: scalar, parameters: struct(scalars("apiGroup", "kind", "name", "scope", "namespace")) })
)

const shapes: ReadonlyMap<string, Shape> = new Map([
  ["namespaces", namespaceShape],
  ["services", serviceShape],
  ["ingresses.networking.k8s.io", ingressShape],
  ["ingressclasses.networking.k8s.io", ingressClassShape],
  ...describedShapes,
  ...workloadShapes,
  ...rbacShapes
])

/** The structural schema of a served type; an untyped one for anything else. */
export const shapeOf = (resource: ResourceType<unknown>): Shape =>
  shapes.get(resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`) ??
    topLevel(unknown, unknown)
