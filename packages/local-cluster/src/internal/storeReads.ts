/**
 * The store's reads: get, and list with selectors, pages and continue tokens that
 * read a consistent snapshot at the first page's version while the window holds it,
 * and the resourceVersion rules of a list (latest, at least, or exactly a version).
 */
import { apiVersionOf, type KubeObject, type ObjectList } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import type { ListOptions } from "../Store.js"
import {
  type Buckets,
  CONTINUE_TOO_OLD,
  decodeContinue,
  encodeContinue,
  LIST_TOO_OLD,
  type StoreState,
  tooLargeResourceVersion,
  unparsableResourceVersion
} from "./storeHistory.js"
import { makeFilter, metaOf, objectKey, passes } from "./storeObjects.js"
import { attempt, badRequest, expired, notFoundStatus, refuse } from "./storeStatus.js"

/** Get and list over the buckets. */
export const makeReads = (state: StoreState, buckets: Buckets) => {
  const { oldestAvailable, servedBucket, snapshotAt } = buckets

  const get = (resource: ServedResource<KubeObject>, namespace: string | undefined, name: string) =>
    attempt(() => {
      const bucket = servedBucket(resource)
      const object = bucket.objects.get(objectKey(resource, namespace, name))
      if (object === undefined) return refuse(notFoundStatus(resource, name))
      return object
    })

  const listItem = (resource: ServedResource<KubeObject>, object: KubeObject): KubeObject => {
    if (resource.custom) return object
    // Built-in list items carry no kind or apiVersion: the list's kind says it.
    const { apiVersion: _v, kind: _k, ...rest } = object
    return rest
  }

  /**
   * Where a list reads, as kube-apiserver decides it: a continue token's version (or the
   * latest, for a token that says -1), the version asked for with Exact (or a limit),
   * else the latest. Each refusal is the one its storage or watch cache gives.
   */
  const readPoint = (
    resource: ServedResource<KubeObject>,
    options: ListOptions | undefined
  ): { readonly rv: number; readonly start: string; readonly objects: Map<string, KubeObject> } => {
    const bucket = servedBucket(resource)
    const asked = options?.resourceVersion ?? ""
    const latest = () => ({ rv: state.revision, start: "", objects: bucket.objects })
    if (options?.continue !== undefined && options.continue !== "") {
      const token = decodeContinue(options.continue)
      if (typeof token === "string") return refuse(badRequest(`invalid continue token: ${token}`))
      if (asked !== "" && asked !== "0") {
        return refuse(badRequest("specifying resource version is not allowed when using continue"))
      }
      if (token.rv < 0) return { ...latest(), start: token.start }
      if (token.rv > state.revision) return refuse(tooLargeResourceVersion(token.rv, state.revision))
      if (token.rv < oldestAvailable(bucket) - 1) {
        // The Status carries a token that goes on from the same place at the latest version.
        return refuse({
          ...expired(CONTINUE_TOO_OLD),
          metadata: { continue: encodeContinue({ rv: -1, start: token.start }) }
        })
      }
      return { rv: token.rv, start: token.start, objects: snapshotAt(bucket, token.rv) }
    }
    if (asked === "") return latest()
    if (!/^\d+$/.test(asked)) return refuse(badRequest(`invalid resource version: ${unparsableResourceVersion(asked)}`))
    const version = Number(asked)
    if (version > state.revision) return refuse(tooLargeResourceVersion(version, state.revision))
    const match = options?.resourceVersionMatch ?? ""
    const exact = match === "Exact" || (match === "" && (options?.limit ?? 0) > 0 && version > 0)
    if (exact) {
      if (version < oldestAvailable(bucket) - 1) return refuse(expired(LIST_TOO_OLD))
      return { rv: version, start: "", objects: snapshotAt(bucket, version) }
    }
    // "0", NotOlderThan or a version alone: the watch cache's state, which is the latest here.
    return latest()
  }

  const list = (resource: ServedResource<KubeObject>, namespace: string | undefined, options?: ListOptions) =>
    attempt((): ObjectList<KubeObject> => {
      const bucket = servedBucket(resource)
      const filter = makeFilter(resource, namespace, options?.labelSelector, options?.fieldSelector)
      const { objects, rv, start } = readPoint(resource, options)
      const keys = [...objects.keys()].filter((k) => k >= start).sort()
      const limit = options?.limit !== undefined && options.limit > 0 ? options.limit : undefined
      const items: Array<KubeObject> = []
      let next: string | undefined
      let remaining = 0
      for (const key of keys) {
        const object = objects.get(key)!
        if (!passes(filter, object)) continue
        if (limit !== undefined && items.length >= limit) {
          if (next === undefined) next = `${keyOfLast(items, bucket.resource)}\u0000`
          remaining++
          continue
        }
        items.push(listItem(resource, object))
      }
      const selectorless = filter.labels.requirements.length === 0 && filter.fields.length === 0
      return {
        apiVersion: apiVersionOf(resource),
        kind: resource.listKind,
        metadata: {
          resourceVersion: String(rv),
          ...(next !== undefined ? { continue: encodeContinue({ rv, start: next }) } : {}),
          // The server counts what is left only when no selector filters the list.
          ...(next !== undefined && selectorless ? { remainingItemCount: remaining } : {})
        },
        items
      }
    })

  const keyOfLast = (items: ReadonlyArray<KubeObject>, resource: ServedResource<KubeObject>): string => {
    const meta = metaOf(items[items.length - 1])
    return objectKey(resource, meta.namespace, meta.name ?? "")
  }

  return { get, list }
}
