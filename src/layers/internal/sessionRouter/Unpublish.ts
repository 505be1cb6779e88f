/**
 * Unpublishing that says what it could not finish. Every removal is tried, since one
 * type refusing (RBAC on Services, say) says nothing about the others; only a server
 * that stopped answering ends the attempt early, as each further request would only
 * wait out its own timeout. The failure names every object that may remain.
 */
import { Effect, Either } from "effect"
import type { KubeError } from "../../../services/KubeError.js"
import { PublishError } from "../../../services/SessionRouter.js"
import { describeRef, type Removal, serverDidNotAnswer } from "./SessionObjects.js"

const NOT_TRIED = "not tried: the API server stopped answering"

/** Runs `removals` in order and fails, naming what remains, if any of them could not finish. */
export const runUnpublish = (sessionId: string, removals: ReadonlyArray<Removal>): Effect.Effect<void, PublishError> =>
  Effect.gen(function*() {
    const left: Array<string> = []
    let first: KubeError | undefined
    let silent = false
    const failed = (error: KubeError, what: string) => {
      first ??= error
      left.push(what)
      silent = serverDidNotAnswer(error)
    }

    for (const removal of removals) {
      if (silent) {
        left.push(`${removal.what} (${NOT_TRIED})`)
        continue
      }
      const found = yield* Effect.either(removal.find)
      if (Either.isLeft(found)) {
        failed(found.left, `${removal.what} (could not list them: ${found.left.reason})`)
        continue
      }
      for (const target of found.right) {
        if (silent) {
          left.push(`${describeRef(target.ref)} (${NOT_TRIED})`)
          continue
        }
        const removed = yield* Effect.either(target.remove)
        if (Either.isLeft(removed)) {
          failed(removed.left, `${describeRef(target.ref)} (could not delete it: ${removed.left.reason})`)
        }
      }
    }

    if (first !== undefined) {
      return yield* new PublishError({
        sessionId,
        error: first,
        reason: `could not remove every object of session ${sessionId}; these may remain: ${left.join("; ")}`
      })
    }
  })
