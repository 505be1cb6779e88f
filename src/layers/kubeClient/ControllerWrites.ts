/**
 * The live client's writes for controller mode: patches of a Pod and of its status,
 * and Lease reads and writes, through the same request path (limits, retries, abort,
 * raw JSON answers) as every other call.
 */
import type { Effect } from "effect"
import type { Lease, Pod } from "../../domain/Objects.js"
import { LeaseResource, PodResource } from "../../domain/Resources.js"
import type { LeaseCalls, PodWrites } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"
import type { EventRequest } from "./EventWrites.js"
import { requestContext } from "./KubeErrorParsing.js"
import { wirePath } from "./WireObjects.js"

const JSON_BODY = "application/json"

export const livePodWrites = (request: EventRequest): PodWrites => ({
  patchStatus: (namespace, name, patch) =>
    // Named as RBAC names it: a Role grants `patch` on `pods/status`, apart from `pods`.
    request({ ...requestContext("patch", PodResource, namespace, name), resource: "pods/status" }, {
      method: "PATCH",
      path: `${wirePath(PodResource, namespace, name)}/status`,
      body: JSON.stringify(patch),
      contentType: "application/strategic-merge-patch+json"
    }) as Effect.Effect<Pod, KubeError>,
  patch: (namespace, name, patch) =>
    request(requestContext("patch", PodResource, namespace, name), {
      method: "PATCH",
      path: wirePath(PodResource, namespace, name),
      body: JSON.stringify(patch),
      contentType: "application/merge-patch+json"
    }) as Effect.Effect<Pod, KubeError>
})

const withTypeMeta = (lease: Lease): Lease => ({ ...lease, apiVersion: "coordination.k8s.io/v1", kind: "Lease" })

export const liveLeaseCalls = (request: EventRequest): LeaseCalls => ({
  get: (namespace, name) =>
    request(requestContext("get", LeaseResource, namespace, name), {
      method: "GET",
      path: wirePath(LeaseResource, namespace, name)
    }) as Effect.Effect<Lease, KubeError>,
  create: (namespace, lease) =>
    request(requestContext("create", LeaseResource, namespace), {
      method: "POST",
      path: wirePath(LeaseResource, namespace),
      body: JSON.stringify(withTypeMeta(lease)),
      contentType: JSON_BODY
    }) as Effect.Effect<Lease, KubeError>,
  replace: (namespace, lease) =>
    request(requestContext("update", LeaseResource, namespace, lease.metadata?.name), {
      method: "PUT",
      path: wirePath(LeaseResource, namespace, lease.metadata?.name ?? ""),
      body: JSON.stringify(withTypeMeta(lease)),
      contentType: JSON_BODY
    }) as Effect.Effect<Lease, KubeError>
})
