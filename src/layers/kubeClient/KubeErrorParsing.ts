/**
 * From a failed call to a `KubeError`: the request's context in words, and the
 * mapping of an HTTP answer (a Status body, plain text, or nothing) to the case a
 * person can act on. Every KubeClient implementation words its errors through these,
 * so the live client and the local cluster's in-memory one say the same things.
 */
import type { Status } from "../../domain/Objects.js"
import { qualifiedName, type ResourceType } from "../../domain/Resources.js"
import { printable, serverText } from "../../domain/Text.js"
import {
  AlreadyExists,
  BadRequest,
  Conflict,
  Expired,
  Forbidden,
  Invalid,
  type KubeError,
  NotFound,
  NotServed,
  TooManyRequests,
  Unauthorized,
  Unavailable,
  Unexpected
} from "../../services/KubeError.js"
import { redactedShapes } from "./Redaction.js"

/** What the caller was doing, for messages: `get ingresses.networking.k8s.io "x" in namespace "ns"`. */
export interface RequestContext {
  readonly verb: string
  /** Qualified resource name, e.g. `httproutes.gateway.networking.k8s.io`. */
  readonly resource: string
  readonly namespace?: string
  readonly name?: string
}

/**
 * The context of one call on `resource`, as every client words it. A cluster-scoped
 * object lives in no namespace, so its context names none.
 */
export const requestContext = (
  verb: string,
  resource: ResourceType<unknown>,
  namespace: string | undefined,
  name?: string
): RequestContext => ({
  verb,
  resource: qualifiedName(resource),
  ...(resource.namespaced && namespace !== undefined ? { namespace } : {}),
  ...(name !== undefined ? { name } : {})
})

/** The request in words, as messages name it: `get ingresses.networking.k8s.io "x" in namespace "ns"`. */
export const describeRequest = (ctx: RequestContext): string =>
  `${ctx.verb} ${ctx.resource}${ctx.name !== undefined ? ` "${ctx.name}"` : ""}${
    ctx.namespace !== undefined ? ` in namespace "${ctx.namespace}"` : ""
  }`

/**
 * The RBAC verb a request needs: server-side apply is a PATCH, so a Role must grant
 * `patch` (there is no `apply` verb to grant).
 */
export const rbacVerb = (verb: string): string => (verb === "apply" ? "patch" : verb)

const isStatus = (value: unknown): value is Status =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "Status"

/** Parses a response body that may be a JSON Status, plain text (kept to its words, bounded), or nothing. */
export const parseStatusBody = (body: unknown): Status | string | undefined => {
  if (body === undefined || body === null) return undefined
  if (isStatus(body)) return body
  if (typeof body !== "string") return undefined
  const text = body.trim()
  if (text === "") return undefined
  if (text.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(text)
      if (isStatus(parsed)) return parsed
    } catch {
      // Not JSON after all: fall through and keep it as text.
    }
  }
  // Credentials out before the text is cut: a cut through a URL's userinfo would leave
  // its password without the shape that finds it.
  return serverText(redactedShapes(text))
}

/** `status` with whatever its message echoes in the shape of a credential taken out. */
const withoutCredentials = (status: Status): Status =>
  status.message === undefined ? status : { ...status, message: redactedShapes(status.message) }

const retryAfterFrom = (status: Status | undefined, header: string | undefined): number | undefined => {
  if (header !== undefined) {
    const seconds = Number(header)
    if (Number.isFinite(seconds) && seconds >= 0) return seconds
  }
  return status?.details?.retryAfterSeconds
}

/**
 * Maps an HTTP error answer to the union. `body` is what the server sent (a Status,
 * its raw text, plain text, or nothing); `retryAfter` is the Retry-After header.
 */
export const fromResponse = (
  ctx: RequestContext,
  code: number,
  body: unknown,
  retryAfter?: string,
  cause?: unknown
): KubeError => {
  const parsed = parseStatusBody(body)
  // Whoever built the Status (a server's handler, a proxy, a watch's ERROR event), what
  // it echoes of a request's credentials goes no further: reasons reach terminals,
  // logs, Events and, in controller mode, a Pod's condition.
  const status = typeof parsed === "object" ? withoutCredentials(parsed) : undefined
  const text = typeof parsed === "string" ? parsed : undefined
  // The server's words go into reasons, events and terminals: bounded and printable.
  const serverSaid = status?.message !== undefined ? printable(status.message) : text
  const what = describeRequest(ctx)
  const base = (reason: string) => ({
    reason,
    code,
    ...(status !== undefined ? { status } : {}),
    ...(cause !== undefined ? { cause } : {})
  })
  switch (code) {
    case 400:
      return new BadRequest(base(`bad request to ${what}: ${serverSaid ?? "the server gave no detail"}`))
    case 401:
      return new Unauthorized(
        base(`the API server refused the credentials (401) for ${what}: check the kubeconfig user or token`)
      )
    case 403:
      return new Forbidden(
        base(
          `${serverSaid ?? `forbidden: ${what}`} (grant the verb "${
            rbacVerb(ctx.verb)
          }" on ${ctx.resource} to this identity in a ${ctx.namespace === undefined ? "ClusterRole" : "Role"})`
        )
      )
    case 404:
      // A Status means the object (or its namespace) is missing. Plain text means no
      // handler for the path at all: the resource type is not served.
      if (status !== undefined) return new NotFound(base(serverSaid ?? `${what}: not found`))
      return new NotServed({
        ...base(
          `the API server does not serve ${ctx.resource} (${what} answered 404 "${
            text ?? ""
          }"): install the API (for Gateway API: its CRDs) or pick another routing mode`
        ),
        resource: ctx.resource
      })
    case 409:
      if (status?.reason === "AlreadyExists") return new AlreadyExists(base(serverSaid ?? `${what}: already exists`))
      return new Conflict({ ...base(serverSaid ?? `${what}: conflict`), causes: status?.details?.causes ?? [] })
    case 410:
      return new Expired(base(serverSaid ?? `${what}: resource version expired`))
    case 422:
      return new Invalid({ ...base(serverSaid ?? `${what}: invalid`), causes: status?.details?.causes ?? [] })
    case 429: {
      const retryAfterSeconds = retryAfterFrom(status, retryAfter)
      return new TooManyRequests({
        ...base(
          `the API server is throttling requests (429) for ${what}${
            retryAfterSeconds !== undefined ? `; it asked to retry after ${retryAfterSeconds}s` : ""
          }`
        ),
        retryAfterSeconds
      })
    }
    default:
      if (code >= 500) {
        return new Unavailable(
          base(`the API server could not answer ${what} (${code}${serverSaid !== undefined ? `: ${serverSaid}` : ""})`)
        )
      }
      return new Unexpected(
        base(`unexpected answer ${code} to ${what}${serverSaid !== undefined ? `: ${serverSaid}` : ""}`)
      )
  }
}

/** Maps a Status body (in-memory cluster, watch ERROR event) to the union. */
export const fromStatus = (ctx: RequestContext, status: Status, retryAfter?: string): KubeError =>
  fromResponse(ctx, status.code, status, retryAfter)
