/**
 * The live client's `watchFrom`: one watch connection from a resourceVersion, opened
 * under the client's limits and telemetry (up to its response headers), its events a
 * stream that closes the connection when it ends.
 */
import type * as k8s from "@kubernetes/client-node"
import { Effect, Stream } from "effect"
import type { ResourceType } from "../../domain/Resources.js"
import type { KubeClientPrimitives, ListOptions, RawWatchEvent, ReadableObject } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import type { ConnectionPools } from "./ConnectionPool.js"
import { fromResponse, requestContext } from "./KubeErrorParsing.js"
import type { Limited } from "./Requests.js"
import { observeRequest } from "./RequestTelemetry.js"
import { fromTransportError } from "./TransportErrors.js"
import { openWatch, watchEvents } from "./WatchConnection.js"
import { wirePath } from "./WireObjects.js"

/** What a client's watches need: its kubeconfig and pools, the server's address (and how it is shown), its limits. */
export interface WatchSetup {
  readonly kc: k8s.KubeConfig
  readonly pools: ConnectionPools
  /** The address connections go to. */
  readonly address: string
  /** The address as messages name it, without its userinfo. */
  readonly server: string
  readonly limited: Limited
}

/** `watchFrom` over one client's connections and limits. */
export const makeWatchFrom = (setup: WatchSetup): KubeClientPrimitives["watchFrom"] =>
<A extends ReadableObject>(
  resource: ResourceType<A>,
  namespace: string,
  options: ListOptions & { readonly resourceVersion: string }
): Stream.Stream<RawWatchEvent<A>, KubeError> => {
  const { kc, limited, pools, server } = setup
  const ctx = requestContext("watch", resource, namespace)
  const url = new URL(setup.address + wirePath(resource, namespace))
  url.searchParams.set("watch", "true")
  url.searchParams.set("allowWatchBookmarks", "true")
  url.searchParams.set("resourceVersion", options.resourceVersion)
  if (options.labelSelector !== undefined) url.searchParams.set("labelSelector", options.labelSelector)
  return Stream.unwrapScoped(
    Effect.gen(function*() {
      // Lives as long as the stream: closing it (consumer done, fiber
      // interrupted) aborts the connection.
      const connection = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (controller) => Effect.sync(() => controller.abort())
      )
      // The span and the count cover the opening (until the headers), not the stream after it.
      const opening = yield* observeRequest(
        ctx,
        // Below the server, as every call's line shows its path.
        { line: { method: "GET", path: wirePath(resource, namespace) + url.search } },
        (observe) =>
          observe(
            Effect.tryPromise({
              try: (signal) => openWatch(kc, pools, url, AbortSignal.any([signal, connection.signal])),
              catch: (error) => fromTransportError(ctx, server, error)
            }).pipe(
              Effect.flatMap((opened) =>
                opened.ok
                  ? Effect.succeed(opened.response)
                  : Effect.fail(fromResponse(ctx, opened.code, opened.text, opened.retryAfter))
              )
            ),
            () => 200
          ).pipe((self) => limited(ctx, self))
      )
      return watchEvents<A>(opening, ctx, server, (error) => fromTransportError(ctx, server, error))
    })
  )
}
