/**
 * The RBAC authorizer, as kube-apiserver runs it: a request is allowed when a rule of
 * a role bound to its user (or one of the user's groups) matches it, from the
 * ClusterRoleBindings anywhere and the RoleBindings of the request's namespace. Roles
 * and bindings are ordinary stored objects, so they are written with kubectl or apply.
 */
import { Effect } from "effect"
import { type PolicyRule, type Role, type RoleBinding, type Subject } from "session-routing/kubernetes"
import { MASTERS_GROUP, type UserInfo } from "./Authentication.js"
import {
  ClusterRoleBindingResource,
  ClusterRoleResource,
  RoleBindingResource,
  RoleResource
} from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** What an authorizer is asked: kube-apiserver's `authorizer.Attributes`. */
export interface RequestAttributes {
  readonly user: UserInfo
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; for a path, the HTTP method in lower case. */
  readonly verb: string
  /** A resource request names a group and resource; a non-resource request a path (`/apis`, `/version`). */
  readonly resourceRequest: boolean
  readonly path: string
  readonly apiGroup: string
  readonly resource: string
  readonly subresource: string
  /** `""` for a cluster-scoped request. */
  readonly namespace: string
  readonly name: string
}

/** Allowed or not, and why (RBAC's wording: which binding allowed it). */
export interface Decision {
  readonly allowed: boolean
  readonly reason: string
}

/** The rules that apply to a user in a namespace, as `SelfSubjectRulesReview` reports them. */
export interface RuleSet {
  readonly resourceRules: ReadonlyArray<PolicyRule>
  readonly nonResourceRules: ReadonlyArray<PolicyRule>
}

/** How a request or a review is authorized. */
export interface Authorizer {
  readonly authorize: (attributes: RequestAttributes) => Effect.Effect<Decision>
  readonly rulesFor: (user: UserInfo, namespace: string) => Effect.Effect<RuleSet>
}

/** `--authorization-mode=AlwaysAllow`: what LocalCluster does unless RBAC is on. */
export const alwaysAllow: Authorizer = {
  authorize: () => Effect.succeed({ allowed: true, reason: "" }),
  rulesFor: () =>
    Effect.succeed({
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
    })
}

const has = (values: ReadonlyArray<string> | undefined, value: string): boolean =>
  values !== undefined && (values.includes("*") || values.includes(value))

const resourceMatches = (rule: PolicyRule, resource: string, subresource: string): boolean => {
  const combined = subresource === "" ? resource : `${resource}/${subresource}`
  return (rule.resources ?? []).some((r) =>
    r === "*" || r === combined || (subresource !== "" && r === `*/${subresource}`)
  )
}

const pathMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some((url) =>
    url === "*" || url === path || (url.endsWith("*") && path.startsWith(url.slice(0, -1)))
  )

/** Whether one rule allows the request, by the rules of `rbac/v1`'s `RuleAllows`. */
export const ruleAllows = (attributes: RequestAttributes, rule: PolicyRule): boolean => {
  if (!has(rule.verbs, attributes.verb)) return false
  if (!attributes.resourceRequest) return pathMatches(rule, attributes.path)
  return (
    has(rule.apiGroups, attributes.apiGroup) &&
    resourceMatches(rule, attributes.resource, attributes.subresource) &&
    ((rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(attributes.name))
  )
}

const subjectMatches = (subject: Subject, user: UserInfo, bindingNamespace: string): boolean => {
  switch (subject.kind) {
    case "User":
      return subject.name === user.name
    case "Group":
      return user.groups.includes(subject.name)
    case "ServiceAccount":
      return user.name === `system:serviceaccount:${subject.namespace ?? bindingNamespace}:${subject.name}`
  }
}

const describeSubject = (subject: Subject, bindingNamespace: string): string =>
  subject.kind === "ServiceAccount"
    ? `ServiceAccount "${subject.name}/${subject.namespace ?? bindingNamespace}"`
    : `${subject.kind} "${subject.name}"`

/** A binding that applies to the user, with the rules of the role it names and the words that describe it. */
interface Grant {
  readonly rules: ReadonlyArray<PolicyRule>
  readonly describe: string
}

/** The RBAC authorizer over the store's roles and bindings; `system:masters` may do anything, as on every server. */
export const makeRbacAuthorizer = (store: ClusterStore): Authorizer => {
  const listed = <A extends Role | RoleBinding>(
    resource: typeof RoleResource | typeof RoleBindingResource,
    namespace?: string
  ) =>
    Effect.map(
      Effect.orElseSucceed(store.list(resource, namespace), () => ({ items: [], metadata: {} })),
      (l) => l.items as ReadonlyArray<A>
    )

  const roleRules = (kind: "Role" | "ClusterRole", name: string, namespace: string | undefined) =>
    Effect.map(
      Effect.option(
        kind === "Role" ? store.get(RoleResource, namespace, name) : store.get(ClusterRoleResource, undefined, name)
      ),
      (role) => (role._tag === "Some" ? role.value.rules ?? [] : [])
    )

  const grants = (user: UserInfo, namespace: string): Effect.Effect<ReadonlyArray<Grant>> =>
    Effect.gen(function*() {
      const bindings: Array<{ readonly binding: RoleBinding; readonly kind: "ClusterRoleBinding" | "RoleBinding" }> = [
        ...(yield* listed<RoleBinding>(ClusterRoleBindingResource)).map((binding) => ({
          binding,
          kind: "ClusterRoleBinding" as const
        })),
        ...(namespace === ""
          ? []
          : (yield* listed<RoleBinding>(RoleBindingResource, namespace)).map((binding) => ({
            binding,
            kind: "RoleBinding" as const
          })))
      ]
      const out: Array<Grant> = []
      for (const { binding, kind } of bindings) {
        const bindingNamespace = binding.metadata?.namespace ?? ""
        const subject = (binding.subjects ?? []).find((s) => subjectMatches(s, user, bindingNamespace))
        if (subject === undefined) continue
        // A ClusterRoleBinding may only name a ClusterRole; a RoleBinding either kind, granted in its namespace.
        const roleKind = kind === "ClusterRoleBinding" ? "ClusterRole" : binding.roleRef.kind
        const rules = yield* roleRules(roleKind, binding.roleRef.name, bindingNamespace)
        const bindingName = kind === "RoleBinding"
          ? `${binding.metadata?.name}/${bindingNamespace}`
          : binding.metadata?.name
        out.push({
          rules,
          describe: `${kind} "${bindingName}" of ${roleKind} "${binding.roleRef.name}" to ${
            describeSubject(subject, bindingNamespace)
          }`
        })
      }
      return out
    })

  return {
    authorize: (attributes) =>
      attributes.user.groups.includes(MASTERS_GROUP)
        ? Effect.succeed({ allowed: true, reason: "" })
        : Effect.map(grants(attributes.user, attributes.namespace), (all) => {
          const grant = all.find((g) => g.rules.some((rule) => ruleAllows(attributes, rule)))
          return grant === undefined
            ? { allowed: false, reason: "" }
            : { allowed: true, reason: `RBAC: allowed by ${grant.describe}` }
        }),
    rulesFor: (user, namespace) =>
      user.groups.includes(MASTERS_GROUP)
        ? alwaysAllow.rulesFor(user, namespace)
        : Effect.map(grants(user, namespace), (all) => {
          const rules = all.flatMap((g) => g.rules)
          return {
            resourceRules: rules.filter((r) => (r.nonResourceURLs ?? []).length === 0),
            nonResourceRules: rules.filter((r) => (r.nonResourceURLs ?? []).length > 0)
          }
        })
  }
}
