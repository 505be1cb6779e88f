/**
 * Server-side apply on the store: the apply configuration checked and pruned, merged
 * into the live object (or a new one) under the field managers' ownership, refused
 * with the server's conflict report unless forced.
 */
import { Clock, Effect } from "effect"
import { apiVersionOf, type KubeObject, type Status } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import {
  conflictReport,
  decodeManagers,
  encodeManagers,
  isObject,
  mergeApplied,
  prune,
  recordUpdate,
  settleApply,
  shapeOf
} from "../ServerSideApply.js"
import type { ApplyOptions, WriteResult } from "../Store.js"
import type { FieldError } from "../Validation.js"
import { checkName, checkNamespace, decodeBody, validate } from "./storeAdmission.js"
import { defaulted } from "./storeDefaults.js"
import type { Buckets } from "./storeHistory.js"
import { asJson, type Json, metaOf, objectKey, rfc3339, withMeta } from "./storeObjects.js"
import { attempt, badRequest, conflict, failure, invalidOptions, refuse } from "./storeStatus.js"
import { uidChangeErrors, type Writes } from "./storeWrites.js"

/** Apply over the buckets, through the same create and update steps as the other writes. */
export const makeApply = (buckets: Buckets, writes: Writes) => {
  const { commitWrite, servedBucket } = buckets
  const { dropEmptyManagedFields, finishUpdate, prepareCreate, prepareUpdate } = writes

  const apply = (
    resource: ServedResource<KubeObject>,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    options: ApplyOptions
  ): Effect.Effect<WriteResult<KubeObject>, Status> =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) =>
      attempt(() => {
        const now = rfc3339(millis)
        const manager = options.fieldManager ?? ""
        if (manager === "") {
          refuse(
            invalidOptions("PatchOptions", [{
              reason: "FieldValueRequired",
              field: "fieldManager",
              message: "Required value: is required for apply patch"
            }])
          )
        }
        if (manager.length > 128) {
          refuse(
            invalidOptions("PatchOptions", [{
              reason: "FieldValueTooLong",
              field: "fieldManager",
              message: "Too long: may not be more than 128 bytes"
            }])
          )
        }
        const bucket = servedBucket(resource)
        if (!isObject(body)) refuse(badRequest("error decoding YAML: the apply configuration is not an object"))
        const raw = body as unknown as Json
        if (raw.apiVersion !== apiVersionOf(resource)) {
          refuse(
            badRequest(
              `Incorrect version specified in apply patch. Specified patch version: ${
                typeof raw.apiVersion === "string" ? raw.apiVersion : ""
              }, expected: ${apiVersionOf(resource)}`
            )
          )
        }
        const json = decodeBody(resource, raw, true)
        const meta: Json = isObject(json.metadata) ? { ...json.metadata } : {}
        if (meta.name === undefined || meta.name === "") meta.name = name
        // Fields the schema does not know are pruned before anyone can own them.
        const config = prune({ ...json, metadata: meta }, shapeOf(resource), false) as Json
        checkName(config, name)
        const ns = checkNamespace(resource, namespace, config, false)
        const key = objectKey(resource, ns, name)
        const live = bucket.objects.get(key)
        const dryRun = options.dryRun === true
        const force = options.force === true

        // Apply leaves identity out of what it merges, so the configuration's own uid is
        // judged here: against no object, kube-apiserver's patch handler refuses it as a
        // conflict; against another one, it is a change to an immutable field.
        const uid = typeof meta.uid === "string" && meta.uid !== "" ? meta.uid : undefined
        if (live === undefined) {
          if (uid !== undefined) {
            refuse(
              conflict(
                resource,
                name,
                `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`
              )
            )
          }
          const base: KubeObject = {
            apiVersion: apiVersionOf(resource),
            kind: resource.kind,
            metadata: { name, ...(ns !== undefined ? { namespace: ns } : {}) }
          }
          const applied = mergeApplied({
            resource,
            live: base,
            config: config as KubeObject,
            managers: new Map(),
            manager
          })
          const prepared = prepareCreate(
            resource,
            ns,
            { ...asJson(applied.merged), metadata: { ...metaOf(applied.merged), resourceVersion: undefined } },
            now,
            () => {
              const own = applied.managers.get(applied.applier)!
              return new Map([[applied.applier, { ...own, time: now }]])
            }
          )
          return {
            object: dryRun ? prepared.object : commitWrite(bucket, prepared.key, prepared.object, undefined),
            created: true
          }
        }

        const requested = meta.resourceVersion
        if (typeof requested === "string" && requested !== "" && requested !== metaOf(live).resourceVersion) {
          refuse(conflict(resource, name))
        }
        const tracked = decodeManagers(metaOf(live).managedFields)
        // The first apply to an object whose fields nobody tracks (updates since its
        // create recorded none) gives them, as they stand, to "before-first-apply".
        const managers = tracked.size > 0 ? tracked : recordUpdate({
          resource,
          scope: "main",
          managers: tracked,
          manager: "before-first-apply",
          before: undefined,
          after: live,
          now
        })
        const applied = mergeApplied({ resource, live, config: config as KubeObject, managers, manager })
        const mergedJson = asJson(applied.merged)
        const errors: Array<FieldError> = uidChangeErrors(uid, metaOf(live).uid)
        let object = prepareUpdate(
          resource,
          live,
          { ...mergedJson, metadata: { ...(mergedJson.metadata as Json), managedFields: undefined } },
          errors
        )
        validate(resource, object, errors)
        // Ownership is judged on the merged object (with defaults, so restating a
        // defaulted value is no change), before empty lists are dropped: emptying
        // a list someone else owns is a conflict, not a silent removal.
        const judged = defaulted(resource, applied.merged)
        const settled = settleApply({ resource, applied, live, result: judged, force, now })
        if ("conflicts" in settled) {
          const report = conflictReport(settled.conflicts)
          refuse(failure(409, "Conflict", report.message, { causes: report.causes }))
        } else {
          object = withMeta(object, { ...metaOf(object), managedFields: encodeManagers(settled.managers) })
        }
        return { object: finishUpdate(bucket, key, live, dropEmptyManagedFields(object), dryRun), created: false }
      }))

  return apply
}
