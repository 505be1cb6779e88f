/**
 * The machinery LocalCluster's simulated controllers share: a keyed work queue that
 * reconciles each object after a delay (coalescing bursts, never running one key
 * twice at once), and a watch follower that survives streams ending or failing.
 */
import { Cause, Duration, Effect, Exit, FiberSet, HashMap, Option, Ref, type Scope, Stream } from "effect"
import type { KubeObject, ResourceType, Status } from "session-routing/kubernetes"
import type { ClusterStore, StoreWatchEvent } from "./Store.js"

/**
 * How long a controller waits before its status write: a duration, or `"never"` for a
 * controller that claims objects and never writes status (the silent-404 cluster).
 */
export type ControllerDelay = Duration.DurationInput | "never"

/** After a reconcile fails for a reason other than a conflict, try again this much later. */
export const RECONCILE_RETRY_DELAY = Duration.seconds(1)

/** A watch that ended (an ERROR event, a cut stream) is reopened this much later. */
export const WATCH_RESTART_DELAY = Duration.seconds(1)

/**
 * `scheduled`: a worker sleeps before reading the key; `running`: it is reconciling;
 * `rerun`: something changed while it ran, so it must go round again.
 */
type KeyState = "scheduled" | "running" | "rerun"

/** Schedules reconciles by key. */
export interface WorkQueue {
  readonly enqueue: (key: string) => Effect.Effect<void>
}

/** The object's `namespace/name` key; cluster-scoped objects are `/name`. */
export const keyOf = (object: KubeObject): string =>
  `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`

/** Splits a key made by `keyOf`. */
export const splitKey = (key: string): { readonly namespace: string | undefined; readonly name: string } => {
  const slash = key.indexOf("/")
  const namespace = key.slice(0, slash)
  return { namespace: namespace === "" ? undefined : namespace, name: key.slice(slash + 1) }
}

const isConflict = (exit: Exit.Exit<void, Status>): boolean =>
  Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (status) => status.code === 409)

/**
 * A work queue whose workers live in the current scope. Each key is reconciled
 * `delay` after it is first enqueued; enqueues while it waits are absorbed (the
 * reconcile reads the latest object), enqueues while it runs make it run again.
 * A conflict (409) is retried at once from a fresh read, once; other failures,
 * and conflicts that repeat, after `RECONCILE_RETRY_DELAY`.
 */
export const makeWorkQueue = (options: {
  readonly name: string
  readonly delay: Duration.DurationInput
  readonly reconcile: (key: string) => Effect.Effect<void, Status>
}): Effect.Effect<WorkQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const delay = Duration.decode(options.delay)
    const states = yield* Ref.make(HashMap.empty<string, KeyState>())
    const workers = yield* FiberSet.make<void, never>()

    const worker = (key: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        let wait: Duration.Duration = delay
        let conflicts = 0
        while (true) {
          yield* Effect.sleep(wait)
          yield* Ref.update(states, HashMap.set(key, "running" as KeyState))
          const exit = yield* Effect.exit(options.reconcile(key))
          const failed = Exit.isFailure(exit)
          if (failed) {
            conflicts = isConflict(exit) ? conflicts + 1 : 0
            yield* (conflicts > 0 ? Effect.logDebug : Effect.logWarning)(
              `${options.name}: reconcile of ${key} failed; retrying`,
              exit.cause
            )
            // A lost race is retried at once; one that keeps losing (or an injected 409) must not spin.
            wait = conflicts === 1 ? Duration.zero : RECONCILE_RETRY_DELAY
          } else {
            conflicts = 0
            wait = delay
          }
          const again = yield* Ref.modify(states, (m): readonly [boolean, HashMap.HashMap<string, KeyState>] => {
            const rerun = Option.getOrUndefined(HashMap.get(m, key)) === "rerun"
            return rerun || failed ? [true, HashMap.set(m, key, "scheduled")] : [false, HashMap.remove(m, key)]
          })
          if (!again) return
        }
      })

    const enqueue = (key: string): Effect.Effect<void> =>
      Ref.modify(states, (m): readonly [boolean, HashMap.HashMap<string, KeyState>] => {
        const state = Option.getOrUndefined(HashMap.get(m, key))
        if (state === undefined) return [true, HashMap.set(m, key, "scheduled")]
        if (state === "running") return [false, HashMap.set(m, key, "rerun")]
        return [false, m]
      }).pipe(
        Effect.flatMap((start) => (start ? FiberSet.run(workers, worker(key)) : Effect.void)),
        Effect.asVoid
      )

    return { enqueue } satisfies WorkQueue
  })

/**
 * Follows every change to `resource` across all namespaces for as long as the fiber
 * lives. A watch ends after a 410 or a cut connection; reopening it without a
 * resourceVersion replays every object as ADDED, which is what a level-triggered
 * controller wants after it may have missed events.
 */
export const followWatch = (
  store: ClusterStore,
  resource: ResourceType<KubeObject>,
  onEvent: (event: StoreWatchEvent) => Effect.Effect<void>
): Effect.Effect<never> =>
  store.watch(resource, undefined).pipe(
    Stream.runForEach(onEvent),
    Effect.catchAll((status) =>
      // A resource that is switched off (Gateway API CRDs absent) fails here until it is served again.
      Effect.logDebug(`watch of ${resource.plural} failed: ${status.reason ?? status.code} ${status.message ?? ""}`)
    ),
    Effect.zipRight(Effect.sleep(WATCH_RESTART_DELAY)),
    Effect.forever
  )
