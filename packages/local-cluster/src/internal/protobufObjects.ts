/**
 * Create and update bodies in protobuf (`application/vnd.kubernetes.protobuf`), as
 * kubectl's typed client sends its generators' objects: the `k8s\0` envelope's message
 * read by the schema of its type (protobufSchemas.ts) into the JSON object a JSON body
 * of the same object would have been, so the write goes on exactly as for JSON.
 */
import type { IncomingMessage } from "node:http"
import type { KubeObject, ResourceType } from "session-routing/kubernetes"
import { badRequest, decodeObjectBody, mediaType, parseJson, Refused, unsupportedMediaType } from "./httpReply.js"
import { DeleteOptions, type FieldSchema, type MessageSchema, protobufSchemas } from "./protobufSchemas.js"
import { fieldsOf, isProtobuf, PROTOBUF_MEDIA_TYPE, unwrap } from "./protobufWire.js"

/** A field whose wire type is not the one its schema has: the body is not that type. */
class WrongWireType extends Error {}

/** A varint as the signed 64-bit number it carries (a negative int32 or int64 is sent as 64-bit two's complement). */
const signed = (value: number): number => (value >= 2 ** 63 ? value - 2 ** 64 : value)

const varintOf = (field: FieldSchema, value: Uint8Array | number): number => {
  if (typeof value !== "number") throw new WrongWireType(`${field.name} is not a varint`)
  return signed(value)
}

const bytesOf = (field: FieldSchema, value: Uint8Array | number): Uint8Array => {
  if (typeof value === "number") throw new WrongWireType(`${field.name} is not length-delimited`)
  return value
}

const utf8 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8")

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts.map((part) => Buffer.from(part)))

/** `intstr.IntOrString`: `{1: type, 2: intVal, 3: strVal}`, as the one JSON value it stands for. */
const intOrString = (bytes: Uint8Array): number | string => {
  const fields = fieldsOf(bytes)
  const last = (n: number) => fields.get(n)?.at(-1)
  const type = last(1)
  if (type === 1) {
    const value = last(3)
    return value instanceof Uint8Array ? utf8(value) : ""
  }
  const value = last(2)
  return typeof value === "number" ? signed(value) : 0
}

/** One value of a field, undefined for the zero value a plain (non-pointer) field's `omitempty` leaves out. */
const scalar = (field: FieldSchema, value: Uint8Array | number): unknown => {
  switch (field.type) {
    case "string":
      return utf8(bytesOf(field, value))
    case "int32":
    case "int64":
      return varintOf(field, value)
    case "bool":
      return varintOf(field, value) !== 0
    case "intOrString":
      return intOrString(bytesOf(field, value))
    case "map":
      throw new Error("a map is read whole")
    default:
      return decodeMessage(bytesOf(field, value), field.type)
  }
}

const isZero = (value: unknown): boolean => value === "" || value === 0 || value === false

/** `map<string, string>`: each entry a message `{1: key, 2: value}`, a later key replacing an earlier one. */
const map = (field: FieldSchema, values: ReadonlyArray<Uint8Array | number>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const value of values) {
    const entry = fieldsOf(bytesOf(field, value))
    const key = entry.get(1)?.at(-1)
    const item = entry.get(2)?.at(-1)
    out[key instanceof Uint8Array ? utf8(key) : ""] = item instanceof Uint8Array ? utf8(item) : ""
  }
  return out
}

/**
 * A message as JSON by its schema. Go's JSON writer leaves out empty lists and maps and a
 * plain field's zero value, and writes a nested struct whenever protobuf carried it.
 */
export const decodeMessage = (bytes: Uint8Array, schema: MessageSchema): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [number, values] of fieldsOf(bytes)) {
    const field = schema[number]
    if (field === undefined) continue
    if (field.type === "map") {
      const entries = map(field, values)
      if (Object.keys(entries).length > 0) out[field.name] = entries
    } else if (field.repeated === true) {
      if (values.length > 0) out[field.name] = values.map((value) => scalar(field, value))
    } else if (typeof field.type === "object") {
      // A message sent more than once is merged, as protobuf merges it: the same as reading its parts as one.
      const nested = decodeMessage(concat(values.map((value) => bytesOf(field, value))), field.type)
      if (field.inline === true) Object.assign(out, nested)
      else out[field.name] = nested
    } else {
      const value = scalar(field, values.at(-1)!)
      if (field.pointer === true || !isZero(value)) out[field.name] = value
    }
  }
  return out
}

/**
 * The object a protobuf body carries; undefined when it is of a type with no schema here.
 * Throws when the bytes are not a protobuf message or not one of the type they name.
 */
export const decodeProtobufObject = (body: Uint8Array): KubeObject | undefined => {
  if (!isProtobuf(body)) {
    throw new Error("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")
  }
  const { apiVersion, kind, raw } = unwrap(body)
  const schema = protobufSchemas.get(`${apiVersion}/${kind}`)
  if (schema === undefined) return undefined
  return { apiVersion, kind, ...decodeMessage(raw, schema) } as KubeObject
}

/**
 * A create or update body as the object it carries, in JSON, YAML or protobuf. A protobuf
 * body of a type LocalCluster has no schema for is refused as the API server refuses a
 * body it cannot read (415, naming the types it reads for it: a custom resource's handler
 * reads no protobuf either); one that is not a protobuf message of its type is a 400.
 */
export const decodeWriteBody = (req: IncomingMessage, body: Buffer, resource: ResourceType<unknown>): KubeObject => {
  if (mediaType(req) !== PROTOBUF_MEDIA_TYPE) return decodeObjectBody(req, body)
  let object: KubeObject | undefined
  try {
    object = decodeProtobufObject(body)
  } catch (e) {
    throw new Refused(
      badRequest(
        `the object provided is unrecognized (must be of type ${resource.kind}): ${
          e instanceof Error ? e.message : String(e)
        }`
      )
    )
  }
  if (object === undefined) throw new Refused(unsupportedMediaType(["application/json", "application/yaml"]))
  return object
}

/** A protobuf DeleteOptions body as JSON; throws when it is not one. */
export const decodeProtobufDeleteOptions = (body: Uint8Array): Record<string, unknown> => {
  if (!isProtobuf(body)) throw new Error("provided data does not appear to be a protobuf message")
  const { kind, raw } = unwrap(body)
  if (kind !== "DeleteOptions") throw new Error(`expected DeleteOptions, got ${kind ?? "no kind"}`)
  return decodeMessage(raw, DeleteOptions)
}

/**
 * A DELETE's body (DeleteOptions) as JSON, from JSON or protobuf; undefined when there
 * is none. A protobuf body that is not DeleteOptions is refused as a 400.
 */
export const decodeDeleteBody = (req: IncomingMessage, body: Buffer): unknown => {
  if (body.length === 0) return undefined
  if (mediaType(req) !== PROTOBUF_MEDIA_TYPE) return parseJson(body.toString("utf8"))
  try {
    return decodeProtobufDeleteOptions(body)
  } catch (e) {
    throw new Refused(badRequest(`the DeleteOptions could not be read: ${e instanceof Error ? e.message : String(e)}`))
  }
}
