/**
 * `authorization.k8s.io/v1`: SelfSubjectAccessReview ("may I do this?") and
 * SelfSubjectRulesReview ("what may I do in this namespace?"), answered by the
 * server's own authorizer for the caller, as `kubectl auth can-i` asks them.
 * Nothing is stored: a review is created and answered in one request.
 */
import { Effect } from "effect"
import type { UserInfo } from "./Authentication.js"
import type { ServedGroupVersion } from "./internal/discovery.js"
import { failure, json, type Reply, statusReply } from "./internal/httpReply.js"
import type { Authorizer, RequestAttributes } from "./Rbac.js"

/** The group and version the reviews are served under. */
export const AUTHORIZATION_GROUP = "authorization.k8s.io"
const API_VERSION = `${AUTHORIZATION_GROUP}/v1`

const REVIEWS = [
  { name: "selfsubjectaccessreviews", kind: "SelfSubjectAccessReview" },
  { name: "selfsubjectrulesreviews", kind: "SelfSubjectRulesReview" }
] as const

/**
 * The group as discovery lists it: the review types, cluster-scoped and create-only,
 * since a review is answered in the request that creates it and never stored.
 * kube-apiserver also serves SubjectAccessReview and LocalSubjectAccessReview here;
 * LocalCluster does not, so it does not list them.
 */
export const reviewDiscovery: ServedGroupVersion = {
  group: AUTHORIZATION_GROUP,
  version: "v1",
  custom: false,
  resources: REVIEWS.map((r) => ({
    name: r.name,
    singularName: r.kind.toLowerCase(),
    namespaced: false,
    kind: r.kind,
    verbs: ["create"]
  }))
}

/** The review type a path names, if it names one: `apis/authorization.k8s.io/v1/<plural>`. */
export const reviewOf = (segments: ReadonlyArray<string>): (typeof REVIEWS)[number] | undefined =>
  segments.length === 4 && segments[0] === "apis" && segments[1] === AUTHORIZATION_GROUP && segments[2] === "v1"
    ? REVIEWS.find((r) => r.name === segments[3])
    : undefined

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const text = (record: Record<string, unknown> | undefined, key: string): string =>
  typeof record?.[key] === "string" ? (record[key] as string) : ""

const invalid = (kind: string, field: string, message: string): Reply =>
  statusReply(failure(422, "Invalid", `${kind}.${AUTHORIZATION_GROUP} "" is invalid: ${field}: ${message}`, {
    group: AUTHORIZATION_GROUP,
    kind,
    causes: [{ reason: "FieldValueRequired", message, field }]
  }))

/** Answers a review POSTed by `user`, whose body is `body`, with `authorizer`. */
export const answerReview = (
  review: (typeof REVIEWS)[number],
  user: UserInfo,
  body: unknown,
  authorizer: Authorizer
): Effect.Effect<Reply> =>
  Effect.gen(function*() {
    if (!isRecord(body) || (body.kind !== undefined && body.kind !== review.kind)) {
      return statusReply(failure(400, "BadRequest", `the body of the request is not a ${review.kind}`))
    }
    const spec = isRecord(body.spec) ? body.spec : {}
    const answer = (status: Record<string, unknown>) =>
      json(201, { kind: review.kind, apiVersion: API_VERSION, metadata: { creationTimestamp: null }, spec, status })
    if (review.kind === "SelfSubjectRulesReview") {
      const namespace = text(spec, "namespace")
      if (namespace === "") return invalid(review.kind, "spec.namespace", "Required value")
      const rules = yield* authorizer.rulesFor(user, namespace)
      return answer({ ...rules, incomplete: false })
    }
    const resource = isRecord(spec.resourceAttributes) ? spec.resourceAttributes : undefined
    const nonResource = isRecord(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined
    if ((resource === undefined) === (nonResource === undefined)) {
      return invalid(
        review.kind,
        "spec.resourceAttributes",
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
      )
    }
    const attributes: RequestAttributes = {
      user,
      verb: text(resource ?? nonResource, "verb"),
      resourceRequest: resource !== undefined,
      path: text(nonResource, "path"),
      apiGroup: text(resource, "group"),
      resource: text(resource, "resource"),
      subresource: text(resource, "subresource"),
      namespace: text(resource, "namespace"),
      name: text(resource, "name")
    }
    const decision = yield* authorizer.authorize(attributes)
    return answer({ allowed: decision.allowed, ...(decision.reason !== "" ? { reason: decision.reason } : {}) })
  })
