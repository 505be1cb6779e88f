/**
 * The store's watches: from now (with the current objects as ADDED) or from a
 * resourceVersion in the history window, events filtered by selectors (leaving one
 * reads as a delete), bookmarks when asked (every interval, and two seconds before the
 * watch ends), and 410 Expired for a
 * version too old. A watch-list ends its initial ADDED events with a bookmark that says so.
 */
import { Duration, Effect, Option, Queue, Schedule, Stream } from "effect"
import { apiVersionOf, type KubeObject, type Status } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import type { StoreWatchEvent, WatchOptions } from "../Store.js"
import {
  type Bucket,
  type Buckets,
  type HistoryEvent,
  type Signal,
  type StoreState,
  tooLargeResourceVersion,
  unparsableResourceVersion,
  type Watcher
} from "./storeHistory.js"
import { type Filter, makeFilter, metaOf, passes, withMeta } from "./storeObjects.js"
import { attempt, expired, failure, refuse } from "./storeStatus.js"

/** The annotation on the bookmark that ends a watch-list's initial events. */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end"

/** How long before its end a watch gets its last bookmark, as the watch cache sends it. */
const PRE_TIMEOUT_BOOKMARK_MS = 2_000

/** Watch over the buckets. */
export const makeStoreWatch = (state: StoreState, buckets: Buckets) => {
  const { oldestAvailable, servedBucket } = buckets

  const toWireEvent = (filter: Filter, event: HistoryEvent): StoreWatchEvent | undefined => {
    const now = event.type !== "DELETED" && passes(filter, event.object)
    const before = event.previous !== undefined && passes(filter, event.previous)
    switch (event.type) {
      case "ADDED":
        return now ? { type: "ADDED", object: event.object } : undefined
      case "MODIFIED":
        if (now && before) return { type: "MODIFIED", object: event.object }
        if (now) return { type: "ADDED", object: event.object }
        // Leaving the selector reads as a delete of the last state the watcher could see.
        if (before) {
          return {
            type: "DELETED",
            object: withMeta(event.previous!, { ...metaOf(event.previous), resourceVersion: String(event.rv) })
          }
        }
        return undefined
      case "DELETED":
        return before ? { type: "DELETED", object: event.object } : undefined
    }
  }

  const bookmark = (resource: ServedResource<KubeObject>, rv: number, initialEventsEnd = false): StoreWatchEvent => ({
    type: "BOOKMARK",
    object: {
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      metadata: {
        resourceVersion: String(rv),
        ...(initialEventsEnd ? { annotations: { [INITIAL_EVENTS_END]: "true" } } : {})
      }
    }
  })

  const currentState = (bucket: Bucket, filter: Filter): Array<StoreWatchEvent> =>
    [...bucket.objects.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, object]) => object)
      .filter((object) => passes(filter, object))
      .map((object): StoreWatchEvent => ({ type: "ADDED", object }))

  const watch = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    options?: WatchOptions
  ): Stream.Stream<StoreWatchEvent, Status> =>
    Stream.unwrapScoped(
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<Signal>()
        const watcher: Watcher = { queue }
        // One synchronous step: no write can land between the starting point and the subscription.
        const start = yield* attempt(() => {
          const bucket = servedBucket(resource)
          const filter = makeFilter(resource, namespace, options?.labelSelector, options?.fieldSelector)
          const requested = options?.resourceVersion
          const fromNow = requested === undefined || requested === "" || requested === "0"
          if (!fromNow && !/^\d+$/.test(requested)) {
            // The watch cache's parse error is no API error: the server answers it as an internal one.
            return refuse(failure(500, undefined, unparsableResourceVersion(requested)))
          }
          if (options?.sendInitialEvents === true) {
            // NotOlderThan: the state is always current here, so only a version never handed out is refused.
            if (!fromNow && Number(requested) > state.revision) {
              refuse(tooLargeResourceVersion(Number(requested), state.revision))
            }
            bucket.watchers.add(watcher)
            const end = options.allowWatchBookmarks === true ? [bookmark(resource, state.revision, true)] : []
            return { bucket, filter, initial: [...currentState(bucket, filter), ...end], after: state.revision }
          }
          if (fromNow) {
            bucket.watchers.add(watcher)
            // sendInitialEvents=false starts at the current version with nothing replayed.
            return {
              bucket,
              filter,
              initial: options?.sendInitialEvents === false ? [] : currentState(bucket, filter),
              after: state.revision
            }
          }
          const from = Number(requested)
          const oldest = oldestAvailable(bucket)
          if (from < oldest - 1) {
            const error = expired(`too old resource version: ${from} (${oldest - 1})`)
            return { bucket, filter, initial: [{ type: "ERROR", object: error } as StoreWatchEvent], after: -1 }
          }
          bucket.watchers.add(watcher)
          const initial = bucket.history
            .filter((e) => e.rv > from)
            .map((e) => toWireEvent(filter, e))
            .filter((e): e is StoreWatchEvent => e !== undefined)
          return { bucket, filter, initial, after: from }
        })
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => start.bucket.watchers.delete(watcher)).pipe(Effect.zipRight(Queue.shutdown(queue)))
        )
        // An expired version: the server answers 200, sends the ERROR, and closes.
        if (start.after < 0) return Stream.fromIterable(start.initial)
        if (options?.allowWatchBookmarks === true) {
          const bookmarkDue = Effect.sync(() => Queue.unsafeOffer(queue, { _tag: "Bookmark" }))
          yield* bookmarkDue.pipe(
            Effect.delay(state.bookmarkInterval),
            Effect.repeat(Schedule.forever),
            Effect.forkScoped
          )
          const lastsMs = (options.timeoutSeconds ?? 0) * 1000
          if (lastsMs > PRE_TIMEOUT_BOOKMARK_MS) {
            yield* bookmarkDue.pipe(Effect.delay(Duration.millis(lastsMs - PRE_TIMEOUT_BOOKMARK_MS)), Effect.forkScoped)
          }
        }
        const live = Stream.fromQueue(queue).pipe(
          Stream.filterMap((signal): Option.Option<StoreWatchEvent> => {
            // Unlike kube-apiserver's, sent even when nothing moved since the watch began (README).
            if (signal._tag === "Bookmark") return Option.some(bookmark(resource, state.revision))
            // Asked for a version ahead of the store: nothing up to it is news.
            if (signal.event.rv <= start.after) return Option.none()
            return Option.fromNullable(toWireEvent(start.filter, signal.event))
          })
        )
        return Stream.concat(Stream.fromIterable(start.initial), live)
      })
    )

  return watch
}
