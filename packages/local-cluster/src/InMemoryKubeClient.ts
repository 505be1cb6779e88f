/**
 * KubeClient over a ClusterStore, without sockets: the same failures the HTTP face
 * would produce (Status bodies mapped by `fromStatus`, plain-text 404 for an unserved
 * type, faults included), so code under test cannot tell the two apart. Its calls are
 * counted in the cluster's metrics under the verbs the HTTP face would see. Besides the
 * primitives it makes Event writes, Pod patches (of the Pod and of its status) and
 * Lease reads and writes, as the live client does.
 */
import { Cause, Effect, Exit, Layer, Option, Stream } from "effect"
import {
  describeRequest,
  type EventWrites,
  FIELD_MANAGER,
  fromResponse,
  fromStatus,
  KubeClient,
  type KubeClientPrimitives,
  type KubeError,
  type KubeObject,
  type Lease,
  type LeaseCalls,
  LeaseResource,
  makeKubeClient,
  type Pod,
  PodResource,
  type PodWrites,
  type RawWatchEvent,
  type ReadableObject,
  type RequestContext,
  requestContext,
  type ResourceType,
  type ResumableWatchOptions,
  type Status,
  Transport
} from "session-routing/kubernetes"
import { type Decision, type Faults, shapeWatch, type Verb } from "./Faults.js"
import { Refused } from "./internal/httpReply.js"
import { mergePatch, patchOnce } from "./internal/patches.js"
import { strategicMerge } from "./internal/strategicMerge.js"
import { shapeOf } from "./internal/typeShapes.js"
import { type ClusterMetrics, type RequestLabels, resourceRequestLabels } from "./Metrics.js"
import { servedOf, type ServedResource } from "./ServedResources.js"
import type { ClusterStore, StoreWatchEvent } from "./Store.js"

/** The in-memory client's settings: faults to honour, and the resuming watch's schedule. */
export interface InMemoryKubeClientOptions extends ResumableWatchOptions {
  /** Faults to honour, shared with the HTTP face when both serve one cluster. */
  readonly faults?: Faults
  /** Where to count its calls, shared with the HTTP face when both serve one cluster; uncounted if unset. */
  readonly metrics?: ClusterMetrics
}

const NOT_FOUND_PAGE = "404 page not found\n"

/** The KubeClient service over `store`. */
export const make = (store: ClusterStore, options: InMemoryKubeClientOptions = {}): Effect.Effect<KubeClient.Service> =>
  Effect.sync(() => makeKubeClient(primitives(store, options.faults, options.metrics), options))

/** A KubeClient layer over `store`. */
export const layer = (store: ClusterStore, options: InMemoryKubeClientOptions = {}): Layer.Layer<KubeClient> =>
  Layer.effect(KubeClient, make(store, options))

const APPLY_PATCH = "application/apply-patch+yaml"
const MERGE_PATCH = "application/merge-patch+json"
const STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

/** The request the HTTP face would receive for a call: its method and content type decide the verb. */
const labelsOf = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  resource: ResourceType<unknown>,
  namespace: string | undefined,
  name: string | undefined,
  options: {
    readonly watch?: boolean
    readonly contentType?: string
    readonly dryRun?: boolean
    readonly subresource?: string
  } = {}
): RequestLabels =>
  resourceRequestLabels({
    method,
    contentType: options.contentType ?? "application/json",
    watch: options.watch === true,
    group: resource.group,
    version: resource.version,
    resource: resource.plural,
    namespace: resource.namespaced ? namespace : undefined,
    name,
    subresource: options.subresource,
    dryRun: options.dryRun === true ? ["All"] : []
  })

/**
 * The code the HTTP face would have counted for a call that ended with `exit`: the
 * answer's, 0 when none was sent (a dropped connection, a client that left first), and
 * nothing for a refused connection, which never reached the server.
 */
