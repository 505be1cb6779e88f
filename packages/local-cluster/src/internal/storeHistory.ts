/**
 * The store's state and its watch history: one bucket of objects per resource type,
 * each with a bounded window of events that watches replay and list continuations
 * rebuild snapshots from, and the one revision counter every write moves.
 */
import { type Duration, Queue } from "effect"
import { type KubeObject } from "session-routing/kubernetes"
import { NamespaceResource, type ServedResource, ServiceResource } from "../ServedResources.js"
import { isObject } from "../ServerSideApply.js"
import { metaOf, objectKey, ordered, resourceId, withMeta } from "./storeObjects.js"
import { notServedStatus, refuse } from "./storeStatus.js"

export interface HistoryEvent {
  readonly rv: number
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject
  readonly previous: KubeObject | undefined
}

export type Signal = { readonly _tag: "Event"; readonly event: HistoryEvent } | {
  readonly _tag: "Bookmark"
  readonly rv: number
}

export interface Watcher {
  readonly queue: Queue.Queue<Signal>
}

export interface Bucket {
  readonly resource: ServedResource<KubeObject>
  readonly objects: Map<string, KubeObject>
  history: Array<HistoryEvent>
  /** The version the window starts after while nothing was evicted. */
  windowStart: number
  evicted: boolean
  readonly watchers: Set<Watcher>
  served: boolean
}

export interface ContinueToken {
  readonly rv: number
  readonly start: string
}

export const encodeContinue = (token: ContinueToken): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })).toString("base64url")

export const decodeContinue = (text: string): ContinueToken | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
    if (!isObject(parsed) || parsed.v !== "meta.k8s.io/v1") return undefined
    if (typeof parsed.rv !== "number" || typeof parsed.start !== "string") return undefined
    return { rv: parsed.rv, start: parsed.start }
  } catch {
    return undefined
  }
}

export const CONTINUE_TOO_OLD =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

/** What every part of the store shares. */
export interface StoreState {
  /** The newest resourceVersion handed out. */
  revision: number
  readonly buckets: Map<string, Bucket>
  readonly allocatedIps: Set<string>
  readonly allocatedNodePorts: Set<number>
  readonly historyLimit: number
  readonly bookmarkInterval: Duration.Duration
  readonly defaultManager: string
}

/** The buckets, and the commits that move the revision and feed the watches. */
export const makeBuckets = (state: StoreState, release: (object: KubeObject) => void) => {
  const bucketOf = (resource: ServedResource<KubeObject>): Bucket => {
    const id = resourceId(resource)
    let bucket = state.buckets.get(id)
    if (bucket === undefined) {
      bucket = {
        resource,
        objects: new Map(),
        history: [],
        windowStart: state.revision,
        evicted: false,
        watchers: new Set(),
        served: true
      }
      state.buckets.set(id, bucket)
    }
    return bucket
  }

  const servedBucket = (resource: ServedResource<KubeObject>): Bucket => {
    const bucket = bucketOf(resource)
    if (!bucket.served) refuse(notServedStatus())
    return bucket
  }

  const oldestAvailable = (bucket: Bucket): number =>
    bucket.evicted && bucket.history.length > 0 ? bucket.history[0]!.rv : bucket.windowStart + 1

  const record = (bucket: Bucket, event: HistoryEvent): void => {
    bucket.history.push(event)
    if (bucket.history.length > state.historyLimit) {
      bucket.history.shift()
      bucket.evicted = true
    }
    for (const watcher of bucket.watchers) Queue.unsafeOffer(watcher.queue, { _tag: "Event", event })
  }

  const namespaceExists = (namespace: string): boolean =>
    bucketOf(NamespaceResource as ServedResource<KubeObject>).objects.has(namespace)
  const commitWrite = (
    bucket: Bucket,
    key: string,
    object: KubeObject,
    previous: KubeObject | undefined
  ): KubeObject => {
    state.revision += 1
    const stored = ordered(withMeta(object, { ...metaOf(object), resourceVersion: String(state.revision) }))
    bucket.objects.set(key, stored)
    record(bucket, {
      rv: state.revision,
      type: previous === undefined ? "ADDED" : "MODIFIED",
      object: stored,
      previous
    })
    return stored
  }

  const commitDelete = (bucket: Bucket, key: string, object: KubeObject): void => {
    state.revision += 1
    bucket.objects.delete(key)
    if (bucket.resource === ServiceResource) release(object)
    const last = withMeta(object, { ...metaOf(object), resourceVersion: String(state.revision) })
    record(bucket, { rv: state.revision, type: "DELETED", object: last, previous: object })
  }
  /** The objects of a bucket as they were at `rv`, rebuilt from the history window. */
  const snapshotAt = (bucket: Bucket, rv: number): Map<string, KubeObject> => {
    const objects = new Map(bucket.objects)
    for (let i = bucket.history.length - 1; i >= 0; i--) {
      const event = bucket.history[i]!
      if (event.rv <= rv) break
      const meta = metaOf(event.object)
      const key = objectKey(bucket.resource, meta.namespace, meta.name ?? "")
      if (event.previous === undefined) objects.delete(key)
      else objects.set(key, event.previous)
    }
    return objects
  }

  return { bucketOf, servedBucket, oldestAvailable, namespaceExists, commitWrite, commitDelete, snapshotAt }
}

/** The buckets' operations, as the other parts of the store take them. */
export type Buckets = ReturnType<typeof makeBuckets>
