/**
 * The roles and bindings every RBAC cluster starts with (kube-apiserver's bootstrap
 * policy, the part a client meets): discovery and the self-reviews for every
 * authenticated user, health and version for anyone, and cluster-admin for system:masters.
 */
import type { PolicyRule, Role, RoleBinding } from "session-routing/kubernetes"
import { MASTERS_GROUP } from "../Authentication.js"

const RBAC = "rbac.authorization.k8s.io/v1"
const metadata = (name: string) => ({
  name,
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" }
})

const clusterRole = (name: string, rules: ReadonlyArray<PolicyRule>): Role => ({
  apiVersion: RBAC,
  kind: "ClusterRole",
  metadata: metadata(name),
  rules
})

const bindToGroups = (name: string, groups: ReadonlyArray<string>): RoleBinding => ({
  apiVersion: RBAC,
  kind: "ClusterRoleBinding",
  metadata: metadata(name),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
  subjects: groups.map((group) => ({ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: group }))
})

const PUBLIC_PATHS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

/** The bootstrap ClusterRoles. */
export const bootstrapRoles: ReadonlyArray<Role> = [
  clusterRole("cluster-admin", [
    { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
    { verbs: ["*"], nonResourceURLs: ["*"] }
  ]),
  clusterRole("system:discovery", [
    {
      verbs: ["get"],
      nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", ...PUBLIC_PATHS]
    }
  ]),
  clusterRole("system:public-info-viewer", [{ verbs: ["get"], nonResourceURLs: PUBLIC_PATHS }]),
  clusterRole("system:basic-user", [
    {
      verbs: ["create"],
      apiGroups: ["authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
    },
    { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] }
  ])
]

/** The bootstrap ClusterRoleBindings. */
export const bootstrapBindings: ReadonlyArray<RoleBinding> = [
  bindToGroups("cluster-admin", [MASTERS_GROUP]),
  bindToGroups("system:discovery", ["system:authenticated"]),
  bindToGroups("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
  bindToGroups("system:basic-user", ["system:authenticated"])
]
