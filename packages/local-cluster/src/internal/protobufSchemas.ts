/**
 * The protobuf field numbers of the built-in types kubectl's generators send as protobuf
 * (`create serviceaccount`, `namespace`, `role`, `clusterrole`, `rolebinding`,
 * `clusterrolebinding`, `service`, `ingress`, and `auth reconcile`'s updates and deletes), as the
 * types' `generated.proto` files number them, with the JSON name each field has.
 */

/** How one field is read: its JSON name and the type of its value. */
export interface FieldSchema {
  readonly name: string
  readonly type: FieldType
  readonly repeated?: boolean
  /**
   * A Go pointer (`*bool`, `*string`): written only when set, so a present zero value
   * (`false`, `""`) is kept, where a plain field's zero value is what `omitempty` drops.
   */
  readonly pointer?: boolean
  /** An embedded struct whose fields JSON writes on the parent (`IngressRule.ingressRuleValue`). */
  readonly inline?: boolean
}

export type FieldType =
  | "string"
  | "int32"
  | "int64"
  | "bool"
  /** `map<string, string>`: repeated entries `{1: key, 2: value}`. */
  | "map"
  /** `intstr.IntOrString`: `{1: type (0 int, 1 string), 2: intVal, 3: strVal}`, one JSON number or string. */
  | "intOrString"
  | MessageSchema

/** A message's fields by number; fields it does not list are skipped, as unknown fields are. */
export type MessageSchema = { readonly [field: number]: FieldSchema }

const string = (name: string, options: Omit<FieldSchema, "name" | "type"> = {}): FieldSchema => ({
  name,
  type: "string",
  ...options
})
const strings = (name: string): FieldSchema => ({ name, type: "string", repeated: true })
const message = (name: string, type: MessageSchema, options: Omit<FieldSchema, "name" | "type"> = {}): FieldSchema => ({
  name,
  type,
  ...options
})
const messages = (name: string, type: MessageSchema): FieldSchema => ({ name, type, repeated: true })

// k8s.io/apimachinery/pkg/apis/meta/v1

const OwnerReference: MessageSchema = {
  1: string("kind"),
  3: string("name"),
  4: string("uid"),
  5: string("apiVersion"),
  6: { name: "controller", type: "bool", pointer: true },
  7: { name: "blockOwnerDeletion", type: "bool", pointer: true }
}

/**
 * ObjectMeta without the fields the server sets (selfLink 4, the timestamps 8 and 9,
 * deletionGracePeriodSeconds 10, managedFields 17): a create or update ignores them.
 */
const ObjectMeta: MessageSchema = {
  1: string("name"),
  2: string("generateName"),
  3: string("namespace"),
  5: string("uid"),
  6: string("resourceVersion"),
  7: { name: "generation", type: "int64" },
  11: { name: "labels", type: "map" },
  12: { name: "annotations", type: "map" },
  13: messages("ownerReferences", OwnerReference),
  14: strings("finalizers")
}

const LabelSelector: MessageSchema = {
  1: { name: "matchLabels", type: "map" },
  2: messages("matchExpressions", { 1: string("key"), 2: string("operator"), 3: strings("values") })
}

// k8s.io/api/rbac/v1

const PolicyRule: MessageSchema = {
  1: strings("verbs"),
  2: strings("apiGroups"),
  3: strings("resources"),
  4: strings("resourceNames"),
  5: strings("nonResourceURLs")
}

const Subject: MessageSchema = { 1: string("kind"), 2: string("apiGroup"), 3: string("name"), 4: string("namespace") }

const RoleRef: MessageSchema = { 1: string("apiGroup"), 2: string("kind"), 3: string("name") }

const Role: MessageSchema = { 1: message("metadata", ObjectMeta), 2: messages("rules", PolicyRule) }

const ClusterRole: MessageSchema = {
  ...Role,
  3: message("aggregationRule", { 1: messages("clusterRoleSelectors", LabelSelector) })
}

const RoleBinding: MessageSchema = {
  1: message("metadata", ObjectMeta),
  2: messages("subjects", Subject),
  3: message("roleRef", RoleRef)
}

// k8s.io/api/core/v1

const ObjectReference: MessageSchema = {
  1: string("kind"),
  2: string("namespace"),
  3: string("name"),
  4: string("uid"),
  5: string("apiVersion"),
  6: string("resourceVersion"),
  7: string("fieldPath")
}

