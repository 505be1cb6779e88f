/**
 * LocalCluster's object store: the API server's write, read and watch semantics for
 * the resources in `ServedResources`, in memory. Every rule a client can observe
 * (versions, generations, status subresource, apply ownership, watch windows) and
 * every failure's Status body follow the real server.
 */
import { Duration, Effect } from "effect"
import type { KubeObject, ResourceType } from "session-routing/kubernetes"
import { makeApply } from "./internal/storeApply.js"
import { makeDelete } from "./internal/storeDelete.js"
import { makeBuckets, type StoreState } from "./internal/storeHistory.js"
import { makeReads } from "./internal/storeReads.js"
import { withEventView } from "./internal/storeViews.js"
import { makeStoreWatch } from "./internal/storeWatch.js"
import { makeWrites } from "./internal/storeWrites.js"
import { admitEventV1Create } from "./internal/workloadValidation.js"
import { NamespaceResource, servedOf, type ServedResource, servedResources } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** How a store is set up. */
export interface MemoryStoreOptions {
  /** Namespaces to create up front, besides the four every cluster has. */
  readonly namespaces?: ReadonlyArray<string>
  /**
   * Watch events kept per resource type. A watch (or a list continuation) from a
   * resourceVersion older than the window answers 410 Expired. Default 1000.
   */
  readonly watchHistory?: number
  /** How often a watch that allows bookmarks gets one. Default one minute, as the server. */
  readonly bookmarkInterval?: Duration.DurationInput
  /** Resource types not served from the start (e.g. Gateway API CRDs not installed). */
  readonly unserved?: ReadonlyArray<ResourceType<KubeObject>>
  /** The field manager of writes that name none (the server derives it from the User-Agent). */
  readonly defaultFieldManager?: string
}

/** The store plus what only a local cluster can do. */
export interface MemoryStore extends ClusterStore {
  /** Forgets the watch history of every type, as an etcd compaction does: older versions answer 410. */
  readonly compact: Effect.Effect<void>
  /** The newest resourceVersion handed out. */
  readonly resourceVersion: Effect.Effect<string>
}

/** Namespaces every cluster has. */
const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"]

/** A store with the API server's semantics, holding the namespaces every cluster has plus `options.namespaces`. */
/** `op` over the served type of whatever descriptor it is given. */
const byDescriptor = <Rest extends ReadonlyArray<unknown>, R>(
  op: (resource: ServedResource<KubeObject>, ...rest: Rest) => R
) =>
(resource: ResourceType<KubeObject>, ...rest: Rest): R => op(servedOf(resource), ...rest)

export const makeMemoryStore = (options: MemoryStoreOptions = {}): Effect.Effect<MemoryStore> =>
  Effect.gen(function*() {
    const state: StoreState = {
      revision: 0,
      buckets: new Map(),
      historyLimit: Math.max(1, options.watchHistory ?? 1000),
      bookmarkInterval: Duration.decode(options.bookmarkInterval ?? "1 minute"),
      defaultManager: options.defaultFieldManager ?? "unknown"
    }
    const buckets = makeBuckets(state)
    const { bucketOf } = buckets
    for (const resource of servedResources) bucketOf(resource as ServedResource<KubeObject>)
    for (const resource of options.unserved ?? []) bucketOf(servedOf(resource)).served = false

    const writes = makeWrites(state, buckets)
    const { create, replace, replaceStatus } = writes
    const apply = makeApply(buckets, writes)
    const { get, list } = makeReads(state, buckets)
    const deleteOne = makeDelete(state, buckets)
    const watch = makeStoreWatch(state, buckets)

    // -- serving ----------------------------------------------------------------

    const setServed = (resource: ServedResource<KubeObject>, served: boolean) =>
      Effect.sync(() => {
        bucketOf(resource).served = served
      })
    const isServed = (resource: ServedResource<KubeObject>) => Effect.sync(() => bucketOf(resource).served)

    const compact = Effect.sync(() => {
      for (const bucket of state.buckets.values()) {
        bucket.history = []
        bucket.windowStart = state.revision
        bucket.evicted = false
      }
    })

    // -- bootstrap ----------------------------------------------------------------

    for (const name of [...new Set([...SYSTEM_NAMESPACES, ...(options.namespaces ?? [])])]) {
      yield* create(NamespaceResource as ServedResource<KubeObject>, undefined, { metadata: { name } }, {
        fieldManager: "kube-apiserver"
      }).pipe(Effect.orDie)
    }

    // Callers name a type by any descriptor of it (a client passes the library's); the
    // operations below work on the served one, whose identity they compare.
    const store: MemoryStore = {
      create: byDescriptor(create) as ClusterStore["create"],
      replace: byDescriptor(replace) as ClusterStore["replace"],
      apply: byDescriptor(apply) as ClusterStore["apply"],
      replaceStatus: byDescriptor(replaceStatus) as ClusterStore["replaceStatus"],
      get: byDescriptor(get) as ClusterStore["get"],
      list: byDescriptor(list) as ClusterStore["list"],
      delete: byDescriptor(deleteOne) as ClusterStore["delete"],
      watch: byDescriptor(watch),
      setServed: byDescriptor(setServed),
      isServed: byDescriptor(isServed),
      compact,
      resourceVersion: Effect.sync(() => String(state.revision))
    }
    return withEventView(store, admitEventV1Create)
  })
