/**
 * The live client's Event writes: create and merge-patch in events.k8s.io/v1 or
 * core/v1, through the typed APIs and the same request path (limits, retries,
 * abort, raw JSON answers) as every other call.
 */
import * as k8s from "@kubernetes/client-node"
import type { Effect } from "effect"
import { qualifiedName, type ResourceType } from "../../domain/Resources.js"
import type { EventObject, EventWrites } from "../../services/KubeClient.js"
import type { KubeError, RequestContext } from "../../services/KubeError.js"
import { type ConnectionPools, pooledConnections } from "./ConnectionPool.js"

/** One call through the live client's request path, with an optional patch content type. */
export type EventRequest = (
  ctx: RequestContext,
  run: (options: k8s.ConfigurationOptions) => Promise<unknown>,
  contentType?: k8s.PatchStrategy
) => Effect.Effect<unknown, KubeError>

const isEventsV1 = (resource: ResourceType<unknown>): boolean => resource.group === "events.k8s.io"

/**
 * Timestamps go out as the strings we wrote: the client's serializer passes a
 * string through where its model says Date, and MicroTime must keep six digits.
 */
export const liveEventWrites = (
  kc: k8s.KubeConfig,
  server: string,
  pools: ConnectionPools,
  request: EventRequest
): EventWrites => {
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(server, {}),
    authMethods: { default: kc },
    middleware: [pooledConnections(pools)]
  })
  const core = new k8s.CoreV1Api(configuration)
  const events = new k8s.EventsV1Api(configuration)
  const ctxOf = (verb: string, resource: ResourceType<unknown>, namespace: string, name?: string): RequestContext => ({
    verb,
    resource: qualifiedName(resource),
    namespace,
    ...(name !== undefined ? { name } : {})
  })
  return {
    create: <A extends EventObject>(resource: ResourceType<A>, namespace: string, event: A) =>
      request(ctxOf("create", resource, namespace), (options) =>
        isEventsV1(resource)
          ? events.createNamespacedEvent({ namespace, body: event as unknown as k8s.EventsV1Event }, options)
          : core.createNamespacedEvent(
            { namespace, body: event as unknown as k8s.CoreV1Event },
            options
          )) as Effect.Effect<
          A,
          KubeError
        >,
    patch: <A extends EventObject>(
      resource: ResourceType<A>,
      namespace: string,
      name: string,
      patch: Record<string, unknown>
    ) =>
      request(
        ctxOf("patch", resource, namespace, name),
        (options) =>
          isEventsV1(resource)
            ? events.patchNamespacedEvent({ namespace, name, body: patch }, options)
            : core.patchNamespacedEvent({ namespace, name, body: patch }, options),
        k8s.PatchStrategy.MergePatch
      ) as Effect.Effect<A, KubeError>
  }
}
