/**
 * The live client's Event writes: create and merge-patch in events.k8s.io/v1 or
 * core/v1, through the same request path (limits, retries, abort, raw JSON answers)
 * as every other call.
 */
import type { Effect } from "effect"
import type { ResourceType } from "../../domain/Resources.js"
import type { EventObject, EventWrites } from "../../services/KubeClient.js"
import { type KubeError } from "../../services/KubeError.js"
import { type RequestContext, requestContext } from "./KubeErrorParsing.js"
import type { RestCall } from "./RestTransport.js"
import { wirePath } from "./WireObjects.js"

/** One call through the live client's request path. */
export type EventRequest = (ctx: RequestContext, call: RestCall) => Effect.Effect<unknown, KubeError>

/**
 * The body goes out as the recorder built it: timestamps stay the strings it wrote
 * (MicroTime keeps its six digits), and no field is dropped on the way.
 */
export const liveEventWrites = (request: EventRequest): EventWrites => {
  return {
    create: <A extends EventObject>(resource: ResourceType<A>, namespace: string, event: A) =>
      request(requestContext("create", resource, namespace), {
        method: "POST",
        path: wirePath(resource, namespace),
        body: JSON.stringify(event),
        contentType: "application/json"
      }) as Effect.Effect<A, KubeError>,
    patch: <A extends EventObject>(
      resource: ResourceType<A>,
      namespace: string,
      name: string,
      patch: Record<string, unknown>
    ) =>
      request(requestContext("patch", resource, namespace, name), {
        method: "PATCH",
        path: wirePath(resource, namespace, name),
        body: JSON.stringify(patch),
        contentType: "application/merge-patch+json"
      }) as Effect.Effect<A, KubeError>,
    // Each call is bounded by the client's attempt limit and budget.
    timeLimited: true
  }
}
