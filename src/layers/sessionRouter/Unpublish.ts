/**
 * Unpublishing that says what it could not finish. Every removal is tried, since one
 * type refusing (RBAC on Services, say) says nothing about the others; only a server
 * that stopped answering ends the attempt early, as each further request would only
 * wait out its own timeout. The failure names every object that may remain.
 */
import { Effect, Either } from "effect"
import { managedSessionSelector } from "../../domain/Manifests.js"
import { HttpRouteResource, IngressResource, type ResourceType, ServiceResource } from "../../domain/Resources.js"
import type { KubeClient, WritableObject } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { PublishError } from "../../services/SessionRouter.js"
import {
  describeRef,
  type ObjectRef,
  type Removal,
  removeOtherModeObjects,
  removeSessionObjects,
  serverDidNotAnswer
} from "./SessionObjects.js"

const NOT_TRIED = "not tried: the API server stopped answering"

/**
 * Runs `removals` in order and fails, naming what remains, if any of them could not
 * finish; succeeds with the objects it deleted.
 */
export const runUnpublish = (
  sessionId: string,
  removals: ReadonlyArray<Removal>
): Effect.Effect<ReadonlyArray<ObjectRef>, PublishError> =>
  Effect.gen(function*() {
    const left: Array<string> = []
    const removed: Array<ObjectRef> = []
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
        const done = yield* Effect.either(target.remove)
        if (Either.isLeft(done)) {
          failed(done.left, `${describeRef(target.ref)} (could not delete it: ${done.left.reason})`)
        } else if (done.right) {
          removed.push(target.ref)
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
    return removed
  })

/**
 * How an unpublish looks through one kind of route: `own`, the kind the session's mode
 * publishes, whose list must succeed; `other`, the other mode's, best effort (a kind
 * not served, or not listable under this identity's RBAC, holds nothing to see); `skip`.
 */
export type RouteKindLook = "own" | "other" | "skip"

/**
 * Every object of the session, by its labels: its Ingresses and HTTPRoutes as `look`
 * says, the mode's own kind first (the one certainly there, so a server that stops
 * answering leaves the other mode's lookup untried, not the session's own routes), then
 * its Service (last, so a route never points at a Service already gone). A cluster
 * that does not serve HTTPRoutes has none.
 */
export const unpublishSession = (
  kube: KubeClient.Service,
  namespace: string,
  managedBy: string,
  look: { readonly ingress: RouteKindLook; readonly gateway: RouteKindLook }
) =>
(sessionId: string): Effect.Effect<ReadonlyArray<ObjectRef>, PublishError> => {
  const selector = managedSessionSelector(managedBy, sessionId)
  const routes = <A extends WritableObject>(resource: ResourceType<A>, how: RouteKindLook): ReadonlyArray<Removal> =>
    how === "skip"
      ? []
      : how === "other"
      ? [removeOtherModeObjects(kube, resource, namespace, selector)]
      : [removeSessionObjects(kube, resource, namespace, selector, { tolerate: (error) => error._tag === "NotServed" })]
  const ingresses = routes(IngressResource, look.ingress)
  const httpRoutes = routes(HttpRouteResource, look.gateway)
  return runUnpublish(sessionId, [
    ...(look.gateway === "own" && look.ingress !== "own"
      ? [...httpRoutes, ...ingresses]
      : [...ingresses, ...httpRoutes]),
    removeSessionObjects(kube, ServiceResource, namespace, selector)
  ])
}
