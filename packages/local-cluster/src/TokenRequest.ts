/**
 * The TokenRequest API, `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (what
 * `kubectl create token` and the kubelet send), answered as kube-apiserver's TokenREST
 * answers it: a token for the ServiceAccount, for the audiences asked (the API server's by
 * default) and the lifetime asked (an hour by default, ten minutes at least), optionally
 * bound to a Pod. The token authenticates as the ServiceAccount until it expires, or until
 * the ServiceAccount or the Pod goes (or is replaced by another of the same name).
 */
import { Clock, DateTime, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"
import type { KubeObject, Pod, Status } from "session-routing/kubernetes"
import { API_AUDIENCES, type Authenticator, EXPIRY_LEEWAY_MILLIS, serviceAccountTokenUser } from "./Authentication.js"
import type { ApiResource } from "./internal/discovery.js"
import { type FieldError, fieldErrorText, goQuote, invalid } from "./internal/fieldErrors.js"
import { FieldSet, type Path, toFieldsV1 } from "./internal/fieldSets.js"
import { badRequest, failure, fieldManagerOf, json, type Reply, statusReply } from "./internal/httpReply.js"
import { makeTokenSigner, type ObjectRef } from "./internal/serviceAccountJwt.js"
import { rfc3339 } from "./internal/storeObjects.js"
import {
  type BoundObjectReference,
  readTokenRequest,
  TOKEN_REQUEST_API_VERSION,
  TOKEN_REQUEST_GROUP,
  TOKEN_REQUEST_KIND,
  type TokenRequestBody
} from "./internal/tokenRequestBody.js"
import { PodResource, ServiceAccountResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** The subresource's name: `serviceaccounts/<name>/token`. */
export const TOKEN_SUBRESOURCE = "token"

const DEFAULT_EXPIRATION_SECONDS = 60 * 60
const MIN_EXPIRATION_SECONDS = 10 * 60
const MAX_EXPIRATION_SECONDS = 2 ** 32

/** Whether a resource path names a ServiceAccount's token. */
export const isTokenRequest = (
  resource: { readonly group: string; readonly plural: string },
  subresource: string | undefined
): boolean => resource.group === "" && resource.plural === "serviceaccounts" && subresource === TOKEN_SUBRESOURCE

/**
 * The subresource as discovery lists it: create only, taking and answering a TokenRequest
 * of `authentication.k8s.io/v1` rather than a ServiceAccount.
 */
export const tokenRequestDiscovery: ApiResource = {
  name: `serviceaccounts/${TOKEN_SUBRESOURCE}`,
  singularName: "",
  namespaced: true,
  group: TOKEN_REQUEST_GROUP,
  version: "v1",
  kind: TOKEN_REQUEST_KIND,
  verbs: ["create"]
}

/** `errors.NewInvalid` of one field error: `TokenRequest.authentication.k8s.io "<name>" is invalid: ...`. */
const invalidRequest = (name: string, error: FieldError): Status =>
  failure(
    422,
    "Invalid",
    `${TOKEN_REQUEST_KIND}.${TOKEN_REQUEST_GROUP} ${goQuote(name)} is invalid: ${fieldErrorText(error)}`,
    {
      ...(name !== "" ? { name } : {}),
      group: TOKEN_REQUEST_GROUP,
      kind: TOKEN_REQUEST_KIND,
      causes: [{ reason: error.reason, message: error.message, field: error.field }]
    }
  )

/** `errors.NewConflict` on a group and resource as TokenREST names them (`Pod`, `TokenRequest.authentication.k8s.io`). */
const conflict = (group: string, resource: string, name: string, why: string): Status =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${group === "" ? resource : `${resource}.${group}`} ${goQuote(name)}: ${why}`,
    { name, ...(group !== "" ? { group } : {}), kind: resource }
  )

/** The 404 of a core type LocalCluster does not store: a cluster without the object answers the same. */
const coreNotFound = (plural: string, name: string): Status =>
  failure(404, "NotFound", `${plural} ${goQuote(name)} not found`, { name, kind: plural })

/** `schema.ParseGroupVersion`: an apiVersion it cannot read leaves group and version empty, as it does on the server. */
const groupVersionOf = (apiVersion: string): { readonly group: string; readonly version: string } => {
  const parts = apiVersion.split("/")
  if (apiVersion === "" || apiVersion === "/" || parts.length > 2) return { group: "", version: "" }
  return parts.length === 1 ? { group: "", version: apiVersion } : { group: parts[0]!, version: parts[1]! }
}

/** What a token is bound to, found as TokenREST finds it. */
interface Binding {
  readonly pod?: ObjectRef
  readonly node?: ObjectRef
}

/** `spec.boundObjectRef` resolved to the object it names, or the Status that refuses it. */
const resolveBinding = (
  store: ClusterStore,
  namespace: string,
  serviceAccount: string,
  ref: BoundObjectReference
): Effect.Effect<Binding, Status> =>
  Effect.gen(function*() {
    const { group, version } = groupVersionOf(ref.apiVersion ?? "")
    const kind = ref.kind ?? ""
    const name = ref.name ?? ""
    // Only core Pods, Secrets and Nodes; LocalCluster stores no Secrets or Nodes, so a
    // token bound to one finds none, as on a cluster without that object.
    if (group !== "" || (kind !== "Pod" && kind !== "Secret" && kind !== "Node")) {
      return yield* Effect.fail(badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`))
    }
    if (kind !== "Pod") return yield* Effect.fail(coreNotFound(kind === "Secret" ? "secrets" : "nodes", name))
    const pod: Pod = yield* store.get(PodResource, namespace, name)
    // The library's Pod type leaves the field out; the store defaults it to "default".
    const spec = pod.spec as { readonly serviceAccountName?: string; readonly nodeName?: string } | undefined
    if ((spec?.serviceAccountName ?? "default") !== serviceAccount) {
      return yield* Effect.fail(
        badRequest(
          `cannot bind token for serviceaccount ${
            goQuote(serviceAccount)
          } to pod running with different serviceaccount name.`
        )
      )
    }
    const uid = pod.metadata?.uid ?? ""
    if (ref.uid !== undefined && ref.uid !== uid) {
      return yield* Effect.fail(
        conflict(
          "",
          kind,
          name,
          `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`
        )
      )
    }
    const nodeName = spec?.nodeName
    return {
      pod: { name, uid },
      ...(nodeName !== undefined && nodeName !== "" ? { node: { name: nodeName } } : {})
    }
  })

