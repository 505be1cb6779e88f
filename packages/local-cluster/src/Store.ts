/**
 * The heart of LocalCluster: an object store with the API server's semantics for
 * the resources in `ServedResources`. The HTTP API, the in-memory KubeClient and
 * the simulated controllers all go through this one interface, so they cannot
 * disagree. Every failure is the `Status` body the real server would send.
 */
import type { Effect, Stream } from "effect"
import type { KubeObject, ObjectList, ResourceType, Status } from "session-routing/kubernetes"

export interface WriteOptions {
  readonly dryRun?: boolean
  readonly fieldManager?: string
  /**
   * The write is a patch's, read from the live object and written back. A uid in a
   * PUT's body is a precondition (409 when it is not the stored object's); in what a
   * patch produced it is a field being changed (422, `metadata.uid` is immutable).
   */
  readonly patch?: boolean
}

export interface ApplyOptions extends WriteOptions {
  readonly force?: boolean
}

export interface ListOptions {
  readonly labelSelector?: string
  /** `metadata.name` / `metadata.namespace` terms, as every resource supports. */
  readonly fieldSelector?: string
  readonly limit?: number
  readonly continue?: string
  /**
   * Unset: the latest state. "0": any (here the latest). A version with
   * `resourceVersionMatch` Exact, or (the legacy spelling) with a `limit`: the state at
   * that version, 410 once the window no longer reaches it. Otherwise: at least that
   * version. A version the store has not reached is a 504.
   */
  readonly resourceVersion?: string
  readonly resourceVersionMatch?: string
}

/** A delete's options: those of any write, plus the preconditions `DeleteOptions` may carry. */
export interface DeleteOptions extends WriteOptions {
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  /**
   * What becomes of the object's dependents. Background (the default): the object goes
   * at once and the garbage collector deletes them after. Foreground: the object is
   * marked, holds the `foregroundDeletion` finalizer, and goes once the collector has
   * deleted its blocking dependents. Orphan: it holds the `orphan` finalizer until the
   * collector has removed its owner references from them.
   */
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan"
}

export interface WatchOptions {
  readonly labelSelector?: string
  /** `metadata.name` / `metadata.namespace` terms, as every resource supports. */
  readonly fieldSelector?: string
  /** Unset or "0": synthetic ADDED for current objects first. */
  readonly resourceVersion?: string
  readonly allowWatchBookmarks?: boolean
  /**
   * Watch-list: true sends the current state as ADDED first, then (with bookmarks
   * allowed) a bookmark annotated `k8s.io/initial-events-end`; false sends only
   * changes, from `resourceVersion` or from now. Unset: the legacy rules above.
   */
  readonly sendInitialEvents?: boolean
  /**
   * How long the watch will last (its `timeoutSeconds`): with bookmarks allowed, one
   * goes out two seconds before it ends, as kube-apiserver's watch cache sends it.
   */
  readonly timeoutSeconds?: number
}

/** A watch event exactly as it goes on the wire. ERROR carries a Status (e.g. 410 Expired). */
export type StoreWatchEvent =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: KubeObject }
  | { readonly type: "BOOKMARK"; readonly object: KubeObject }
  | { readonly type: "ERROR"; readonly object: Status }

/** The outcome of a write that created or changed something (201 vs 200 on the wire). */
export interface WriteResult<A> {
  readonly object: A
  readonly created: boolean
}

/** What a delete answers: Ingresses and custom resources a Success Status, Services the deleted object. */
export type DeleteResult = { readonly status: Status } | { readonly object: KubeObject }

/**
 * `namespace` is ignored for cluster-scoped resources. Names are validated as the
 * server does; a missing namespace on a namespaced write is `404 namespaces "x" not found`.
 */
export interface ClusterStore {
  readonly create: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    body: A,
    options?: WriteOptions
  ) => Effect.Effect<A, Status>
  readonly replace: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    name: string,
    body: A,
    options?: WriteOptions
  ) => Effect.Effect<WriteResult<A>, Status>
  /** Server-side apply (`application/apply-patch+yaml`). */
  readonly apply: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    name: string,
    body: A,
    options: ApplyOptions
  ) => Effect.Effect<WriteResult<A>, Status>
  /** PUT `/status`: only `status` changes; the rest of `body` is ignored. */
  readonly replaceStatus: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    name: string,
    body: A,
    options?: WriteOptions
  ) => Effect.Effect<A, Status>
  readonly get: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    name: string
  ) => Effect.Effect<A, Status>
  /** `namespace` undefined lists across all namespaces. */
  readonly list: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    options?: ListOptions
  ) => Effect.Effect<ObjectList<A>, Status>
  readonly delete: <A extends KubeObject>(
    resource: ResourceType<A>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions
  ) => Effect.Effect<DeleteResult, Status>
  /**
   * Events after `resourceVersion` (or synthetic ADDED first); the stream ends only
   * when the consumer stops, or after an ERROR (410 for a too-old version).
   */
  readonly watch: (
    resource: ResourceType<KubeObject>,
    namespace: string | undefined,
    options?: WatchOptions
  ) => Stream.Stream<StoreWatchEvent, Status>
  /** Whether the resource type is served; an unserved one answers 404 text/plain over HTTP. */
  readonly setServed: (resource: ResourceType<KubeObject>, served: boolean) => Effect.Effect<void>
  readonly isServed: (resource: ResourceType<KubeObject>) => Effect.Effect<boolean>
}
