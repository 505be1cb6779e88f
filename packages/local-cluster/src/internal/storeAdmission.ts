/**
 * The checks a write passes before anything is stored: the body decoded as the
 * endpoint decodes it, its name and namespace against the request's, the mutating
 * admission a create goes through, and validation.
 */
import { apiVersionOf, type Ingress, type IngressClass, type KubeObject } from "session-routing/kubernetes"
import { DEFAULT_INGRESS_CLASS_ANNOTATION, INGRESS_CLASS_ANNOTATION } from "../RouteTable.js"
import { IngressClassResource, IngressResource, type ServedResource } from "../ServedResources.js"
import { decodeProblem, isObject, shapeOf } from "../ServerSideApply.js"
import { type FieldError, invalidStatus, validateObject } from "../Validation.js"
import type { Bucket } from "./storeHistory.js"
import { type Json, metaOf, resourceId } from "./storeObjects.js"
import { badRequest, refuse } from "./storeStatus.js"

/** The body as the endpoint decodes it: kind and apiVersion checked, types checked for built-ins. */
export const decodeBody = (resource: ServedResource<KubeObject>, body: unknown, requireKind: boolean): Json => {
  if (!isObject(body)) refuse(badRequest(`Object 'Kind' is missing in '${JSON.stringify(body) ?? ""}'`))
  const json = body as Json
  const expectedVersion = apiVersionOf(resource)
  const apiVersion = json.apiVersion
  const kind = json.kind
  if (requireKind || resource.custom) {
    if (typeof kind !== "string" || kind === "") {
      refuse(badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`))
    }
    if (typeof apiVersion !== "string" || apiVersion === "") {
      refuse(badRequest(`Object 'apiVersion' is missing in '${JSON.stringify(body)}'`))
    }
  }
  if (apiVersion !== undefined && apiVersion !== expectedVersion) {
    refuse(
      badRequest(
        `the API version in the data (${
          String(apiVersion)
        }) does not match the expected API version (${expectedVersion})`
      )
    )
  }
  if (kind !== undefined && kind !== resource.kind) {
    refuse(
      badRequest(
        `${
          String(kind)
        } in version "${resource.version}" cannot be handled as a ${resource.kind}: the kind in the data (${
          String(kind)
        }) does not match the expected kind (${resource.kind})`
      )
    )
  }
  const problem = decodeProblem(
    resource.custom ? { metadata: json.metadata } : json,
    shapeOf(resource),
    resource.kind
  )
  if (problem !== undefined) {
    refuse(
      badRequest(
        `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: ${problem}`
      )
    )
  }
  return { ...json, apiVersion: expectedVersion, kind: resource.kind }
}

export const checkNamespace = (
  resource: ServedResource<KubeObject>,
  namespace: string | undefined,
  body: Json,
  onCreate: boolean
): string | undefined => {
  const meta = isObject(body.metadata) ? body.metadata : {}
  const bodyNamespace = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined
  if (!resource.namespaced) return undefined
  if (namespace === undefined) return bodyNamespace
  if (bodyNamespace !== undefined && bodyNamespace !== namespace) {
    refuse(
      badRequest(
        onCreate
          ? "the namespace of the provided object does not match the namespace sent on the request"
          : `the namespace of the object (${bodyNamespace}) does not match the namespace on the request (${namespace})`
      )
    )
  }
  return namespace
}

export const checkName = (body: Json, name: string): void => {
  const meta = isObject(body.metadata) ? body.metadata : {}
  const bodyName = typeof meta.name === "string" ? meta.name : ""
  if (bodyName !== name) {
    refuse(badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`))
  }
}

/**
 * The IngressClass kube-apiserver's DefaultIngressClass admission plugin (on by default)
 * gives a new Ingress that names none: of the classes annotated default, the newest by
 * creationTimestamp, the first by name among equals, as the plugin sorts them (older
 * releases refused the Ingress when several were default); none without one.
 */
export const defaultIngressClass = (classes: Iterable<IngressClass>): string | undefined => {
  let chosen: { readonly name: string; readonly created: number } | undefined
  for (const ingressClass of classes) {
    if (ingressClass.metadata?.annotations?.[DEFAULT_INGRESS_CLASS_ANNOTATION] !== "true") continue
    const name = ingressClass.metadata.name ?? ""
    const created = Date.parse(ingressClass.metadata.creationTimestamp ?? "") || 0
    if (chosen === undefined || created > chosen.created || (created === chosen.created && name < chosen.name)) {
      chosen = { name, created }
    }
  }
  return chosen?.name
}

/**
 * Mutating admission on create, as kube-apiserver's default plugins change a new
 * object: an Ingress that names no class, neither in `spec.ingressClassName` nor in
 * the legacy annotation, gets the default class. Only on create (the plugin handles
 * no update), so clearing the field later leaves it cleared.
 */
export const admitCreate = (
  resource: ServedResource<KubeObject>,
  object: KubeObject,
  buckets: ReadonlyMap<string, Bucket>
): KubeObject => {
  if (resource !== IngressResource) return object
  const ingress = object as Ingress
  if (ingress.spec?.ingressClassName !== undefined) return object
  if (ingress.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION] !== undefined) return object
  // Read where they are stored: looking up an empty bucket must not make one.
  const classes = buckets.get(resourceId(IngressClassResource))?.objects.values() ?? []
  const className = defaultIngressClass(classes as Iterable<IngressClass>)
  if (className === undefined) return object
  return { ...ingress, spec: { ...ingress.spec, ingressClassName: className } } as KubeObject
}

export const validate = (
  resource: ServedResource<KubeObject>,
  object: KubeObject,
  extra: ReadonlyArray<FieldError> = []
): void => {
  const errors = [...extra, ...validateObject(resource, object)]
  if (errors.length > 0) refuse(invalidStatus(resource, metaOf(object).name ?? "", errors))
}
