/**
 * The store's state and its watch history: one bucket of objects per resource type,
 * each with a bounded window of events that watches replay and list continuations
 * rebuild snapshots from, and the one revision counter every write moves.
 */
import { type Duration, Queue } from "effect"
import { type KubeObject, type Status } from "session-routing/kubernetes"
import { NamespaceResource, type ServedResource } from "../ServedResources.js"
import { isObject } from "../ServerSideApply.js"
import { metaOf, objectKey, ordered, resourceId, withMeta } from "./storeObjects.js"
import { failure, notServedStatus, refuse } from "./storeStatus.js"

export interface HistoryEvent {
  readonly rv: number
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject
  readonly previous: KubeObject | undefined
}

/** What a watcher's queue carries: a change, or the time for a bookmark (at the store's version then). */
export type Signal = { readonly _tag: "Event"; readonly event: HistoryEvent } | { readonly _tag: "Bookmark" }

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
  /** The version the pages are of; negative: the latest (the token a 410 for an expired one carries). */
  readonly rv: number
  readonly start: string
}

export const encodeContinue = (token: ContinueToken): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })).toString("base64url")

const NOT_VALID = "continue key is not valid"

/**
 * The token, or why it is not one, in the words of the server's `DecodeContinue`
 * (where its words are Go's base64 or JSON decoder's, the gist of them).
 */
export const decodeContinue = (text: string): ContinueToken | string => {
  const bad = /[^A-Za-z0-9_-]/.exec(text)
  if (bad !== null || text.length % 4 === 1) {
    return `${NOT_VALID}: illegal base64 data at input byte ${bad?.index ?? text.length - 1}`
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
  } catch (e) {
    return `${NOT_VALID}: ${e instanceof Error ? e.message : String(e)}`
  }
  if (!isObject(parsed)) {
    return `${NOT_VALID}: json: cannot unmarshal ${typeof parsed} into Go value of type storage.continueToken`
  }
  const { rv = 0, start = "", v = "" } = parsed
  if (typeof v !== "string" || typeof rv !== "number" || !Number.isInteger(rv) || typeof start !== "string") {
    return `${NOT_VALID}: json: cannot unmarshal a field into Go struct storage.continueToken`
  }
  if (v !== "meta.k8s.io/v1") return `${NOT_VALID}: server does not recognize this encoded version ${v}`
  if (rv === 0) return `${NOT_VALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`
  if (start === "") return `${NOT_VALID}: encoded start key empty (version meta.k8s.io/v1)`
  return { rv, start }
}

export const CONTINUE_TOO_OLD =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

/** An Exact list (or one with a limit) at a version the window no longer reaches. */
export const LIST_TOO_OLD = "The resourceVersion for the provided list is too old."

/**
 * The watch cache's answer to a read at a version it has not reached. It waits three
 * seconds for it first; here nothing is on its way, so it answers at once.
 */
export const tooLargeResourceVersion = (requested: number, current: number): Status =>
  failure(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1
  })

/** Go's words for a resourceVersion that is not an unsigned number. */
export const unparsableResourceVersion = (text: string): string =>
  `resourceVersion: Invalid value: "${text}": strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`

/** What every part of the store shares. */
export interface StoreState {
  /** The newest resourceVersion handed out. */
  revision: number
  readonly buckets: Map<string, Bucket>
  readonly historyLimit: number
  readonly bookmarkInterval: Duration.Duration
  readonly defaultManager: string
}

/** The buckets, and the commits that move the revision and feed the watches. */
export const makeBuckets = (state: StoreState) => {
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
