/**
 * Every way a Kubernetes API call fails, as one tagged union. Each case carries a
 * `reason` a person can act on, built from the server's own `Status` body; the
 * client's exception text never reaches a message.
 */
import { Data } from "effect"
import type { YieldableError } from "effect/Cause"
import type { Status, StatusCause } from "../domain/Objects.js"

interface Common {
  /** One sentence a person can act on. */
  readonly reason: string
  /** The HTTP status, where there was a response. */
  readonly code?: number
  /** The server's Status body, when it sent one. */
  readonly status?: Status
  /** The failure underneath, as it came (the client's exception, a socket error): kept, never flattened into `reason`. */
  readonly cause?: unknown
}

/** Marks every `KubeError`, for `isKubeError`. */
export const KubeErrorTypeId: unique symbol = Symbol.for("session-routing/KubeError")
export type KubeErrorTypeId = typeof KubeErrorTypeId

/**
 * The base of every case: a tagged error whose `message` is its reason, so it prints
 * well on its own (`Cause.pretty`, a log line, an uncaught failure), and which
 * carries `KubeErrorTypeId`.
 */
const KubeErrorCase = <const Tag extends string>(
  tag: Tag
): new<A extends Common>(
  args: A
) => YieldableError & { readonly _tag: Tag; readonly [KubeErrorTypeId]: KubeErrorTypeId } & Readonly<A> => {
  class Case extends Data.TaggedError(tag)<Common> {
    readonly [KubeErrorTypeId]: KubeErrorTypeId = KubeErrorTypeId
    override get message(): string {
      return this.reason
    }
  }
  return Case as never
}

/** 404 with a Status: the object (or its namespace) does not exist. */
export class NotFound extends KubeErrorCase("NotFound")<Common> {}

/** 409 AlreadyExists on create. */
export class AlreadyExists extends KubeErrorCase("AlreadyExists")<Common> {}

/**
 * 409 Conflict: a stale resourceVersion, or (server-side apply) a field owned by
 * another manager; `causes` then lists the fields, each with reason `FieldManagerConflict`.
 */
export class Conflict extends KubeErrorCase("Conflict")<Common & { readonly causes: ReadonlyArray<StatusCause> }> {}

/** 422 Invalid: the object failed validation; `causes` lists the field errors. */
export class Invalid extends KubeErrorCase("Invalid")<Common & { readonly causes: ReadonlyArray<StatusCause> }> {}

/** 400: a malformed request (a selector that does not parse, a name mismatch). */
export class BadRequest extends KubeErrorCase("BadRequest")<Common> {}

/** 401: the credentials were refused or missing. */
export class Unauthorized extends KubeErrorCase("Unauthorized")<Common> {}

/** 403: authenticated, but RBAC does not allow the verb on the resource. */
export class Forbidden extends KubeErrorCase("Forbidden")<Common> {}

/** The resource type is not served (e.g. Gateway API CRDs not installed): a plain-text 404. */
export class NotServed extends KubeErrorCase("NotServed")<Common & { readonly resource: string }> {}

/** 410 Expired: a watch asked for a resourceVersion older than the server keeps. */
export class Expired extends KubeErrorCase("Expired")<Common> {}

/** 429: throttled by priority and fairness; `retryAfterSeconds` from the Retry-After header. */
export class TooManyRequests extends KubeErrorCase("TooManyRequests")<
  Common & { readonly retryAfterSeconds: number | undefined }
> {}

/** 5xx: the server (or something in front of it) could not answer now. */
export class Unavailable extends KubeErrorCase("Unavailable")<Common> {}

/**
 * Why no HTTP answer came. It decides the retry: a refused connection heals when an
 * API server restarts (seconds), a TLS handshake or a name that does not resolve
 * never heals by waiting, and a hang or a reset may be load.
 */
export type TransportKind =
  /** ECONNREFUSED: nothing listens there (yet, or any more). */
  | "refused"
  /** A TLS handshake or certificate failure: the kubeconfig's CA, certificate or server name is wrong. */
  | "tls"
  /** The server's host name does not resolve. */
  | "dns"
  /** The request went out and no answer came within its time limit. */
  | "no-answer"
  /** Anything else on the way: a reset, a connection cut mid-answer, an unreachable network. */
  | "other"

/** No HTTP answer at all: refused, reset, TLS failure, timeout, bad kubeconfig endpoint. */
export class Transport extends KubeErrorCase("Transport")<Common & { readonly kind?: TransportKind }> {}

/** Any other status code the API is not documented to send for these calls. */
export class Unexpected extends KubeErrorCase("Unexpected")<Common> {}

/** Whether `u` is one of the `KubeError` cases, whichever. */
export const isKubeError = (u: unknown): u is KubeError => typeof u === "object" && u !== null && KubeErrorTypeId in u

export type KubeError =
  | NotFound
  | AlreadyExists
  | Conflict
  | Invalid
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotServed
  | Expired
  | TooManyRequests
  | Unavailable
  | Transport
  | Unexpected

/**
 * Failures worth retrying: throttling, the 5xx codes an apiserver (or a proxy in
 * front of it) answers under load or during a restart (500, 502, 503, 504), and no
 * answer at all, except a TLS failure or a name that does not resolve: those are
 * the kubeconfig's, and the next try meets the same. Everything else (401 included)
 * is the same answer on the next try.
 */
export const isTransient = (error: KubeError): boolean => {
  switch (error._tag) {
    case "TooManyRequests":
      return true
    case "Transport":
      return error.kind !== "tls" && error.kind !== "dns"
    case "Unavailable":
      return error.code === undefined || error.code === 500 || error.code === 502 || error.code === 503 ||
        error.code === 504
    default:
      return false
  }
}

/**
 * Failures that will answer the same until a person changes something (a credential,
 * an RBAC grant, an installed API, the kubeconfig): polling them every interval only
 * adds load, so status reads back off from them.
 */
export const isPermanent = (error: KubeError): boolean => {
  switch (error._tag) {
    case "Unauthorized":
    case "Forbidden":
    case "NotServed":
      return true
    case "Transport":
      return error.kind === "tls" || error.kind === "dns"
    default:
      return false
  }
}
