/**
 * The store's deletes: preconditions, finalizers that hold an object marked for
 * deletion, and a namespace's delete that takes its contents with it.
 */
import { Clock, Effect } from "effect"
import { type KubeObject, type Status } from "session-routing/kubernetes"
import { NamespaceResource, PodResource, type ServedResource, ServiceResource } from "../ServedResources.js"
import type { DeleteOptions, DeleteResult } from "../Store.js"
import type { Buckets, StoreState } from "./storeHistory.js"
import { asJson, type Json, metaOf, objectKey, ordered, rfc3339, withMeta } from "./storeObjects.js"
import { attempt, failure, notFoundStatus, refuse, resourceDetails } from "./storeStatus.js"

/** The finalizer each propagation policy puts on the object it deletes. */
const GC_FINALIZERS: Readonly<Record<string, string | undefined>> = {
  Foreground: "foregroundDeletion",
  Orphan: "orphan",
  Background: undefined
}

/** Namespaces the server refuses to delete. */
const UNDELETABLE_NAMESPACES = new Set(["default", "kube-system", "kube-public"])

/** Delete over the buckets. */
export const makeDelete = (state: StoreState, buckets: Buckets) => {
  const { bucketOf, commitDelete, commitWrite, servedBucket } = buckets

  const successStatus = (resource: ServedResource<unknown>, object: KubeObject): Status => ({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: {
      ...resourceDetails(resource, metaOf(object).name ?? ""),
      ...(metaOf(object).uid !== undefined ? { uid: metaOf(object).uid! } : {})
    },
    code: 200
  })

  /**
   * A delete's precondition that does not hold, as the registry words it before storage
   * is asked: the Kind and group (`Ingress.networking.k8s.io`), both values, and what
   * the difference suggests.
   */
  const preconditionFailed = (
    resource: ServedResource<KubeObject>,
    name: string,
    field: "UID" | "ResourceVersion",
    wanted: string,
    stored: string,
    suggestion: string
  ): Status => {
    const groupKind = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`
    return failure(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${groupKind} "${name}": the ${field} in the precondition (${wanted}) does not match the ${field} in record (${stored}). The object might have been ${suggestion}`,
      { name, ...(resource.group !== "" ? { group: resource.group } : {}), kind: resource.kind }
    )
  }

  const deleteOne = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions
  ): Effect.Effect<DeleteResult, Status> =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) =>
      attempt((): DeleteResult => {
        const bucket = servedBucket(resource)
        const key = objectKey(resource, namespace, name)
        const live = bucket.objects.get(key)
        if (live === undefined) return refuse(notFoundStatus(resource, name))
        const meta = metaOf(live)
        const preconditions = options?.preconditions
        if (preconditions?.uid !== undefined && preconditions.uid !== meta.uid) {
          refuse(
            preconditionFailed(resource, name, "UID", preconditions.uid, meta.uid ?? "", "deleted and then recreated")
          )
        }
        if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== meta.resourceVersion) {
          refuse(
            preconditionFailed(
              resource,
              name,
              "ResourceVersion",
              preconditions.resourceVersion,
              meta.resourceVersion ?? "",
              "modified"
            )
          )
        }
        const dryRun = options?.dryRun === true
        if (resource === NamespaceResource) return { object: deleteNamespace(live, name, millis, dryRun) }
        const held = meta.finalizers ?? []
        // Foreground and orphan deletion are the garbage collector's work: the object waits on its finalizer.
        const gcFinalizer = meta.deletionTimestamp === undefined
          ? GC_FINALIZERS[options?.propagationPolicy ?? "Background"]
          : undefined
        const finalizers = gcFinalizer !== undefined && !held.includes(gcFinalizer) ? [...held, gcFinalizer] : held
        if (finalizers.length > 0) {
          // Finalizers hold the object: it is marked, and goes when the last one is removed.
          if (meta.deletionTimestamp !== undefined || dryRun) return { object: live }
          // markAsDeleting: the first mark moves the generation, since controllers must now act differently.
          const marked = withMeta(live, {
            ...meta,
            ...(resource.hasGeneration && meta.generation !== undefined && meta.generation > 0
              ? { generation: meta.generation + 1 }
              : {}),
            deletionTimestamp: rfc3339(millis),
            deletionGracePeriodSeconds: 0,
            finalizers
          })
          return { object: commitWrite(bucket, key, ordered(marked), live) }
        }
        if (!dryRun) commitDelete(bucket, key, live)
        // Services and Pods answer with the object; the other types with a Success Status.
        return resource === ServiceResource || resource === PodResource
          ? { object: live }
          : { status: successStatus(resource, live) }
      }))

  const deleteNamespace = (live: KubeObject, name: string, millis: number, dryRun: boolean): KubeObject => {
    if (UNDELETABLE_NAMESPACES.has(name)) {
      refuse(
        failure(403, "Forbidden", `namespaces "${name}" is forbidden: this namespace may not be deleted`, {
          name,
          kind: "namespaces"
        })
      )
    }
    const json = asJson(live)
    if (metaOf(live).deletionTimestamp !== undefined) return live
    const terminating = ordered({
      ...live,
      metadata: { ...metaOf(live), deletionTimestamp: rfc3339(millis) },
      status: { ...(json.status as Json | undefined), phase: "Terminating" }
    } as KubeObject)
    if (dryRun) return terminating
    const nsBucket = bucketOf(NamespaceResource as ServedResource<KubeObject>)
    const stored = commitWrite(nsBucket, name, terminating, live)
    // The namespace controller's work, done at once: contents go, then the namespace.
    for (const bucket of state.buckets.values()) {
      if (!bucket.resource.namespaced) continue
      for (const [key, object] of [...bucket.objects.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (metaOf(object).namespace === name) commitDelete(bucket, key, object)
      }
    }
    commitDelete(nsBucket, name, stored)
    return stored
  }

  return deleteOne
}
