/**
 * Questions about the API server itself, not about objects: its version, what a
 * group version serves, and whether the caller may do something.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import type { ClusterQueries } from "../../services/KubeClient.js"
import type { KubeError, RequestContext } from "../../services/KubeError.js"
import { apiConfiguration, type ConnectionPools } from "./ConnectionPool.js"

/** One request under the client's limits and telemetry, its raw JSON answer parsed. */
export type Request = (
  ctx: RequestContext,
  run: (options: k8s.ConfigurationOptions) => Promise<unknown>
) => Effect.Effect<unknown, KubeError>

/** `GET /version`, discovery and `SelfSubjectAccessReview`, through the same limits as every call. */
export const clusterQueries = (
  kc: k8s.KubeConfig,
  server: string,
  pools: ConnectionPools,
  request: Request
): ClusterQueries => {
  const configuration = apiConfiguration(kc, server, pools)
  const version = new k8s.VersionApi(configuration)
  const core = new k8s.CoreV1Api(configuration)
  const custom = new k8s.CustomObjectsApi(configuration)
  const authorization = new k8s.AuthorizationV1Api(configuration)
  const context = kc.getCurrentContext()
  return {
    server,
    ...(context !== "" ? { context } : {}),
    version: request({ verb: "get", resource: "version" }, (options) => version.getCode({}, options)).pipe(
      Effect.map((raw) => {
        const info = raw as { gitVersion?: string; platform?: string }
        return {
          gitVersion: info.gitVersion ?? "unknown",
          ...(info.platform !== undefined ? { platform: info.platform } : {})
        }
      })
    ),
    servedResources: (group, groupVersion) =>
      request(
        { verb: "discover", resource: group === "" ? groupVersion : `${group}/${groupVersion}` },
        (options) => (group === ""
          ? core.getAPIResources({}, options)
          : custom.getAPIResources({ group, version: groupVersion }, options))
      ).pipe(
        Effect.map((raw) =>
          ((raw as { resources?: ReadonlyArray<{ name?: string }> }).resources ?? []).flatMap((r) =>
            r.name !== undefined && !r.name.includes("/") ? [r.name] : []
          )
        )
      ),
    accessReview: (question) =>
      request(
        { verb: "create", resource: "selfsubjectaccessreviews.authorization.k8s.io" },
        (options) =>
          authorization.createSelfSubjectAccessReview({
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SelfSubjectAccessReview",
              spec: { resourceAttributes: { ...question } }
            }
          }, options)
      ).pipe(
        Effect.map((raw) => {
          const status = (raw as { status?: { allowed?: boolean; reason?: string; evaluationError?: string } }).status
          const reason = status?.reason ?? status?.evaluationError
          return { allowed: status?.allowed === true, ...(reason !== undefined && reason !== "" ? { reason } : {}) }
        })
      )
  }
}
