/**
 * The Kubernetes API as session-routing uses it: server-side apply, get, delete,
 * list and watch for the resource types in `domain/Resources`. Two layers build it:
 * the live one on @kubernetes/client-node, and LocalCluster's in-memory one.
 */
import { Context, Effect, FiberRef, type Stream } from "effect"
import type {
  CoreEvent,
  EndpointSlice,
  EventV1,
  Gateway,
  GatewayClass,
  HttpRoute,
  Ingress,
  IngressClass,
  KubeObject,
  Lease,
  Namespace,
  ObjectList,
  Pod,
  Service
} from "../domain/Objects.js"
import type { ResourceType } from "../domain/Resources.js"
import type { KubeError } from "./KubeError.js"

/** The field manager every write of ours is recorded under. */
export const FIELD_MANAGER = "session-routing"

/** The types we write. Gateways are read only: they belong to the platform team. */
export type WritableObject = Service | Ingress | HttpRoute

/**
 * The types we read. Cluster-scoped ones (GatewayClass, IngressClass, Namespace) ignore
 * the namespace argument; the last two only for a diagnosis and `check`.
 */
export type ReadableObject =
  | WritableObject
  | Gateway
  | GatewayClass
  | IngressClass
  | Namespace
  | EndpointSlice
  | Pod

/** An Event in either API: the one type we create and patch rather than apply. */
export type EventObject = CoreEvent | EventV1

/**
 * Event writes, as client-go's recorder makes them: a create per first occurrence,
 * a merge patch (RFC 7386) that counts each repeat.
 */
export interface EventWrites {
  readonly create: <A extends EventObject>(
    resource: ResourceType<A>,
    namespace: string,
    event: A
  ) => Effect.Effect<A, KubeError>
  readonly patch: <A extends EventObject>(
    resource: ResourceType<A>,
    namespace: string,
    name: string,
    patch: Record<string, unknown>
  ) => Effect.Effect<A, KubeError>
  /**
   * Set when every write already ends within the client's own API time limit (the live
   * client's do), so that a recorder need not bound them again.
   */
  readonly timeLimited?: true
}

/**
 * A delete's precondition, as `DeleteOptions.preconditions` carries it.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteOptions {
  /** Delete only the object with this uid. */
  readonly uid?: string
}

export interface ApplyOptions {
  /** Validate and answer as if written, store nothing (`dryRun=All`). */
  readonly dryRun?: boolean
  /**
   * Take ownership of fields another manager set (`force=true`). Defaults to true.
   * A publish asks without force first and forces only an object that is its own
   * (`notOursToTakeOver`), so someone else's object at one of its names is refused.
   */
  readonly force?: boolean
}

export interface ListOptions {
  /** Full label-selector grammar: `a=b,c!=d,e in (f,g),!h`. */
  readonly labelSelector?: string
}

export interface WatchOptions<A = unknown> extends ListOptions {
  /**
   * Start after this resourceVersion. Unset: the stream opens with one `ADDED` per
   * existing object (from a list), then follows changes.
   */
  readonly resourceVersion?: string
  /**
   * The objects the caller already holds (from its own list, or an earlier watch that
   * broke). With `resourceVersion`, a relist after 410 Expired reports the difference
   * against them too; without it, the opening list does: an object deleted while the
   * caller was not watching comes as `DELETED`, one that did not change comes not at all.
   */
  readonly known?: ReadonlyArray<A>
  /**
   * What the watch keeps of each object it has seen, to tell after a relist what
   * changed while it was away (default: the whole object). Only the name, uid and
   * resourceVersion are compared, so a consumer that caches little can have the
   * watch keep little too; a deletion a relist finds carries what was kept.
   */
  readonly remember?: (object: A) => A
}

/**
 * A change as a watcher sees it. Bookmarks and expiry are handled inside the stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchEvent<A> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  readonly object: A
}

/** One event of one watch connection, before resumption is layered on. */
export type RawWatchEvent<A> =
  | WatchEvent<A>
  | { readonly type: "BOOKMARK"; readonly resourceVersion: string }
  | { readonly type: "ERROR"; readonly error: KubeError }

/**
 * What a layer must provide; `makeKubeClient` (layers/kubeClient/ResumableWatch.ts)
 * builds the full service (with a resuming watch) from it, so resumption is written once
 * for every layer.
 */
export interface KubeClientPrimitives {
  readonly apply: <A extends WritableObject>(
    resource: ResourceType<A>,
    object: A,
    options?: ApplyOptions
  ) => Effect.Effect<A, KubeError>
  /** Reads one object. A cluster-scoped kind takes the namespace `""`; any other is refused (`BadRequest`). */
  readonly get: <A extends ReadableObject>(
    resource: ResourceType<A>,
    namespace: string,
    name: string
  ) => Effect.Effect<A, KubeError>
  /**
   * Deletes one object. A missing object fails with `NotFound`: callers decide whether
   * that is fine. With `uid`, only the object of that uid: one created in its place
   * since it was read fails with `Conflict` and stays.
   */
  readonly delete: <A extends WritableObject>(
    resource: ResourceType<A>,
    namespace: string,
    name: string,
    options?: DeleteOptions
  ) => Effect.Effect<void, KubeError>
  readonly list: <A extends ReadableObject>(
    resource: ResourceType<A>,
    namespace: string,
    options?: ListOptions
  ) => Effect.Effect<ObjectList<A>, KubeError>
  /**
   * One watch connection from `resourceVersion` (with bookmarks). The stream ends
   * when the server closes it; a 410 arrives as an `ERROR` event or as an `Expired`
   * failure, depending on when the server noticed.
   */
  readonly watchFrom: <A extends ReadableObject>(
    resource: ResourceType<A>,
    namespace: string,
    options: ListOptions & { readonly resourceVersion: string }
  ) => Stream.Stream<RawWatchEvent<A>, KubeError>
}

