/**
 * What a real API server refuses, and how it says so. The checks mirror the
 * apiserver's own: apimachinery's name, label and metadata rules, the Service,
 * Ingress, IngressClass, Namespace and Lease validators, and the Gateway API v1 CRD
 * schemas with their CEL rules. Each returns field errors worded as the server
 * words them, so the local cluster answers the 422 a real one would; they are
 * right on their own terms, not tuned to what our builders happen to produce.
 */
import type { KubeObject, ObjectMeta, ResourceType, Status } from "session-routing/kubernetes"
import { validateIngress, validateIngressClass, validateNamespace, validateService } from "./internal/coreValidation.js"
import { applyDefaults, validateCustomResource } from "./internal/crdSchema.js"
import { schemaFor } from "./internal/describedTypes.js"
import { type FieldError, fieldErrorText, goQuote } from "./internal/fieldErrors.js"
import { validateLease } from "./internal/leaseValidation.js"
import { asRecord, nameIsDnsSubdomain, validateObjectMeta } from "./internal/objectMeta.js"
import { validateRbac } from "./internal/rbacValidation.js"
import { validateWorkload } from "./internal/workloadValidation.js"
import { servedOf } from "./ServedResources.js"

export { type FieldError, type FieldErrorReason, fieldErrorText, goQuote } from "./internal/fieldErrors.js"

/**
 * `object` with the defaults its CRD schema declares filled in (HTTPRoute: parentRef
 * group/kind, backendRef group/kind/weight, the `/` PathPrefix match; Gateway:
 * listener allowedRoutes, the Pending status). Built-in kinds unchanged. The store
 * defaults through the shape derived from the same description, in the same pass.
 */
export const withSchemaDefaults = <A extends KubeObject>(resource: ResourceType<unknown>, object: A): A => {
  const schema = schemaFor(servedOf(resource))
  return schema === undefined ? object : (applyDefaults(object, schema) as A)
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/**
 * Every field error the API server would report creating `object` as a
 * `resource`, empty when it would accept it. Built-in kinds list errors in the
 * server's order; custom resources list metadata, then schema errors (in schema
 * order: the server's follows Go map iteration and varies), then CEL's. Expects
 * the body as JSON: wrong JSON types on built-in kinds are a decode error (400)
 * the caller reports, so here they read as the Go zero value.
 */
export const validateObject = (descriptor: ResourceType<unknown>, object: KubeObject): ReadonlyArray<FieldError> => {
  const resource = servedOf(descriptor)
  const body = asRecord(object)
  const schema = schemaFor(resource)
  if (schema !== undefined) return validateCustomResource(resource, body, schema)
  if (resource.group === "") {
    if (resource.kind === "Service") return validateService(body)
    if (resource.kind === "Namespace") return validateNamespace(body)
  }
  const workload = validateWorkload(resource.group, resource.kind, body)
  if (workload !== undefined) return workload
  const rbac = validateRbac(resource.group, resource.kind, body)
  if (rbac !== undefined) return rbac
  if (resource.group === "networking.k8s.io") {
    if (resource.kind === "Ingress") return validateIngress(body)
    if (resource.kind === "IngressClass") return validateIngressClass(body)
  }
  if (resource.group === "coordination.k8s.io" && resource.kind === "Lease") return validateLease(body)
  return validateObjectMeta(body.metadata as ObjectMeta | undefined, {
    namespaced: resource.namespaced,
    name: nameIsDnsSubdomain
  })
}

/**
 * The 422 Status the server answers for these errors: message
 * `<Kind>[.<group>] "<name>" is invalid: <errors>` (one error bare, several in
 * brackets, repeats once), `details.kind` the Kind (not the plural, unlike
 * NotFound), one cause per error.
 */
export const invalidStatus = (
  resource: ResourceType<unknown>,
  name: string,
  errors: ReadonlyArray<FieldError>
): Status => {
  const qualifiedKind = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`
  const lines = [...new Set(errors.map(fieldErrorText))]
  const summary = lines.length === 0 ? "" : `: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${qualifiedKind} ${goQuote(name)} is invalid${summary}`,
    reason: "Invalid",
    details: {
      ...(name !== "" ? { name } : {}),
      ...(resource.group !== "" ? { group: resource.group } : {}),
      kind: resource.kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
    },
    code: 422
  }
}
