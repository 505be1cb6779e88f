/**
 * The store's reads: get, and list with selectors, pages and continue tokens that
 * read a consistent snapshot at the first page's version while the window holds it.
 */
import { apiVersionOf, type KubeObject, type ObjectList } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import type { ListOptions } from "../Store.js"
import { type Buckets, CONTINUE_TOO_OLD, decodeContinue, encodeContinue, type StoreState } from "./storeHistory.js"
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

  const list = (resource: ServedResource<KubeObject>, namespace: string | undefined, options?: ListOptions) =>
    attempt((): ObjectList<KubeObject> => {
      const bucket = servedBucket(resource)
      const filter = makeFilter(resource, namespace, options?.labelSelector, options?.fieldSelector)
      let rv = state.revision
      let start = ""
      let objects = bucket.objects
      if (options?.continue !== undefined && options.continue !== "") {
        const token = decodeContinue(options.continue)
        if (token === undefined) {
          return refuse(
            badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
          )
        }
        if (token.rv < oldestAvailable(bucket) - 1) {
          return refuse({ ...expired(CONTINUE_TOO_OLD), metadata: {} })
        }
        rv = token.rv
        start = token.start
        objects = snapshotAt(bucket, token.rv)
      }
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
