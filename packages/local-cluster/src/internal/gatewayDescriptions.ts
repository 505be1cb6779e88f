/**
 * The Gateway API's standard channel (v1) as LocalCluster serves it: Gateway and
 * GatewayClass described once, with the reference types HTTPRoute shares, each node
 * carrying how it merges and what its CRD declares (checks, defaults, CEL rules).
 */
import { type CelRule, rule } from "./crdSchema.js"
import {
  defaulting,
  type Description,
  documented,
  int32,
  int64,
  type KindDescription,
  list,
  listMap,
  map,
  object,
  string,
  strings,
  unknown
} from "./typeDescription.js"

// The Gateway API v1 string types, as their CRDs declare them.
const GROUP_PATTERN = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const KIND_PATTERN = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
const NAMESPACE_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
const SECTION_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const HOSTNAME_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const PROTOCOL_PATTERN =
  "^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$"

export const GATEWAY_GROUP = "gateway.networking.k8s.io"

export const group = string({ maxLength: 253, pattern: GROUP_PATTERN })
export const kind = string({ minLength: 1, maxLength: 63, pattern: KIND_PATTERN })
export const objectName = string({ minLength: 1, maxLength: 253 })
export const namespace = string({ minLength: 1, maxLength: 63, pattern: NAMESPACE_PATTERN })
export const sectionName = string({ minLength: 1, maxLength: 253, pattern: SECTION_NAME_PATTERN })
export const hostname = string({ minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN })
export const portNumber = int32({ minimum: 1, maximum: 65535 })

export const conditions = listMap(
  ["type"],
  object({
    ...strings("type", "status"),
    observedGeneration: int64(),
    ...strings("lastTransitionTime", "reason", "message")
  })
)

type ParentRefValue = {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly sectionName?: string
}

/** Two parentRefs that select the same object (the CRD's CEL, defaults applied). */
const sameParent = (a: ParentRefValue, b: ParentRefValue): boolean =>
  a.group === b.group &&
  a.kind === b.kind &&
  a.name === b.name &&
  (((a.namespace ?? "") === "" && (b.namespace ?? "") === "") ||
    (a.namespace !== undefined && b.namespace !== undefined && a.namespace === b.namespace))

const noSection = (p: ParentRefValue): boolean => (p.sectionName ?? "") === ""

export const parentReference = object(
  {
    group: documented(defaulting(group, GATEWAY_GROUP), "Group of the parent; gateway.networking.k8s.io unless set."),
    kind: documented(defaulting(kind, "Gateway"), "Kind of the parent; Gateway unless set."),
    name: documented(objectName, "Name of the parent."),
    namespace: documented(
      namespace,
      "Namespace of the parent; the route's own unless set. The listener must allow routes from this namespace."
    ),
    port: documented(portNumber, "A listener of the Gateway, by port."),
    sectionName: documented(
      sectionName,
      "A listener of the Gateway, by name. Unset: every listener that admits the route."
    )
  },
  { required: ["name"] }
)

// The standard channel's two rules on parentRefs that select the same parent.
export const parentRefRules: ReadonlyArray<CelRule> = [
  rule<ReadonlyArray<ParentRefValue>>(
    "sectionName must be specified when parentRefs includes 2 or more references to the same parent",
    (self) => self.every((p1) => self.every((p2) => (sameParent(p1, p2) ? noSection(p1) === noSection(p2) : true)))
  ),
  rule<ReadonlyArray<ParentRefValue>>(
    "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
    (self) =>
      self.every(
        (p1) =>
          self.filter(
            (p2) =>
              sameParent(p1, p2) &&
              ((noSection(p1) && noSection(p2)) ||
                (p1.sectionName !== undefined && p2.sectionName !== undefined && p1.sectionName === p2.sectionName))
          ).length === 1
      )
  )
]

/** The condition a CRD defaults status to, so an object nobody reconciled still says why. */
const pending = (type: string) => ({
  lastTransitionTime: "1970-01-01T00:00:00Z",
  message: "Waiting for controller",
  reason: "Pending",
  status: "Unknown",
  type
})

type ListenerValue = {
  readonly name?: string
  readonly port?: number
  readonly protocol?: string
  readonly hostname?: string
  readonly tls?: { readonly mode?: string }
}

