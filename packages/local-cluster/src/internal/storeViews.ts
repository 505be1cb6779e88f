/**
 * Types the store serves as views of another's objects: events.k8s.io/v1 Events are
 * the core/v1 Events, converted on the way in and out, so both APIs list, watch and
 * change the same objects with the same uids and resourceVersions, as on a real server.
 */
import { Effect, Stream } from "effect"
import {
  apiVersionOf,
  type KubeObject,
  type ObjectList,
  type ResourceType,
  type Status
} from "session-routing/kubernetes"
import { EventResource, EventV1Resource, servedOf, type ServedResource } from "../ServedResources.js"
import type { ClusterStore, StoreWatchEvent } from "../Store.js"
import { invalidStatus } from "../Validation.js"
import { toCoreEvent, toEventV1 } from "./eventViews.js"
import { decodeBody } from "./storeAdmission.js"
import { attempt, notServedStatus } from "./storeStatus.js"
import { eventV1UpdateErrors } from "./workloadValidation.js"

type AnyResource = ServedResource<KubeObject>

/**
 * The store's answers worded for the view, as kube-apiserver words them: what names the
 * resource (`events.events.k8s.io "x" not found`) names it as the client asked for it;
 * what names the Kind (validation, a delete's precondition) names the core Event the
 * object is stored as (`Event "x" is invalid`), with no group.
 */
const viewStatus = (status: Status): Status => {
  if (status.details?.kind !== EventResource.plural) return status
  return {
    ...status,
    ...(status.message !== undefined
      ? {
        message: status.message
          .replace(/^events "/, `events.${EventV1Resource.group} "`)
          .replace(/ on events "/, ` on events.${EventV1Resource.group} "`)
      }
      : {}),
    details: { ...status.details, group: EventV1Resource.group }
  }
}

const isView = (resource: ResourceType<unknown>): boolean => servedOf(resource) === EventV1Resource

/**
 * `store` serving events.k8s.io/v1 Events from the core/v1 ones. `admitCreate` adds
 * the newer API's stricter checks on create (an events.k8s.io Event needs an
 * `eventTime`, a reporting controller and an action; the core API accepts legacy ones).
 */
export const withEventView = <S extends ClusterStore>(
  store: S,
  admitCreate: (object: KubeObject, namespace: string | undefined) => Status | undefined
): S => {
  const incoming = (body: KubeObject, requireKind: boolean) =>
    attempt(() => toCoreEvent(decodeBody(EventV1Resource as AnyResource, body, requireKind) as unknown as KubeObject))
  const out = <A, R>(effect: Effect.Effect<A, Status, R>, map: (a: A) => A) =>
    effect.pipe(Effect.map(map), Effect.mapError(viewStatus))
  const core = EventResource as AnyResource
  // The view is served, or not, on its own: a type switched off answers 404 whatever backs it.
  const served = <A, R>(effect: Effect.Effect<A, Status, R>): Effect.Effect<A, Status, R> =>
    Effect.flatMap(
      store.isServed(EventV1Resource as AnyResource),
      (on) => (on ? effect : Effect.fail(notServedStatus()))
    )

  // An update through this API may change an Event's series and nothing else. Checked
  // against the stored Event when the write would otherwise go ahead: a stale
  // resourceVersion is the store's 409 first, a missing Event its 404.
  const admitUpdate = (namespace: string | undefined, name: string, next: KubeObject) =>
    Effect.map(Effect.either(store.get(core, namespace, name)), (live): Status | undefined => {
      if (live._tag === "Left") return undefined
      const requested = next.metadata?.resourceVersion ?? ""
      if (requested !== "" && requested !== live.right.metadata?.resourceVersion) return undefined
      const errors = eventV1UpdateErrors(live.right, next)
      return errors.length === 0 ? undefined : invalidStatus(EventResource, name, errors)
    })

  const view: ClusterStore = {
    ...store,
    create: (resource, namespace, body, options) => {
      if (!isView(resource)) return store.create(resource, namespace, body, options)
      return served(Effect.gen(function*() {
        // The body is decoded (kind, apiVersion, field types) before anything validates it.
        const converted = yield* incoming(body, false)
        const refused = admitCreate(body, namespace)
        if (refused !== undefined) return yield* Effect.fail(refused)
        return yield* out(store.create(core, namespace, converted, options), toEventV1)
      })).pipe(Effect.mapError(viewStatus)) as never
    },
    replace: (resource, namespace, name, body, options) =>
      isView(resource)
        ? served(Effect.gen(function*() {
          const converted = yield* incoming(body, false)
          const refused = yield* admitUpdate(namespace, name, converted)
          if (refused !== undefined) return yield* Effect.fail(refused)
          return yield* out(
            store.replace(core, namespace, name, converted, options),
            (r) => ({ ...r, object: toEventV1(r.object) })
          )
        })).pipe(Effect.mapError(viewStatus)) as never
        : store.replace(resource, namespace, name, body, options),
    apply: (resource, namespace, name, body, options) =>
      isView(resource)
        ? served(Effect.flatMap(incoming(body, true), (converted) =>
          out(
            store.apply(
              core,
              namespace,
              name,
              { ...converted, apiVersion: apiVersionOf(EventResource) } as KubeObject,
              options
            ),
            (r) => ({ ...r, object: toEventV1(r.object) })
          ))).pipe(Effect.mapError(viewStatus)) as never
        : store.apply(resource, namespace, name, body, options),
    replaceStatus: (resource, namespace, name, body, options) =>
      isView(resource)
        ? served(Effect.flatMap(incoming(body, false), (converted) =>
          out(store.replaceStatus(core, namespace, name, converted, options), toEventV1))) as never
        : store.replaceStatus(resource, namespace, name, body, options),
    get: (resource, namespace, name) =>
      isView(resource)
        ? served(out(store.get(core, namespace, name), toEventV1)) as never
        : store.get(resource, namespace, name),
    list: (resource, namespace, options) =>
      isView(resource)
        ? served(out(store.list(core, namespace, options), (list: ObjectList<KubeObject>) => ({
          ...list,
          apiVersion: apiVersionOf(EventV1Resource),
          items: list.items.map((item) => {
            // Built-in list items carry no kind or apiVersion.
            const { apiVersion: _v, kind: _k, ...rest } = toEventV1(item)
            return rest
          })
        }))) as never
        : store.list(resource, namespace, options),
    delete: (resource, namespace, name, options) =>
      isView(resource)
        ? served(out(store.delete(core, namespace, name, options), (result) =>
          "object" in result ? { object: toEventV1(result.object) } : {
            status: {
              ...result.status,
              ...(result.status.details ? { details: { ...result.status.details, group: EventV1Resource.group } } : {})
            }
          }))
        : store.delete(resource, namespace, name, options),
    watch: (resource, namespace, options) =>
      isView(resource)
        ? Stream.unwrap(Effect.map(served(Effect.void), () => store.watch(core, namespace, options))).pipe(
          Stream.map((event): StoreWatchEvent => {
            switch (event.type) {
              case "ERROR":
                return event
              case "BOOKMARK":
                return { type: "BOOKMARK", object: { ...event.object, apiVersion: apiVersionOf(EventV1Resource) } }
              default:
                return { type: event.type, object: toEventV1(event.object) }
            }
          }),
          Stream.mapError(viewStatus)
        )
        : store.watch(resource, namespace, options)
  }
  return { ...store, ...view }
}
