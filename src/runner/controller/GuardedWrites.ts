/**
 * The controller's writes made on behalf of leadership, each behind the election's
 * guard: the Pod writes (condition, label and annotation) check the renew deadline
 * right before every request, a publish before it starts, an Event before it is queued.
 */
import { Effect } from "effect"
import { EventRecorder, noEvents } from "../../services/EventRecorder.js"
import { KubeClient, withoutTransientRetry } from "../../services/KubeClient.js"
import { SessionRouter } from "../../services/SessionRouter.js"
import type { Leadership } from "./LeaderElection.js"

/**
 * `kube` whose Pod writes, applies and deletes each run `leadership.guard` first. The
 * client's own retries are off for the Pod writes: one of them would send the request
 * again seconds later without asking the guard, so the condition writer's own retry (which
 * passes the guard each time) tries again instead.
 */
export const guardedKubeClient = (kube: KubeClient.Service, leadership: Leadership): KubeClient.Service => ({
  ...kube,
  apply: (resource, object, options) => Effect.zipRight(leadership.guard, kube.apply(resource, object, options)),
  delete: (resource, namespace, name, options) =>
    Effect.zipRight(leadership.guard, kube.delete(resource, namespace, name, options)),
  ...(kube.pods !== undefined
    ? {
      pods: {
        patchStatus: (namespace, name, patch) =>
          Effect.zipRight(leadership.guard, withoutTransientRetry(kube.pods!.patchStatus(namespace, name, patch))),
        patch: (namespace, name, patch) =>
          Effect.zipRight(leadership.guard, withoutTransientRetry(kube.pods!.patch(namespace, name, patch)))
      }
    }
    : {})
})

/**
 * `router` whose publishes and unpublishes run `leadership.guard` before they start. The
 * router writes through the client it was built with, so its writes inside one publish
 * are not each guarded: a publish under way when the deadline passes is cut short only
 * when the loss interrupts it.
 */
export const guardedRouter = (router: SessionRouter.Service, leadership: Leadership): SessionRouter.Service => ({
  ...router,
  publish: (args) => Effect.zipRight(leadership.guard, router.publish(args)),
  unpublish: (sessionId) => Effect.zipRight(leadership.guard, router.unpublish(sessionId))
})

/**
 * `recorder` whose occurrences run `leadership.guard` before they are queued; the
 * recorder writes them moments later, on its own fiber.
 */
export const guardedRecorder = (recorder: EventRecorder.Service, leadership: Leadership): EventRecorder.Service =>
  // Events off stay off, and stay recognisable as off.
  recorder === noEvents ? recorder : {
    ...recorder,
    record: (occurrence, problems) => Effect.zipRight(leadership.guard, recorder.record(occurrence, problems))
  }

/** Runs `self` with the guarded client, router and Event recorder in place of those in context. */
export const withGuardedWrites =
  (leadership: Leadership) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | KubeClient | SessionRouter | EventRecorder> =>
    Effect.gen(function*() {
      const kube = yield* KubeClient
      const router = yield* SessionRouter
      const recorder = yield* EventRecorder
      return yield* self.pipe(
        Effect.provideService(KubeClient, guardedKubeClient(kube, leadership)),
        Effect.provideService(SessionRouter, guardedRouter(router, leadership)),
        Effect.provideService(EventRecorder, guardedRecorder(recorder, leadership))
      )
    })
