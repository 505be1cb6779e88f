/**
 * What the API server refuses of RBAC's types and ServiceAccounts, worded as
 * pkg/apis/rbac/validation words it: names are path segments (`system:discovery` is
 * fine), every rule needs verbs and either resources with groups or non-resource URLs,
 * and a binding names a role of a kind it may bind and subjects of a known kind.
 */
import type { ObjectMeta } from "session-routing/kubernetes"
import { child, type FieldError, index, invalid, notSupported, required } from "./fieldErrors.js"
import { isValidPathSegmentName } from "./nameRules.js"
import { asArray, asRecord, asString, type JsonRecord, nameIsDnsSubdomain, validateObjectMeta } from "./objectMeta.js"

const RBAC_GROUP = "rbac.authorization.k8s.io"

const pathSegmentName = (name: string): ReadonlyArray<string> => isValidPathSegmentName(name)

const validateRule = (rule: JsonRecord, path: string, namespaced: boolean): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const list = (key: string) => asArray(rule[key])
  if (list("verbs").length === 0) errs.push(required(child(path, "verbs"), "verbs must contain at least one value"))
  if (list("nonResourceURLs").length > 0) {
    if (namespaced) {
      errs.push(
        invalid(
          child(path, "nonResourceURLs"),
          list("nonResourceURLs"),
          "namespaced rules cannot apply to non-resource URLs"
        )
      )
    }
    if (list("apiGroups").length > 0 || list("resources").length > 0 || list("resourceNames").length > 0) {
      errs.push(
        invalid(
          child(path, "nonResourceURLs"),
          list("nonResourceURLs"),
          "rules cannot apply to both regular resources and non-resource URLs"
        )
      )
    }
    return errs
  }
  if (list("apiGroups").length === 0) {
    errs.push(required(child(path, "apiGroups"), "resource rules must supply at least one api group"))
  }
  if (list("resources").length === 0) {
    errs.push(required(child(path, "resources"), "resource rules must supply at least one resource"))
  }
  return errs
}

const validateSubject = (subject: JsonRecord, path: string, namespaced: boolean): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const name = asString(subject.name)
  const kind = asString(subject.kind)
  const apiGroup = asString(subject.apiGroup)
  if (name === "") errs.push(required(child(path, "name")))
  switch (kind) {
    case "ServiceAccount":
      if (name !== "") {
        errs.push(...nameIsDnsSubdomain(name, false).map((msg) => invalid(child(path, "name"), name, msg)))
      }
      if (apiGroup !== "") errs.push(notSupported(child(path, "apiGroup"), apiGroup, [""]))
      if (!namespaced && asString(subject.namespace) === "") errs.push(required(child(path, "namespace")))
      break
    case "User":
    case "Group":
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(child(path, "apiGroup"), apiGroup, [RBAC_GROUP]))
      break
    default:
      errs.push(notSupported(child(path, "kind"), kind, ["ServiceAccount", "User", "Group"]))
  }
  return errs
}

const validateBinding = (body: JsonRecord, namespaced: boolean): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const roleRef = asRecord(body.roleRef)
  const apiGroup = asString(roleRef.apiGroup)
  const kind = asString(roleRef.kind)
  const name = asString(roleRef.name)
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported("roleRef.apiGroup", apiGroup, [RBAC_GROUP]))
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"]
  if (!kinds.includes(kind)) errs.push(notSupported("roleRef.kind", kind, kinds))
  if (name === "") errs.push(required("roleRef.name"))
  else errs.push(...pathSegmentName(name).map((msg) => invalid("roleRef.name", name, msg)))
  asArray(body.subjects).forEach((s, i) => errs.push(...validateSubject(asRecord(s), index("subjects", i), namespaced)))
  return errs
}

/** The field errors of a create of an RBAC object or ServiceAccount; undefined for any other kind. */
export const validateRbac = (group: string, kind: string, body: JsonRecord): ReadonlyArray<FieldError> | undefined => {
  const meta = body.metadata as ObjectMeta | undefined
  if (group === "" && kind === "ServiceAccount") {
    return validateObjectMeta(meta, { namespaced: true, name: nameIsDnsSubdomain })
  }
  if (group !== RBAC_GROUP) return undefined
  const namespaced = kind === "Role" || kind === "RoleBinding"
  const errs = validateObjectMeta(meta, { namespaced, name: pathSegmentName })
  if (kind === "Role" || kind === "ClusterRole") {
    asArray(body.rules).forEach((r, i) => errs.push(...validateRule(asRecord(r), index("rules", i), namespaced)))
    return errs
  }
  return [...errs, ...validateBinding(body, namespaced)]
}
