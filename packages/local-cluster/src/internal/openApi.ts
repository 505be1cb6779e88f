/**
 * OpenAPI v3 as the API server publishes it: `/openapi/v3` lists one document per
 * served group version, and each document's `components.schemas` holds every type it
 * serves under the server's name, tagged with `x-kubernetes-group-version-kind`, which
 * is how `kubectl explain` and client-side apply find them. The schemas are derived from
 * each type's structural shape (the one server-side apply uses), with its CRD's
 * validation constraints where it has one: there is no second description to drift.
 */
import { createHash } from "node:crypto"
import { type KubeObject, qualifiedName } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import type { Schema } from "./crdSchema.js"
import { docsFor, schemaFor } from "./describedTypes.js"
import { json, pageNotFound, type Reply } from "./httpReply.js"
import { objectMeta, type Shape } from "./shape.js"
import { shapeOf } from "./typeShapes.js"

type Json = Record<string, unknown>

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

/**
 * The name the server gives a kind's schema: Go's package path for a built-in type
 * (`io.k8s.api.networking.v1.Ingress`, `io.k8s.api.core.v1.Service`), the reversed
 * group for a custom resource (`io.k8s.networking.gateway.v1.HTTPRoute`).
 */
export const schemaName = (resource: ServedResource<unknown>): string => {
  if (resource.custom) return `${resource.group.split(".").reverse().join(".")}.${resource.version}.${resource.kind}`
  const group = resource.group === "" ? "core" : resource.group.replace(/\.k8s\.io$/, "")
  return `io.k8s.api.${group}.${resource.version}.${resource.kind}`
}

/** Where a group version's document is: `api/v1`, `apis/networking.k8s.io/v1`. */
export const groupVersionPath = (group: string, version: string): string =>
  group === "" ? `api/${version}` : `apis/${group}/${version}`

const scalarSchema = (shape: Extract<Shape, { _tag: "Scalar" }>): Json => {
  switch (shape.goType) {
    case "int32":
    case "int64":
      return { type: "integer", format: shape.goType }
    case "bool":
      return { type: "boolean" }
    case "intstr":
      return { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }
    case "microTime":
      return { type: "string", format: "date-time" }
    default:
      return { type: "string" }
  }
}

/** What a CRD's validation schema adds to a node: its bounds, pattern, enum, required fields and default. */
const constraintsOf = (schema: Schema | undefined): Json => {
  if (schema === undefined) return {}
  const { default: fallback, rules: _rules, type: _type, ...rest } = schema as Schema & Json
  const out: Json = {}
  for (
    const key of ["minLength", "maxLength", "pattern", "enum", "minimum", "maximum", "minItems", "maxItems", "required"]
  ) {
    if (rest[key] !== undefined) out[key] = rest[key]
  }
  return fallback !== undefined ? { ...out, default: fallback } : out
}

const childSchema = (schema: Schema | undefined, key: string): Schema | undefined =>
  schema?.type === "object" ? schema.properties[key] : undefined

/**
 * One node of a shape as an OpenAPI schema. Built-in types carry the strategic-merge
 * extensions their Go fields declare (a keyed list merges by its first key); custom
 * resources are patched as JSON and have none.
 */
const toSchema = (shape: Shape, crd: Schema | undefined, custom: boolean, docs: Docs = noDocs): Json =>
  withDescription(nodeSchema(shape, crd, custom, docs), docs(""))

type Docs = (path: string) => string | undefined
const noDocs: Docs = () => undefined
const under = (docs: Docs, field: string): Docs => (path) => docs(path === "" ? field : `${field}.${path}`)
const withDescription = (schema: Json, description: string | undefined): Json =>
  description === undefined ? schema : { description, ...schema }

const nodeSchema = (shape: Shape, crd: Schema | undefined, custom: boolean, docs: Docs): Json => {
  switch (shape._tag) {
    case "Scalar":
      return { ...scalarSchema(shape), ...(crd?.type === "integer" ? { type: "integer" } : {}), ...constraintsOf(crd) }
    case "Unknown":
      return { "x-kubernetes-preserve-unknown-fields": true }
    case "Map":
      return {
        type: "object",
        additionalProperties: toSchema(shape.values, undefined, custom),
        ...(shape.atomic === true ? { "x-kubernetes-map-type": "atomic" } : {})
      }
    case "List": {
      const keyed = shape.listType === "map" && shape.keys !== undefined
      const merges = !custom && (keyed || shape.listType === "set")
      // List items are transparent to the documented paths; the list's own text is the field's.
      const items = toSchema(
        shape.items,
        crd?.type === "array" ? crd.items : undefined,
        custom,
        (path) => path === "" ? undefined : docs(path)
      )
      // A key an item may omit (a Service port's protocol) has its default on the item's field.
      for (const [key, fallback] of Object.entries(shape.keyDefaults ?? {})) {
        const properties = items.properties as Record<string, Json> | undefined
        if (properties?.[key] !== undefined) properties[key] = { ...properties[key], default: fallback }
      }
      return {
        type: "array",
        items,
        "x-kubernetes-list-type": shape.listType,
        ...(keyed ? { "x-kubernetes-list-map-keys": shape.keys } : {}),
        ...(merges ? { "x-kubernetes-patch-strategy": "merge" } : {}),
        ...(merges && keyed ? { "x-kubernetes-patch-merge-key": shape.keys![0] } : {}),
        ...constraintsOf(crd)
      }
    }
    case "Struct": {
      const properties: Record<string, Json> = {}
      for (const [key, field] of Object.entries(shape.fields)) {
        const fallback = shape.defaults?.[key]
        properties[key] = {
          ...toSchema(field, childSchema(crd, key), custom, under(docs, key)),
          ...(fallback !== undefined ? { default: fallback } : {})
        }
      }
      return {
        type: "object",
        properties,
        ...(shape.atomic === true ? { "x-kubernetes-map-type": "atomic" } : {}),
        ...constraintsOf(crd)
      }
    }
  }
}

