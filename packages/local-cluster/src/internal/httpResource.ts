/**
 * A request on a resource path: the verb it names, the faults that may answer
 * first, then get, list, watch, create, update, patch, delete and deletecollection
 * on the store, with the options and status codes the API server uses.
 */
import { Clock, Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { KubeObject, ObjectList, Status } from "session-routing/kubernetes"
import type { Decision, FaultRequest, Faults, Verb } from "../Faults.js"
import { isObject } from "../ServerSideApply.js"
import type { ClusterStore, DeleteOptions } from "../Store.js"
import {
  badRequest,
  boolParam,
  dryRunOf,
  failure,
  fieldManagerOf,
  invalidOptions,
  json,
  mediaType,
  methodNotAllowed,
  objectReply,
  orStatus,
  pageNotFound,
  parseJson,
  parseYamlOrJson,
  readBody,
  Refused,
  type Reply,
  restfulUnsupportedMediaType,
  statusReply,
  unsupportedMediaType
} from "./httpReply.js"
import type { Target } from "./httpRouting.js"
import { makeWatch } from "./httpWatch.js"
import { listOptionsProblem } from "./listOptions.js"
import { jsonPatch, mergePatch, patchOnce } from "./patches.js"
import { decodeDeleteBody, decodeWriteBody } from "./protobufObjects.js"
import { strategicMerge } from "./strategicMerge.js"
import { tableApiVersion, toTable, wantsTable } from "./tables.js"
import { shapeOf } from "./typeShapes.js"

/** The patch types a custom resource's handler takes. */
const CUSTOM_PATCH_TYPES: ReadonlyArray<string> = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml"
]

/** The patch types a built-in type's PATCH route consumes. */
const BUILT_IN_PATCH_TYPES: ReadonlyArray<string> = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml"
]

const faultRequest = (verb: Verb, target: Target): FaultRequest => ({
  verb,
  resource: target.resource,
  ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
  ...(target.name !== undefined ? { name: target.name } : {}),
  ...(target.subresource !== undefined ? { subresource: target.subresource } : {})
})

/**
 * A subresource that is only ever created, answered by a handler of its own rather than
 * the store (`serviceaccounts/<name>/token`): the request, its query, the namespace and
 * name it names, and its body.
 */
export type SubresourceCreate = (
  req: IncomingMessage,
  query: URLSearchParams,
  namespace: string,
  name: string,
  body: Buffer
) => Effect.Effect<Reply>

/**
 * Answers requests on resource paths from the store, and the create-only subresources
 * from `creates` (by subresource name); undefined when the connection was dropped instead.
 */
