/**
 * Objects as the live client sends and returns them: where one lives on the wire, an
 * apply body the server accepts from an object that may have been read back, and list
 * items that read like `get` answers.
 */
import type { KubeObject } from "../../domain/Objects.js"
import { apiVersionOf, resourcePath, type ResourceType } from "../../domain/Resources.js"

/** Built-in list items come without kind/apiVersion; give them back so items read like `get` answers. */
export const withTypeMeta = <A>(resource: ResourceType<A>, item: A): A => ({
  apiVersion: apiVersionOf(resource),
  kind: resource.kind,
  ...item
})

/** A server-side apply body refuses managedFields; one read back from the server carries them. */
export const applyBody = (resource: ResourceType<unknown>, object: KubeObject): KubeObject => {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {}
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: object.kind ?? resource.kind,
    metadata
  }
}

/** Where one object (or, without a name, the collection) of `resource` is, its names encoded for a URL path. */
export const wirePath = (resource: ResourceType<unknown>, namespace: string, name?: string): string =>
  resourcePath(resource, encodeURIComponent(namespace), name !== undefined ? encodeURIComponent(name) : undefined)
