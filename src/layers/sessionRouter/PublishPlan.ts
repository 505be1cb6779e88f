/**
 * A publish as one step from the user's side. Everything that can be refused is
 * asked before the first write (the lists of what to remove, and a server-side dry
 * run of every object), and a write that still fails midway takes back what this
 * publish created, leaving what existed before it in place.
 */
import { Effect, Either } from "effect"
import type { WritableObject } from "../../services/KubeClient.js"
import { AlreadyExists, type KubeError } from "../../services/KubeError.js"
import { PublishError } from "../../services/SessionRouter.js"
import {
  describeRef,
  describeRefs,
  type ObjectRef,
  type PlannedWrite,
  type Removal,
  type RemovalTarget,
  serverDidNotAnswer
} from "./SessionObjects.js"

/** What one publish does: objects to write (in order) and objects to remove after them. */
export interface PublishPlan {
  readonly sessionId: string
  readonly writes: ReadonlyArray<PlannedWrite>
  readonly removals: ReadonlyArray<Removal>
  /**
   * The words for a failure whose plain "could not <step>: <answer>" would mislead
   * (gateway mode on a cluster without the Gateway API); undefined keeps them.
   */
  readonly explain?: (error: KubeError) => string | undefined
}

const NOT_TRIED = "not tried: the API server stopped answering"

/** One object this publish created, and what became of taking it back. */
type Undone =
  | { readonly _tag: "Removed"; readonly ref: ObjectRef }
  | { readonly _tag: "Left"; readonly ref: ObjectRef; readonly why: string }

/**
 * Whether the server may have stored a write that failed: it said nothing (or
 * something a proxy says when the apiserver is slow) after the request went out.
 * A 4xx is the apiserver's decision before storing anything.
 */
const mayHaveBeenWritten = (error: KubeError): boolean => error._tag === "Transport" || error._tag === "Unavailable"

/**
 * Deletes the objects this publish created, newest first. Once the server stops
 * answering, the rest is not tried: each would cost another timeout and fail alike.
 */
const takeBack = (
  created: ReadonlyArray<PlannedWrite>,
  silentFrom: KubeError | undefined
): Effect.Effect<ReadonlyArray<Undone>> =>
  Effect.gen(function*() {
    const undone: Array<Undone> = []
    let silent = silentFrom !== undefined
    for (const write of [...created].reverse()) {
      if (silent) {
        undone.push({ _tag: "Left", ref: write.ref, why: NOT_TRIED })
        continue
      }
      const result = yield* Effect.either(write.remove)
      if (Either.isRight(result)) {
        // A write that never landed (the suspect one) has nothing to take back.
        if (result.right) undone.push({ _tag: "Removed", ref: write.ref })
      } else {
        undone.push({ _tag: "Left", ref: write.ref, why: `could not delete it: ${result.left.reason}` })
        silent = serverDidNotAnswer(result.left)
      }
    }
    return undone
  })

/** What the reason adds about taking back the created objects. */
const describeUndone = (undone: ReadonlyArray<Undone>): string => {
  const removed = undone.flatMap((u) => (u._tag === "Removed" ? [u.ref] : []))
  const left = undone.flatMap((u) => (u._tag === "Left" ? [u] : []))
  const parts: Array<string> = []
  if (removed.length > 0) parts.push(`removed what this publish had created (${describeRefs(removed)})`)
  if (left.length > 0) {
    parts.push(
      `could not remove what this publish created, so these remain: ${
        left.map((u) => `${describeRef(u.ref)} (${u.why})`).join("; ")
      }`
    )
  }
  return parts.map((part) => `; ${part}`).join("")
}

/** Whether the server refused an apply because another field manager owns what it changes. */
const isFieldConflict = (error: KubeError): boolean =>
  error._tag === "Conflict" && error.causes.some((cause) => cause.reason === "FieldManagerConflict")

/** A dry run that failed, and why the object was not taken over when that was the question. */
interface DryRunFailure {
  readonly error: KubeError
  readonly notOurs?: string
}

/**
 * The dry run of one write, and whether the write must force. An object already at the
 * name must be ours (this runner's, this session's, this Pod's: `notOursToTakeOver`)
 * whatever the dry run says: a write that updates it is checked, so a user's object, or
 * another Pod's session of the same id, is never taken over, with or without a field
 * conflict. Force is used only when a field another manager set is in the way of an
 * object that is ours.
 */
const dryRun = (
  write: PlannedWrite
): Effect.Effect<{ readonly answer: WritableObject; readonly force: boolean }, DryRunFailure> => {
  const attempt = (force: boolean) =>
    write.apply({ dryRun: true, force }).pipe(
      Effect.map((answer) => ({ answer, force })),
      Effect.mapError((error): DryRunFailure => ({ error }))
    )
  const ours = (refused: KubeError) =>
    write.notOurs.pipe(
      Effect.mapError((readError): DryRunFailure => ({ error: readError })),
      Effect.flatMap((notOurs) => (notOurs === undefined ? Effect.void : Effect.fail({ error: refused, notOurs })))
    )
  const taken = new AlreadyExists({ reason: `${describeRef(write.ref)} already exists`, code: 409 })
  return attempt(false).pipe(
    // The server answers a create with an object that has no resourceVersion yet.
    Effect.tap(({ answer }) => ((answer.metadata?.resourceVersion ?? "") === "" ? Effect.void : ours(taken))),
    Effect.catchIf(
      ({ error, notOurs }) => notOurs === undefined && isFieldConflict(error),
      ({ error }) => Effect.zipRight(ours(error), attempt(true))
    )
  )
}