/** A kind's schema: its shape, `metadata` by reference to ObjectMeta, and the group-version-kind it serves. */
export const kindSchema = (resource: ServedResource<KubeObject>): Json => {
  const docs = docsFor(qualifiedName(resource))
  const body = toSchema(shapeOf(resource), schemaFor(resource), resource.custom, (path) => docs[path])
  const properties = {
    ...(body.properties as Record<string, Json>),
    metadata: { $ref: `#/components/schemas/${OBJECT_META}` }
  }
  return {
    ...body,
    properties,
    "x-kubernetes-group-version-kind": [{ group: resource.group, kind: resource.kind, version: resource.version }]
  }
}

const upperFirst = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

/** `NetworkingV1Namespaced`, `GatewayNetworkingK8sIoV1Namespaced`, `CoreV1`: the middle of an operationId. */
const operationStem = (resource: ServedResource<unknown>): string => {
  const group = resource.group === ""
    ? "core"
    : resource.custom
    ? resource.group
    : resource.group.replace(/\.k8s\.io$/, "")
  return `${group.split(/[.-]/).map(upperFirst).join("")}${upperFirst(resource.version)}${
    resource.namespaced ? "Namespaced" : ""
  }`
}

const QUERY = (name: string, type = "string") => ({ name, in: "query", schema: { type, uniqueItems: true } })
const WRITE_PARAMETERS = [QUERY("dryRun"), QUERY("fieldManager"), QUERY("fieldValidation")]

/**
 * The operations on a kind's collection and items, each tagged with the kind it
 * serves: `kubectl explain` finds a resource's kind through them.
 */
const pathsOf = (resource: ServedResource<KubeObject>): Json => {
  const gvk = { group: resource.group, kind: resource.kind, version: resource.version }
  const root = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`
  const collection = `${root}${resource.namespaced ? "/namespaces/{namespace}" : ""}/${resource.plural}`
  const answers = {
    "200": {
      description: "OK",
      content: { "application/json": { schema: { $ref: `#/components/schemas/${schemaName(resource)}` } } }
    }
  }
  const operation = (verb: string, action: string, parameters: ReadonlyArray<Json> = []) => ({
    operationId: `${verb}${operationStem(resource)}${resource.kind}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    responses: answers,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk
  })
  const item = {
    get: operation("read", "get"),
    put: operation("replace", "put", WRITE_PARAMETERS),
    patch: operation("patch", "patch", [...WRITE_PARAMETERS, QUERY("force", "boolean")]),
    delete: operation("delete", "delete", [QUERY("dryRun")])
  }
  return {
    [collection]: {
      get: operation(
        "list",
        "list",
        ["labelSelector", "fieldSelector", "resourceVersion", "resourceVersionMatch", "limit", "continue"].map((n) =>
          QUERY(n)
        )
      ),
      post: operation("create", "post", WRITE_PARAMETERS)
    },
    [`${collection}/{name}`]: item,
    ...(resource.statusSubresource
      ? { [`${collection}/{name}/status`]: { get: item.get, put: item.put, patch: item.patch } }
      : {})
  }
}

/** The document of one group version: every kind it serves, and ObjectMeta they all refer to. */
export const openApiDocument = (resources: ReadonlyArray<ServedResource<KubeObject>>, gitVersion: string): Json => ({
  openapi: "3.0.0",
  info: { title: "Kubernetes", version: gitVersion },
  paths: Object.assign({}, ...resources.map(pathsOf)),
  components: {
    schemas: {
      [OBJECT_META]: toSchema(objectMeta, undefined, false),
      ...Object.fromEntries(resources.map((resource) => [schemaName(resource), kindSchema(resource)]))
    }
  }
})

/** `GET /openapi/v3`: each document's path, with the hash of its content that clients cache by. */
export const openApiIndex = (documents: ReadonlyArray<{ readonly path: string; readonly body: string }>): Json => ({
  paths: Object.fromEntries(documents.map(({ body, path }) => [
    path,
    { serverRelativeURL: `/openapi/v3/${path}?hash=${createHash("sha512").update(body).digest("hex").toUpperCase()}` }
  ]))
})

/** What `/openapi/v3[/<path>]` answers for the types served now: the index, a document, or the plain 404. */
export const openApiV3 = (
  served: ReadonlyArray<ServedResource<KubeObject>>,
  gitVersion: string,
  path: ReadonlyArray<string>
): Reply => {
  const byGroupVersion = new Map<string, Array<ServedResource<KubeObject>>>()
  for (const resource of served) {
    const key = groupVersionPath(resource.group, resource.version)
    byGroupVersion.set(key, [...(byGroupVersion.get(key) ?? []), resource])
  }
  const documents = [...byGroupVersion].map(([key, resources]) => ({
    path: key,
    body: JSON.stringify(openApiDocument(resources, gitVersion))
  }))
  if (path.length === 0) return json(200, openApiIndex(documents))
  const document = documents.find((d) => d.path === path.join("/"))
  return document === undefined ? pageNotFound : { code: 200, contentType: "application/json", body: document.body }
}
