/**
 * KubeClient over a ClusterStore, without sockets: the same failures the HTTP face
 * would produce (Status bodies mapped by `fromStatus`, plain-text 404 for an unserved
 * type, faults included), so code under test cannot tell the two apart.
 */
import { Effect, Layer, Stream } from "effect"
import type { KubeObject, Status } from "../domain/Objects.js"
import { qualifiedName, type ResourceType } from "../domain/Resources.js"
import {
  FIELD_MANAGER,
  KubeClient,
  type KubeClientPrimitives,
  type RawWatchEvent,
  type ReadableObject
} from "../services/KubeClient.js"
import { describeRequest, fromResponse, fromStatus, type KubeError, type RequestContext, Transport } from "../services/KubeError.js"
import { makeKubeClient, type ResumableWatchOptions } from "../services/ResumableWatch.js"
import { type Decision, type Faults, shapeWatch, type Verb } from "./Faults.js"
import type { ClusterStore, StoreWatchEvent } from "./Store.js"

/** The in-memory client's settings: faults to honour, and the resuming watch's schedule. */
export interface InMemoryKubeClientOptions extends ResumableWatchOptions {
  /** Faults to honour, shared with the HTTP face when both serve one cluster. */
  readonly faults?: Faults
}

const NOT_FOUND_PAGE = "404 page not found\n"

/** The KubeClient service over `store`. */
export const make = (store: ClusterStore, options: InMemoryKubeClientOptions = {}): Effect.Effect<KubeClient.Service> =>
  Effect.sync(() => makeKubeClient(primitives(store, options.faults), options))

/** A KubeClient layer over `store`. */
export const layer = (store: ClusterStore, options: InMemoryKubeClientOptions = {}): Layer.Layer<KubeClient> =>
  Layer.effect(KubeClient, make(store, options))

const contextOf = (verb: string, resource: ResourceType<unknown>, namespace: string | undefined, name?: string): RequestContext => ({
  verb,
  resource: qualifiedName(resource),
  ...(resource.namespaced && namespace !== undefined ? { namespace } : {}),
  ...(name !== undefined ? { name } : {})
})

const primitives = (store: ClusterStore, faults: Faults | undefined): KubeClientPrimitives => {
  /**
   * What the server does before a handler runs: faults (throttling, authorization,
   * a dropped connection) first, then routing, where an unserved type is a plain 404.
   */
  const admit = (
    verb: Verb,
    resource: ResourceType<unknown>,
    namespace: string | undefined,
    name: string | undefined,
    ctx: RequestContext
  ): Effect.Effect<Decision, KubeError> =>
    Effect.gen(function*() {
      const decision: Decision = faults === undefined
        ? { _tag: "Proceed" }
        : yield* faults.intercept({
          verb,
          resource,
          ...(namespace !== undefined ? { namespace } : {}),
          ...(name !== undefined ? { name } : {})
        })
      switch (decision._tag) {
        case "Respond":
          return yield* Effect.fail(
            fromResponse(ctx, decision.response.code, decision.response.status ?? decision.response.body, decision.response.headers["retry-after"])
          )
        case "Hang":
          return yield* Effect.never
        case "Reset":
          return yield* Effect.fail(new Transport({ reason: `the connection to the API server was reset during ${describeRequest(ctx)}` }))
        case "Refused":
          return yield* Effect.fail(
            new Transport({ reason: `could not ${describeRequest(ctx)}: the connection to the API server was refused`, kind: "refused" })
          )
        case "Proceed":
          break
      }
      if (!(yield* store.isServed(resource as ResourceType<KubeObject>))) {
        return yield* Effect.fail(fromResponse(ctx, 404, NOT_FOUND_PAGE))
      }
      return decision
    })

  const call = <A>(
    verb: Verb,
    resource: ResourceType<unknown>,
    namespace: string | undefined,
    name: string | undefined,
    ctx: RequestContext,
    effect: Effect.Effect<A, Status>
  ): Effect.Effect<A, KubeError> =>
    Effect.zipRight(admit(verb, resource, namespace, name, ctx), Effect.mapError(effect, (status) => fromStatus(ctx, status)))

  const toRaw = <A>(ctx: RequestContext, event: StoreWatchEvent): RawWatchEvent<A> => {
    switch (event.type) {
      case "BOOKMARK":
        return { type: "BOOKMARK", resourceVersion: event.object.metadata?.resourceVersion ?? "" }
      case "ERROR":
        return { type: "ERROR", error: fromStatus(ctx, event.object) }
      default:
        return { type: event.type, object: event.object as A }
    }
  }

  return {
    apply: (resource, object, options) => {
      const namespace = object.metadata?.namespace
      const name = object.metadata?.name ?? ""
      const ctx = contextOf("apply", resource, namespace, name)
      return call(
        "patch",
        resource,
        namespace,
        name,
        ctx,
        Effect.map(
          store.apply(resource, namespace, name, object, {
            fieldManager: FIELD_MANAGER,
            force: options?.force ?? true,
            ...(options?.dryRun === true ? { dryRun: true } : {})
          }),
          (result) => result.object
        )
      )
    },
    get: (resource, namespace, name) =>
      call("get", resource, namespace, name, contextOf("get", resource, namespace, name), store.get(resource, namespace, name)),
    delete: (resource, namespace, name) =>
      call(
        "delete",
        resource,
        namespace,
        name,
        contextOf("delete", resource, namespace, name),
        Effect.asVoid(store.delete(resource, namespace, name))
      ),
    list: (resource, namespace, options) =>
      call(
        "list",
        resource,
        namespace,
        undefined,
        contextOf("list", resource, namespace),
        store.list(resource, namespace, options?.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {})
      ),
    watchFrom: <A extends ReadableObject>(
      resource: ResourceType<A>,
      namespace: string,
      options: { readonly labelSelector?: string; readonly resourceVersion: string }
    ): Stream.Stream<RawWatchEvent<A>, KubeError> => {
      const ctx = contextOf("watch", resource, namespace)
      return Stream.unwrap(
        Effect.map(admit("watch", resource, namespace, undefined, ctx), (decision) => {
          const events = shapeWatch(
            store.watch(resource as ResourceType<KubeObject>, namespace, {
              resourceVersion: options.resourceVersion,
              allowWatchBookmarks: true,
              ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {})
            }),
            decision,
            options.resourceVersion
          )
          return events.pipe(
            Stream.map((event) => toRaw<A>(ctx, event)),
            Stream.mapError((status): KubeError => fromStatus(ctx, status)),
            // Over HTTP a server that dies resets the watch's connection; a clean end
            // would read as a graceful close instead.
            Stream.concat(Stream.unwrap(Effect.map(
              faults === undefined ? Effect.succeed("running") : faults.server.state,
              (state) =>
                state === "stopped"
                  ? Stream.fail(new Transport({ reason: `the connection to the API server was reset during ${describeRequest(ctx)}` }))
                  : Stream.empty
            )))
          )
        })
      )
    }
  }
}