const ServiceAccount: MessageSchema = {
  1: message("metadata", ObjectMeta),
  2: messages("secrets", ObjectReference),
  3: messages("imagePullSecrets", { 1: string("name") }),
  4: { name: "automountServiceAccountToken", type: "bool", pointer: true }
}

/** Only the spec: a Namespace's status (3) is the server's. */
const Namespace: MessageSchema = {
  1: message("metadata", ObjectMeta),
  2: message("spec", { 1: strings("finalizers") })
}

const ServicePort: MessageSchema = {
  1: string("name"),
  2: string("protocol"),
  3: { name: "port", type: "int32" },
  4: { name: "targetPort", type: "intOrString" },
  5: { name: "nodePort", type: "int32" },
  6: string("appProtocol", { pointer: true })
}

const ServiceSpec: MessageSchema = {
  1: messages("ports", ServicePort),
  2: { name: "selector", type: "map" },
  3: string("clusterIP"),
  4: string("type"),
  5: strings("externalIPs"),
  7: string("sessionAffinity"),
  8: string("loadBalancerIP"),
  9: strings("loadBalancerSourceRanges"),
  10: string("externalName"),
  11: string("externalTrafficPolicy"),
  12: { name: "healthCheckNodePort", type: "int32" },
  13: { name: "publishNotReadyAddresses", type: "bool" },
  14: message("sessionAffinityConfig", {
    1: message("clientIP", { 1: { name: "timeoutSeconds", type: "int32", pointer: true } })
  }),
  17: string("ipFamilyPolicy", { pointer: true }),
  18: strings("clusterIPs"),
  19: strings("ipFamilies"),
  20: { name: "allocateLoadBalancerNodePorts", type: "bool", pointer: true },
  21: string("loadBalancerClass", { pointer: true }),
  22: string("internalTrafficPolicy", { pointer: true }),
  23: string("trafficDistribution", { pointer: true })
}

/** Only the spec: a Service's status (3) is written through its subresource. */
const Service: MessageSchema = { 1: message("metadata", ObjectMeta), 2: message("spec", ServiceSpec) }

// k8s.io/api/networking/v1

const IngressBackend: MessageSchema = {
  3: message("resource", { 1: string("apiGroup", { pointer: true }), 2: string("kind"), 3: string("name") }),
  4: message("service", {
    1: string("name"),
    2: message("port", { 1: string("name"), 2: { name: "number", type: "int32" } })
  })
}

const IngressRule: MessageSchema = {
  1: string("host"),
  2: message("ingressRuleValue", {
    1: message("http", {
      1: messages("paths", {
        1: string("path"),
        2: message("backend", IngressBackend),
        3: string("pathType", { pointer: true })
      })
    })
  }, { inline: true })
}

/** Only the spec: an Ingress's status (3) is written through its subresource. */
const Ingress: MessageSchema = {
  1: message("metadata", ObjectMeta),
  2: message("spec", {
    1: message("defaultBackend", IngressBackend),
    2: messages("tls", { 1: strings("hosts"), 2: string("secretName") }),
    3: messages("rules", IngressRule),
    4: string("ingressClassName", { pointer: true })
  })
}

/**
 * A DELETE's options (meta/v1), which kubectl's typed client also sends as protobuf
 * (`auth reconcile` replacing a binding), named by the group version of the path.
 */
export const DeleteOptions: MessageSchema = {
  1: { name: "gracePeriodSeconds", type: "int64", pointer: true },
  2: message("preconditions", { 1: string("uid", { pointer: true }), 2: string("resourceVersion", { pointer: true }) }),
  3: { name: "orphanDependents", type: "bool", pointer: true },
  4: string("propagationPolicy", { pointer: true }),
  5: strings("dryRun")
}

/** The message of each type read from protobuf, by `apiVersion/kind`. */
export const protobufSchemas: ReadonlyMap<string, MessageSchema> = new Map([
  ["v1/ServiceAccount", ServiceAccount],
  ["v1/Namespace", Namespace],
  ["v1/Service", Service],
  ["rbac.authorization.k8s.io/v1/Role", Role],
  ["rbac.authorization.k8s.io/v1/ClusterRole", ClusterRole],
  ["rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding],
  ["rbac.authorization.k8s.io/v1/ClusterRoleBinding", RoleBinding],
  ["networking.k8s.io/v1/Ingress", Ingress]
])
