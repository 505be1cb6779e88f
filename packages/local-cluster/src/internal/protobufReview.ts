/**
 * The protobuf form of a self-review, as kubectl's typed client sends it
 * (`application/vnd.kubernetes.protobuf`): the `k8s\0` envelope (runtime.Unknown) around
 * the review message, read into the JSON shape the rest of the server works on. Only
 * the fields a review carries are read; the answer goes back as JSON, which the client accepts.
 */
import { bytesAt, fieldsOf, text, unwrap } from "./protobufWire.js"

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

/**
 * A SelfSubjectAccessReview or SelfSubjectRulesReview body as JSON (`kind`, `apiVersion`,
 * `spec`); undefined when it cannot be read.
 */
export const decodeReview = (body: Uint8Array): Record<string, unknown> | undefined => {
  try {
    const { apiVersion, kind, message: review } = unwrap(body)
    const spec = fieldsOf(bytesAt(review, 2) ?? new Uint8Array())
    const base = { apiVersion, kind }
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
