/**
 * What the ingress and gateway routers share: their settings from RouterConfig,
 * error wording, and the session Service's part of a publish. Kept small on
 * purpose: each router's plan is its own; running plans lives in `internal/`.
 */
import { Effect } from "effect"
import {
  buildSessionService,
  type ManifestSettings,
  sessionObjectName,
  type SessionSpec
} from "../../domain/Manifests.js"
import { ServiceResource } from "../../domain/Resources.js"
import type { KubeClient } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import { manifestSettingsOf, type RouterConfig } from "../../services/RouterConfig.js"
import { PublishError, RouterSetupError } from "../../services/SessionRouter.js"
import { type PlannedWrite, plannedWrite, type Removal, removeObject } from "./SessionObjects.js"

/** The manifest settings of a publishing layer; a base domain is required to have hosts at all. */
export const manifestSettings = (
  config: RouterConfig.Service,
  mode: "ingress" | "gateway"
): Effect.Effect<ManifestSettings, RouterSetupError> => {
  const settings = manifestSettingsOf(config)
  return settings === undefined
    ? Effect.fail(
      new RouterSetupError({
        reason:
          `the ${mode} routing layer needs a base domain for session hosts: set SESSION_ROUTING_BASE_DOMAIN (or use SessionRouting.layerConfig, which publishes nothing without one)`
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

/**
 * The session Service's part of a publish: written when the session has ports, and
 * removed when it has none left, since a Service without ports is refused by the
 * API server and would route nothing.
 */
export const sessionServicePlan = (
  kube: KubeClient.Service,
  settings: ManifestSettings,
  spec: SessionSpec
): { readonly writes: ReadonlyArray<PlannedWrite>; readonly removals: ReadonlyArray<Removal> } =>
  spec.ports.length === 0
    ? {
      writes: [],
      removals: [removeObject(kube, ServiceResource, settings.sessionNamespace, sessionObjectName(spec.sessionId))]
    }
    : { writes: [plannedWrite(kube, ServiceResource, buildSessionService(settings, spec))], removals: [] }
