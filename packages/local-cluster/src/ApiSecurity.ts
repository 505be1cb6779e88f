/**
 * What the API server does with a request before any handler sees it: authenticate it
 * (401 when the credentials are not recognised), answer the self-reviews (who am I, and
 * what may I do), and authorize it (403 worded as the authorizer words it). Off by
 * default: an open LocalCluster allows everything, as `--authorization-mode=AlwaysAllow` does.
 */
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"
import type { Status } from "session-routing/kubernetes"
import { answerReview, AUTHORIZATION_GROUP, reviewOf } from "./AccessReview.js"
import { anonymousUser, type Authenticator, unauthorizedStatus } from "./Authentication.js"
import { failure, mediaType, methodNotAllowed, readBody, type Reply, statusReply } from "./internal/httpReply.js"
import type { Route, Target } from "./internal/httpRouting.js"
import { decodeReview } from "./internal/protobufReview.js"
import { isProtobuf } from "./internal/protobufWire.js"
import { alwaysAllow, type Authorizer, type RequestAttributes } from "./Rbac.js"
import { answerSelfSubjectReview, isSelfSubjectReview, selfSubjectReviewAttributes } from "./SelfSubjectReview.js"

/** How a server tells who is asking and what they may do. */
export interface ApiSecurity {
  /** Unset: no authentication; every request is anonymous. */
  readonly authenticator?: Authenticator
  /** Unset: everything is allowed. */
  readonly authorizer?: Authorizer
  /** Whether a routed object exists: an apply that would create it is also authorized as `create`. */
  readonly exists?: (target: Target) => Effect.Effect<boolean>
}

const qualified = (group: string, resource: string): string => (group === "" ? resource : `${resource}.${group}`)

/**
 * The authorizer's 403, as kube-apiserver's `responsewriters.Forbidden` writes it:
 * `ingresses.networking.k8s.io "x" is forbidden: User "u" cannot get resource "ingresses" in API group "networking.k8s.io" in the namespace "ns"`.
 */
export const forbiddenFor = (attributes: RequestAttributes, reason = ""): Status => {
  const user = attributes.user.name
  const resource = attributes.subresource === ""
    ? attributes.resource
    : `${attributes.resource}/${attributes.subresource}`
  const because = !attributes.resourceRequest
    ? `User "${user}" cannot ${attributes.verb} path "${attributes.path}"`
    : `User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" ${
      attributes.namespace === "" ? "at the cluster scope" : `in the namespace "${attributes.namespace}"`
    }`
  const message = reason === "" ? because : `${because}: ${reason}`
  if (!attributes.resourceRequest) return failure(403, "Forbidden", `forbidden: ${message}`, {})
  const what = qualified(attributes.apiGroup, attributes.resource)
  return failure(
    403,
    "Forbidden",
    attributes.name === ""
      ? `${what} is forbidden: ${message}`
      : `${what} "${attributes.name}" is forbidden: ${message}`,
    {
      ...(attributes.name !== "" ? { name: attributes.name } : {}),
      ...(attributes.apiGroup !== "" ? { group: attributes.apiGroup } : {}),
      kind: attributes.resource
    }
  )
}

/** The verb RBAC checks for a request on a resource path, as the server's request-info resolver names it. */
const verbOf = (method: string, named: boolean, query: URLSearchParams): string => {
  const watch = query.get("watch")
  switch (method) {
    case "GET":
    case "HEAD":
      return named ? "get" : watch === "true" || watch === "1" ? "watch" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return named ? "delete" : "deletecollection"
    default:
      return method.toLowerCase()
  }
}

/** What the authorizer is asked about a routed request. */
export const attributesOf = (
  user: RequestAttributes["user"],
  method: string,
  url: URL,
  routed: Route
): RequestAttributes => {
  if (routed._tag === "Reply") {
    return {
      user,
      verb: method.toLowerCase(),
      resourceRequest: false,
      path: url.pathname,
      apiGroup: "",
      resource: "",
      subresource: "",
      namespace: "",
      name: ""
    }
  }
  const { name, namespace, resource, subresource } = routed.target
  return {
    user,
    verb: verbOf(method, name !== undefined, url.searchParams),
    resourceRequest: true,
    path: url.pathname,
    apiGroup: resource.group,
    resource: resource.plural,
    subresource: subresource ?? "",
    // A namespace's own path is authorized in that namespace, so a Role can grant reading it.
    namespace: namespace ?? (resource.plural === "namespaces" && resource.group === "" ? name ?? "" : ""),
    name: name ?? ""
  }
}

const reviewAttributes = (user: RequestAttributes["user"], plural: string): RequestAttributes => ({
  user,
  verb: "create",
  resourceRequest: true,
  path: `/apis/${AUTHORIZATION_GROUP}/v1/${plural}`,
  apiGroup: AUTHORIZATION_GROUP,
  resource: plural,
  subresource: "",
  namespace: "",
  name: ""
})

/** A review body as JSON, from JSON or (kubectl's typed client) protobuf; a string says why it cannot be read. */
const readReview = (body: Buffer): unknown => {
  if (isProtobuf(body)) return decodeReview(body) ?? "the protobuf body of the review could not be read"
  try {
    return JSON.parse(body.toString("utf8"))
  } catch (e) {
    return `couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`
  }
}

/**
 * The gate in front of every handler: a reply to send instead of handling the request
 * (401, 403, a review's answer), or undefined to go on.
 */
export const makeGate = (security: ApiSecurity = {}) => {
  const authorizer = security.authorizer ?? alwaysAllow
  return (
    req: IncomingMessage,
    url: URL,
    segments: ReadonlyArray<string>,
    routed: Route
  ): Effect.Effect<Reply | undefined> =>
    Effect.gen(function*() {
      const method = req.method ?? "GET"
      const user = security.authenticator === undefined
        ? anonymousUser
        : yield* security.authenticator.authenticate(req)
      if (user === undefined) return statusReply(unauthorizedStatus)
      const review = reviewOf(segments)
      const whoAmI = isSelfSubjectReview(segments)
      const attributes = review !== undefined
        ? reviewAttributes(user, review.name)
        : whoAmI
        // A read of its path is asked as the list it would be, then refused (405): it only creates.
        ? selfSubjectReviewAttributes(user, verbOf(method, false, url.searchParams), url.pathname)
        : attributesOf(user, method, url, routed)
      const decision = yield* authorizer.authorize(attributes)
      if (!decision.allowed) return statusReply(forbiddenFor(attributes, decision.reason))
      // Server-side apply creates what is missing, and the server then also asks for
      // `create` (dry runs included): `patch` alone may change objects, not make them.
      if (
        routed._tag === "Resource" && attributes.verb === "patch" && attributes.subresource === "" &&
        mediaType(req) === "application/apply-patch+yaml" && security.exists !== undefined &&
        !(yield* security.exists(routed.target))
      ) {
        const create = { ...attributes, verb: "create" }
        const creating = yield* authorizer.authorize(create)
        if (!creating.allowed) return statusReply(forbiddenFor(create, creating.reason))
      }
      if (review === undefined && !whoAmI) return undefined
      if (method !== "POST") return statusReply(methodNotAllowed())
      const body = yield* Effect.either(readBody(req))
      if (body._tag === "Left") return statusReply(body.left)
      if (review === undefined) return yield* answerSelfSubjectReview(req, body.right, user)
      const parsed = readReview(body.right)
      if (typeof parsed === "string") return statusReply(failure(400, "BadRequest", parsed))
      return yield* answerReview(review, user, parsed, authorizer)
    })
}
