/**
 * The least privilege a runner needs, as RBAC objects: a ServiceAccount, a Role in the
 * session namespace with exactly the verbs the routers use (server-side apply is
 * `patch`, and also `create` when the object does not exist yet, dry runs included), read access
 * to what the gateway verdict and diagnosis read, Events in both groups, and the
 * Pod's finalizers for the blocking owner reference. Controller mode adds its Pods and its Lease.
 */
import type { KubeObject, PolicyRule, Role, RoleBinding, ServiceAccount } from "./Objects.js"

/**
 * What decides the grants: the mode, the namespaces, and how route status is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface RbacSettings {
  readonly mode: "ingress" | "gateway"
  readonly sessionNamespace: string
  /** The Gateway the routes attach to (gateway mode); its namespace defaults to the session namespace. */
  readonly gateway?: { readonly name: string; readonly namespace?: string }
  /** `watch` lists and watches the routed kind; `poll` only gets it. */
  readonly statusSource: "watch" | "poll"
  /** The ServiceAccount's name; default `session-routing`. */
  readonly serviceAccount?: string
  /** Programmed hosts are probed (`SESSION_ROUTE_PROBE`), which reads the Service's EndpointSlices. */
  readonly probe?: boolean
  /** Grant controller mode's own verbs too (`controllerRules`): it finds the Pods itself and elects a leader. */
  readonly controller?: boolean
}

const RBAC_API = "rbac.authorization.k8s.io/v1"
const RBAC_GROUP = "rbac.authorization.k8s.io"
/**
 * The name of the ServiceAccount, and of the Role and RoleBinding in the session
 * namespace (one runner per namespace). Objects that live elsewhere carry the
 * session namespace in their name (`rbacObjectName`), so installs never collide.
 *
 * @since 0.1.0
 * @category constants
 */
export const RBAC_NAME = "session-routing"

/**
 * The name of the objects one install keeps outside its namespace: the ClusterRole
 * and ClusterRoleBinding (per namespace and mode, since their rules differ by mode),
 * and the Role and RoleBinding in a Gateway's namespace. A second install, for
 * another namespace or mode, then adds its own instead of replacing the first's
 * subject or rules.
 *
 * @since 0.1.0
 * @category rules
 */
export const rbacObjectName = (name: string, settings: Pick<RbacSettings, "sessionNamespace">, mode?: string): string =>
  `${name}:${settings.sessionNamespace}${mode !== undefined ? `:${mode}` : ""}`
const LABELS = { "app.kubernetes.io/name": "session-routing", "app.kubernetes.io/component": "rbac" }

const rule = (
  apiGroup: string,
  resource: string,
  verbs: ReadonlyArray<string>,
  resourceNames?: ReadonlyArray<string>
): PolicyRule => ({
  apiGroups: [apiGroup],
  resources: [resource],
  ...(resourceNames !== undefined ? { resourceNames } : {}),
  verbs: [...verbs].sort()
})

/**
 * The rules of the Role in the session namespace. The routed kind is written (`patch`, `create` the first time),
 * read back (`get`: `status`, polling), found by label to unpublish (`list`) and deleted;
 * the shared watch adds `list` and `watch`. The Service is applied, found by label and
 * deleted, never read alone. The namespace itself is read (check, the gateway's
 * allowedRoutes): a request on a namespace is authorized in that namespace, so a Role can grant it.
 *
 * @since 0.1.0
 * @category rules
 */
export const sessionRules = (settings: RbacSettings): ReadonlyArray<PolicyRule> => {
  const routedVerbs = [
    "create",
    "delete",
    "get",
    "list",
    "patch",
    ...(settings.statusSource === "watch" ? ["watch"] : [])
  ]
  const gatewayNamespace = settings.gateway?.namespace ?? settings.sessionNamespace
  return [
    rule("", "services", ["create", "delete", "get", "list", "patch"]),
    settings.mode === "ingress"
      ? rule("networking.k8s.io", "ingresses", routedVerbs)
      : rule("gateway.networking.k8s.io", "httproutes", routedVerbs),
    // A repeated reason is counted on the Event already written (series.count), as
    // client-go's recorder does: that is a patch.
    rule("events.k8s.io", "events", ["create", "patch"]),
    // The recorder falls back to core/v1 where events.k8s.io is not served.
    rule("", "events", ["create", "patch"]),
    // Setting an owner reference that blocks the Pod's deletion takes this where
    // OwnerReferencesPermissionEnforcement is on (OpenShift).
    rule("", "pods/finalizers", ["update"]),
    rule("", "namespaces", ["get"], [settings.sessionNamespace]),
    ...(settings.mode === "gateway" && settings.gateway !== undefined && gatewayNamespace === settings.sessionNamespace
      ? [rule("gateway.networking.k8s.io", "gateways", ["get"])]
      : []),
    // The probe reports a programmed host whose Service has no ready endpoint.
    ...(settings.probe === true ? [rule("discovery.k8s.io", "endpointslices", ["list"])] : []),
    ...(settings.controller === true ? controllerRules : [])
  ]
}