const codeOf = <A>(exit: Exit.Exit<A, KubeError>, ok: (a: A) => number): number | undefined => {
  if (Exit.isSuccess(exit)) return ok(exit.value)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return 0
  const error = failure.value
  if (error._tag === "Transport" && error.kind === "refused") return undefined
  return error.code ?? 0
}

const primitives = (
  store: ClusterStore,
  faults: Faults | undefined,
  metrics: ClusterMetrics | undefined
): KubeClientPrimitives & {
  readonly events: EventWrites
  readonly pods: PodWrites
  readonly leases: LeaseCalls
} => {
  const record = <A>(labels: RequestLabels, exit: Exit.Exit<A, KubeError>, ok: (a: A) => number) =>
    Effect.sync(() => {
      const code = codeOf(exit, ok)
      if (metrics !== undefined && code !== undefined) metrics.recordRequest(labels, code)
    })
  const counted = <A>(labels: RequestLabels, ok: (a: A) => number) => (self: Effect.Effect<A, KubeError>) =>
    Effect.onExit(self, (exit) => record(labels, exit, ok))

  /**
   * What the server does before a handler runs: faults (throttling, authorization,
   * a dropped connection) first, then routing, where an unserved type is a plain 404.
   */
  const admit = (
    verb: Verb,
    resource: ResourceType<unknown>,
    namespace: string | undefined,
    name: string | undefined,
    ctx: RequestContext,
    subresource?: string
  ): Effect.Effect<Decision, KubeError> =>
    Effect.gen(function*() {
      const decision: Decision = faults === undefined
        ? { _tag: "Proceed" }
        : yield* faults.intercept({
          verb,
          resource,
          ...(namespace !== undefined ? { namespace } : {}),
          ...(name !== undefined ? { name } : {}),
          ...(subresource !== undefined ? { subresource } : {})
        })
      switch (decision._tag) {
        case "Respond":
          return yield* Effect.fail(
            fromResponse(
              ctx,
              decision.response.code,
              decision.response.status ?? decision.response.body,
              decision.response.headers["retry-after"]
            )
          )
        case "Hang":
          return yield* Effect.never
        case "Reset":
          return yield* Effect.fail(
            new Transport({ reason: `the connection to the API server was reset during ${describeRequest(ctx)}` })
          )
        case "Refused":
          return yield* Effect.fail(
            new Transport({
              reason: `could not ${describeRequest(ctx)}: the connection to the API server was refused`,
              kind: "refused"
            })
          )
        case "Proceed":
          break
      }
      if (!(yield* store.isServed(resource as ResourceType<KubeObject>))) {
        return yield* Effect.fail(fromResponse(ctx, 404, NOT_FOUND_PAGE))
      }
      return decision
    })

  const call = <A>(
    verb: Verb,
    resource: ResourceType<unknown>,
    namespace: string | undefined,
    name: string | undefined,
    ctx: RequestContext,
    effect: Effect.Effect<A, Status>,
    subresource?: string
  ): Effect.Effect<A, KubeError> =>
    Effect.zipRight(
      admit(verb, resource, namespace, name, ctx, subresource),
      Effect.mapError(effect, (status) => fromStatus(ctx, status))
    )

  const toRaw = <A>(ctx: RequestContext, event: StoreWatchEvent): RawWatchEvent<A> => {
    switch (event.type) {
      case "BOOKMARK":
        return { type: "BOOKMARK", resourceVersion: event.object.metadata?.resourceVersion ?? "" }
      case "ERROR":
        return { type: "ERROR", error: fromStatus(ctx, event.object) }
      default:
        return { type: event.type, object: event.object as A }
    }
  }

  const events: EventWrites = {
    create: (resource, namespace, event) =>
      call(
        "create",
        resource,
        namespace,
        undefined,
        requestContext("create", resource, namespace),
        store.create(resource, namespace, event)
      ).pipe(counted(labelsOf("POST", resource, namespace, undefined), () => 201)),
    // What the HTTP face does with a merge patch: read, patch, write back on the version read.
    patch: (resource, namespace, name, patch) => {
      const ctx = requestContext("patch", resource, namespace, name)
      const once = Effect.flatMap(store.get(resource, namespace, name), (live) => {
        const patched = mergePatch(live, patch) as typeof live
        return store.replace(resource, namespace, name, {
          ...patched,
          metadata: { ...patched.metadata, resourceVersion: live.metadata?.resourceVersion ?? "" }
        }, { patch: true })
      })
      return call(
        "patch",
        resource,
        namespace,
        name,
        ctx,
        once.pipe(Effect.retry({ while: (status) => status.code === 409, times: 5 }))
      ).pipe(
        counted(labelsOf("PATCH", resource, namespace, name, { contentType: MERGE_PATCH }), () => 200),
        Effect.map((result) => result.object)
      )
    }
  }

  /**
   * A merge or strategic merge patch as the HTTP face runs it: read, patch, write back
   * on the version read (or the one the patch names), again from a fresh read when
   * another write got in first. A patch the merge cannot apply is its 422.
   */
  const patched = (
    name: string,
    namespace: string,
    subresource: "status" | undefined,
    patch: (live: KubeObject) => KubeObject
  ): Effect.Effect<Pod, Status> =>
    patchOnce(
      store,
      { resource: servedOf(PodResource) as ServedResource<KubeObject>, namespace, name, subresource },
      patch,
      (body) =>
        subresource === "status"
          ? store.replaceStatus(PodResource, namespace, name, body as Pod, { patch: true })
          : Effect.map(store.replace(PodResource, namespace, name, body as Pod, { patch: true }), (r) => r.object)
    ).pipe(
      Effect.catchAllDefect((defect) => defect instanceof Refused ? Effect.fail(defect.status) : Effect.die(defect))
    ) as Effect.Effect<Pod, Status>

  const pods: PodWrites = {
    patchStatus: (namespace, name, patch) => {
      // Named as the live client and RBAC name it: `pods/status`, apart from `pods`.
      const ctx = { ...requestContext("patch", PodResource, namespace, name), resource: "pods/status" }
      return call(
        "patch",
        PodResource,
        namespace,
        name,
        ctx,
        patched(
          name,
          namespace,
          "status",
          (live) => strategicMerge(live, patch, shapeOf(servedOf(PodResource))) as Pod
        ),
        "status"
      ).pipe(
        counted(
          labelsOf("PATCH", PodResource, namespace, name, {
            contentType: STRATEGIC_MERGE_PATCH,
            subresource: "status"
          }),
          () => 200
        )
      )
    },
    patch: (namespace, name, patch) =>
      call(
        "patch",
        PodResource,
        namespace,
        name,
        requestContext("patch", PodResource, namespace, name),
        patched(name, namespace, undefined, (live) => mergePatch(live, patch) as Pod)
      ).pipe(counted(labelsOf("PATCH", PodResource, namespace, name, { contentType: MERGE_PATCH }), () => 200))
  }

  const withTypeMeta = (lease: Lease): Lease => ({ ...lease, apiVersion: "coordination.k8s.io/v1", kind: "Lease" })

  /** One object read as the HTTP face reads it: its faults, its answer, its count. */
  const readOne = <A extends KubeObject>(resource: ResourceType<A>, namespace: string, name: string) =>
    call(
      "get",
      resource,
      namespace,
      name,
      requestContext("get", resource, namespace, name),
      store.get(resource, namespace, name)
    ).pipe(counted(labelsOf("GET", resource, namespace, name), () => 200))

  const leases: LeaseCalls = {
    get: (namespace, name) => readOne(LeaseResource, namespace, name),
    create: (namespace, lease) =>
      call(
        "create",
        LeaseResource,
        namespace,
        undefined,
        requestContext("create", LeaseResource, namespace),
        store.create(LeaseResource, namespace, withTypeMeta(lease))
      ).pipe(counted(labelsOf("POST", LeaseResource, namespace, undefined), () => 201)),
    // A PUT: the store refuses a stale resourceVersion with 409 and a missing one with 422.
    replace: (namespace, lease) => {
      const name = lease.metadata?.name ?? ""
      return call(
        "update",
        LeaseResource,
        namespace,
        name,
        requestContext("update", LeaseResource, namespace, lease.metadata?.name),
        store.replace(LeaseResource, namespace, name, withTypeMeta(lease))
      ).pipe(
        counted(labelsOf("PUT", LeaseResource, namespace, name), (result) => (result.created ? 201 : 200)),
        Effect.map((result) => result.object)
      )
    }
  }

  return {
    events,
    pods,
    leases,
    apply: (resource, object, options) => {
      const namespace = object.metadata?.namespace
      const name = object.metadata?.name ?? ""
      const ctx = requestContext("apply", resource, namespace, name)
      return call(
        "patch",
        resource,
        namespace,
        name,
        ctx,
        store.apply(resource, namespace, name, object, {
          fieldManager: FIELD_MANAGER,
          force: options?.force ?? true,
          ...(options?.dryRun === true ? { dryRun: true } : {})
        })
      ).pipe(
        counted(
          labelsOf("PATCH", resource, namespace, name, { contentType: APPLY_PATCH, dryRun: options?.dryRun === true }),
          (result) => result.created ? 201 : 200
        ),
        Effect.map((result) => result.object)
      )
    },
    get: (resource, namespace, name) => readOne(resource, namespace, name),
    delete: (resource, namespace, name, options) =>
      call(
        "delete",
        resource,
        namespace,
        name,
        requestContext("delete", resource, namespace, name),
        Effect.asVoid(
          store.delete(
            resource,
            namespace,
            name,
            options?.uid !== undefined ? { preconditions: { uid: options.uid } } : undefined
          )
        )
      ).pipe(counted(labelsOf("DELETE", resource, namespace, name), () => 200)),
    list: (resource, namespace, options) =>
      call(
        "list",
        resource,
        namespace,
        undefined,
        requestContext("list", resource, namespace),
        store.list(
          resource,
          namespace,
          options?.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}
        )
      ).pipe(counted(labelsOf("GET", resource, namespace, undefined), () => 200)),
    watchFrom: <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      options: { readonly labelSelector?: string; readonly resourceVersion: string }
    ): Stream.Stream<RawWatchEvent<A>, KubeError> => {
      const ctx = requestContext("watch", resource, namespace)
      const labels = labelsOf("GET", resource, namespace, undefined, { watch: true })
      // An admitted watch answered 200 and is counted when it ends, as over HTTP; one
      // refused before it started is counted with the refusal's code.
      const admitted = Effect.gen(function*() {
        const decision = yield* admit("watch", resource, namespace, undefined, ctx).pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : record(labels, exit, () => 200)))
        )
        if (metrics !== undefined) {
          const end = metrics.startLongRunning(labels)
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              end()
              metrics.recordRequest(labels, 200)
            })
          )
        }
        return decision
      })
      return Stream.unwrapScoped(
        Effect.map(admitted, (decision) => {
          const events = shapeWatch(
            store.watch(resource as ResourceType<KubeObject>, namespace, {
              resourceVersion: options.resourceVersion,
              allowWatchBookmarks: true,
              ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {})
            }),
            decision,
            options.resourceVersion
          )
          return events.pipe(
            Stream.map((event) => toRaw<A>(ctx, event)),
            Stream.mapError((status): KubeError => fromStatus(ctx, status)),
            // Over HTTP a server that dies resets the watch's connection; a clean end
            // would read as a graceful close instead.
            Stream.concat(Stream.unwrap(Effect.map(
              faults === undefined ? Effect.succeed("running") : faults.server.state,
              (state) =>
                state === "stopped"
                  ? Stream.fail(
                    new Transport({
                      reason: `the connection to the API server was reset during ${describeRequest(ctx)}`
                    })
                  )
                  : Stream.empty
            )))
          )
        })
      )
    }
  }
}
