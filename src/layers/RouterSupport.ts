/**
 * What the ingress and gateway routers share: their settings from RouterConfig,
 * error wording, and idempotent deletes. Kept small on purpose: each router's
 * publish logic is its own.
 */
import { Effect } from "effect"
import {
  buildSessionService,
  type ManifestSettings,
  type SessionSpec,
  sessionObjectName,
  sessionSelector
} from "../domain/Manifests.js"
import { type ResourceType, ServiceResource } from "../domain/Resources.js"
import type { KubeClient, WritableObject } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { manifestSettingsOf, type RouterConfig } from "../services/RouterConfig.js"
import { PublishError, RouterSetupError } from "../services/SessionRouter.js"

/** The manifest settings of a publishing layer; a base domain is required to have hosts at all. */
export const manifestSettings = (
  config: RouterConfig.Service,
  mode: "ingress" | "gateway"
): Effect.Effect<ManifestSettings, RouterSetupError> => {
  const settings = manifestSettingsOf(config)
  return settings === undefined
    ? Effect.fail(
        new RouterSetupError({
          reason: `the ${mode} routing layer needs a base domain for session hosts: set SESSION_ROUTING_BASE_DOMAIN (or use SessionRouter.layerConfig, which publishes nothing without one)`
        })
      )
    : Effect.succeed(settings)
}

/** Wraps a KubeError from a publish step into a PublishError that says which step failed. */
export const publishStep =
  (sessionId: string, step: string) =>
  <A, R>(effect: Effect.Effect<A, KubeError, R>): Effect.Effect<A, PublishError, R> =>
    Effect.mapError(
      effect,
      (error) => new PublishError({ sessionId, error, reason: `could not ${step}: ${error.reason}` })
    )

/** Deletes one object; an object already gone is the outcome we wanted. */
export const deleteIfPresent = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  name: string
): Effect.Effect<void, KubeError> =>
  kube.delete(resource, namespace, name).pipe(Effect.catchTag("NotFound", () => Effect.void))

/** Deletes every object of `resource` carrying the session label, except the names to keep. */
export const deleteSessionObjects = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  selector: string,
  keep: ReadonlySet<string> = new Set()
): Effect.Effect<void, KubeError> =>
  kube.list(resource, namespace, { labelSelector: selector }).pipe(
    Effect.flatMap((list) =>
      Effect.forEach(
        list.items.flatMap((item) => {
          const name = item.metadata?.name
          return name !== undefined && !keep.has(name) ? [name] : []
        }),
        (name) => deleteIfPresent(kube, resource, namespace, name),
        { discard: true }
      )
    )
  )

/**
 * Applies the session Service, or deletes it when the session has no port left: a
 * Service without ports is refused by the API server, and would route nothing.
 */
export const applySessionService = (
  kube: KubeClient.Service,
  settings: ManifestSettings,
  spec: SessionSpec
): Effect.Effect<void, PublishError> => {
  const name = sessionObjectName(spec.sessionId)
  const namespace = settings.sessionNamespace
  return spec.ports.length === 0
    ? deleteIfPresent(kube, ServiceResource, namespace, name).pipe(
        publishStep(spec.sessionId, `delete Service ${namespace}/${name}`)
      )
    : kube.apply(ServiceResource, buildSessionService(settings, spec)).pipe(
        Effect.asVoid,
        publishStep(spec.sessionId, `apply Service ${namespace}/${name}`)
      )
}

/**
 * Removes what the other routing layer published for the session, so that a change
 * of SESSION_ROUTING_MODE does not leave the old layer's objects serving. Best effort
 * by design: a type the cluster does not serve, or that RBAC does not let us list,
 * holds nothing we could remove, and must not fail a publish in the mode in use.
 */
export const deleteOtherLayerObjects = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  sessionId: string
): Effect.Effect<void, PublishError> =>
  deleteSessionObjects(kube, resource, namespace, sessionSelector(sessionId)).pipe(
    Effect.catchIf(
      (error) => error._tag === "NotServed" || error._tag === "Forbidden",
      () => Effect.void
    ),
    publishStep(sessionId, `delete the ${resource.kind} objects another routing mode left for session ${sessionId}`)
  )