/**
 * What controller mode does beyond a runner's routing, in the session namespace: it
 * reads and watches the labelled Pods (a relist after a broken watch is `list`), merges
 * the session-id label and the endpoints annotation into each Pod (`patch`), writes
 * the RoutesProgrammed condition through `pods/status`, which a grant on `pods` does
 * not cover, and elects a leader on a Lease: `get` to read the holder, `create` the
 * first time, `update` (a PUT naming the version read) to take or renew it. The
 * Lease's name is not pinned with `resourceNames`: `create` cannot be, and each shard
 * stands for a Lease of its own.
 *
 * @since 0.1.0
 * @category rules
 */
export const controllerRules: ReadonlyArray<PolicyRule> = [
  rule("", "pods", ["get", "list", "patch", "watch"]),
  rule("", "pods/status", ["patch"]),
  rule("coordination.k8s.io", "leases", ["create", "get", "list", "update"])
]

/**
 * The cluster-scoped reads: IngressClasses (which one is default, which controller), or GatewayClasses (the Gateway's controller).
 *
 * @since 0.1.0
 * @category rules
 */
export const clusterRules = (settings: RbacSettings): ReadonlyArray<PolicyRule> =>
  settings.mode === "ingress"
    ? [rule("networking.k8s.io", "ingressclasses", ["list"])]
    : [rule("gateway.networking.k8s.io", "gatewayclasses", ["get"])]

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace !== undefined ? { namespace } : {}),
  labels: LABELS
})

const binding = (
  kind: "RoleBinding" | "ClusterRoleBinding",
  name: string,
  namespace: string | undefined,
  sa: ServiceAccount
): RoleBinding => ({
  apiVersion: RBAC_API,
  kind,
  metadata: meta(name, namespace),
  // Each binding refers to the role of the same name beside it.
  roleRef: { apiGroup: RBAC_GROUP, kind: kind === "RoleBinding" ? "Role" : "ClusterRole", name },
  subjects: [{ kind: "ServiceAccount", name: sa.metadata!.name!, namespace: sa.metadata!.namespace! }]
})

/**
 * Every object to apply, in the order `kubectl apply -f` needs them.
 *
 * @since 0.1.0
 * @category rules
 */
export const rbacManifest = (settings: RbacSettings): ReadonlyArray<KubeObject> => {
  const name = settings.serviceAccount ?? RBAC_NAME
  const sa: ServiceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(name, settings.sessionNamespace)
  }
  const role = (
    kind: "Role" | "ClusterRole",
    roleName: string,
    namespace: string | undefined,
    rules: ReadonlyArray<PolicyRule>
  ): Role => ({
    apiVersion: RBAC_API,
    kind,
    metadata: meta(roleName, namespace),
    rules
  })
  const elsewhere = rbacObjectName(name, settings)
  const clusterWide = rbacObjectName(name, settings, settings.mode)
  const gatewayNamespace = settings.gateway?.namespace ?? settings.sessionNamespace
  // A Gateway in another namespace is read there, through a Role and binding of its own.
  const gatewayElsewhere =
    settings.mode === "gateway" && settings.gateway !== undefined && gatewayNamespace !== settings.sessionNamespace
      ? [
        role("Role", elsewhere, gatewayNamespace, [rule("gateway.networking.k8s.io", "gateways", ["get"])]),
        binding("RoleBinding", elsewhere, gatewayNamespace, sa)
      ]
      : []
  return [
    sa,
    role("Role", name, settings.sessionNamespace, sessionRules(settings)),
    binding("RoleBinding", name, settings.sessionNamespace, sa),
    ...gatewayElsewhere,
    role("ClusterRole", clusterWide, undefined, clusterRules(settings)),
    binding("ClusterRoleBinding", clusterWide, undefined, sa)
  ]
}
