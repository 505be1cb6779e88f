/**
 * LocalCluster's garbage collector, as kube-controller-manager runs it: objects whose
 * owners are all gone are deleted (a session's Service, Ingress and HTTPRoutes when
 * its Pod goes), an owner deleted in the foreground waits until its blocking
 * dependents are gone, and an owner deleted with `Orphan` lets go of its dependents first.
 */
import { Duration, Effect, type Scope } from "effect"
import {
  apiVersionOf,
  type KubeObject,
  type OwnerReference,
  qualifiedName,
  type ResourceType,
  type Status
} from "session-routing/kubernetes"
import { followWatch, makeWorkQueue } from "./Reconciler.js"
import { servedResources } from "./ServedResources.js"
import type { ClusterStore, DeleteOptions } from "./Store.js"

type AnyResource = ResourceType<KubeObject>

/** The field manager of the collector's own writes, as the real one's show in managedFields. */
export const GARBAGE_COLLECTOR_MANAGER = "kube-controller-manager"

const FOREGROUND = "foregroundDeletion"
const ORPHAN = "orphan"

interface Entry {
  readonly resource: AnyResource
  readonly object: KubeObject
}

/** One read of every served type: objects by uid and by `type/namespace/name`, dependents by owner uid. */
interface Graph {
  readonly byKey: ReadonlyMap<string, Entry>
  readonly dependents: ReadonlyMap<string, ReadonlyArray<{ readonly entry: Entry; readonly ref: OwnerReference }>>
  readonly entries: ReadonlyArray<Entry>
}

const keyOf = (resource: AnyResource, namespace: string | undefined, name: string) =>
  `${qualifiedName(resource)}/${resource.namespaced ? namespace ?? "" : ""}/${name}`

const finalizersOf = (object: KubeObject): ReadonlyArray<string> => object.metadata?.finalizers ?? []
const beingDeleted = (object: KubeObject): boolean => object.metadata?.deletionTimestamp !== undefined
const uidOf = (object: KubeObject): string => object.metadata?.uid ?? ""

/** The type an owner reference names, when the cluster serves it; the collector cannot judge any other. */
const ownerTypeOf = (ref: OwnerReference): AnyResource | undefined =>
  (servedResources as ReadonlyArray<AnyResource>).find((r) => apiVersionOf(r) === ref.apiVersion && r.kind === ref.kind)

type Verdict = "solid" | "dangling" | "waiting" | "unknown"

/**
 * What became of an owner: there (`solid`), gone or replaced by a namesake with another
 * uid (`dangling`), deleting in the foreground (`waiting`), or of a type nobody serves.
 */
const judge = (graph: Graph, dependent: Entry, ref: OwnerReference): Verdict => {
  const type = ownerTypeOf(ref)
  if (type === undefined) return "unknown"
  const owner = graph.byKey.get(keyOf(type, dependent.object.metadata?.namespace, ref.name))
  if (owner === undefined || uidOf(owner.object) !== ref.uid) return "dangling"
  return beingDeleted(owner.object) && finalizersOf(owner.object).includes(FOREGROUND) ? "waiting" : "solid"
}

/**
 * Runs the collector in the current scope until it closes. Every change to any type
 * triggers one pass over the whole cluster (bursts coalesce), which is plenty for a
 * cluster of test size and leaves nothing to miss.
 */