export const makeResourceHandler = (
  store: ClusterStore,
  faults: Faults,
  whenAnswering: (res: ServerResponse, effect: Effect.Effect<void>) => Effect.Effect<void>,
  creates: Readonly<Record<string, SubresourceCreate>> = {}
) => {
  const served = (resource: Target["resource"]) => store.isServed(resource)
  const watch = makeWatch(store, whenAnswering)

  const handleResource = (
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
    target: Target
  ): Effect.Effect<Reply | undefined> =>
    Effect.gen(function*() {
      const method = req.method ?? "GET"
      const { resource, namespace, name, subresource } = target
      const isWatch = method === "GET" && name === undefined &&
        (query.get("watch") === "true" || query.get("watch") === "1")
      const verb: Verb = method === "GET"
        ? name === undefined ? (isWatch ? "watch" : "list") : "get"
        : method === "POST"
        ? "create"
        : method === "PUT"
        ? "update"
        : method === "PATCH"
        ? "patch"
        : method === "DELETE"
        ? name === undefined ? "deletecollection" : "delete"
        : "get"
      if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(method)) return statusReply(methodNotAllowed())
      // A create-only subresource takes a POST on the object's path, and nothing else.
      const create = subresource !== undefined && Object.hasOwn(creates, subresource) ? creates[subresource] : undefined
      if (create !== undefined && method !== "POST") return statusReply(methodNotAllowed())
      const refused = create === undefined ? routeProblem(req, target) : undefined
      if (refused !== undefined) return statusReply(refused)

      const decision: Decision = yield* faults.intercept(faultRequest(verb, target))
      switch (decision._tag) {
        case "Respond":
          return {
            code: decision.response.code,
            contentType: decision.response.contentType,
            body: decision.response.body,
            headers: decision.response.headers
          }
        case "Hang":
          return yield* Effect.never
        case "Reset":
        case "Refused":
          req.socket.destroy()
          return undefined
        case "Proceed":
          break
      }
      // Throttling and authorization come first; only then does routing find no handler.
      if (!(yield* served(resource))) return pageNotFound

      const accept = req.headers.accept
      const body = method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE"
        ? yield* Effect.either(readBody(req))
        : undefined
      if (body !== undefined && body._tag === "Left") return statusReply(body.left)
      const bytes = body?._tag === "Right" ? body.right : Buffer.alloc(0)
      if (create !== undefined) return yield* create(req, query, namespace ?? "", name!, bytes)

      switch (verb) {
        case "get": {
          const now = yield* Clock.currentTimeMillis
          return yield* orStatus(store.get(resource, namespace, name!), (object) =>
            wantsTable(accept)
              ? json(
                200,
                toTable(
                  resource,
                  [object],
                  { resourceVersion: object.metadata?.resourceVersion },
                  query.get("includeObject") ?? "Metadata",
                  tableApiVersion(accept!),
                  now
                )
              )
              : objectReply(200, object))
        }
        case "list": {
          const problem = listOptionsProblem(query)
          if (problem !== undefined) return statusReply(problem)
          const limit = query.get("limit")
          const now = yield* Clock.currentTimeMillis
          return yield* orStatus(
            store.list(resource, namespace, {
              ...(query.get("labelSelector") !== null ? { labelSelector: query.get("labelSelector")! } : {}),
              ...(query.get("fieldSelector") !== null ? { fieldSelector: query.get("fieldSelector")! } : {}),
              ...(limit !== null && /^\d+$/.test(limit) ? { limit: Number(limit) } : {}),
              ...(query.get("continue") !== null ? { continue: query.get("continue")! } : {}),
              ...(query.get("resourceVersion") !== null ? { resourceVersion: query.get("resourceVersion")! } : {}),
              ...(query.get("resourceVersionMatch") !== null
                ? { resourceVersionMatch: query.get("resourceVersionMatch")! }
                : {})
            }),
            (list: ObjectList<KubeObject>) =>
              wantsTable(accept)
                ? json(
                  200,
                  toTable(
                    resource,
                    list.items,
                    list.metadata,
                    query.get("includeObject") ?? "Metadata",
                    tableApiVersion(accept!),
                    now
                  )
                )
                : objectReply(200, list)
          )
        }
        case "watch":
          return yield* watch(accept, res, query, target, decision)
        case "create": {
          const dryRun = dryRunOf(query, "CreateOptions")
          const object = decodeWriteBody(req, bytes, resource)
          return yield* orStatus(
            store.create(resource, namespace, object, { dryRun, fieldManager: fieldManagerOf(req, query) }),
            (created) => objectReply(201, created)
          )
        }
        case "update": {
          const dryRun = dryRunOf(query, "UpdateOptions")
          const object = decodeWriteBody(req, bytes, resource)
          const options = { dryRun, fieldManager: fieldManagerOf(req, query) }
          if (subresource === "status") {
            return yield* orStatus(
              store.replaceStatus(resource, namespace, name!, object, options),
              (o) => objectReply(200, o)
            )
          }
          return yield* orStatus(
            store.replace(resource, namespace, name!, object, options),
            (r) => objectReply(r.created ? 201 : 200, r.object)
          )
        }
        case "patch":
          return yield* patch(req, query, target as Target & { name: string }, bytes)
        case "delete": {
          const options = decodeDeleteBody(req, bytes)
          const deleteOptions = deleteOptionsOf(query, options)
          return yield* orStatus(store.delete(resource, namespace, name!, deleteOptions), (result) => {
            if ("status" in result) {
              // A successful delete's Status carries no code on the wire.
              const { code: _code, ...status } = result.status
              return json(200, status)
            }
            const meta = result.object.metadata as
              | { deletionTimestamp?: string; finalizers?: ReadonlyArray<string> }
              | undefined
            const pending = meta?.deletionTimestamp !== undefined && (meta.finalizers ?? []).length > 0
            // The server answers 202 for a delete it could not finish only when the client
            // asked for cascading deletion with orphanDependents=false; otherwise 200.
            return objectReply(pending && orphanDependentsOf(query, options) === false ? 202 : 200, result.object)
          })
        }
        case "deletecollection": {
          const deleteOptions = deleteOptionsOf(query, decodeDeleteBody(req, bytes))
          return yield* orStatus(
            Effect.gen(function*() {
              const list = yield* store.list(resource, namespace, {
                ...(query.get("labelSelector") !== null ? { labelSelector: query.get("labelSelector")! } : {}),
                ...(query.get("fieldSelector") !== null ? { fieldSelector: query.get("fieldSelector")! } : {})
              })
              const deleted: Array<KubeObject> = []
              for (const item of list.items) {
                const result = yield* Effect.either(
                  store.delete(resource, item.metadata?.namespace, item.metadata?.name ?? "", deleteOptions)
                )
                if (result._tag === "Right") deleted.push(item)
                else if (result.left.code !== 404) return yield* Effect.fail(result.left)
              }
              return { ...list, items: deleted }
            }),
            (list) => objectReply(200, list)
          )
        }
      }
    }).pipe(
      // Request problems found while reading options and bodies are thrown as their Status.
      Effect.catchAllDefect((defect) =>
        defect instanceof Refused ? Effect.succeed(statusReply(defect.status)) : Effect.die(defect)
      )
    )

  /**
   * What is refused before any handler runs. A built-in type's routes are go-restful's:
   * no POST on a name, no PUT or PATCH on a collection, no POST or DELETE on a
   * subresource (405, naming nothing). A custom resource's handler is the CRD handler,
   * which routes by verb: a POST on a name creates the body's object (the name in the
   * path is not read), a PUT or PATCH without a name is a 400 (after a PATCH's media
   * type), and its status takes get, update and patch only (405 naming the resource).
   */
  const routeProblem = (req: IncomingMessage, target: Target): Status | undefined => {
    const method = req.method ?? "GET"
    const { name, resource, subresource } = target
    if (!resource.custom) {
      const refused = (method === "POST" && name !== undefined) ||
        (method !== "POST" && method !== "GET" && method !== "DELETE" && name === undefined) ||
        (subresource !== undefined && (method === "POST" || method === "DELETE"))
      return refused ? methodNotAllowed() : undefined
    }
    if (subresource !== undefined && (method === "POST" || method === "DELETE")) {
      return failure(
        405,
        "MethodNotAllowed",
        `${
          method === "POST" ? "create" : "delete"
        } is not supported on resources of kind "${resource.plural}.${resource.group}"`,
        { group: resource.group, kind: resource.plural }
      )
    }
    if ((method === "PUT" || method === "PATCH") && name === undefined) {
      if (method === "PATCH" && !CUSTOM_PATCH_TYPES.includes(mediaType(req))) {
        return unsupportedMediaType(CUSTOM_PATCH_TYPES)
      }
      return badRequest("name must be provided")
    }
    return undefined
  }

  /** The options of a DELETE, from its query and its body (`parsed`, as JSON). */
  const deleteOptionsOf = (query: URLSearchParams, parsed: unknown): DeleteOptions => {
    let dryRun = dryRunOf(query, "DeleteOptions")
    let preconditions: { uid?: string; resourceVersion?: string } | undefined
    if (isObject(parsed)) {
      if (Array.isArray(parsed.dryRun) && parsed.dryRun.length > 0) dryRun = true
      const p = parsed.preconditions
      if (isObject(p)) {
        preconditions = {
          ...(typeof p.uid === "string" ? { uid: p.uid } : {}),
          ...(typeof p.resourceVersion === "string" ? { resourceVersion: p.resourceVersion } : {})
        }
      }
    }
    const propagationPolicy = propagationOf(query, parsed)
    return {
      dryRun,
      ...(preconditions !== undefined ? { preconditions } : {}),
      ...(propagationPolicy !== undefined ? { propagationPolicy } : {})
    }
  }

  /** `propagationPolicy` (query or body), or the older `orphanDependents`; both at once is refused, as the server does. */
  const propagationOf = (query: URLSearchParams, parsed: unknown): DeleteOptions["propagationPolicy"] => {
    const fromBody = isObject(parsed) && typeof parsed.propagationPolicy === "string"
      ? parsed.propagationPolicy
      : undefined
    const policy = query.get("propagationPolicy") ?? fromBody
    const orphan = orphanDependentsOf(query, parsed)
    if (policy !== undefined && orphan !== undefined) {
      throw new Refused(
        invalidOptions(
          "DeleteOptions",
          "propagationPolicy",
          "FieldValueInvalid",
          `Invalid value: "${policy}": orphanDependents and deletionPropagation cannot be both set`
        )
      )
    }
    if (policy === undefined) return orphan === true ? "Orphan" : undefined
    if (policy !== "Foreground" && policy !== "Background" && policy !== "Orphan") {
      throw new Refused(
        invalidOptions(
          "DeleteOptions",
          "propagationPolicy",
          "FieldValueNotSupported",
          `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`
        )
      )
    }
    return policy
  }

  /** `orphanDependents` of the query or the DeleteOptions body, the one option that picks a delete's 202. */
  const orphanDependentsOf = (query: URLSearchParams, parsed: unknown): boolean | undefined => {
    const fromQuery = boolParam(query, "orphanDependents")
    if (fromQuery !== undefined) return fromQuery
    return isObject(parsed) && typeof parsed.orphanDependents === "boolean" ? parsed.orphanDependents : undefined
  }

  const patch = (
    req: IncomingMessage,
    query: URLSearchParams,
    target: Target & { readonly name: string },
    bytes: Buffer
  ) =>
    Effect.gen(function*() {
      const type = mediaType(req)
      const { resource, namespace, name, subresource } = target
      // The media type is checked before any option. Custom resources have no Go struct
      // tags to merge by: their handler does not offer strategic merge at all. A built-in
      // type's PATCH route consumes only the patch types, so go-restful refuses the rest
      // before the handler could list them.
      const accepted = resource.custom ? CUSTOM_PATCH_TYPES : BUILT_IN_PATCH_TYPES
      if (!accepted.includes(type)) {
        return statusReply(resource.custom ? unsupportedMediaType(accepted) : restfulUnsupportedMediaType())
      }
      const text = bytes.toString("utf8")
      const dryRun = dryRunOf(query, "PatchOptions")
      const force = boolParam(query, "force")
      if (type === "application/apply-patch+yaml") {
        if (subresource === "status") {
          return statusReply(
            failure(
              415,
              "UnsupportedMediaType",
              "LocalCluster does not serve apply patches on the status subresource; use a merge patch or PUT"
            )
          )
        }
        const object = parseYamlOrJson(text)
        return yield* orStatus(
          store.apply(resource, namespace, name, object as KubeObject, {
            dryRun,
            force: force === true,
            ...(query.get("fieldManager") !== null ? { fieldManager: query.get("fieldManager")! } : {})
          }),
          (r) => objectReply(r.created ? 201 : 200, r.object)
        )
      }
      if (force !== undefined) {
        return statusReply(
          invalidOptions(
            "PatchOptions",
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch"
          )
        )
      }
      let apply: (live: KubeObject) => KubeObject
      if (type === "application/merge-patch+json" || type === "application/strategic-merge-patch+json") {
        const patchDoc = parseJson(text)
        if (!isObject(patchDoc)) return statusReply(badRequest("the merge patch must be a JSON object"))
        // Built-in types merge keyed lists item by item (custom resources never get here).
        apply = (live) =>
          (type === "application/strategic-merge-patch+json"
            ? strategicMerge(live, patchDoc, shapeOf(resource))
            : mergePatch(live, patchDoc)) as KubeObject
      } else if (type === "application/json-patch+json") {
        const operations = parseJson(text)
        apply = (live) => jsonPatch(live, operations) as KubeObject
      } else {
        return statusReply(unsupportedMediaType(accepted))
      }
      const options = { dryRun, fieldManager: fieldManagerOf(req, query), patch: true }
      const write = (patched: KubeObject) =>
        subresource === "status"
          ? store.replaceStatus(resource, namespace, name, patched, options)
          : Effect.map(store.replace(resource, namespace, name, patched, options), (r) => r.object)
      return yield* orStatus(patchOnce(store, target, apply, write), (o) => objectReply(200, o))
    })

  return handleResource
}
