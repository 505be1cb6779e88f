/**
 * The structural schema of RBAC's four types and ServiceAccounts: their fields sit at
 * the top level (`rules`, `roleRef`, `subjects`), not under `spec`. Every list is atomic,
 * as the Go types declare none of them mergeable.
 */
import { atomicList, objectMeta, scalar, scalars, type Shape, struct, typed, unknown } from "./shape.js"

const policyRule = struct({
  verbs: atomicList(scalar),
  apiGroups: atomicList(scalar),
  resources: atomicList(scalar),
  resourceNames: atomicList(scalar),
  nonResourceURLs: atomicList(scalar)
})

const role: Shape = struct({ apiVersion: scalar, kind: scalar, metadata: objectMeta, rules: atomicList(policyRule) })
const clusterRole: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  rules: atomicList(policyRule),
  aggregationRule: unknown
})
const binding: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  roleRef: struct(scalars("apiGroup", "kind", "name")),
  subjects: atomicList(struct(scalars("kind", "apiGroup", "name", "namespace")))
})
const serviceAccount: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  secrets: atomicList(unknown),
  imagePullSecrets: atomicList(unknown),
  automountServiceAccountToken: typed("bool")
})

/** The shapes of the RBAC types and ServiceAccounts, by qualified resource name. */
export const rbacShapes: ReadonlyArray<readonly [string, Shape]> = [
  ["serviceaccounts", serviceAccount],
  ["roles.rbac.authorization.k8s.io", role],
  ["clusterroles.rbac.authorization.k8s.io", clusterRole],
  ["rolebindings.rbac.authorization.k8s.io", binding],
  ["clusterrolebindings.rbac.authorization.k8s.io", binding]
]
