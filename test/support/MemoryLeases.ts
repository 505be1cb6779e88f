/**
 * Leases in memory with the API server's optimistic concurrency, for leader election on
 * TestClock: every write bumps the resourceVersion, a replace from a stale one fails with
 * Conflict, a create of one that exists with AlreadyExists, a get of one missing with
 * NotFound. Each candidate calls through its own client, whose next calls a test can make
 * fail, hang, or write and then hang (the answer lost on the way back).
 */
import { Clock, Duration, Effect } from "effect"
import type { Lease } from "../../src/domain/Objects.js"
import type { LeaseCalls } from "../../src/services/KubeClient.js"
import { AlreadyExists, Conflict, type KubeError, NotFound } from "../../src/services/KubeError.js"

/** What a faulty call does instead of answering: fail with the error, never answer, or write and never answer. */
export type LeaseFault = KubeError | "hang" | "hang-after-write"

/** A write the store took, in order. */
export interface LeaseWrite {
  readonly at: number
  /** The client that wrote it (`"test"` for `put`). */
  readonly by: string
  readonly verb: "create" | "replace"
  readonly lease: Lease
}

/** One candidate's calls over the shared store. */
export interface LeaseClient {
  readonly calls: LeaseCalls
  /** The next `count` calls (get, create or replace) do `fault`; `Infinity` until `heal`. */
  readonly failNext: (count: number, fault: LeaseFault) => void
  readonly heal: () => void
  /** Calls made through this client so far. */
  readonly callsMade: () => number
}

export interface MemoryLeases {
  /**
   * A client named `by` (its writes are recorded under that name). Each of its calls waits
   * `latency` on the Clock before the store acts on it, so that candidates' calls interleave.
   */
  readonly client: (by: string, latency?: Duration.DurationInput) => LeaseClient
  /** The Lease as stored, or undefined. */
  readonly read: (namespace: string, name: string) => Lease | undefined
  /** Writes `lease` as another party would (a holder outside the test's candidates), bumping its resourceVersion. */
  readonly put: (lease: Lease) => Effect.Effect<Lease>
  readonly writes: () => ReadonlyArray<LeaseWrite>
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`

export const makeMemoryLeases = (): MemoryLeases => {
  const store = new Map<string, Lease>()
  const log: Array<LeaseWrite> = []
  let version = 0

  const save = (by: string, verb: LeaseWrite["verb"], namespace: string, lease: Lease) =>
    Effect.map(Clock.currentTimeMillis, (at) => {
      version++
      const stored: Lease = { ...lease, metadata: { ...lease.metadata, namespace, resourceVersion: String(version) } }
      store.set(keyOf(namespace, lease.metadata?.name ?? ""), stored)
      log.push({ at, by, verb, lease: stored })
      return stored
    })

  const get = (namespace: string, name: string): Effect.Effect<Lease, KubeError> =>
    Effect.suspend(() => {
      const found = store.get(keyOf(namespace, name))
      return found !== undefined
        ? Effect.succeed(found)
        : Effect.fail(new NotFound({ reason: `leases "${name}" not found`, code: 404 }))
    })

  const create = (by: string, namespace: string, lease: Lease): Effect.Effect<Lease, KubeError> =>
    Effect.suspend(() => {
      const name = lease.metadata?.name ?? ""
      return store.has(keyOf(namespace, name))
        ? Effect.fail(new AlreadyExists({ reason: `leases "${name}" already exists`, code: 409 }))
        : save(by, "create", namespace, lease)
    })

  const replace = (by: string, namespace: string, lease: Lease): Effect.Effect<Lease, KubeError> =>
    Effect.suspend((): Effect.Effect<Lease, KubeError> => {
      const name = lease.metadata?.name ?? ""
      const current = store.get(keyOf(namespace, name))
      if (current === undefined) return Effect.fail(new NotFound({ reason: `leases "${name}" not found`, code: 404 }))
      if (lease.metadata?.resourceVersion !== current.metadata?.resourceVersion) {
        return Effect.fail(
          new Conflict({
            reason:
              `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            code: 409,
            causes: []
          })
        )
      }
      return save(by, "replace", namespace, lease)
    })

  const client = (by: string, latency: Duration.DurationInput = Duration.zero): LeaseClient => {
    let faults = 0
    let fault: LeaseFault = "hang"
    let made = 0
    const faulty = <A>(call: Effect.Effect<A, KubeError>): Effect.Effect<A, KubeError> =>
      Effect.suspend(() => {
        made++
        if (faults <= 0) {
          return Duration.isZero(Duration.decode(latency))
            ? call
            : Effect.zipRight(Effect.sleep(latency), call)
        }
        faults--
        if (fault === "hang") return Effect.never
        if (fault === "hang-after-write") return Effect.zipRight(call, Effect.never)
        return Effect.fail(fault)
      })
    return {
      calls: {
        get: (namespace, name) => faulty(get(namespace, name)),
        create: (namespace, lease) => faulty(create(by, namespace, lease)),
        replace: (namespace, lease) => faulty(replace(by, namespace, lease))
      },
      failNext: (count, next) => {
        faults = count
        fault = next
      },
      heal: () => {
        faults = 0
      },
      callsMade: () => made
    }
  }

  return {
    client,
    read: (namespace, name) => store.get(keyOf(namespace, name)),
    put: (lease) => save("test", "replace", lease.metadata?.namespace ?? "", lease),
    writes: () => log
  }
}