const listenersOnly = (
  self: ReadonlyArray<ListenerValue>,
  protocols: ReadonlyArray<string>,
  ok: (l: ListenerValue) => boolean
) => self.every((l) => (protocols.includes(l.protocol ?? "") ? ok(l) : true))

const listenerRules: ReadonlyArray<CelRule> = [
  rule<ReadonlyArray<ListenerValue>>(
    "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    (self) => listenersOnly(self, ["HTTP", "TCP", "UDP"], (l) => l.tls === undefined)
  ),
  rule<ReadonlyArray<ListenerValue>>(
    "tls mode must be Terminate for protocol HTTPS",
    (self) =>
      listenersOnly(self, ["HTTPS"], (l) => l.tls === undefined || l.tls.mode === "" || l.tls.mode === "Terminate")
  ),
  rule<ReadonlyArray<ListenerValue>>(
    "hostname must not be specified for protocols ['TCP', 'UDP']",
    (self) => listenersOnly(self, ["TCP", "UDP"], (l) => (l.hostname ?? "") === "")
  ),
  rule<ReadonlyArray<ListenerValue>>(
    "Listener name must be unique within the Gateway",
    (self) => self.every((l1) => self.filter((l2) => l1.name === l2.name).length === 1)
  ),
  rule<ReadonlyArray<ListenerValue>>(
    "Combination of port, protocol and hostname must be unique for each listener",
    (self) =>
      self.every(
        (l1) =>
          self.filter(
            (l2) =>
              l1.port === l2.port &&
              l1.protocol === l2.protocol &&
              (l1.hostname !== undefined && l2.hostname !== undefined
                ? l1.hostname === l2.hostname
                : l1.hostname === undefined && l2.hostname === undefined)
          ).length === 1
      )
  )
]

const routeGroupKind = object({ group, kind }, { required: ["kind"] })

const allowedRoutes: Description = object({
  namespaces: object({
    from: string({ enum: ["All", "Selector", "Same"], default: "Same" }),
    selector: object({
      matchLabels: map(),
      matchExpressions: list(object({ ...strings("key", "operator"), values: list(string()) }))
    })
  }, { default: { from: "Same" } }),
  kinds: list(routeGroupKind, { maxItems: 8 })
}, { default: { namespaces: { from: "Same" } } })

const listener = object({
  name: sectionName,
  hostname,
  port: portNumber,
  protocol: string({ minLength: 1, maxLength: 255, pattern: PROTOCOL_PATTERN }),
  tls: object({
    mode: string({ enum: ["Terminate", "Passthrough"], default: "Terminate" }),
    certificateRefs: list(object({
      group: string({ default: "" }),
      kind: string({ default: "Secret" }),
      ...strings("name", "namespace")
    })),
    options: map()
  }),
  allowedRoutes
}, { required: ["name", "port", "protocol"] })

/** Gateway v1: spec and status, as the standard channel's CRD declares them. */
export const gatewayDescription: KindDescription = {
  required: ["spec"],
  spec: object({
    gatewayClassName: objectName,
    listeners: listMap(["name"], listener, { minItems: 1, maxItems: 64, rules: listenerRules }),
    addresses: list(object({ type: string({ default: "IPAddress" }), value: string() })),
    infrastructure: object({
      labels: map(),
      annotations: map(),
      parametersRef: object(strings("group", "kind", "name"))
    })
  }, { required: ["gatewayClassName", "listeners"] }),
  status: object({
    addresses: list(object(strings("type", "value"))),
    conditions,
    listeners: listMap(
      ["name"],
      object({
        name: string(),
        supportedKinds: list(object(strings("group", "kind"))),
        attachedRoutes: int32(),
        conditions
      })
    )
  }, { default: { conditions: [pending("Accepted"), pending("Programmed")] } })
}

/** GatewayClass v1: which controller answers for Gateways of the class. */
export const gatewayClassDescription: KindDescription = {
  spec: object({
    controllerName: string(),
    parametersRef: object(strings("group", "kind", "name", "namespace")),
    description: string()
  }),
  status: object({ conditions, supportedFeatures: list(unknown) }, { default: { conditions: [pending("Accepted")] } })
}
