/**
 * The fields each type can be selected by (`fieldSelector`), and their values on an
 * object, as the API server's per-type field label functions define them: Pods and
 * Events have their own; every other type only `metadata.name` and `metadata.namespace`.
 */
import type { KubeObject } from "session-routing/kubernetes"
import { metadataFields, type SelectableFields } from "../LabelSelector.js"
import type { ServedResource } from "../ServedResources.js"
import { isObject } from "./json.js"

// The core types with field label functions of their own answer this way for any other field.
const ownFields = (names: ReadonlyArray<string>): SelectableFields => ({
  fields: new Set(["metadata.name", "metadata.namespace", ...names]),
  unsupported: (field) => `field label not supported: ${field}`
})

const POD_FIELDS = ownFields([
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.schedulerName",
  "spec.serviceAccountName",
  "spec.hostNetwork",
  "status.phase",
  "status.podIP",
  "status.podIPs",
  "status.nominatedNodeName"
])

// Both Event views select by the core/v1 field names: the server filters the one stored object.
const EVENT_FIELDS = ownFields([
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type"
])

const isPod = (resource: ServedResource<unknown>): boolean => resource.group === "" && resource.kind === "Pod"
const isEvent = (resource: ServedResource<unknown>): boolean =>
  resource.kind === "Event" && (resource.group === "" || resource.group === "events.k8s.io")

/** The fields `resource` can be selected by. */
export const selectableFieldsOf = (resource: ServedResource<unknown>): SelectableFields =>
  isPod(resource) ? POD_FIELDS : isEvent(resource) ? EVENT_FIELDS : metadataFields

const text = (value: unknown): string => (typeof value === "string" ? value : "")
const record = (value: unknown): Record<string, unknown> => (isObject(value) ? value : {})

/**
 * An object's selectable field values. Events are read in their stored (core/v1)
 * form; `source` is the source component, else the reporting controller.
 */
export const fieldValuesOf = (
  resource: ServedResource<unknown>,
  object: KubeObject
): Readonly<Record<string, string>> => {
  const json = object as unknown as Record<string, unknown>
  const meta = record(json.metadata)
  const base = { "metadata.name": text(meta.name), "metadata.namespace": text(meta.namespace) }
  if (isPod(resource)) {
    const spec = record(json.spec)
    const status = record(json.status)
    const podIPs = Array.isArray(status.podIPs) ? status.podIPs.map((p) => text(record(p).ip)) : []
    return {
      ...base,
      "spec.nodeName": text(spec.nodeName),
      "spec.restartPolicy": text(spec.restartPolicy),
      "spec.schedulerName": text(spec.schedulerName),
      "spec.serviceAccountName": text(spec.serviceAccountName),
      "spec.hostNetwork": spec.hostNetwork === true ? "true" : "false",
      "status.phase": text(status.phase),
      "status.podIP": text(status.podIP),
      // The server joins every address with a comma, so `status.podIPs=a` selects a Pod with only `a`.
      "status.podIPs": podIPs.join(","),
      "status.nominatedNodeName": text(status.nominatedNodeName)
    }
  }
  if (isEvent(resource)) {
    const involved = record(json.involvedObject)
    const source = text(record(json.source).component)
    return {
      ...base,
      "involvedObject.kind": text(involved.kind),
      "involvedObject.namespace": text(involved.namespace),
      "involvedObject.name": text(involved.name),
      "involvedObject.uid": text(involved.uid),
      "involvedObject.apiVersion": text(involved.apiVersion),
      "involvedObject.resourceVersion": text(involved.resourceVersion),
      "involvedObject.fieldPath": text(involved.fieldPath),
      reason: text(json.reason),
      reportingComponent: text(json.reportingComponent),
      source: source !== "" ? source : text(json.reportingComponent),
      type: text(json.type)
    }
  }
  return base
}
