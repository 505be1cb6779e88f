/**
 * The OpenAPI v2 document, as far as a kubectl that reads v2 needs it: swagger and
 * info, and for each served kind the PATCH on its items, tagged with the kind and naming
 * the `dryRun` parameter, which is how kubectl 1.20 learns that `diff` and
 * `--dry-run=server` may be used. It has no definitions: kubectl, finding none for a
 * kind, skips its client-side validation instead of failing. kubectl asks for gnostic's
 * protobuf encoding; other clients get the same document as JSON.
 */
import { type KubeObject, resourcePath } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"

/** The media type kubectl asks for, and the one the server answers with (Go's mime parser refuses the `@`). */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
export const OPENAPI_V2_PROTOBUF_RESPONSE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

const PATCH_QUERY = ["dryRun", "fieldManager", "force"]

interface Patchable {
  readonly path: string
  readonly operationId: string
  readonly gvk: { readonly group: string; readonly kind: string; readonly version: string }
}

const patchable = (resources: ReadonlyArray<ServedResource<KubeObject>>): Array<Patchable> =>
  resources.map((resource) => ({
    path: resourcePath(resource, resource.namespaced ? "{namespace}" : undefined, "{name}"),
    operationId: `patch${resource.kind}`,
    gvk: { group: resource.group, kind: resource.kind, version: resource.version }
  }))

// -- protobuf (gnostic's openapi_v2.Document) ------------------------------------

const varint = (n: number): Array<number> => {
  const out: Array<number> = []
  let rest = n
  while (rest > 127) {
    out.push((rest & 127) | 128)
    rest >>>= 7
  }
  out.push(rest)
  return out
}
const message = (
  field: number,
  body: ReadonlyArray<number>
): Array<number> => [(field << 3) | 2, ...varint(body.length), ...body]
const text = (field: number, value: string): Array<number> => message(field, [...Buffer.from(value, "utf8")])

// Field numbers of OpenAPIv2.proto: Document.paths 8, Paths.path 2, NamedPathItem name 1 /
// value 2, PathItem.patch 8, Operation operation_id 5 / parameters 8 / vendor_extension 13,
// ParametersItem.parameter 1, Parameter.non_body_parameter 2, NonBodyParameter.query 3,
// QueryParameterSubSchema in 2 / name 4 / type 6, NamedAny name 1 / value 2, Any.yaml 2.
const queryParameter = (name: string) =>
  message(8, message(1, message(2, message(3, [...text(2, "query"), ...text(4, name), ...text(6, "string")]))))

const operation = (p: Patchable) => [
  ...text(5, p.operationId),
  ...PATCH_QUERY.flatMap(queryParameter),
  // The extension's value is YAML; JSON is YAML.
  ...message(13, [...text(1, "x-kubernetes-group-version-kind"), ...message(2, text(2, JSON.stringify(p.gvk)))])
]

/** The document in gnostic's protobuf encoding. */
export const openApiV2Protobuf = (
  resources: ReadonlyArray<ServedResource<KubeObject>>,
  gitVersion: string
): Uint8Array =>
  Uint8Array.from([
    ...text(1, "2.0"),
    ...message(2, [...text(1, "Kubernetes"), ...text(2, gitVersion)]),
    ...message(
      8,
      patchable(resources).flatMap((p) => message(2, [...text(1, p.path), ...message(2, message(8, operation(p)))]))
    )
  ])

/** The same document as JSON. */
export const openApiV2Json = (resources: ReadonlyArray<ServedResource<KubeObject>>, gitVersion: string) => ({
  swagger: "2.0",
  info: { title: "Kubernetes", version: gitVersion },
  paths: Object.fromEntries(
    patchable(resources).map((p) => [p.path, {
      patch: {
        operationId: p.operationId,
        parameters: PATCH_QUERY.map((name) => ({ name, in: "query", type: "string", uniqueItems: true })),
        "x-kubernetes-group-version-kind": p.gvk
      }
    }])
  ),
  definitions: {}
})