/** The API server's own version (`GET /version`). */
/**
 * The writes a controller makes to the Pods it routes: the routes' condition on the
 * Pod's status, and the endpoints annotation. Each is a patch, so what other writers
 * (the kubelet, the runner) set on the same Pod stays.
 */
export interface PodWrites {
  /**
   * A strategic merge patch of `pods/status`: `status.conditions` merge by `type`, so
   * the patch sets one condition and leaves the kubelet's.
   */
  readonly patchStatus: (
    namespace: string,
    name: string,
    patch: Record<string, unknown>
  ) => Effect.Effect<Pod, KubeError>
  /** A JSON merge patch of the Pod (its annotations): `null` removes a key. */
  readonly patch: (namespace: string, name: string, patch: Record<string, unknown>) => Effect.Effect<Pod, KubeError>
}

/**
 * `coordination.k8s.io/v1` Leases, with the API's optimistic concurrency: what leader
 * election reads and writes. A write made from a stale read fails with `Conflict`,
 * and a create of a Lease that exists with `AlreadyExists`, so two candidates never
 * both think they took it.
 */
export interface LeaseCalls {
  readonly get: (namespace: string, name: string) => Effect.Effect<Lease, KubeError>
  readonly create: (namespace: string, lease: Lease) => Effect.Effect<Lease, KubeError>
  /** Replaces the Lease; its `metadata.resourceVersion` must be the one last read. */
  readonly replace: (namespace: string, lease: Lease) => Effect.Effect<Lease, KubeError>
}

export interface ServerVersion {
  readonly gitVersion: string
  readonly platform?: string
}

/** One verb on one resource type, as a `SelfSubjectAccessReview` asks it. */
export interface AccessQuestion {
  readonly verb: string
  /** `""` for the core group. */
  readonly group: string
  /** The plural: `ingresses`. */
  readonly resource: string
  /** A subresource of it: `finalizers`. */
  readonly subresource?: string
  /** Unset: cluster-wide. */
  readonly namespace?: string
}

/** The authorizer's answer for the caller's own identity. */
export interface AccessAnswer {
  readonly allowed: boolean
  /** What the authorizer said, when it said anything. */
  readonly reason?: string
}

/**
 * Questions about the API server itself rather than its objects, for `check`: who
 * answers, which resource types it serves, and what it lets the caller do.
 */
export interface ClusterQueries {
  /** The server URL the client talks to. */
  readonly server: string
  /** The kubeconfig context that named it, when one did. */
  readonly context?: string
  readonly version: Effect.Effect<ServerVersion, KubeError>
  /** The plurals a group version serves (discovery); `NotServed` when it serves none. */
  readonly servedResources: (group: string, version: string) => Effect.Effect<ReadonlyArray<string>, KubeError>
  /** Asks with a `SelfSubjectAccessReview` whether the caller may do one thing. */
  readonly accessReview: (question: AccessQuestion) => Effect.Effect<AccessAnswer, KubeError>
  /** Who the API server takes the caller for (`SelfSubjectReview`, what `kubectl auth whoami` asks). */
  readonly whoAmI: Effect.Effect<{ readonly username: string }, KubeError>
}

/**
 * The client's interface.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace KubeClient {
  export interface Service extends KubeClientPrimitives {
    /** Questions about the server itself; only a client that talks to one over the wire has them. */
    readonly cluster?: ClusterQueries
    /** Event writes; a client without them records no Events. */
    readonly events?: EventWrites
    /** Pod condition and annotation writes (controller mode); unset when the client cannot make them. */
    readonly pods?: PodWrites
    /** Lease reads and writes (leader election); unset when the client cannot make them. */
    readonly leases?: LeaseCalls
    /**
     * Follows changes for as long as it is consumed: resumes from the last seen
     * resourceVersion when a connection ends, and relists on 410 Expired, emitting
     * the difference so that no change is lost or repeated.
     */
    readonly watch: <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      options?: WatchOptions<A>
    ) => Stream.Stream<WatchEvent<A>, KubeError>
  }
}

/**
 * The Kubernetes API as session routing uses it.
 *
 * @since 0.1.0
 * @category services
 */
export class KubeClient extends Context.Tag("session-routing/KubeClient")<KubeClient, KubeClient.Service>() {}

/**
 * Whether a client retries the transient failures of calls made in the current fiber
 * (true by default). Route health turns it off for its status reads: its own
 * schedule reads again, and every failed attempt must reach it as evidence instead
 * of hiding inside one long call that a deadline then cuts short.
 */
export const currentTransientRetry: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(true)

/**
 * Runs `self` with the client's own retries off: each failure reaches the caller at once.
 *
 * @since 0.1.0
 * @category programs
 */
export const withoutTransientRetry = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, currentTransientRetry, false)

/** The object's identity, for messages and maps. */
export const objectKey = (object: KubeObject): string =>
  `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`
