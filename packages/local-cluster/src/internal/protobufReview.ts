/**
 * The protobuf form of a self-review, as kubectl's typed client sends it
 * (`application/vnd.kubernetes.protobuf`): the `k8s\0` envelope (runtime.Unknown) around
 * the review message, read into the JSON shape the rest of the server works on. Only
 * the fields a review carries are read; the answer goes back as JSON, which the client accepts.
 */

/** The magic that starts every Kubernetes protobuf body. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00]

type Fields = Map<number, Array<Uint8Array | number>>

/** The fields of one message: varints as numbers, length-delimited ones as bytes. */
const fieldsOf = (bytes: Uint8Array): Fields => {
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

const bytesAt = (fields: Fields, field: number): Uint8Array | undefined => {
  const value = fields.get(field)?.[0]
  return value instanceof Uint8Array ? value : undefined
}

const text = (fields: Fields, field: number): string | undefined => {
  const value = bytesAt(fields, field)
  return value === undefined ? undefined : Buffer.from(value).toString("utf8")
}

const strings = (bytes: Uint8Array | undefined, names: ReadonlyArray<string>): Record<string, string> | undefined => {
  if (bytes === undefined) return undefined
  const fields = fieldsOf(bytes)
  const out: Record<string, string> = {}
  names.forEach((name, i) => {
    const value = text(fields, i + 1)
    if (value !== undefined && value !== "") out[name] = value
  })
  return out
}

/** Whether a body is protobuf-encoded. */
export const isProtobuf = (body: Uint8Array): boolean => MAGIC.every((byte, i) => body[i] === byte)

/**
 * A SelfSubjectAccessReview or SelfSubjectRulesReview body as JSON (`kind`, `apiVersion`,
 * `spec`); undefined when it cannot be read.
 */
export const decodeReview = (body: Uint8Array): Record<string, unknown> | undefined => {
  try {
    const unknown = fieldsOf(body.subarray(MAGIC.length))
    const typeMeta = fieldsOf(bytesAt(unknown, 1) ?? new Uint8Array())
    const kind = text(typeMeta, 2)
    const review = fieldsOf(bytesAt(unknown, 2) ?? new Uint8Array())
    const spec = fieldsOf(bytesAt(review, 2) ?? new Uint8Array())
    const base = { apiVersion: text(typeMeta, 1), kind }
    if (kind === "SelfSubjectRulesReview") return { ...base, spec: { namespace: text(spec, 1) ?? "" } }
    const resourceAttributes = strings(bytesAt(spec, 1), [
      "namespace",
      "verb",
      "group",
      "version",
      "resource",
      "subresource",
      "name"
    ])
    const nonResourceAttributes = strings(bytesAt(spec, 2), ["path", "verb"])
    return {
      ...base,
      spec: {
        ...(resourceAttributes !== undefined ? { resourceAttributes } : {}),
        ...(nonResourceAttributes !== undefined ? { nonResourceAttributes } : {})
      }
    }
  } catch {
    return undefined
  }
}
