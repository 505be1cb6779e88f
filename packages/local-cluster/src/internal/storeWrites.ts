/**
 * The store's creates and updates: POST, PUT (to create a Service or a Lease too) and the
 * status subresource, with the server's identity, generation, version and
 * managed-fields bookkeeping. Apply builds on the same steps.
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import {
  type KubeObject,
  type ManagedFieldsEntry,
  type ObjectMeta,
  qualifiedName,
  type Status
} from "session-routing/kubernetes"
import { PodResource, type ServedResource, ServiceResource } from "../ServedResources.js"
import { decodeManagers, encodeManagers, isObject, jsonEqual, type Managers, recordUpdate } from "../ServerSideApply.js"
import type { WriteOptions, WriteResult } from "../Store.js"
import type { FieldError } from "../Validation.js"
import { goQuote } from "./fieldErrors.js"
import { admitCreate, checkName, checkNamespace, decodeBody, validate } from "./storeAdmission.js"
import { defaulted, pruned } from "./storeDefaults.js"
import type { Bucket, Buckets, StoreState } from "./storeHistory.js"
import {
  asJson,
  generatedName,
  type Json,
  metaOf,
  objectKey,
  ordered,
  rfc3339,
  specPart,
  withMeta
} from "./storeObjects.js"
import {
  alreadyExists,
  attempt,
  conflict,
  failure,
  namespaceNotFound,
  notFoundStatus,
  notServedStatus,
  refuse,
  resourceDetails,
  uidPreconditionFailed
} from "./storeStatus.js"
import { workloadUpdateErrors } from "./workloadValidation.js"

/** An object a create has checked and completed, not yet stored, and where it goes. */
interface Prepared {
  readonly object: KubeObject
  readonly key: string
  readonly namespace: string | undefined
}

/** A uid a write's body names, or undefined for none (absent, or empty: the server fills in the live one). */
const uidOf = (body: Json): string | undefined => {
  const meta = isObject(body.metadata) ? body.metadata : {}
  return typeof meta.uid === "string" && meta.uid !== "" ? meta.uid : undefined
}

/**
 * What kube-apiserver's update validation says of a patch that would give the object
 * another uid: the patch handler sets no precondition, so the changed uid meets the
 * immutable-field check (of the common metadata, then of the type's own rules: the
 * same cause twice, as kube-apiserver 1.35 lists it). A patch carrying the live
 * object's uid, or none, passes.
 */
export const uidChangeErrors = (given: unknown, live: string | undefined): Array<FieldError> => {
  if (typeof given !== "string" || given === "" || given === live) return []
  const error: FieldError = {
    reason: "FieldValueInvalid",
    field: "metadata.uid",
    message: `Invalid value: ${goQuote(given)}: field is immutable`
  }
  return [error, error]
}

/** The metadata a write may set; the rest is the server's. */
const WRITABLE_METADATA = ["generateName", "labels", "annotations", "finalizers", "ownerReferences"] as const

/**
 * The metadata a built-in type's status write stores: the request's writable fields,
 * as an update takes them (a status strategy resets the spec, not the metadata), and
 * the live object's identity. A Pod keeps its owner references: its status strategy
 * resets them, since old kubelets corrupted them through status and broke garbage
 * collection. (A custom resource's status strategy keeps the live metadata whole.)
 */
const statusWriteMetadata = (resource: ServedResource<KubeObject>, live: ObjectMeta, given: unknown): Json => {
  const request = isObject(given) ? given : {}
  const meta: Json = { ...live }
  for (const field of WRITABLE_METADATA) {
    if (field === "ownerReferences" && resource === PodResource) continue
    if (request[field] === undefined) delete meta[field]
    else meta[field] = request[field]
  }
  return meta
}

