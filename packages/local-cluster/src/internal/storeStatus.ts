/**
 * The store's failures as the API server words them: each Status body a client can
 * observe, and the throw-and-catch that lets an operation's synchronous body refuse.
 */
import { Effect } from "effect"
import { qualifiedName, type Status } from "session-routing/kubernetes"
import { NamespaceResource, type ServedResource } from "../ServedResources.js"
import type { FieldError } from "../Validation.js"

export const OPTIMISTIC_LOCK_MESSAGE =
  "the object has been modified; please apply your changes to the latest version and try again"

export const failure = (
  code: number,
  reason: string | undefined,
  message: string,
  details?: Status["details"]
): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  ...(reason !== undefined ? { reason } : {}),
  ...(details !== undefined ? { details } : {}),
  code
})

export const resourceDetails = (resource: ServedResource<unknown>, name: string): NonNullable<Status["details"]> => ({
  name,
  ...(resource.group !== "" ? { group: resource.group } : {}),
  kind: resource.plural
})

/** 404 for a missing object: `ingresses.networking.k8s.io "x" not found`. */
export const notFoundStatus = (resource: ServedResource<unknown>, name: string): Status =>
  failure(404, "NotFound", `${qualifiedName(resource)} "${name}" not found`, resourceDetails(resource, name))

export const namespaceNotFound = (namespace: string): Status => notFoundStatus(NamespaceResource, namespace)

/** What the store answers for a type it does not serve; over HTTP it is a plain-text 404 instead. */
export const notServedStatus = (): Status =>
  failure(404, "NotFound", "the server could not find the requested resource", {})

export const alreadyExists = (resource: ServedResource<unknown>, name: string): Status =>
  failure(409, "AlreadyExists", `${qualifiedName(resource)} "${name}" already exists`, resourceDetails(resource, name))

export const conflict = (resource: ServedResource<unknown>, name: string, why = OPTIMISTIC_LOCK_MESSAGE): Status =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedName(resource)} "${name}": ${why}`,
    resourceDetails(resource, name)
  )

/** The prefix under /registry/ where kube-apiserver keeps a built-in type whose prefix is not its plural. */
const STORAGE_PREFIXES: Readonly<Record<string, string>> = { services: "services/specs", ingresses: "ingress" }

/** The etcd key kube-apiserver keeps an object under, as its storage errors quote it. */
const storageKey = (resource: ServedResource<unknown>, namespace: string | undefined, name: string): string => {
  const prefix = resource.custom
    ? `${resource.group}/${resource.plural}`
    : STORAGE_PREFIXES[resource.plural] ?? resource.plural
  return `/registry/${prefix}/${resource.namespaced && namespace !== undefined ? `${namespace}/` : ""}${name}`
}

/**
 * 409 for a PUT whose body names a uid the stored object does not have (`live` is ""
 * when there is none): kube-apiserver takes the body's uid as a precondition of the
 * update and its storage refuses it, before it looks at the resourceVersion.
 */
export const uidPreconditionFailed = (
  resource: ServedResource<unknown>,
  namespace: string | undefined,
  name: string,
  given: string,
  live: string
): Status =>
  conflict(
    resource,
    name,
    `StorageError: invalid object, Code: 4, Key: ${
      storageKey(resource, namespace, name)
    }, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${given}, UID in object meta: ${live}`
  )

export const badRequest = (message: string): Status => failure(400, "BadRequest", message)

export const expired = (message: string): Status => failure(410, "Expired", message)

/** A 422 for request options (`PatchOptions.meta.k8s.io "" is invalid: ...`). */
export const invalidOptions = (kind: string, errors: ReadonlyArray<FieldError>): Status =>
  failure(
    422,
    "Invalid",
    `${kind}.meta.k8s.io "" is invalid: ${
      errors.length === 1
        ? `${errors[0]!.field}: ${errors[0]!.message}`
        : `[${errors.map((e) => `${e.field}: ${e.message}`).join(", ")}]`
    }`,
    {
      group: "meta.k8s.io",
      kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
    }
  )

// Thrown inside the synchronous body of an operation and turned into its failure.
export class Refusal {
  constructor(readonly status: Status) {}
}
export const refuse = (status: Status): never => {
  throw new Refusal(status)
}

export const attempt = <A>(body: () => A): Effect.Effect<A, Status> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(body())
    } catch (e) {
      if (e instanceof Refusal) return Effect.fail(e.status)
      throw e
    }
  })
