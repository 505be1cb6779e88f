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
import {
  failure,
  mediaType,
  methodNotAllowed,
  pageNotFound,
  readBody,
  type Reply,
  restfulNotFound,
  statusReply
} from "./internal/httpReply.js"
import type { Route, Target } from "./internal/httpRouting.js"
import { decodeReview } from "./internal/protobufReview.js"
import { isProtobuf } from "./internal/protobufWire.js"
import { alwaysAllow, type Authorizer, type RequestAttributes } from "./Rbac.js"
import {
  answerSelfSubjectReview,
  AUTHENTICATION_GROUP,
  isSelfSubjectReview,
  selfSubjectReviewAttributes
} from "./SelfSubjectReview.js"
import { servedResources } from "./ServedResources.js"

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

/** Go's `strconv.ParseBool`, which the list options' `watch` is decoded with; undefined when it does not parse. */
const parseBool = (value: string): boolean | undefined =>
  ["1", "t", "T", "TRUE", "true", "True"].includes(value)
    ? true
    : ["0", "f", "F", "FALSE", "false", "False"].includes(value)
    ? false
    : undefined

/**
 * The name a field selector pins (`metadata.name=x` or `==`, alone or among other
 * terms), as `fields.Selector.RequiresExactMatch` finds it; undefined when it pins none,
 * or names something that cannot be a path segment (the resolver then leaves it out).
 */
const pinnedName = (selector: string | null): string | undefined => {
  if (selector === null) return undefined
  for (const term of selector.split(",")) {
    const match = /^\s*metadata\.name\s*(==|=)(.*)$/.exec(term)
    if (match === null) continue
    const name = match[2]!.trim()
    if (name === "" || name === "." || name === ".." || /[/%]/.test(name)) return undefined
    return name
  }
  return undefined
}

/** Go's `splitPath`: the path without its outer slashes, split on every inner one (empty segments kept). */
const pathParts = (path: string): Array<string> => {
  const trimmed = path.replace(/^\/+|\/+$/g, "")
  if (trimmed === "") return []
  return trimmed.split("/").map((part) => {
    try {
      return decodeURIComponent(part)
    } catch {
      return part
    }
  })
}

/**
 * What kube-apiserver's request-info resolver (`RequestInfoFactory.NewRequestInfo`) makes
 * of a request, from its method and path alone: it runs before any handler is looked
 * for, so a path under `/api/<version>/` or `/apis/<group>/<version>/` is a resource
 * request, and is authorized as one, whether or not anything serves it (a ServiceAccount
 * without grants is refused 403 on a type the server does not serve, not told 404).
 */
export const requestInfoOf = (method: string, url: URL): Omit<RequestAttributes, "user"> => {
  const nonResource = {
    verb: method.toLowerCase(),
    resourceRequest: false,
    path: url.pathname,
    apiGroup: "",
    resource: "",
    subresource: "",
    namespace: "",
    name: ""
  }
  const all = pathParts(url.pathname)
  if (all.length < 3 || (all[0] !== "api" && all[0] !== "apis")) return nonResource
  let parts = all.slice(1)
  let apiGroup = ""
  if (all[0] === "apis") {
    if (parts.length < 3) return nonResource
    apiGroup = parts[0]!
    parts = parts.slice(1)
  }
  parts = parts.slice(1)
  let verb: string
  if (parts[0] === "proxy" || parts[0] === "watch") {
    // The resolver refuses `/<version>/watch` alone; nothing here serves these paths anyway.
    if (parts.length < 2) return nonResource
    verb = parts[0]
    parts = parts.slice(1)
  } else {
    verb = ({ POST: "create", GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" } as Record<
      string,
      string
    >)[method] ?? ""
  }
  let namespace = ""
  if (parts[0] === "namespaces" && parts.length > 1) {
    namespace = parts[1]!
    // `namespaces/<ns>/<resource>...`, unless the third part is a namespace's own subresource.
    if (parts.length > 2 && parts[2] !== "status" && parts[2] !== "finalize") parts = parts.slice(2)
  }
  const resource = parts[0] ?? ""
  let name = parts[1] ?? ""
  const subresource = parts.length >= 3 && verb !== "proxy" ? parts[2]! : ""
  if (name === "" && verb === "get") {
    const watch = url.searchParams.get("watch")
    const watching = watch !== null && (parseBool(watch) ?? !["false", "0"].includes(watch.toLowerCase()))
    verb = watching ? "watch" : "list"
    // A list or watch pinned to one name is authorized for that name (RBAC's resourceNames).
    name = pinnedName(url.searchParams.get("fieldSelector")) ?? ""
  }
  if (name === "" && verb === "delete") verb = "deletecollection"
  return { verb, resourceRequest: true, path: url.pathname, apiGroup, resource, subresource, namespace, name }
}

/** What the authorizer is asked about a request: its path's request info, whatever serves it. */
export const attributesOf = (user: RequestAttributes["user"], method: string, url: URL): RequestAttributes => ({
  user,
  ...requestInfoOf(method, url)
})

/**
 * The groups kube-apiserver serves through go-restful, under which a path no route takes
 * answers go-restful's 404, a Status (`the server could not find the requested
 * resource`): the core API (`/api/...`) and every built-in group LocalCluster serves.
 * Custom resources' groups and groups nobody serves answer Go's plain-text 404.
 */
const RESTFUL_GROUPS: ReadonlySet<string> = new Set([
  ...servedResources.filter((r) => !r.custom && r.group !== "").map((r) => r.group),
  AUTHORIZATION_GROUP,
  AUTHENTICATION_GROUP
])

const underRestfulRoot = (segments: ReadonlyArray<string>): boolean =>
  (segments[0] === "api" && segments.length >= 2) ||
  (segments[0] === "apis" && segments.length >= 3 && RESTFUL_GROUPS.has(segments[1]!))

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
 * (401, 403, a review's answer, go-restful's 404 for a path under one of its roots that
 * no route takes), or undefined to go on.
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
        ? selfSubjectReviewAttributes(user, requestInfoOf(method, url).verb, url.pathname)
        : attributesOf(user, method, url)
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
      // kube-apiserver's director hands a path under a go-restful root to go-restful,
      // whose 404 (authorization passed) is a Status; other paths fall through to
      // the plain-text one. Discovery is only asked for again under those roots.
      if (review === undefined && !whoAmI) {
        const unrouted = routed._tag === "Reply" && underRestfulRoot(segments) &&
          (yield* routed.reply) === pageNotFound
        return unrouted ? statusReply(restfulNotFound()) : undefined
      }
      if (method !== "POST") return statusReply(methodNotAllowed())
      const body = yield* Effect.either(readBody(req))
      if (body._tag === "Left") return statusReply(body.left)
      if (review === undefined) return yield* answerSelfSubjectReview(req, body.right, user)
      const parsed = readReview(body.right)
      if (typeof parsed === "string") return statusReply(failure(400, "BadRequest", parsed))
      return yield* answerReview(review, user, parsed, authorizer)
    })
}
