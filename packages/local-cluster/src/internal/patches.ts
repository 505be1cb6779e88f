/**
 * Patches: RFC 7386 merge patches, RFC 6902 JSON patches, and the read-patch-write
 * loop that retries a merge or JSON patch that lost a race, as the API server does.
 */
import { Effect } from "effect"
import type { KubeObject, Status } from "session-routing/kubernetes"
import { decodeProblem, isObject, shapeOf } from "../ServerSideApply.js"
import type { ClusterStore } from "../Store.js"
import { badRequest, failure, Refused } from "./httpReply.js"
import type { Target } from "./httpRouting.js"

/** RFC 7386 JSON merge patch. */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return patch
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else out[key] = mergePatch(out[key], value)
  }
  return out
}

class PatchFailure {
  constructor(readonly message: string) {}
}

const pointer = (text: string): Array<string> => {
  if (text === "") return []
  if (!text.startsWith("/")) throw new PatchFailure(`invalid JSON pointer: ${text}`)
  return text.slice(1).split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

/** RFC 6902 JSON patch. */
export const jsonPatch = (document: unknown, operations: unknown): unknown => {
  if (!Array.isArray(operations)) {
    throw new Refused(badRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch"))
  }
  let doc = clone(document)
  const parentOf = (segments: Array<string>): [unknown, string] => {
    let node: unknown = doc
    for (const segment of segments.slice(0, -1)) {
      node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined
      if (node === undefined) throw new PatchFailure(`doc is missing path: ${segments.join("/")}`)
    }
    return [node, segments[segments.length - 1]!]
  }
  const read = (segments: Array<string>): unknown => {
    let node: unknown = doc
    for (const segment of segments) {
      node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined
      if (node === undefined) throw new PatchFailure(`doc is missing path: /${segments.join("/")}`)
    }
    return node
  }
  const add = (segments: Array<string>, value: unknown) => {
    if (segments.length === 0) {
      doc = value
      return
    }
    const [parent, last] = parentOf(segments)
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last)
      if (!Number.isInteger(index) || index < 0 || index > parent.length) {
        throw new PatchFailure(`Unable to access invalid index: ${last}`)
      }
      parent.splice(index, 0, value)
    } else if (isObject(parent)) {
      parent[last] = value
    } else {
      throw new PatchFailure(`doc is missing path: /${segments.join("/")}`)
    }
  }
  const remove = (segments: Array<string>) => {
    const [parent, last] = parentOf(segments)
    if (Array.isArray(parent)) {
      const index = Number(last)
      if (!Number.isInteger(index) || index < 0 || index >= parent.length) {
        throw new PatchFailure(`Unable to remove nonexistent key: ${last}: missing value`)
      }
      parent.splice(index, 1)
    } else if (isObject(parent) && last in parent) {
      delete parent[last]
    } else {
      throw new PatchFailure(`Unable to remove nonexistent key: ${last}: missing value`)
    }
  }
  for (const op of operations) {
    if (!isObject(op) || typeof op.op !== "string" || typeof op.path !== "string") {
      throw new Refused(badRequest("the JSON patch operation is missing its op or path"))
    }
    const target = pointer(op.path)
    switch (op.op) {
      case "add":
        add(target, clone(op.value))
        break
      case "remove":
        remove(target)
        break
      case "replace":
        read(target)
        if (target.length === 0) doc = clone(op.value)
        else {
          remove(target)
          add(target, clone(op.value))
        }
        break
      case "move": {
        const from = pointer(String(op.from))
        const value = read(from)
        remove(from)
        add(target, value)
        break
      }
      case "copy":
        add(target, clone(read(pointer(String(op.from)))))
        break
      case "test":
        if (JSON.stringify(read(target)) !== JSON.stringify(op.value)) {
          throw new PatchFailure(`testing value /${target.join("/")} failed: test failed`)
        }
        break
      default:
        throw new Refused(badRequest(`Unexpected kind: ${op.op}`))
    }
  }
  return doc
}

/**
 * A patched built-in object that its Go type cannot hold (a MicroTime in another
 * layout): kube-apiserver's patcher fails to decode it and answers a 422 on `patch`,
 * of no kind or name, with the patched object as the invalid value, where a POST or
 * PUT of the same body is a 400.
 */
const patchedDecodeFailure = (resource: Target["resource"], patched: KubeObject): Status | undefined => {
  if (resource.custom) return undefined
  const problem = decodeProblem(patched, shapeOf(resource), resource.kind)
  if (problem === undefined) return undefined
  const message = `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${problem}`
  return failure(422, "Invalid", ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: "FieldValueInvalid", message, field: "patch" }]
  })
}

/** Merge and JSON patches: read, patch, write back with the read version as precondition, retry on a race. */
export const patchOnce = (
  store: ClusterStore,
  target: Target & { readonly name: string },
  patch: (live: KubeObject) => KubeObject,
  write: (patched: KubeObject) => Effect.Effect<KubeObject, Status>
): Effect.Effect<KubeObject, Status> => {
  const once: Effect.Effect<KubeObject, { readonly status: Status; readonly retry: boolean }> = Effect.gen(function*() {
    const live = yield* Effect.mapError(
      store.get(target.resource, target.namespace, target.name),
      (status) => ({ status, retry: false })
    )
    let patched: KubeObject
    try {
      patched = patch(live)
    } catch (e) {
      if (e instanceof PatchFailure) {
        return yield* Effect.fail({ status: failure(422, "Invalid", e.message), retry: false })
      }
      throw e
    }
    if (!isObject(patched as unknown)) {
      return yield* Effect.fail({ status: badRequest("the patch did not produce an object"), retry: false })
    }
    const invalid = patchedDecodeFailure(target.resource, patched)
    if (invalid !== undefined) return yield* Effect.fail({ status: invalid, retry: false })
    // A patch that names a resourceVersion is a precondition; otherwise the version read is.
    const requested = patched.metadata?.resourceVersion
    const pinned = requested !== undefined && requested !== live.metadata?.resourceVersion
    const body = pinned
      ? patched
      : { ...patched, metadata: { ...patched.metadata, resourceVersion: live.metadata?.resourceVersion ?? "" } }
    return yield* Effect.mapError(write(body), (status) => ({ status, retry: status.code === 409 && !pinned }))
  })
  return once.pipe(
    Effect.retry({ while: (e) => e.retry, times: 5 }),
    Effect.mapError((e) => e.status)
  )
}
