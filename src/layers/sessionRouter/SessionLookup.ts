/**
 * A publish asks which objects of a kind its session already has (routes of dropped
 * ports, what the other routing mode left). Asked one list per session, a burst of
 * publishes sends one label-selected LIST each; here the lookups of publishes under
 * way at once share one list, `<session label> in (a, b, ...)`. Each lookup is
 * answered by a list sent after it was asked, so it is as fresh as a list of its own.
 */
import { Deferred, Effect, Exit, FiberId, type Scope } from "effect"
import { LABEL_MANAGED_BY, LABEL_SESSION_ID } from "../../domain/Manifests.js"
import type { ResourceType } from "../../domain/Resources.js"
import type { KubeClient, WritableObject } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"

/**
 * Sessions one list asks for. Their ids, at most 48 characters each, keep the query
 * under 2 KiB, well within what API servers and the proxies before them accept.
 */
export const MAX_SESSIONS_PER_LIST = 32

/** What a publish through a router whose layer was released dies with. */
export const RELEASED = "this SessionRouter was used after the scope of the layer that built it closed: provide " +
  "the layer around everything that uses the router (Effect.provide(program, layer)), not only around getting it"

/** The objects of `sessionId` this runner manages, from a list sent after the call. */
export type SessionLookup<A> = (sessionId: string) => Effect.Effect<ReadonlyArray<A>, KubeError>

/** Sessions waiting for one list, and what it found for each. */
interface Batch<A> {
  readonly sessionIds: Set<string>
  readonly found: Deferred.Deferred<ReadonlyMap<string, ReadonlyArray<A>>, KubeError>
}

/** The selector of one list: this runner's objects of any of `sessionIds`. */
export const batchSelector = (managedBy: string, sessionIds: ReadonlyArray<string>): string =>
  `${LABEL_MANAGED_BY}=${managedBy},${LABEL_SESSION_ID} in (${sessionIds.join(",")})`

/** Items by the session they are labelled with; an item of no asked session is dropped. */
const bySession = <A extends WritableObject>(items: ReadonlyArray<A>): ReadonlyMap<string, ReadonlyArray<A>> => {
  const out = new Map<string, Array<A>>()
  for (const item of items) {
    const id = item.metadata?.labels?.[LABEL_SESSION_ID]
    if (id === undefined) continue
    const mine = out.get(id)
    if (mine === undefined) out.set(id, [item])
    else mine.push(item)
  }
  return out
}

/**
 * Lookups of `resource` in `namespace`, batched. One list is out at a time: lookups
 * that come meanwhile gather in the next batch, sent when the list before it ends
 * (at once when nothing is out), so batches are as large as the server is slow and no
 * lookup waits on a timer. A lookup waits at most for the list out when it asked and
 * its own, each under the client's time limits (with a router's bounded publishes, at
 * most a few batches are ever queued). The lists run in the scope, so a publish
 * interrupted while it waits leaves the others' list going. Asked once the scope has
 * closed (a router used outside the scope its layer was built in), a lookup dies saying
 * so: an interruption would read as a deliberate stop, and a program run by
 * `NodeRuntime.runMain` would end with status 0 halfway through.
 */
export const makeSessionLookup = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  managedBy: string
): Effect.Effect<SessionLookup<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    let released = false
    yield* Effect.addFinalizer(() => Effect.sync(() => released = true))
    /** The batch still taking sessions, if any. */
    let gathering: Batch<A> | undefined
    /** The batch sent (or to be sent) last: the next one goes after it. */
    let last: Batch<A> | undefined

    const send = (batch: Batch<A>, after: Batch<A> | undefined): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (after !== undefined) yield* Effect.exit(Deferred.await(after.found))
        // From here on, a session asking comes too late for this list: it starts the next batch.
        if (gathering === batch) gathering = undefined
        const listed = yield* Effect.exit(
          kube.list(resource, namespace, { labelSelector: batchSelector(managedBy, [...batch.sessionIds]) })
        )
        yield* Deferred.done(batch.found, Exit.map(listed, (list) => bySession(list.items)))
      })

    /** A new batch of `sessionId`, its list sent after the last one, in the scope. */
    const open = (sessionId: string): Effect.Effect<Batch<A>> => {
      const after = last
      const batch: Batch<A> = { sessionIds: new Set([sessionId]), found: Deferred.unsafeMake(FiberId.none) }
      gathering = batch
      last = batch
      return Effect.as(
        Effect.tap(Effect.forkIn(send(batch, after), scope), (fiber) =>
          // A fiber forked into a scope already closed ends before it runs a step:
          // the batch's lookups hear how it ended rather than wait for ever.
          Effect.sync(() =>
            fiber.addObserver((exit) => {
              if (Exit.isFailure(exit)) Deferred.unsafeDone(batch.found, Exit.failCause(exit.cause))
            })
          )),
        batch
      )
    }

    const answer = (batch: Batch<A>, sessionId: string) =>
      Effect.map(Deferred.await(batch.found), (found) => found.get(sessionId) ?? [])

    return (sessionId: string) =>
      Effect.suspend(() => {
        if (released) return Effect.dieMessage(RELEASED)
        const current = gathering
        if (current !== undefined && current.sessionIds.size < MAX_SESSIONS_PER_LIST) {
          current.sessionIds.add(sessionId)
          return answer(current, sessionId)
        }
        return Effect.flatMap(open(sessionId), (batch) => answer(batch, sessionId))
      })
  })
