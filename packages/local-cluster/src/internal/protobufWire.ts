/**
 * Reading Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`), as
 * kubectl's typed client sends them: the `k8s\0` magic, the runtime.Unknown envelope
 * with the type meta, and the fields of the message inside. Only reading: the server
 * answers in JSON, which every such client also accepts.
 */

/** The media type of a Kubernetes protobuf body. */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf"

/** The magic that starts every Kubernetes protobuf body. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00]

/** One message's fields by number: varints as numbers, length-delimited ones as bytes. */
export type Fields = Map<number, Array<Uint8Array | number>>

/** The fields of one message; throws on a truncated or unsupported encoding. */
export const fieldsOf = (bytes: Uint8Array): Fields => {
  const fields: Fields = new Map()
  let at = 0
  const varint = (): number => {
    let value = 0
    let shift = 0
    for (;;) {
      if (at >= bytes.length) throw new Error("truncated varint")
      const byte = bytes[at++]!
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return value
      shift += 7
    }
  }
  while (at < bytes.length) {
    const key = varint()
    const field = Math.floor(key / 8)
    const wire = key & 7
    let value: Uint8Array | number
    if (wire === 0) value = varint()
    else if (wire === 2) {
      const length = varint()
      if (at + length > bytes.length) throw new Error("truncated field")
      value = bytes.subarray(at, at + length)
      at += length
    } else if (wire === 1) {
      at += 8
      continue
    } else if (wire === 5) {
      at += 4
      continue
    } else throw new Error(`unsupported wire type ${wire}`)
    fields.set(field, [...(fields.get(field) ?? []), value])
  }
  return fields
}

export const bytesAt = (fields: Fields, field: number): Uint8Array | undefined => {
  const value = fields.get(field)?.[0]
  return value instanceof Uint8Array ? value : undefined
}

export const text = (fields: Fields, field: number): string | undefined => {
  const value = bytesAt(fields, field)
  return value === undefined ? undefined : Buffer.from(value).toString("utf8")
}

/** Every value of a repeated string field, in order. */
export const texts = (fields: Fields, field: number): Array<string> =>
  (fields.get(field) ?? []).flatMap((value) => value instanceof Uint8Array ? [Buffer.from(value).toString("utf8")] : [])

/**
 * An int64 varint field. A negative int64 travels as its 64-bit two's complement, read
 * here (to the nearest double) as the negative number it is.
 */
export const int64At = (fields: Fields, field: number): number | undefined => {
  const value = fields.get(field)?.[0]
  if (typeof value !== "number") return undefined
  return value >= 2 ** 63 ? value - 2 ** 64 : value
}

/** Whether a body is protobuf-encoded. */
export const isProtobuf = (body: Uint8Array): boolean => MAGIC.every((byte, i) => body[i] === byte)

/**
 * The envelope of a protobuf body: its `apiVersion` and `kind`, and the message it carries,
 * as bytes (for a schema to read) and as fields.
 */
export const unwrap = (
  body: Uint8Array
): { readonly apiVersion?: string; readonly kind?: string; readonly raw: Uint8Array; readonly message: Fields } => {
  const unknown = fieldsOf(body.subarray(MAGIC.length))
  const typeMeta = fieldsOf(bytesAt(unknown, 1) ?? new Uint8Array())
  const apiVersion = text(typeMeta, 1)
  const kind = text(typeMeta, 2)
  // A field sent twice is read as its last value, as protobuf reads one.
  const last = unknown.get(2)?.at(-1)
  const raw = last instanceof Uint8Array ? last : new Uint8Array()
  return {
    ...(apiVersion !== undefined ? { apiVersion } : {}),
    ...(kind !== undefined ? { kind } : {}),
    raw,
    message: fieldsOf(raw)
  }
}
