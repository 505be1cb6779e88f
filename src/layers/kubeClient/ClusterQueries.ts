/**
 * Questions about the API server itself, not about objects: its version, what a
 * group version serves, and whether the caller may do something.
 */
import type * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import type { ClusterQueries } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import type { RequestContext } from "./KubeErrorParsing.js"
import type { RestCall } from "./RestTransport.js"

/** One request under the client's limits and telemetry, its JSON answer parsed. */
export type Request = (ctx: RequestContext, call: RestCall) => Effect.Effect<unknown, KubeError>

/** `GET /version`, discovery, `SelfSubjectAccessReview` and `SelfSubjectReview`, through the same limits as every call. */
export const clusterQueries = (kc: k8s.KubeConfig, server: string, request: Request): ClusterQueries => {
  const context = kc.getCurrentContext()
  return {
    server,
    ...(context !== "" ? { context } : {}),
    version: request({ verb: "get", resource: "version" }, { method: "GET", path: "/version" }).pipe(
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
        {
          method: "GET",
          path: group === ""
            ? `/api/${encodeURIComponent(groupVersion)}`
            : `/apis/${encodeURIComponent(group)}/${encodeURIComponent(groupVersion)}`
        }
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
        {
          method: "POST",
          path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          body: JSON.stringify({
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: { resourceAttributes: { ...question } }
          }),
          contentType: "application/json"
        }
      ).pipe(
        Effect.map((raw) => {
          const status = (raw as { status?: { allowed?: boolean; reason?: string; evaluationError?: string } }).status
          const reason = status?.reason ?? status?.evaluationError
          return { allowed: status?.allowed === true, ...(reason !== undefined && reason !== "" ? { reason } : {}) }
        })
      ),
    whoAmI: request(
      { verb: "create", resource: "selfsubjectreviews.authentication.k8s.io" },
      {
        method: "POST",
        path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
        contentType: "application/json"
      }
    ).pipe(
      Effect.map((raw) => ({
        username: (raw as { status?: { userInfo?: { username?: string } } }).status?.userInfo?.username ?? ""
      }))
    )
  }
}
