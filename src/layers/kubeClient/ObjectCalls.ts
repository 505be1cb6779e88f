/**
 * The live client's calls on objects: server-side apply, get and delete of one object,
 * and lists read in pages of one consistent resourceVersion, each one `Request`.
 */
import { Effect } from "effect"
import type { ObjectList } from "../../domain/Objects.js"
import { apiVersionOf, type ResourceType } from "../../domain/Resources.js"
import {
  type ApplyOptions,
  FIELD_MANAGER,
  type KubeClientPrimitives,
  type ListOptions,
  type ReadableObject,
  type WritableObject
} from "../../services/KubeClient.js"
import { Invalid, type KubeError, Unexpected } from "../../services/KubeError.js"
import { describeRequest, requestContext } from "./KubeErrorParsing.js"
import type { Request } from "./Requests.js"
import { applyBody, wirePath, withTypeMeta } from "./WireObjects.js"

/**
 * Pages one list may take: 100,000 objects at `LIST_PAGE_SIZE`, past any session
 * namespace. A server that answers every page with another continue token would
 * otherwise be followed, and its items held, for as long as it keeps answering.
 */
export const MAX_LIST_PAGES = 200

/** Items per page of a list: client-go's pager default. */
const LIST_PAGE_SIZE = 500

/** The object verbs of the primitives, each one call through `request`; `server` names the lists given up. */
export const objectCalls = (
  request: Request,
  server: string
): Pick<KubeClientPrimitives, "apply" | "get" | "delete" | "list"> => ({
  apply: (resource, object, options) => apply(request, resource, object, options),
  get: (resource, namespace, name) =>
    request(
      requestContext("get", resource, namespace, name),
      { method: "GET", path: wirePath(resource, namespace, name) }
    ) as Effect.Effect<never, KubeError>,
  delete: (resource, namespace, name, options) =>
    Effect.asVoid(
      request(
        requestContext("delete", resource, namespace, name),
        {
          method: "DELETE",
          path: wirePath(resource, namespace, name),
          ...(options?.uid !== undefined
            ? {
              body: JSON.stringify({ kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: options.uid } }),
              contentType: "application/json"
            }
            : {})
        }
      )
    ),
  list: (resource, namespace, options) => list(request, server, resource, namespace, options)
})

const apply = <A extends WritableObject>(
  request: Request,
  resource: ResourceType<A>,
  object: A,
  options: ApplyOptions | undefined
): Effect.Effect<A, KubeError> => {
  const name = object.metadata?.name
  const namespace = object.metadata?.namespace
  const ctx = requestContext("apply", resource, namespace ?? "", name)
  if (name === undefined || name === "" || namespace === undefined || namespace === "") {
    const field = name === undefined || name === "" ? "metadata.name" : "metadata.namespace"
    return Effect.fail(
      new Invalid({
        reason: `cannot ${describeRequest(ctx)}: ${field} is required`,
        causes: [{ reason: "FieldValueRequired", field, message: "Required value" }]
      })
    )
  }
  const dryRun = options?.dryRun === true
  const query = `?fieldManager=${FIELD_MANAGER}&force=${options?.force ?? true}${dryRun ? "&dryRun=All" : ""}`
  return request(ctx, {
    method: "PATCH",
    path: wirePath(resource, namespace, name) + query,
    // JSON is YAML: the apply patch type takes it as it is.
    body: JSON.stringify(applyBody(resource, object)),
    contentType: "application/apply-patch+yaml"
  }, { dryRun }) as Effect.Effect<A, KubeError>
}

/** One page of a list: at most `LIST_PAGE_SIZE` items, from where `continueToken` left off. */
const listPage = (
  request: Request,
  resource: ResourceType<ReadableObject>,
  namespace: string,
  labelSelector: string | undefined,
  continueToken: string | undefined
) => {
  const query = new URLSearchParams({ limit: String(LIST_PAGE_SIZE) })
  if (labelSelector !== undefined) query.set("labelSelector", labelSelector)
  if (continueToken !== undefined) query.set("continue", continueToken)
  return Effect.map(
    request(requestContext("list", resource, namespace), {
      method: "GET",
      path: `${wirePath(resource, namespace)}?${query.toString()}`
    }),
    (raw) => raw as Partial<ObjectList<ReadableObject>>
  )
}

/**
 * Lists in pages, as client-go's pager does: thousands of session objects in one
 * answer would be tens of MiB read at once (past the answer's bound at 10,000
 * sessions), while pages of 500 each stay small. Every page is of the first page's
 * resourceVersion, so together they are one consistent list.
 */
const list = <A extends ReadableObject>(
  request: Request,
  server: string,
  resource: ResourceType<A>,
  namespace: string,
  options: ListOptions | undefined
): Effect.Effect<ObjectList<A>, KubeError> =>
  Effect.gen(function*() {
    const items: Array<A> = []
    let first: Partial<ObjectList<ReadableObject>> | undefined
    let continueToken: string | undefined
    let pages = 0
    do {
      if (pages++ === MAX_LIST_PAGES) {
        return yield* new Unexpected({
          reason: `the API server at ${server} answered ${
            describeRequest(requestContext("list", resource, namespace))
          } with more than ${MAX_LIST_PAGES} pages of ${LIST_PAGE_SIZE}, and the list was given up`
        })
      }
      const page = yield* listPage(request, resource, namespace, options?.labelSelector, continueToken)
      first ??= page
      for (const item of page.items ?? []) items.push(withTypeMeta(resource, item as A))
      continueToken = page.metadata?.continue === "" ? undefined : page.metadata?.continue
    } while (continueToken !== undefined)
    const { continue: _continue, ...metadata } = first.metadata ?? {}
    return {
      apiVersion: first.apiVersion ?? apiVersionOf(resource),
      kind: first.kind ?? resource.listKind,
      metadata,
      items
    }
  })
