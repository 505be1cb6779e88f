/**
 * The checks that ask the API server about itself: whether the kubeconfig reaches it,
 * whether it serves the APIs the mode needs, and, by SelfSubjectAccessReview, whether
 * this identity may do what routing and its features do.
 */
import { Effect, Either } from "effect"
import { bindingSubject, describeNeed, grantHint, type Need, needResource } from "../../domain/Requirements.js"
import { qualifiedName } from "../../domain/Resources.js"
import type { ClusterQueries } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import type { CheckResult } from "../Check.js"
import { result } from "./CheckResults.js"

/** Whether the kubeconfig reaches an API server, and which Kubernetes it runs. */
export const serverCheck = (queries: ClusterQueries | undefined): Effect.Effect<CheckResult> =>
  queries === undefined
    ? Effect.succeed(
      result(
        "server",
        "warn",
        "this client cannot ask the API server about itself: server, APIs and permissions not checked"
      )
    )
    : queries.version.pipe(
      Effect.map((v) =>
        result(
          "server",
          "ok",
          `the kubeconfig${
            queries.context !== undefined ? `'s context "${queries.context}"` : ""
          } reaches ${queries.server}: Kubernetes ${v.gitVersion}`
        )
      ),
      Effect.catchAll((error) =>
        Effect.succeed(
          result(
            "server",
            "fail",
            `the kubeconfig does not reach an API server: ${error.reason}`,
            "check --kubeconfig and --context (or KUBECONFIG), the server address, and the credentials"
          )
        )
      )
    )

/** Whether the server serves every API `needs` names; the hint says what to install for `mode`. */
export const apiCheck = (
  queries: ClusterQueries | undefined,
  needs: ReadonlyArray<Need>,
  mode: "ingress" | "gateway"
): Effect.Effect<CheckResult> =>
  Effect.gen(function*() {
    if (queries === undefined) return result("api", "warn", "served APIs not checked")
    const groups = [...new Set(needs.map((n) => `${n.resource.group}|${n.resource.version}`))]
    const missing: Array<string> = []
    for (const key of groups) {
      const [group = "", version = ""] = key.split("|")
      const served = yield* Effect.either(queries.servedResources(group, version))
      const wanted = needs.filter((n) => n.resource.group === group && n.resource.version === version)
      if (Either.isLeft(served) && served.left._tag !== "NotServed") {
        return result("api", "warn", `could not ask which APIs are served: ${served.left.reason}`)
      }
      const plurals = Either.getOrElse(served, (): ReadonlyArray<string> => [])
      for (const need of wanted) {
        if (!plurals.includes(need.resource.plural)) missing.push(`${qualifiedName(need.resource)}/${version}`)
      }
    }
    if (missing.length === 0) {
      return result("api", "ok", `the API server serves ${needs.map((n) => qualifiedName(n.resource)).join(", ")}`)
    }
    return result(
      "api",
      "fail",
      `the API server does not serve ${missing.join(", ")}`,
      mode === "gateway"
        ? "install the Gateway API CRDs (standard channel), or set SESSION_ROUTING_MODE=ingress"
        : "this cluster has no Ingress API (networking.k8s.io/v1, Kubernetes 1.19 or later): upgrade it, or set SESSION_ROUTING_MODE=gateway"
    )
  })

/** Why no access review could be made: the server does not serve them, or refuses this identity. */
const reviewUnavailable = (error: KubeError): string =>
  error._tag === "NotServed"
    ? "the API server does not answer SelfSubjectAccessReview"
    : `SelfSubjectAccessReview failed: ${error.reason}`

/**
 * One check per need, by access review: a required verb denied fails, an optional one
 * warns. A refusal's hint grants the verbs to the caller, in a Role (and binding) named
 * after `role` and the resource.
 */
export const permissionChecks = (
  queries: ClusterQueries | undefined,
  needs: ReadonlyArray<Need>,
  role?: string
): Effect.Effect<ReadonlyArray<CheckResult>> =>
  Effect.gen(function*() {
    if (queries === undefined) return [result("permissions", "warn", "permissions not checked")]
    const checks: Array<CheckResult> = []
    // Whom a refusal's grant binds: who the server says the caller is, asked once, when needed.
    const subject = yield* Effect.cached(
      queries.whoAmI.pipe(
        Effect.map(({ username }) => bindingSubject(username)),
        Effect.orElseSucceed(() => bindingSubject(undefined))
      )
    )
    for (const need of needs) {
      const id = `permissions:${needResource(need)}`
      const answers = yield* Effect.forEach(need.verbs, (verb) =>
        Effect.either(queries.accessReview({
          verb,
          group: need.resource.group,
          resource: need.resource.plural,
          ...(need.subresource !== undefined ? { subresource: need.subresource } : {}),
          ...(need.namespace !== undefined ? { namespace: need.namespace } : {})
        })).pipe(Effect.map((answer) => ({ verb, answer }))), { concurrency: 4 })
      const failed = answers.find((a) => Either.isLeft(a.answer))
      if (failed !== undefined && Either.isLeft(failed.answer)) {
        // Without reviews nothing can be said about any verb: one line, not one per resource.
        return [
          result(
            "permissions",
            "warn",
            `permissions not checked: ${reviewUnavailable(failed.answer.left)}`,
            "check them by hand: kubectl auth can-i --list -n <namespace>"
          )
        ]
      }
      const denied = answers.filter((a) => Either.isRight(a.answer) && !a.answer.right.allowed).map((a) => a.verb)
      if (denied.length === 0) {
        checks.push(result(id, "ok", `may ${need.verbs.join(", ")} ${describeNeed(need)}`))
      } else {
        checks.push(
          result(
            id,
            need.required ? "fail" : "warn",
            `may not ${denied.join(", ")} ${describeNeed(need)}${need.required ? "" : ` (used only for ${need.use})`}`,
            grantHint(need, denied, yield* subject, role)
          )
        )
      }
    }
    return checks
  })
