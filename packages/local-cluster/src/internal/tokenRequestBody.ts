/**
 * The body of a TokenRequest, as JSON, YAML or protobuf (kubectl's typed client sends
 * protobuf), read into the fields the TokenRequest API acts on. A body of the wrong
 * type or with a field of the wrong type is refused as the server's decoder refuses it.
 */
import type { IncomingMessage } from "node:http"
import { badRequest, checkBodyType, decodeObjectBody, mediaType, Refused } from "./httpReply.js"
import { isObject } from "./json.js"
import {
  bytesAt,
  type Fields,
  fieldsOf,
  int64At,
  isProtobuf,
  PROTOBUF_MEDIA_TYPE,
  text,
  texts,
  unwrap
} from "./protobufWire.js"

export const TOKEN_REQUEST_GROUP = "authentication.k8s.io"
export const TOKEN_REQUEST_API_VERSION = `${TOKEN_REQUEST_GROUP}/v1`
export const TOKEN_REQUEST_KIND = "TokenRequest"

/** `spec.boundObjectRef`: the object a token is bound to. */
export interface BoundObjectReference {
  readonly kind?: string
  readonly apiVersion?: string
  readonly name?: string
  readonly uid?: string
}

/** What a TokenRequest asks; a field left out (or null) is undefined. */
export interface TokenRequestBody {
  readonly metadata: {
    readonly name?: string
    readonly namespace?: string
    readonly uid?: string
    readonly labels?: Record<string, unknown>
    readonly annotations?: Record<string, unknown>
  }
  readonly audiences?: ReadonlyArray<string>
  readonly expirationSeconds?: number
  readonly boundObjectRef?: BoundObjectReference
}

/** The decoder's refusal of a value it cannot put in the Go field. */
const cannotUnmarshal = (value: unknown, field: string, goType: string): Refused => {
  const what = typeof value === "number" ? `number ${value}` : Array.isArray(value) ? "array" : typeof value
  return new Refused(
    badRequest(
      `${TOKEN_REQUEST_KIND} in version "v1" cannot be handled as a ${TOKEN_REQUEST_KIND}: json: cannot unmarshal ${what} into Go struct field ${field} of type ${goType}`
    )
  )
}

const optionalString = (record: Record<string, unknown>, key: string, field: string): string | undefined => {
  const value = record[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string") throw cannotUnmarshal(value, field, "string")
  return value
}

const fromJson = (object: unknown): TokenRequestBody => {
  if (!isObject(object)) throw cannotUnmarshal(object, TOKEN_REQUEST_KIND, "v1.TokenRequest")
  const meta = isObject(object.metadata) ? object.metadata : {}
  const spec = isObject(object.spec) ? object.spec : {}
  const audiences = spec.audiences
  if (audiences !== undefined && audiences !== null) {
    if (!Array.isArray(audiences)) throw cannotUnmarshal(audiences, "TokenRequestSpec.spec.audiences", "[]string")
    const wrong = audiences.find((a) => typeof a !== "string")
    if (wrong !== undefined) throw cannotUnmarshal(wrong, "TokenRequestSpec.spec.audiences", "string")
  }
  const expiration = spec.expirationSeconds
  if (expiration !== undefined && expiration !== null && !Number.isSafeInteger(expiration)) {
    throw cannotUnmarshal(expiration, "TokenRequestSpec.spec.expirationSeconds", "int64")
  }
  const ref = spec.boundObjectRef
  if (ref !== undefined && ref !== null && !isObject(ref)) {
    throw cannotUnmarshal(ref, "TokenRequestSpec.spec.boundObjectRef", "v1.BoundObjectReference")
  }
  const field = (name: string) => `BoundObjectReference.spec.boundObjectRef.${name}`
  const name = optionalString(meta, "name", "TokenRequest.metadata.name")
  const namespace = optionalString(meta, "namespace", "TokenRequest.metadata.namespace")
  const uid = optionalString(meta, "uid", "TokenRequest.metadata.uid")
  return {
    metadata: {
      ...(name !== undefined ? { name } : {}),
      ...(namespace !== undefined ? { namespace } : {}),
      ...(uid !== undefined ? { uid } : {}),
      ...(isObject(meta.labels) ? { labels: meta.labels } : {}),
      ...(isObject(meta.annotations) ? { annotations: meta.annotations } : {})
    },
    ...(Array.isArray(audiences) ? { audiences: audiences as Array<string> } : {}),
    ...(typeof expiration === "number" ? { expirationSeconds: expiration } : {}),
    ...(isObject(ref)
      ? {
        boundObjectRef: {
          ...withString("kind", optionalString(ref, "kind", field("kind"))),
          ...withString("apiVersion", optionalString(ref, "apiVersion", field("apiVersion"))),
          ...withString("name", optionalString(ref, "name", field("name"))),
          ...withString("uid", optionalString(ref, "uid", field("uid")))
        }
      }
      : {})
  }
}

/** `{ key: value }` for a non-empty string, as Go's `omitempty` leaves empty ones out. */
const withString = (key: string, value: string | undefined): Record<string, string> =>
  value === undefined || value === "" ? {} : { [key]: value }

/** The protobuf TokenRequest: metadata 1 (name 1, namespace 3, uid 5), spec 2 (audiences 1, boundObjectRef 3, expirationSeconds 4). */
const fromProtobuf = (message: Fields): TokenRequestBody => {
  const meta = fieldsOf(bytesAt(message, 1) ?? new Uint8Array())
  const spec = fieldsOf(bytesAt(message, 2) ?? new Uint8Array())
  const audiences = texts(spec, 1)
  const expirationSeconds = int64At(spec, 4)
  const refBytes = bytesAt(spec, 3)
  const ref = refBytes === undefined ? undefined : fieldsOf(refBytes)
  return {
    metadata: {
      ...withString("name", text(meta, 1)),
      ...withString("namespace", text(meta, 3)),
      ...withString("uid", text(meta, 5))
    },
    ...(audiences.length > 0 ? { audiences } : {}),
    ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
    ...(ref !== undefined
      ? {
        boundObjectRef: {
          ...withString("kind", text(ref, 1)),
          ...withString("apiVersion", text(ref, 2)),
          ...withString("name", text(ref, 3)),
          ...withString("uid", text(ref, 4))
        }
      }
      : {})
  }
}

/** A protobuf body's type and request; undefined when it cannot be read. */
const fromProtobufBody = (body: Buffer) => {
  if (!isProtobuf(body)) return undefined
  try {
    const envelope = unwrap(body)
    return { apiVersion: envelope.apiVersion, kind: envelope.kind, request: fromProtobuf(envelope.message) }
  } catch {
    return undefined
  }
}

const TOKEN_REQUEST_TYPE = { apiVersion: TOKEN_REQUEST_API_VERSION, kind: TOKEN_REQUEST_KIND }

/**
 * A TokenRequest body read into what it asks. A body that cannot be read, or names
 * another type, is thrown as the request's Status (`Refused`), as the other handlers' are.
 */
export const readTokenRequest = (req: IncomingMessage, body: Buffer): TokenRequestBody => {
  if (mediaType(req) === PROTOBUF_MEDIA_TYPE) {
    const read = fromProtobufBody(body)
    if (read === undefined) throw new Refused(badRequest("the protobuf body of the TokenRequest could not be read"))
    checkBodyType(TOKEN_REQUEST_TYPE, read.apiVersion, read.kind)
    return read.request
  }
  const object = decodeObjectBody(req, body) as unknown
  if (isObject(object)) checkBodyType(TOKEN_REQUEST_TYPE, object.apiVersion, object.kind)
  return fromJson(object)
}
