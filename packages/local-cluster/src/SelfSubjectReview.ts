/**
 * `authentication.k8s.io/v1` SelfSubjectReview ("who am I?"), what `kubectl auth whoami`
 * sends: answered as kube-apiserver's registry answers it, with the user the authenticators
 * made of the request (name, uid, groups, extra) and nothing of the review sent, which only
 * has to be one. Nothing is stored: a review is created and answered in one request.
 */
import { Clock, Effect } from "effect"
import type { IncomingMessage } from "node:http"
import type { UserInfo } from "./Authentication.js"
import type { ServedGroupVersion } from "./internal/discovery.js"
import {
  badRequest,
  checkBodyType,
  decodeObjectBody,
  json,
  mediaType,
  Refused,
  type Reply,
  statusReply
} from "./internal/httpReply.js"
import { isObject } from "./internal/json.js"
import { isProtobuf, unwrap } from "./internal/protobufWire.js"
import { rfc3339 } from "./internal/storeObjects.js"
import type { RequestAttributes } from "./Rbac.js"

/** The group the review is served under. */
export const AUTHENTICATION_GROUP = "authentication.k8s.io"
const API_VERSION = `${AUTHENTICATION_GROUP}/v1`
const KIND = "SelfSubjectReview"
const PLURAL = "selfsubjectreviews"
const REVIEW_TYPE = { apiVersion: API_VERSION, kind: KIND }

/**
 * The group as discovery lists it: the review, cluster-scoped and create-only.
 * kube-apiserver also serves TokenReview here; LocalCluster does not, so it does not list
 * it. Only v1, as a 1.35 server serves by default: kubectl (1.28 and later) posts to v1
 * first and tries v1beta1, then v1alpha1, only on a 404, without asking discovery.
 */
export const selfSubjectReviewDiscovery: ServedGroupVersion = {
  group: AUTHENTICATION_GROUP,
  version: "v1",
  custom: false,
  resources: [{ name: PLURAL, singularName: KIND.toLowerCase(), namespaced: false, kind: KIND, verbs: ["create"] }]
}

/** Whether a path is the review's collection: `apis/authentication.k8s.io/v1/selfsubjectreviews`. */
export const isSelfSubjectReview = (segments: ReadonlyArray<string>): boolean =>
  segments.length === 4 && segments[0] === "apis" && segments[1] === AUTHENTICATION_GROUP && segments[2] === "v1" &&
  segments[3] === PLURAL

/**
 * What the authorizer is asked of a request on the review's path: `verb` (`create` for
 * the POST) on the cluster-scoped resource. The bootstrap `system:basic-user` grants
 * `create` to `system:authenticated`, so anyone but `system:anonymous` may ask.
 */
export const selfSubjectReviewAttributes = (
  user: UserInfo,
  verb: string,
  path: string
): RequestAttributes => ({
  user,
  verb,
  resourceRequest: true,
  path,
  apiGroup: AUTHENTICATION_GROUP,
  resource: PLURAL,
  subresource: "",
  namespace: "",
  name: ""
})

/**
 * Reads the review sent, as the create handler decodes it before the registry ignores
 * it: a body that cannot be read, or names another type, is thrown as its Status.
 */
const readReview = (req: IncomingMessage, body: Buffer): void => {
  // kubectl's typed client sends protobuf: the `k8s\0` envelope around an empty review.
  if (mediaType(req) === "application/vnd.kubernetes.protobuf") {
    const envelope = isProtobuf(body) ? readEnvelope(body) : undefined
    if (envelope === undefined) throw new Refused(badRequest(`the protobuf body of the ${KIND} could not be read`))
    checkBodyType(REVIEW_TYPE, envelope.apiVersion, envelope.kind)
    return
  }
  const object = decodeObjectBody(req, body) as unknown
  if (isObject(object)) return checkBodyType(REVIEW_TYPE, object.apiVersion, object.kind)
  // `null` decodes to an empty review; any other value fails where the decoder looks for its type.
  if (object === null) return
  const what = Array.isArray(object) ? "array" : typeof object === "boolean" ? "bool" : typeof object
  throw new Refused(
    badRequest(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${what} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
    )
  )
}

const readEnvelope = (body: Buffer) => {
  try {
    return unwrap(body)
  } catch {
    return undefined
  }
}

/**
 * `status.userInfo` as `authentication/v1.UserInfo` is written: uid, groups and extra
 * left out when empty, extra's keys sorted as Go writes a map.
 */
const userInfoOf = (user: UserInfo) => {
  const extra = Object.entries(user.extra ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return {
    username: user.name,
    ...(user.uid !== undefined && user.uid !== "" ? { uid: user.uid } : {}),
    ...(user.groups.length > 0 ? { groups: user.groups } : {}),
    ...(extra.length > 0 ? { extra: Object.fromEntries(extra) } : {})
  }
}

/** Answers a review `user` POSTed: 201 with who they are, or the Status refusing the body. */
export const answerSelfSubjectReview = (req: IncomingMessage, body: Buffer, user: UserInfo): Effect.Effect<Reply> =>
  Effect.gen(function*() {
    try {
      readReview(req, body)
    } catch (e) {
      if (e instanceof Refused) return statusReply(e.status)
      throw e
    }
    const now = yield* Clock.currentTimeMillis
    return json(201, {
      kind: KIND,
      apiVersion: API_VERSION,
      metadata: { creationTimestamp: rfc3339(now) },
      status: { userInfo: userInfoOf(user) }
    })
  })
