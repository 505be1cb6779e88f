/**
 * The structural schema of each served type: Namespace, Service, Ingress,
 * IngressClass, and the Gateway API's standard channel (v1), with their CRD defaults.
 */
import type { ResourceType } from "../../domain/Resources.js"
import {
  atomicList,
  conditions,
  mapList,
  scalar,
  scalars,
  setList,
  type Shape,
  stringMap,
  struct,
  topLevel,
  unknown
} from "./shape.js"
import { rbacShapes } from "./rbacShapes.js"
import { workloadShapes } from "./workloadShapes.js"

const portStatus = atomicList(struct(scalars("port", "protocol", "error")))
const loadBalancerStatus = struct({
  ingress: atomicList(struct({ ...scalars("ip", "hostname", "ipMode"), ports: portStatus }))
})

const namespaceShape = topLevel(
  struct({ finalizers: atomicList(scalar) }),
  struct({ phase: scalar, conditions: mapList(["type"], struct(scalars("type", "status", "lastTransitionTime", "reason", "message"))) })
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

// Gateway API (standard channel, v1). Lists without x-kubernetes-list-type are atomic.
const GATEWAY_GROUP = "gateway.networking.k8s.io"
const PATH_PREFIX_ROOT = { type: "PathPrefix", value: "/" }

const parentReference = struct(scalars("group", "kind", "namespace", "name", "sectionName", "port"), {
  defaults: { group: GATEWAY_GROUP, kind: "Gateway" }
})

const headerModifier = struct({
  set: mapList(["name"], struct(scalars("name", "value"))),
  add: mapList(["name"], struct(scalars("name", "value"))),
  remove: setList
})
const pathModifier = struct(scalars("type", "replaceFullPath", "replacePrefixMatch"))
const httpRouteFilter = struct({
  type: scalar,
  requestHeaderModifier: headerModifier,
  responseHeaderModifier: headerModifier,
  requestMirror: struct({
    backendRef: struct(scalars("group", "kind", "name", "namespace", "port"), { defaults: { group: "", kind: "Service" } }),
    percent: scalar,
    fraction: struct(scalars("numerator", "denominator"), { defaults: { denominator: 100 } })
  }),
  requestRedirect: struct({ ...scalars("scheme", "hostname", "port", "statusCode"), path: pathModifier }, {
    defaults: { statusCode: 302 }
  }),
  urlRewrite: struct({ hostname: scalar, path: pathModifier }),
  extensionRef: struct(scalars("group", "kind", "name"))
})
const httpHeaderMatch = struct(scalars("type", "name", "value"), { defaults: { type: "Exact" } })
const httpRouteMatch = struct(
  {
    path: struct(scalars("type", "value"), { defaults: { type: "PathPrefix", value: "/" } }),
    headers: mapList(["name"], httpHeaderMatch),
    queryParams: mapList(["name"], httpHeaderMatch),
    method: scalar
  },
  { defaults: { path: PATH_PREFIX_ROOT } }
)
const httpBackendRef = struct(
  { ...scalars("group", "kind", "name", "namespace", "port", "weight"), filters: atomicList(httpRouteFilter) },
  { defaults: { group: "", kind: "Service", weight: 1 } }
)
const httpRouteRule = struct(
  {
    name: scalar,
    matches: atomicList(httpRouteMatch),
    filters: atomicList(httpRouteFilter),
    backendRefs: atomicList(httpBackendRef),
    timeouts: struct(scalars("request", "backendRequest")),
    retry: struct({ codes: atomicList(scalar), attempts: scalar, backoff: scalar }),
    sessionPersistence: struct({
      ...scalars("sessionName", "absoluteTimeout", "idleTimeout", "type"),
      cookieConfig: struct(scalars("lifetimeType"))
    })
  },
  { defaults: { matches: [{ path: PATH_PREFIX_ROOT }] } }
)

const httpRouteShape = topLevel(
  struct(
    {
      parentRefs: atomicList(parentReference),
      hostnames: atomicList(scalar),
      rules: atomicList(httpRouteRule)
    },
    { defaults: { rules: [{ matches: [{ path: PATH_PREFIX_ROOT }] }] } }
  ),
  struct({
    parents: atomicList(struct({ parentRef: parentReference, controllerName: scalar, conditions }))
  })
)

const GATEWAY_PENDING_CONDITION = (type: string) => ({
  lastTransitionTime: "1970-01-01T00:00:00Z",
  message: "Waiting for controller",
  reason: "Pending",
  status: "Unknown",
  type
})

const allowedRoutes = struct(
  {
    namespaces: struct(
      {
        from: scalar,
        selector: struct({
          matchLabels: stringMap(),
          matchExpressions: atomicList(struct({ key: scalar, operator: scalar, values: atomicList(scalar) }))
        })
      },
      { defaults: { from: "Same" } }
    ),
    kinds: atomicList(struct(scalars("group", "kind")))
  },
  { defaults: { namespaces: { from: "Same" } } }
)

const gatewayShape = topLevel(
  struct({
    gatewayClassName: scalar,
    listeners: mapList(
      ["name"],
      struct(
        {
          ...scalars("name", "hostname", "port", "protocol"),
          tls: struct(
            {
              mode: scalar,
              certificateRefs: atomicList(
                struct(scalars("group", "kind", "name", "namespace"), { defaults: { group: "", kind: "Secret" } })
              ),
              options: stringMap()
            },
            { defaults: { mode: "Terminate" } }
          ),
          allowedRoutes
        },
        { defaults: { allowedRoutes: { namespaces: { from: "Same" } } } }
      )
    ),
    addresses: atomicList(struct(scalars("type", "value"), { defaults: { type: "IPAddress" } })),
    infrastructure: struct({
      labels: stringMap(),
      annotations: stringMap(),
      parametersRef: struct(scalars("group", "kind", "name"))
    })
  }),
  struct({
    addresses: atomicList(struct(scalars("type", "value"))),
    conditions,
    listeners: mapList(
      ["name"],
      struct({
        name: scalar,
        supportedKinds: atomicList(struct(scalars("group", "kind"))),
        attachedRoutes: scalar,
        conditions
      })
    )
  }),
  // The CRD defaults status, so a Gateway nobody reconciled still says why.
  { status: { conditions: [GATEWAY_PENDING_CONDITION("Accepted"), GATEWAY_PENDING_CONDITION("Programmed")] } }
)

const gatewayClassShape = topLevel(
  struct({
    controllerName: scalar,
    parametersRef: struct(scalars("group", "kind", "name", "namespace")),
    description: scalar
  }),
  struct({ conditions, supportedFeatures: atomicList(unknown) }),
  { status: { conditions: [GATEWAY_PENDING_CONDITION("Accepted")] } }
)

const shapes: ReadonlyMap<string, Shape> = new Map([
  ["namespaces", namespaceShape],
  ["services", serviceShape],
  ["ingresses.networking.k8s.io", ingressShape],
  ["ingressclasses.networking.k8s.io", ingressClassShape],
  ["gateways.gateway.networking.k8s.io", gatewayShape],
  ["gatewayclasses.gateway.networking.k8s.io", gatewayClassShape],
  ["httproutes.gateway.networking.k8s.io", httpRouteShape],
  ...workloadShapes,
  ...rbacShapes
])

/** The structural schema of a served type; an untyped one for anything else. */
export const shapeOf = (resource: ResourceType<unknown>): Shape =>
  shapes.get(resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`) ??
    topLevel(unknown, unknown)
