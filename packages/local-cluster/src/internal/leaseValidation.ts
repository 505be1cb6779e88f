/**
 * What the API server refuses of a Lease (pkg/apis/coordination/validation): its name
 * a DNS subdomain, a duration that is positive, a transition count that is not
 * negative. Its times need no check here: one the MicroTime layout refuses never
 * decodes (a 400 before validation).
 */
import type { ObjectMeta } from "session-routing/kubernetes"
import { type FieldError, invalid } from "./fieldErrors.js"
import { asRecord, isPresent, type JsonRecord, nameIsDnsSubdomain, validateObjectMeta } from "./objectMeta.js"

/** `ValidateLease` (and `ValidateLeaseUpdate`, which checks the same spec). */
export const validateLease = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  // Both are pointers in Go: unset is fine, a zero that was set is not.
  if (isPresent(spec.leaseDurationSeconds) && Number(spec.leaseDurationSeconds) <= 0) {
    errs.push(invalid("spec.leaseDurationSeconds", spec.leaseDurationSeconds, "must be greater than 0"))
  }
  if (isPresent(spec.leaseTransitions) && Number(spec.leaseTransitions) < 0) {
    errs.push(invalid("spec.leaseTransitions", spec.leaseTransitions, "must be greater than or equal to 0"))
  }
  return errs
}