/** The paths the request set, after decoding defaulted `expirationSeconds`: what its managedFields entry owns. */
const requestFields = (request: TokenRequestBody): FieldSet => {
  const paths: Array<Path> = [["f:spec", "f:expirationSeconds"]]
  if (request.audiences !== undefined) paths.push(["f:spec", "f:audiences"])
  const ref = request.boundObjectRef
  if (ref !== undefined) {
    const keys = Object.keys(ref)
    if (keys.length === 0) paths.push(["f:spec", "f:boundObjectRef"])
    for (const key of keys) paths.push(["f:spec", "f:boundObjectRef", `f:${key}`])
  }
  for (const part of ["labels", "annotations"] as const) {
    for (const key of Object.keys(request.metadata[part] ?? {})) paths.push(["f:metadata", `f:${part}`, `f:${key}`])
  }
  return FieldSet.of(paths)
}

/**
 * Answers the TokenRequests of a server: the Status that refuses one, or the 201 echoing
 * it with the token. With an authenticator the token is recognised from then on; without
 * one (a cluster that authenticates nobody) it is issued all the same and simply not needed.
 */
export const makeTokenRequests = (store: ClusterStore, authenticator: Authenticator | undefined) => {
  const signToken = makeTokenSigner()

  /** Whether `object` still stands as `uid`: there, not replaced, not deleted longer ago than the leeway. */
  const present = (object: Option.Option<KubeObject>, uid: string | undefined, now: number): boolean => {
    if (Option.isNone(object) || object.value.metadata?.uid !== uid) return false
    const deleted = Option.flatMap(
      Option.fromNullable((object.value.metadata as { readonly deletionTimestamp?: string }).deletionTimestamp),
      DateTime.make
    )
    return Option.isNone(deleted) || DateTime.toEpochMillis(deleted.value) >= now - EXPIRY_LEEWAY_MILLIS
  }

  /** What the service account authenticator checks of a token's claims against the store, each time it is used. */
  const stillBound = (namespace: string, serviceAccount: ObjectRef, pod: ObjectRef | undefined) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const account = yield* Effect.option(store.get(ServiceAccountResource, namespace, serviceAccount.name))
      if (!present(account, serviceAccount.uid, now)) return false
      if (pod === undefined) return true
      return present(yield* Effect.option(store.get(PodResource, namespace, pod.name)), pod.uid, now)
    })

  return (
    req: IncomingMessage,
    query: URLSearchParams,
    namespace: string,
    name: string,
    body: Buffer
  ): Effect.Effect<Reply> =>
    Effect.gen(function*() {
      const request = readTokenRequest(req, body)
      const meta = request.metadata
      if (meta.name !== undefined && meta.name !== name) {
        return statusReply(
          invalidRequest(name, invalid("metadata.name", meta.name, "must match the service account name if specified"))
        )
      }
      if (meta.namespace !== undefined && meta.namespace !== namespace) {
        return statusReply(invalidRequest(
          name,
          invalid("metadata.namespace", meta.namespace, "must match the service account namespace if specified")
        ))
      }
      const account = yield* store.get(ServiceAccountResource, namespace, name)
      const uid = account.metadata?.uid ?? ""
      // TokenRequestServiceAccountUIDValidation, on since 1.34: a request naming another
      // uid was meant for a ServiceAccount that has since been replaced.
      if (meta.uid !== undefined && meta.uid !== uid) {
        return statusReply(conflict(
          TOKEN_REQUEST_GROUP,
          TOKEN_REQUEST_KIND,
          name,
          `the UID in the token request (${meta.uid}) does not match the UID of the service account (${uid})`
        ))
      }
      const expirationSeconds = request.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS
      if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
        return statusReply(invalidRequest(
          "",
          invalid("spec.expirationSeconds", expirationSeconds, "may not specify a duration less than 10 minutes")
        ))
      }
      if (expirationSeconds > MAX_EXPIRATION_SECONDS) {
        return statusReply(invalidRequest(
          "",
          invalid("spec.expirationSeconds", expirationSeconds, "may not specify a duration larger than 2^32 seconds")
        ))
      }
      const ref = request.boundObjectRef
      const binding = ref === undefined ? {} : yield* resolveBinding(store, namespace, name, ref)
      const audiences = request.audiences !== undefined && request.audiences.length > 0
        ? request.audiences
        : API_AUDIENCES
      const now = yield* Clock.currentTimeMillis
      const issuedAt = Math.floor(now / 1000)
      const expiresAt = issuedAt + expirationSeconds
      const serviceAccount = { name, uid }
      const claims = { namespace, serviceAccount, ...binding, audiences, issuedAt, expiresAt, id: randomUUID() }
      const token = signToken(claims)
      authenticator?.recordBoundToken(token, {
        user: serviceAccountTokenUser(claims),
        audiences,
        expiresAt: expiresAt * 1000,
        bound: stillBound(namespace, serviceAccount, binding.pod)
      })
      const time = rfc3339(now)
      return json(201, {
        kind: TOKEN_REQUEST_KIND,
        apiVersion: TOKEN_REQUEST_API_VERSION,
        metadata: {
          name,
          namespace,
          uid,
          creationTimestamp: time,
          ...(meta.labels !== undefined ? { labels: meta.labels } : {}),
          ...(meta.annotations !== undefined ? { annotations: meta.annotations } : {}),
          managedFields: [{
            manager: fieldManagerOf(req, query),
            operation: "Update",
            apiVersion: TOKEN_REQUEST_API_VERSION,
            time,
            fieldsType: "FieldsV1",
            fieldsV1: toFieldsV1(requestFields(request)),
            subresource: TOKEN_SUBRESOURCE
          }]
        },
        spec: { audiences, expirationSeconds, boundObjectRef: ref ?? null },
        status: { token, expirationTimestamp: rfc3339(expiresAt * 1000) }
      })
    }).pipe(Effect.catchAll((status) => Effect.succeed(statusReply(status))))
}