export const run = (store: ClusterStore): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const types = servedResources as ReadonlyArray<AnyResource>

    const readGraph = Effect.forEach(types, (resource) =>
      store.list(resource, undefined).pipe(
        Effect.map((list) => list.items.map((object): Entry => ({ resource, object }))),
        // A type switched off holds nothing to collect.
        Effect.catchAll(() => Effect.succeed([] as ReadonlyArray<Entry>))
      )).pipe(
        Effect.map((lists): Graph => {
          const entries = lists.flat()
          const byKey = new Map<string, Entry>()
          const dependents = new Map<string, Array<{ entry: Entry; ref: OwnerReference }>>()
          for (const entry of entries) {
            const meta = entry.object.metadata ?? {}
            byKey.set(keyOf(entry.resource, meta.namespace, meta.name ?? ""), entry)
            for (const ref of meta.ownerReferences ?? []) {
              const list = dependents.get(ref.uid) ?? []
              list.push({ entry, ref })
              dependents.set(ref.uid, list)
            }
          }
          return { byKey, dependents, entries }
        })
      )

    const ignoreGone = <A>(effect: Effect.Effect<A, Status>) =>
      effect.pipe(Effect.asVoid, Effect.catchIf((status) => status.code === 404, () => Effect.void))

    /** Read-modify-write of one object's metadata, refused (and retried by the queue) on a conflict. */
    const updateMeta = (entry: Entry, change: (object: KubeObject) => KubeObject) =>
      ignoreGone(
        Effect.flatMap(
          store.get(entry.resource, entry.object.metadata?.namespace, entry.object.metadata?.name ?? ""),
          (live) =>
            store.replace(entry.resource, live.metadata?.namespace, live.metadata?.name ?? "", change(live), {
              fieldManager: GARBAGE_COLLECTOR_MANAGER
            })
        )
      )

    const withoutFinalizer = (finalizer: string) => (object: KubeObject): KubeObject => ({
      ...object,
      metadata: { ...object.metadata, finalizers: finalizersOf(object).filter((f) => f !== finalizer) }
    })

    const withoutOwners = (uids: ReadonlySet<string>) => (object: KubeObject): KubeObject => ({
      ...object,
      metadata: {
        ...object.metadata,
        ownerReferences: (object.metadata?.ownerReferences ?? []).filter((r) => !uids.has(r.uid))
      }
    })

    const remove = (entry: Entry, propagationPolicy: NonNullable<DeleteOptions["propagationPolicy"]>) =>
      ignoreGone(
        store.delete(entry.resource, entry.object.metadata?.namespace, entry.object.metadata?.name ?? "", {
          propagationPolicy,
          // Only the object the collector judged: a namesake created meanwhile is not its to delete.
          preconditions: { uid: uidOf(entry.object) }
        })
      )

    /** An owner being deleted: orphan its dependents, or wait for its blocking ones to go. */
    const finishOwner = (graph: Graph, entry: Entry) =>
      Effect.gen(function*() {
        const finalizers = finalizersOf(entry.object)
        const dependents = graph.dependents.get(uidOf(entry.object)) ?? []
        if (finalizers.includes(ORPHAN)) {
          const owner = new Set([uidOf(entry.object)])
          yield* Effect.forEach(dependents, ({ entry: dependent }) => updateMeta(dependent, withoutOwners(owner)), {
            discard: true
          })
          return yield* updateMeta(entry, withoutFinalizer(ORPHAN))
        }
        if (!finalizers.includes(FOREGROUND)) return
        yield* Effect.forEach(
          dependents.filter(({ entry: dependent }) => !beingDeleted(dependent.object)),
          ({ entry: dependent }) =>
            remove(dependent, graph.dependents.has(uidOf(dependent.object)) ? "Foreground" : "Background"),
          { discard: true }
        )
        if (!dependents.some(({ ref }) => ref.blockOwnerDeletion === true)) {
          yield* updateMeta(entry, withoutFinalizer(FOREGROUND))
        }
      })

    /** A dependent: kept while one owner is solid (losing references to gone ones), deleted when none is. */
    const judgeDependent = (graph: Graph, entry: Entry) =>
      Effect.gen(function*() {
        const refs = entry.object.metadata?.ownerReferences ?? []
        const verdicts = refs.map((ref) => ({ ref, verdict: judge(graph, entry, ref) }))
        // An owner of a type the cluster does not serve cannot be judged; the real collector retries it forever.
        if (verdicts.some((v) => v.verdict === "unknown")) return
        const gone = verdicts.filter((v) => v.verdict !== "solid")
        if (gone.length === 0) return
        if (verdicts.some((v) => v.verdict === "solid")) {
          return yield* updateMeta(entry, withoutOwners(new Set(gone.map((v) => v.ref.uid))))
        }
        const waiting = verdicts.some((v) => v.verdict === "waiting")
        yield* remove(entry, waiting && graph.dependents.has(uidOf(entry.object)) ? "Foreground" : "Background")
      })

    const sweep = Effect.gen(function*() {
      const graph = yield* readGraph
      for (const entry of graph.entries) {
        if (beingDeleted(entry.object)) yield* finishOwner(graph, entry)
        else if ((entry.object.metadata?.ownerReferences ?? []).length > 0) yield* judgeDependent(graph, entry)
      }
    })

    const queue = yield* makeWorkQueue({ name: "garbage collector", delay: Duration.zero, reconcile: () => sweep })
    yield* Effect.forEach(
      types,
      (resource) => followWatch(store, resource, () => queue.enqueue("cluster")).pipe(Effect.forkScoped),
      { discard: true }
    )
  })