/** A failure of `plan`'s step, worded as `explain` says or plainly, with what it left. */
type Fail = (error: KubeError, step: string, rest: string) => PublishError

/** Every object to remove, found before anything is written: a failure here changes nothing. */
const findRemovals = (plan: PublishPlan, fail: Fail) =>
  Effect.forEach(plan.removals, (removal) =>
    removal.find.pipe(
      Effect.mapError((error) =>
        fail(
          error,
          removal.looking?.(plan.sessionId) ?? `list the ${removal.kind} objects of session ${plan.sessionId}`,
          "; nothing was changed"
        )
      )
    )).pipe(Effect.map((found) => found.flat()))

/**
 * The dry run of every write: whether each creates its object, and whether it must
 * force. The dry run's answer says which objects this publish creates, at no extra
 * request: the server answers a create with an object that has no resourceVersion yet
 * (nothing was stored), and an update with the live object's version. A get per object
 * would tell the same at one more request each; both read the same moment, and only the
 * session's own runner writes these names.
 */
const dryRunAll = (plan: PublishPlan, fail: Fail) =>
  Effect.forEach(plan.writes, (write) =>
    dryRun(write).pipe(
      Effect.map(({ answer, force }) => ({ write, force, creates: (answer.metadata?.resourceVersion ?? "") === "" })),
      Effect.mapError(({ error, notOurs }) =>
        fail(
          error,
          `apply ${describeRef(write.ref)}`,
          `${notOurs === undefined ? "" : `; it was left as it is: ${notOurs}`}; nothing was changed`
        )
      )
    ))

/** Writes in order; a write that fails takes back what this publish created. Answers what it created. */
const writeAll = (
  checked: ReadonlyArray<{ readonly write: PlannedWrite; readonly force: boolean; readonly creates: boolean }>,
  fail: Fail
) =>
  Effect.gen(function*() {
    const created: Array<PlannedWrite> = []
    for (const { creates, force, write } of checked) {
      const result = yield* Effect.either(write.apply({ force }))
      if (Either.isLeft(result)) {
        const error = result.left
        // The failed write itself is taken back too when the server may have stored
        // it before the answer was lost; deleting what is not there costs one 404.
        const suspects = creates && mayHaveBeenWritten(error) ? [...created, write] : created
        const undone = yield* takeBack(suspects, serverDidNotAnswer(error) ? error : undefined)
        return yield* fail(error, `apply ${describeRef(write.ref)}`, describeUndone(undone))
      }
      if (creates) created.push(write)
    }
    return created
  })

/**
 * Removes what the session no longer needs. Until one old object is gone, a failure
 * goes back (the old state stays whole); after, the new state stays and what could
 * not be removed is named.
 */
const removeAll = (targets: ReadonlyArray<RemovalTarget>, created: ReadonlyArray<PlannedWrite>, fail: Fail) =>
  Effect.gen(function*() {
    let removedAny = false
    let firstFailure: { readonly error: KubeError; readonly ref: ObjectRef } | undefined
    const left: Array<string> = []
    let silent = false
    for (const removal of targets) {
      if (silent) {
        left.push(`${describeRef(removal.ref)} (${NOT_TRIED})`)
        continue
      }
      const result = yield* Effect.either(removal.remove)
      if (Either.isRight(result)) {
        removedAny = removedAny || result.right
        continue
      }
      const error = result.left
      if (!removedAny) {
        // Nothing of the old state is gone yet: going back leaves it whole.
        const undone = yield* takeBack(created, serverDidNotAnswer(error) ? error : undefined)
        return yield* fail(error, `delete ${describeRef(removal.ref)}`, describeUndone(undone))
      }
      firstFailure ??= { error, ref: removal.ref }
      left.push(`${describeRef(removal.ref)} (could not delete it: ${error.reason})`)
      silent = serverDidNotAnswer(error)
    }
    if (firstFailure !== undefined) {
      // Part of the old state is already removed, so the new one stays: it is whole.
      return yield* fail(
        firstFailure.error,
        `delete ${describeRef(firstFailure.ref)}`,
        `; the session's new objects are in place, and these objects it no longer needs remain: ${left.join("; ")}`
      )
    }
  })

/**
 * Runs a plan: dry-run every write, find what to remove, write, remove. A failure
 * before the first write changes nothing; a failure after it takes back what this
 * publish created, unless the old objects are already partly removed (then going
 * back would leave neither the old state nor the new one). Removals come last: a
 * delete cannot be taken back, so none happens before every write has succeeded.
 */
export const runPublish = (plan: PublishPlan): Effect.Effect<void, PublishError> => {
  const fail: Fail = (error, step, rest) =>
    new PublishError({
      sessionId: plan.sessionId,
      error,
      reason: `${plan.explain?.(error) ?? `could not ${step}: ${error.reason}`}${rest}`
    })
  return Effect.gen(function*() {
    // The writes' dry runs first: against a server that is down, the first request to fail
    // is then the session's own object, not the other mode's lookup.
    const checked = yield* dryRunAll(plan, fail)
    const targets = yield* findRemovals(plan, fail)
    const created = yield* writeAll(checked, fail)
    yield* removeAll(targets, created, fail)
  })
}