/** Creates, replaces and status writes over the buckets. */
export const makeWrites = (state: StoreState, buckets: Buckets) => {
  const { bucketOf, commitDelete, commitWrite, namespaceExists, servedBucket } = buckets

  const requireNamespace = (resource: ServedResource<KubeObject>, namespace: string | undefined): void => {
    if (resource.namespaced && namespace !== undefined && !namespaceExists(namespace)) {
      refuse(namespaceNotFound(namespace))
    }
  }

  // -- create -----------------------------------------------------------------

  /** Everything a create does before storing, shared by POST, PUT-to-create and apply-to-create. */
  const prepareCreate = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    body: Json,
    now: string,
    ownership: (object: KubeObject) => Managers
  ): Prepared => {
    const bucket = servedBucket(resource)
    // Admission finds the request's namespace missing before anything looks at the body.
    requireNamespace(resource, namespace)
    const ns = checkNamespace(resource, namespace, body, true)
    requireNamespace(resource, ns)
    const inMeta: Json = isObject(body.metadata) ? { ...body.metadata } : {}
    if (
      (typeof inMeta.name !== "string" || inMeta.name === "") && typeof inMeta.generateName === "string" &&
      inMeta.generateName !== ""
    ) {
      inMeta.name = generatedName(inMeta.generateName)
    }
    if (resource.namespaced) {
      if (ns !== undefined) inMeta.namespace = ns
    } else {
      delete inMeta.namespace
    }
    const requestedVersion = inMeta.resourceVersion
    // Identity and bookkeeping are the server's: whatever the client sent is replaced.
    for (
      const field of [
        "uid",
        "creationTimestamp",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "resourceVersion"
      ]
    ) {
      delete inMeta[field]
    }
    const withoutStatus: Json = { ...body, metadata: inMeta }
    if (resource.statusSubresource) delete withoutStatus.status
    const requested = defaulted(resource, pruned(resource, withoutStatus) as KubeObject)
    // Mutating admission runs after the request's fields are recorded for its manager, as
    // kube-apiserver's handlers do: what it sets is nobody's, so an apply that leaves the
    // field out later does not remove it.
    let object = admitCreate(resource, requested, state.buckets)
    validate(resource, object)
    if (requestedVersion !== undefined && requestedVersion !== "") {
      refuse(failure(500, undefined, "resourceVersion should not be set on objects to be created"))
    }
    const name = metaOf(object).name ?? ""
    const key = objectKey(resource, ns, name)
    if (bucket.objects.has(key)) refuse(alreadyExists(resource, name))
    const meta: Json = {
      ...metaOf(object),
      uid: randomUUID(),
      ...(resource.hasGeneration ? { generation: 1 } : {}),
      creationTimestamp: now
    }
    object = withMeta(object, meta)
    const managedFields = encodeManagers(ownership(withMeta(requested, meta)))
    object = withMeta(object, { ...meta, ...(managedFields.length > 0 ? { managedFields } : {}) })
    return { object: ordered(object), key, namespace: ns }
  }

  const create = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    body: KubeObject,
    options?: WriteOptions
  ) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) =>
      attempt(() => {
        const now = rfc3339(millis)
        const json = decodeBody(resource, body, false)
        const manager = options?.fieldManager ?? state.defaultManager
        const prepared = prepareCreate(
          resource,
          namespace,
          json,
          now,
          (object) =>
            recordUpdate({
              resource,
              scope: "main",
              managers: decodeManagers(metaOf(body).managedFields),
              manager,
              before: undefined,
              after: object,
              now
            })
        )
        if (options?.dryRun === true) return prepared.object
        return commitWrite(bucketOf(resource), prepared.key, prepared.object, undefined)
      }))

  // -- update -----------------------------------------------------------------

  /** The object an update stores, from the live one and the incoming content. */
  const prepareUpdate = (
    resource: ServedResource<KubeObject>,
    live: KubeObject,
    incoming: Json,
    extraErrors: Array<FieldError>
  ): KubeObject => {
    const liveMeta = metaOf(live)
    const inMeta: Json = isObject(incoming.metadata) ? { ...incoming.metadata } : {}
    // A PUT's uid was checked as a precondition before; what reaches here is a patch's.
    extraErrors.push(...uidChangeErrors(inMeta.uid, liveMeta.uid))
    const meta: Json = {
      ...inMeta,
      name: liveMeta.name,
      ...(liveMeta.namespace !== undefined ? { namespace: liveMeta.namespace } : {}),
      uid: liveMeta.uid,
      creationTimestamp: liveMeta.creationTimestamp
    }
    delete meta.generation
    delete meta.deletionTimestamp
    delete meta.deletionGracePeriodSeconds
    if (liveMeta.deletionTimestamp !== undefined) meta.deletionTimestamp = liveMeta.deletionTimestamp
    const liveJson = asJson(live)
    if (
      liveJson.metadata !== undefined && isObject(liveJson.metadata) &&
      liveJson.metadata.deletionGracePeriodSeconds !== undefined
    ) {
      meta.deletionGracePeriodSeconds = liveJson.metadata.deletionGracePeriodSeconds
    }
    const next: Json = { ...incoming, metadata: meta }
    if (resource.statusSubresource) {
      if (liveJson.status !== undefined) next.status = liveJson.status
      else delete next.status
    }
    let object = defaulted(resource, pruned(resource, next) as KubeObject)
    if (resource.hasGeneration) {
      const generation = liveMeta.generation ?? 1
      object = withMeta(object, {
        ...metaOf(object),
        generation: jsonEqual(specPart(object), specPart(live)) ? generation : generation + 1
      })
    }
    if (resource === ServiceResource) extraErrors.push(...serviceUpdateErrors(live, object))
    extraErrors.push(...workloadUpdateErrors(resource.group, resource.kind, live, object))
    return object
  }

  const serviceUpdateErrors = (live: KubeObject, next: KubeObject): Array<FieldError> => {
    const before = asJson(live).spec as Json | undefined
    const after = asJson(next).spec as Json | undefined
    const was = before?.clusterIP
    const now = after?.clusterIP
    if (
      typeof was === "string" && was !== "" && typeof now === "string" && now !== "" && was !== now &&
      after?.type !== "ExternalName"
    ) {
      return [{
        reason: "FieldValueInvalid",
        field: "spec.clusterIP",
        message: `Invalid value: "${now}": field is immutable`
      }]
    }
    return []
  }

  /** Stores an update unless it changes nothing; finishes a delete its finalizers were holding. */
  const finishUpdate = (
    bucket: Bucket,
    key: string,
    live: KubeObject,
    object: KubeObject,
    dryRun: boolean
  ): KubeObject => {
    const candidate = ordered(withMeta(object, { ...metaOf(object), resourceVersion: metaOf(live).resourceVersion }))
    if (jsonEqual(candidate, live)) return live
    if (dryRun) return candidate
    const meta = metaOf(candidate) as ObjectMeta & { finalizers?: ReadonlyArray<string> }
    if (meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).length === 0) {
      const stored = commitWrite(bucket, key, candidate, live)
      commitDelete(bucket, key, stored)
      return stored
    }
    return commitWrite(bucket, key, candidate, live)
  }

  const checkVersion = (resource: ServedResource<KubeObject>, live: KubeObject, incoming: Json, name: string): void => {
    const meta = isObject(incoming.metadata) ? incoming.metadata : {}
    const requested = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
    if (requested === "") {
      if (!resource.unconditionalUpdate) {
        // The registry names the resource where it means the kind here: the message reads `httproutes.<group>`.
        refuse(
          failure(
            422,
            "Invalid",
            `${
              qualifiedName(resource)
            } "${name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
            {
              ...resourceDetails(resource, name),
              causes: [{
                reason: "FieldValueInvalid",
                message: "Invalid value: 0: must be specified for an update",
                field: "metadata.resourceVersion"
              }]
            }
          )
        )
      }
      return
    }
    if (requested !== metaOf(live).resourceVersion) refuse(conflict(resource, name))
  }

  const managersFor = (body: Json, live: KubeObject): Managers => {
    const meta = isObject(body.metadata) ? body.metadata : {}
    // A client may send managedFields to replace them (`[{}]` clears them); otherwise the live ones stand.
    return Array.isArray(meta.managedFields) && meta.managedFields.length > 0
      ? decodeManagers(meta.managedFields as ReadonlyArray<ManagedFieldsEntry>)
      : decodeManagers(metaOf(live).managedFields)
  }

  const replace = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    options?: WriteOptions
  ): Effect.Effect<WriteResult<KubeObject>, Status> =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) =>
      attempt(() => {
        const now = rfc3339(millis)
        const bucket = servedBucket(resource)
        const json = decodeBody(resource, body, false)
        checkName(json, name)
        const ns = checkNamespace(resource, namespace, json, false)
        const key = objectKey(resource, ns, name)
        const live = bucket.objects.get(key)
        const manager = options?.fieldManager ?? state.defaultManager
        const dryRun = options?.dryRun === true
        // A PUT's uid is a precondition, checked before its resourceVersion: it holds
        // only against an object with that uid (none stored fails it too).
        const uid = options?.patch === true ? undefined : uidOf(json)
        if (live === undefined) {
          // Of our types only Services and Leases may be created by PUT; the rest answer 404.
          if (!resource.createOnUpdate) refuse(notFoundStatus(resource, name))
          if (uid !== undefined) refuse(uidPreconditionFailed(resource, ns, name, uid, ""))
          const prepared = prepareCreate(
            resource,
            ns,
            { ...json, metadata: { ...(json.metadata as Json), resourceVersion: undefined } },
            now,
            (object) =>
              recordUpdate({
                resource,
                scope: "main",
                managers: new Map(),
                manager,
                before: undefined,
                after: object,
                now
              })
          )
          return {
            object: dryRun ? prepared.object : commitWrite(bucket, prepared.key, prepared.object, undefined),
            created: true
          }
        }
        if (uid !== undefined && uid !== metaOf(live).uid) {
          refuse(uidPreconditionFailed(resource, ns, name, uid, metaOf(live).uid ?? ""))
        }
        checkVersion(resource, live, json, name)
        const errors: Array<FieldError> = []
        let object = prepareUpdate(resource, live, json, errors)
        validate(resource, object, errors)
        const managers = recordUpdate({
          resource,
          scope: "main",
          managers: managersFor(json, live),
          manager,
          before: live,
          after: object,
          now
        })
        object = withMeta(object, { ...metaOf(object), managedFields: encodeManagers(managers) })
        return { object: finishUpdate(bucket, key, live, dropEmptyManagedFields(object), dryRun), created: false }
      }))

  const dropEmptyManagedFields = (object: KubeObject): KubeObject => {
    const meta = metaOf(object)
    if (meta.managedFields !== undefined && meta.managedFields.length === 0) {
      const { managedFields: _, ...rest } = meta
      return withMeta(object, rest)
    }
    return object
  }

  const replaceStatus = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    options?: WriteOptions
  ): Effect.Effect<KubeObject, Status> =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) =>
      attempt(() => {
        const now = rfc3339(millis)
        const bucket = servedBucket(resource)
        if (!resource.statusSubresource) refuse(notServedStatus())
        const json = decodeBody(resource, body, false)
        checkName(json, name)
        const ns = checkNamespace(resource, namespace, json, false)
        const key = objectKey(resource, ns, name)
        const live = bucket.objects.get(key)
        if (live === undefined) return refuse(notFoundStatus(resource, name))
        const patch = options?.patch === true
        const uid = uidOf(json)
        if (!patch && uid !== undefined && uid !== metaOf(live).uid) {
          refuse(uidPreconditionFailed(resource, ns, name, uid, metaOf(live).uid ?? ""))
        }
        checkVersion(resource, live, json, name)
        const next: Json = { ...asJson(live) }
        if (json.status !== undefined) next.status = json.status
        else delete next.status
        if (!resource.custom) next.metadata = statusWriteMetadata(resource, metaOf(live), json.metadata)
        let object = defaulted(resource, pruned(resource, next) as KubeObject)
        // A custom resource's status strategy takes nothing but the status from the
        // request, so a patch's uid never reaches validation; a built-in type's does.
        validate(resource, object, patch && !resource.custom ? uidChangeErrors(uid, metaOf(live).uid) : [])
        const manager = options?.fieldManager ?? state.defaultManager
        const managers = recordUpdate({
          resource,
          scope: "status",
          managers: decodeManagers(metaOf(live).managedFields),
          manager,
          before: live,
          after: object,
          now
        })
        object = dropEmptyManagedFields(
          withMeta(object, { ...metaOf(object), managedFields: encodeManagers(managers) })
        )
        return finishUpdate(bucket, key, live, object, options?.dryRun === true)
      }))

  return { create, replace, replaceStatus, prepareCreate, prepareUpdate, finishUpdate, dropEmptyManagedFields }
}

/** The write steps apply shares. */
export type Writes = ReturnType<typeof makeWrites>
