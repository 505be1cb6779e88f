/**
 * LocalCluster over HTTP: the API server's REST paths, discovery, watch streaming
 * and error bodies on 127.0.0.1, so @kubernetes/client-node and kubectl talk to it
 * as to a real cluster. Closing the scope closes the server and every open watch.
 * The faults' server lifecycle pauses it (nothing answers, connections held), stops
 * it (listener and connections closed) and restarts it on the same port. It counts
 * what it serves, and its connections, in `Metrics` (served on `/metrics`).
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Cause, Clock, Data, Duration, Effect, FiberId, FiberSet, Random, type Scope, Stream } from "effect"
import { parse as parseYaml } from "yaml"
import type { KubeObject, ObjectList, Status } from "../domain/Objects.js"
import { allResources, apiVersionOf, type ResourceType } from "../domain/Resources.js"
import { type Decision, type FaultRequest, type Faults, makeFaults, shapeWatch, type Verb } from "./Faults.js"
import { parseFieldSelector, parseLabelSelector, SelectorError } from "./LabelSelector.js"
import {
  type ClusterMetrics,
  EXPOSITION_CONTENT_TYPE,
  makeMetrics,
  nonResourceRequestLabels,
  type RequestLabels,
  resourceRequestLabels
} from "./Metrics.js"
import { RestartError } from "./ServerLifecycle.js"
import { isObject } from "./ServerSideApply.js"
import type { ClusterStore, DeleteOptions, StoreWatchEvent } from "./Store.js"

/** How the server is set up. */
export interface HttpApiOptions {
  readonly store: ClusterStore
  /** Faults to honour, and the server lifecycle that pauses, stops and restarts this server. */
  readonly faults?: Faults
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number
  /** What `/version` reports; default `v1.30.0`. */
  readonly gitVersion?: string
  /** Where to count requests and connections (shared with the in-memory face); fresh counters if unset. */
  readonly metrics?: ClusterMetrics
}

/** A running server. */
export interface HttpApi {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  readonly port: number
  /** What it counted, as `/metrics` serves it. */
  readonly metrics: ClusterMetrics
}

/** The server could not start (e.g. the port is taken). */
export class HttpApiError extends Data.TaggedError("HttpApiError")<{ readonly reason: string; readonly cause?: unknown }> {}

const HOST = "127.0.0.1"
/** The API server refuses request bodies above 3 MiB. */
const MAX_BODY_BYTES = 3 * 1024 * 1024
/** Without `timeoutSeconds`, a watch lasts between one and two times this, as `--min-request-timeout`. */
const MIN_REQUEST_TIMEOUT_SECONDS = 1800
/**
 * How long an idle keep-alive connection stays open: kube-apiserver's `IdleTimeout`.
 * Node's default (5 s) would close pooled client connections far sooner than a real
 * server does, and hide whether a client reuses them.
 */
const IDLE_TIMEOUT_MS = 90_000

// ---------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------

interface Reply {
  readonly code: number
  readonly contentType: string
  readonly body: string | Uint8Array
  readonly headers?: Readonly<Record<string, string>>
}

const json = (code: number, value: unknown, headers?: Record<string, string>): Reply => ({
  code,
  contentType: "application/json",
  body: JSON.stringify(value),
  ...(headers !== undefined ? { headers } : {})
})

/** Go's http.NotFound: what a path no handler serves answers. */
const pageNotFound: Reply = { code: 404, contentType: "text/plain; charset=utf-8", body: "404 page not found\n", headers: { "x-content-type-options": "nosniff" } }

const statusReply = (status: Status, headers?: Record<string, string>): Reply => json(status.code, status, headers)

const failure = (code: number, reason: string, message: string, details?: Status["details"]): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details !== undefined ? { details } : {}),
  code
})

const badRequest = (message: string): Status => failure(400, "BadRequest", message)

const methodNotAllowed = (): Status =>
  failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

const unsupportedMediaType = (accepted: ReadonlyArray<string>): Status =>
  failure(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`)

const invalidOptions = (kind: string, field: string, reason: string, message: string): Status =>
  failure(422, "Invalid", `${kind}.meta.k8s.io "" is invalid: ${field}: ${message}`, {
    group: "meta.k8s.io",
    kind,
    causes: [{ reason, message, field }]
  })

// Thrown while reading a request; answered as its Status.
class Refused {
  constructor(readonly status: Status) {}
}

// ---------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------

const STATUS_VERBS = ["get", "patch", "update"]
const verbsOf = (resource: ResourceType<unknown>): Array<string> =>
  resource.plural === "namespaces"
    ? ["create", "delete", "get", "list", "patch", "update", "watch"]
    : ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

const apiResource = (resource: ResourceType<unknown>) => ({
  name: resource.plural,
  singularName: resource.singular,
  namespaced: resource.namespaced,
  kind: resource.kind,
  verbs: verbsOf(resource),
  ...(resource.shortNames.length > 0 ? { shortNames: resource.shortNames } : {}),
  ...(resource.custom ? { categories: ["gateway-api"] } : resource.kind === "Service" ? { categories: ["all"] } : {})
})

const statusResource = (resource: ResourceType<unknown>) => ({
  name: `${resource.plural}/status`,
  singularName: "",
  namespaced: resource.namespaced,
  kind: resource.kind,
  verbs: STATUS_VERBS
})

const groupVersion = (group: string, version: string) => ({ groupVersion: `${group}/${version}`, version })

// A minimal OpenAPI v2 document in protobuf (gnostic's Document): swagger, info, empty
// paths. kubectl validates against it and, finding no definition for a kind, skips
// client-side validation instead of failing without --validate=false.
const protoString = (field: number, value: string): Array<number> => {
  const bytes = [...Buffer.from(value, "utf8")]
  return [(field << 3) | 2, bytes.length, ...bytes]
}
const protoMessage = (field: number, body: Array<number>): Array<number> => [(field << 3) | 2, body.length, ...body]

const openApiProtobuf = (gitVersion: string): Uint8Array =>
  Uint8Array.from([
    ...protoString(1, "2.0"),
    ...protoMessage(2, [...protoString(1, "Kubernetes"), ...protoString(2, gitVersion)]),
    ...protoMessage(8, [])
  ])

const OPENAPI_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
// Go's mime parser refuses the `@` of the requested type, so the server answers with a dot.
const OPENAPI_PROTOBUF_RESPONSE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

// ---------------------------------------------------------------------------
// Tables, for `kubectl get`
// ---------------------------------------------------------------------------

interface Column {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly description: string
  readonly priority?: number
  readonly cell: (object: Record<string, unknown>, now: number) => unknown
}

const path = (object: unknown, ...keys: ReadonlyArray<string | number>): unknown => {
  let current = object
  for (const key of keys) {
    if (typeof key === "number") current = Array.isArray(current) ? current[key] : undefined
    else current = isObject(current) ? current[key] : undefined
  }
  return current
}
const array = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** kubectl's `HumanDuration`: `45s`, `3m12s`, `25m`, `5h3m`, `12h`, `3d4h`, `95d`, `2y10d`. */
export const humanDuration = (seconds: number): string => {
  if (seconds < 0) return "<invalid>"
  if (seconds < 120) return `${Math.floor(seconds)}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return `${minutes}m${Math.floor(seconds % 60) > 0 ? `${Math.floor(seconds % 60)}s` : ""}`
  if (minutes < 180) return `${minutes}m`
  const hours = Math.floor(seconds / 3600)
  if (hours < 8) return `${hours}h${minutes % 60 > 0 ? `${minutes % 60}m` : ""}`
  if (hours < 48) return `${hours}h`
  const days = Math.floor(hours / 24)
  if (hours < 24 * 8) return `${days}d${hours % 24 > 0 ? `${hours % 24}h` : ""}`
  if (hours < 24 * 365 * 2) return `${days}d`
  const years = Math.floor(days / 365)
  if (hours < 24 * 365 * 8) return `${years}y${days % 365 > 0 ? `${days % 365}d` : ""}`
  return `${years}y`
}

const age = (object: Record<string, unknown>, now: number): string => {
  const created = path(object, "metadata", "creationTimestamp")
  if (typeof created !== "string") return "<unknown>"
  const at = Date.parse(created)
  return Number.isNaN(at) ? "<unknown>" : humanDuration((now - at) / 1000)
}

const nameColumn: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  cell: (o) => path(o, "metadata", "name")
}
const ageColumn: Column = {
  name: "Age",
  type: "string",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  cell: age
}

const addresses = (ingress: unknown): string =>
  array(ingress)
    .map((i) => path(i, "ip") ?? path(i, "hostname"))
    .filter((x): x is string => typeof x === "string")
    .join(",")

const conditionStatus = (conditions: unknown, type: string): string => {
  const c = array(conditions).find((x) => path(x, "type") === type)
  const s = path(c, "status")
  return typeof s === "string" ? s : "Unknown"
}

const servicePorts = (o: Record<string, unknown>): string => {
  const ports = array(path(o, "spec", "ports")).map((p) => {
    const port = path(p, "port")
    const nodePort = path(p, "nodePort")
    const protocol = path(p, "protocol") ?? "TCP"
    return `${String(port)}${typeof nodePort === "number" ? `:${nodePort}` : ""}/${String(protocol)}`
  })
  return ports.length === 0 ? "<none>" : ports.join(",")
}

const columnsFor = (resource: ResourceType<unknown>): ReadonlyArray<Column> => {
  switch (resource.kind) {
    case "Namespace":
      return [nameColumn, { name: "Status", type: "string", description: "The status of the namespace", cell: (o) => path(o, "status", "phase") ?? "" }, ageColumn]
    case "Service":
      return [
        nameColumn,
        { name: "Type", type: "string", description: "The type of service.", cell: (o) => path(o, "spec", "type") ?? "" },
        { name: "Cluster-IP", type: "string", description: "The cluster IP of the service.", cell: (o) => path(o, "spec", "clusterIP") ?? "<none>" },
        {
          name: "External-IP",
          type: "string",
          description: "The external IP of the service.",
          cell: (o) => addresses(path(o, "status", "loadBalancer", "ingress")) || (path(o, "spec", "type") === "LoadBalancer" ? "<pending>" : "<none>")
        },
        { name: "Port(s)", type: "string", description: "The ports of the service.", cell: servicePorts },
        ageColumn,
        {
          name: "Selector",
          type: "string",
          priority: 1,
          description: "The selector of the service.",
          cell: (o) => {
            const selector = path(o, "spec", "selector")
            return isObject(selector) && Object.keys(selector).length > 0
              ? Object.entries(selector).map(([k, v]) => `${k}=${String(v)}`).join(",")
              : "<none>"
          }
        }
      ]
    case "Ingress":
      return [
        nameColumn,
        { name: "Class", type: "string", description: "The name of the IngressClass.", cell: (o) => path(o, "spec", "ingressClassName") ?? "<none>" },
        {
          name: "Hosts",
          type: "string",
          description: "Hosts the Ingress serves.",
          cell: (o) => {
            const hosts = array(path(o, "spec", "rules")).map((r) => path(r, "host")).filter((h): h is string => typeof h === "string" && h !== "")
            return hosts.length === 0 ? "*" : hosts.join(",")
          }
        },
        { name: "Address", type: "string", description: "Address is a list of IPs or hostnames.", cell: (o) => addresses(path(o, "status", "loadBalancer", "ingress")) },
        { name: "Ports", type: "string", description: "Ports of TLS configurations that open.", cell: (o) => (array(path(o, "spec", "tls")).length > 0 ? "80, 443" : "80") },
        ageColumn
      ]
    case "IngressClass":
      return [
        nameColumn,
        { name: "Controller", type: "string", description: "Controller that is responsible for handling this class.", cell: (o) => path(o, "spec", "controller") ?? "" },
        {
          name: "Parameters",
          type: "string",
          description: "A reference to a resource with additional parameters.",
          cell: (o) => {
            const p = path(o, "spec", "parameters")
            return isObject(p) ? `${String(p.kind)}/${String(p.name)}` : "<none>"
          }
        },
        ageColumn
      ]
    case "Gateway":
      return [
        nameColumn,
        { name: "Class", type: "string", description: "", cell: (o) => path(o, "spec", "gatewayClassName") ?? "" },
        { name: "Address", type: "string", description: "", cell: (o) => path(o, "status", "addresses", 0, "value") ?? "" },
        { name: "Programmed", type: "string", description: "", cell: (o) => conditionStatus(path(o, "status", "conditions"), "Programmed") },
        ageColumn
      ]
    case "HTTPRoute":
      return [
        nameColumn,
        { name: "Hostnames", type: "string", description: "", cell: (o) => JSON.stringify(array(path(o, "spec", "hostnames"))) },
        ageColumn
      ]
    default:
      return [nameColumn, ageColumn]
  }
}

const wantsTable = (accept: string | undefined): boolean =>
  accept !== undefined && accept.split(",").some((part) => /;\s*as=Table/.test(part) && /;\s*g=meta\.k8s\.io/.test(part))

const tableApiVersion = (accept: string): string =>
  accept.split(",").find((p) => /;\s*as=Table/.test(p) && /;\s*v=v1(;|$|\s)/.test(p)) !== undefined ? "meta.k8s.io/v1" : "meta.k8s.io/v1beta1"

const toTable = (
  resource: ResourceType<unknown>,
  objects: ReadonlyArray<KubeObject>,
  listMeta: Record<string, unknown>,
  includeObject: string,
  apiVersion: string,
  now: number
) => {
  const columns = columnsFor(resource)
  return {
    kind: "Table",
    apiVersion,
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description,
      priority: c.priority ?? 0
    })),
    rows: objects.map((object) => {
      const full = { apiVersion: apiVersionOf(resource), kind: resource.kind, ...object } as Record<string, unknown>
      return {
        cells: columns.map((c) => c.cell(full, now)),
        object: includeObject === "None"
          ? null
          : includeObject === "Object"
          ? full
          : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: full.metadata }
      }
    })
  }
}

// ---------------------------------------------------------------------------
// Patches
// ---------------------------------------------------------------------------

/** RFC 7386 JSON merge patch. */
const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return patch
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else out[key] = mergePatch(out[key], value)
  }
  return out
}

class PatchFailure {
  constructor(readonly message: string) {}
}

const pointer = (text: string): Array<string> => {
  if (text === "") return []
  if (!text.startsWith("/")) throw new PatchFailure(`invalid JSON pointer: ${text}`)
  return text.slice(1).split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

/** RFC 6902 JSON patch. */
const jsonPatch = (document: unknown, operations: unknown): unknown => {
  if (!Array.isArray(operations)) throw new Refused(badRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch"))
  let doc = clone(document)
  const parentOf = (segments: Array<string>): [unknown, string] => {
    let node: unknown = doc
    for (const segment of segments.slice(0, -1)) {
      node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined
      if (node === undefined) throw new PatchFailure(`doc is missing path: ${segments.join("/")}`)
    }
    return [node, segments[segments.length - 1]!]
  }
  const read = (segments: Array<string>): unknown => {
    let node: unknown = doc
    for (const segment of segments) {
      node = Array.isArray(node) ? node[Number(segment)] : isObject(node) ? node[segment] : undefined
      if (node === undefined) throw new PatchFailure(`doc is missing path: /${segments.join("/")}`)
    }
    return node
  }
  const add = (segments: Array<string>, value: unknown) => {
    if (segments.length === 0) {
      doc = value
      return
    }
    const [parent, last] = parentOf(segments)
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last)
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new PatchFailure(`Unable to access invalid index: ${last}`)
      parent.splice(index, 0, value)
    } else if (isObject(parent)) {
      parent[last] = value
    } else {
      throw new PatchFailure(`doc is missing path: /${segments.join("/")}`)
    }
  }
  const remove = (segments: Array<string>) => {
    const [parent, last] = parentOf(segments)
    if (Array.isArray(parent)) {
      const index = Number(last)
      if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw new PatchFailure(`Unable to remove nonexistent key: ${last}: missing value`)
      parent.splice(index, 1)
    } else if (isObject(parent) && last in parent) {
      delete parent[last]
    } else {
      throw new PatchFailure(`Unable to remove nonexistent key: ${last}: missing value`)
    }
  }
  for (const op of operations) {
    if (!isObject(op) || typeof op.op !== "string" || typeof op.path !== "string") {
      throw new Refused(badRequest("the JSON patch operation is missing its op or path"))
    }
    const target = pointer(op.path)
    switch (op.op) {
      case "add":
        add(target, clone(op.value))
        break
      case "remove":
        remove(target)
        break
      case "replace":
        read(target)
        if (target.length === 0) doc = clone(op.value)
        else {
          remove(target)
          add(target, clone(op.value))
        }
        break
      case "move": {
        const from = pointer(String(op.from))
        const value = read(from)
        remove(from)
        add(target, value)
        break
      }
      case "copy":
        add(target, clone(read(pointer(String(op.from)))))
        break
      case "test":
        if (JSON.stringify(read(target)) !== JSON.stringify(op.value)) {
          throw new PatchFailure(`testing value /${target.join("/")} failed: test failed`)
        }
        break
      default:
        throw new Refused(badRequest(`Unexpected kind: ${op.op}`))
    }
  }
  return doc
}

// ---------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------

interface Target {
  readonly resource: ResourceType<KubeObject>
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
}

type Route =
  | { readonly _tag: "Reply"; readonly reply: Effect.Effect<Reply> }
  | { readonly _tag: "Resource"; readonly target: Target }

/** What one request will be counted as, once its routing is known; unset: not counted (a stopped server reads nothing). */
interface Counted {
  labels?: RequestLabels
  endLongRunning?: () => void
}

const resourcesIn = (group: string, version: string) =>
  (allResources as ReadonlyArray<ResourceType<KubeObject>>).filter((r) => r.group === group && r.version === version)

const groups = (): Array<string> => [...new Set(allResources.filter((r) => r.group !== "").map((r) => r.group))]

/** Starts the HTTP API on 127.0.0.1 for as long as the scope lives. */
export const serve = (options: HttpApiOptions): Effect.Effect<HttpApi, HttpApiError, Scope.Scope> =>
  Effect.gen(function*() {
    const { store } = options
    const faults = options.faults ?? (yield* makeFaults)
    const metrics = options.metrics ?? (yield* makeMetrics)
    const gitVersion = options.gitVersion ?? "v1.30.0"
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    const sockets = new Set<Socket>()
    let port = 0

    const served = (resource: ResourceType<KubeObject>) => store.isServed(resource)

    const servedIn = (group: string, version: string) =>
      Effect.filter(resourcesIn(group, version), served)

    const resourceList = (group: string, version: string) =>
      Effect.map(servedIn(group, version), (resources): Reply | undefined => {
        if (resources.length === 0) return undefined
        const list = resources.flatMap((r) => (r.statusSubresource ? [apiResource(r), statusResource(r)] : [apiResource(r)]))
        return json(200, {
          kind: "APIResourceList",
          ...(group === "" ? {} : { apiVersion: "v1" }),
          groupVersion: group === "" ? version : `${group}/${version}`,
          resources: list
        })
      })

    const apiGroup = (group: string) =>
      Effect.map(servedIn(group, "v1"), (resources) =>
        resources.length === 0
          ? undefined
          : { name: group, versions: [groupVersion(group, "v1")], preferredVersion: groupVersion(group, "v1") })

    const route = (segments: ReadonlyArray<string>, accept: string | undefined): Effect.Effect<Route> =>
      Effect.gen(function*() {
        const reply = (effect: Effect.Effect<Reply>): Route => ({ _tag: "Reply", reply: effect })
        const [root, ...rest] = segments
        if (root === "version" && rest.length === 0) {
          const [, major, minor] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? ["", "1", "30"]
          return reply(Effect.succeed(json(200, {
            major,
            minor,
            gitVersion,
            gitCommit: "0000000000000000000000000000000000000000",
            gitTreeState: "clean",
            buildDate: "2024-04-17T17:27:03Z",
            goVersion: "go1.22.2",
            compiler: "gc",
            platform: "linux/amd64"
          })))
        }
        if ((root === "healthz" || root === "livez" || root === "readyz") && rest.length === 0) {
          return reply(Effect.succeed({ code: 200, contentType: "text/plain; charset=utf-8", body: "ok" }))
        }
        if (root === "metrics" && rest.length === 0) {
          return reply(Effect.map(metrics.exposition, (body) => ({ code: 200, contentType: EXPOSITION_CONTENT_TYPE, body })))
        }
        if (root === "openapi" && rest.length === 1 && rest[0] === "v2") {
          return reply(Effect.succeed(
            accept !== undefined && accept.includes(OPENAPI_PROTOBUF)
              ? { code: 200, contentType: OPENAPI_PROTOBUF_RESPONSE, body: openApiProtobuf(gitVersion) }
              : json(200, { swagger: "2.0", info: { title: "Kubernetes", version: gitVersion }, paths: {}, definitions: {} })
          ))
        }
        if (root === "api") {
          if (rest.length === 0) {
            return reply(Effect.succeed(json(200, {
              kind: "APIVersions",
              versions: ["v1"],
              serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: `${HOST}:${port}` }]
            })))
          }
          if (rest[0] !== "v1") return reply(Effect.succeed(pageNotFound))
          if (rest.length === 1) return reply(Effect.map(resourceList("", "v1"), (r) => r ?? pageNotFound))
          return yield* resourceRoute("", "v1", rest.slice(1))
        }
        if (root === "apis") {
          if (rest.length === 0) {
            const list = yield* Effect.forEach(groups(), apiGroup)
            return reply(Effect.succeed(json(200, {
              kind: "APIGroupList",
              apiVersion: "v1",
              groups: list.filter((g) => g !== undefined)
            })))
          }
          const [group, version, ...more] = rest as [string, ...Array<string>]
          if (version === undefined) {
            const g = yield* apiGroup(group)
            return reply(Effect.succeed(g === undefined ? pageNotFound : json(200, { kind: "APIGroup", apiVersion: "v1", ...g })))
          }
          if (more.length === 0) return reply(Effect.map(resourceList(group, version), (r) => r ?? pageNotFound))
          return yield* resourceRoute(group, version, more)
        }
        return reply(Effect.succeed(pageNotFound))
      })

    const resourceRoute = (group: string, version: string, segments: ReadonlyArray<string>): Effect.Effect<Route> =>
      Effect.gen(function*() {
        const notFound: Route = { _tag: "Reply", reply: Effect.succeed(pageNotFound) }
        const known = resourcesIn(group, version)
        const find = (plural: string | undefined) => known.find((r) => r.plural === plural)
        let target: Target | undefined
        const [first, second, third, fourth, fifth, ...extra] = segments
        if (extra.length > 0) return notFound
        // `namespaces/<ns>/<plural>...` is a namespaced path unless it names a namespace's own subresource.
        const namespaced = first === "namespaces" && second !== undefined && third !== undefined && find(third)?.namespaced === true
        if (namespaced) {
          target = { resource: find(third)!, namespace: second, name: fourth, subresource: fifth }
        } else if (fourth === undefined) {
          const resource = find(first)
          if (resource === undefined) return notFound
          // A namespaced type without a namespace lists or watches across all of them.
          if (resource.namespaced && second !== undefined) return notFound
          target = { resource, namespace: undefined, name: second, subresource: third }
        } else {
          return notFound
        }
        if (target.subresource !== undefined && (target.subresource !== "status" || !target.resource.statusSubresource)) {
          return notFound
        }
        return { _tag: "Resource", target } as Route
      })

    // -- request handling ---------------------------------------------------------

    const readBody = (req: IncomingMessage): Effect.Effect<Buffer, Status> =>
      Effect.async<Buffer, Status>((resume) => {
        const chunks: Array<Buffer> = []
        let size = 0
        let done = false
        req.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_BODY_BYTES && !done) {
            done = true
            resume(Effect.fail(failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${MAX_BODY_BYTES}`)))
            return
          }
          chunks.push(chunk)
        })
        req.on("end", () => {
          if (!done) {
            done = true
            resume(Effect.succeed(Buffer.concat(chunks)))
          }
        })
        req.on("error", () => {
          if (!done) {
            done = true
            resume(Effect.fail(badRequest("the request body could not be read")))
          }
        })
      })

    const mediaType = (req: IncomingMessage): string =>
      (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

    const parseJson = (text: string): unknown => {
      try {
        return JSON.parse(text)
      } catch (e) {
        throw new Refused(badRequest(`couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`))
      }
    }

    const parseYamlOrJson = (text: string): unknown => {
      try {
        return parseYaml(text)
      } catch (e) {
        throw new Refused(badRequest(`error decoding YAML: ${e instanceof Error ? e.message : String(e)}`))
      }
    }

    const decodeObjectBody = (req: IncomingMessage, body: Buffer): KubeObject => {
      const type = mediaType(req)
      const text = body.toString("utf8")
      if (type === "" || type === "application/json" || type === "*/*") return parseJson(text) as KubeObject
      if (type === "application/yaml") return parseYamlOrJson(text) as KubeObject
      throw new Refused(unsupportedMediaType(["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]))
    }

    const dryRunOf = (query: URLSearchParams, optionsKind: string): boolean => {
      const values = query.getAll("dryRun")
      values.forEach((v, i) => {
        if (v !== "All") {
          throw new Refused(invalidOptions(optionsKind, `dryRun[${i}]`, "FieldValueNotSupported", `Unsupported value: "${v}": supported values: "All"`))
        }
      })
      return values.length > 0
    }

    const userAgentManager = (req: IncomingMessage): string => {
      const agent = req.headers["user-agent"] ?? ""
      const prefix = agent.split("/")[0]!.slice(0, 128)
      return prefix === "" ? "unknown" : prefix
    }

    const fieldManagerOf = (req: IncomingMessage, query: URLSearchParams): string =>
      query.get("fieldManager") ?? userAgentManager(req)

    const boolParam = (query: URLSearchParams, name: string): boolean | undefined => {
      const value = query.get(name)
      if (value === null) return undefined
      if (value === "true" || value === "1") return true
      if (value === "false" || value === "0" || value === "") return false
      throw new Refused(badRequest(`invalid value for ${name}: ${value}`))
    }

    const faultRequest = (verb: Verb, target: Target): FaultRequest => ({
      verb,
      resource: target.resource,
      ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      ...(target.name !== undefined ? { name: target.name } : {}),
      ...(target.subresource !== undefined ? { subresource: target.subresource } : {})
    })

    const objectReply = (code: number, object: unknown): Reply => json(code, object)

    const orStatus = <A>(effect: Effect.Effect<A, Status>, ok: (a: A) => Reply): Effect.Effect<Reply> =>
      Effect.match(effect, { onFailure: (status) => statusReply(status), onSuccess: ok })

    /** Merge and JSON patches: read, patch, write back with the read version as precondition, retry on a race. */
    const patchOnce = (
      target: Target & { readonly name: string },
      patch: (live: KubeObject) => KubeObject,
      write: (patched: KubeObject) => Effect.Effect<KubeObject, Status>
    ): Effect.Effect<KubeObject, Status> => {
      const once: Effect.Effect<KubeObject, { readonly status: Status; readonly retry: boolean }> = Effect.gen(function*() {
        const live = yield* Effect.mapError(
          store.get(target.resource, target.namespace, target.name),
          (status) => ({ status, retry: false })
        )
        let patched: KubeObject
        try {
          patched = patch(live)
        } catch (e) {
          if (e instanceof PatchFailure) return yield* Effect.fail({ status: failure(422, "Invalid", e.message), retry: false })
          throw e
        }
        if (!isObject(patched as unknown)) {
          return yield* Effect.fail({ status: badRequest("the patch did not produce an object"), retry: false })
        }
        // A patch that names a resourceVersion is a precondition; otherwise the version read is.
        const requested = patched.metadata?.resourceVersion
        const pinned = requested !== undefined && requested !== live.metadata?.resourceVersion
        const body = pinned
          ? patched
          : { ...patched, metadata: { ...patched.metadata, resourceVersion: live.metadata?.resourceVersion ?? "" } }
        return yield* Effect.mapError(write(body), (status) => ({ status, retry: status.code === 409 && !pinned }))
      })
      return once.pipe(
        Effect.retry({ while: (e) => e.retry, times: 5 }),
        Effect.mapError((e) => e.status)
      )
    }

    const handleResource = (
      req: IncomingMessage,
      res: ServerResponse,
      query: URLSearchParams,
      target: Target
    ): Effect.Effect<Reply | undefined> =>
      Effect.gen(function*() {
        const method = req.method ?? "GET"
        const { resource, namespace, name, subresource } = target
        const isWatch = method === "GET" && name === undefined && (query.get("watch") === "true" || query.get("watch") === "1")
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
        if ((method === "POST" && name !== undefined) || (method !== "POST" && method !== "GET" && method !== "DELETE" && name === undefined)) {
          return statusReply(methodNotAllowed())
        }
        if (subresource !== undefined && (method === "POST" || method === "DELETE")) return statusReply(methodNotAllowed())

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

        switch (verb) {
            case "get": {
              const now = yield* Clock.currentTimeMillis
              return yield* orStatus(store.get(resource, namespace, name!), (object) =>
                wantsTable(accept)
                  ? json(200, toTable(resource, [object], { resourceVersion: object.metadata?.resourceVersion }, query.get("includeObject") ?? "Metadata", tableApiVersion(accept!), now))
                  : objectReply(200, object))
            }
            case "list": {
              const limit = query.get("limit")
              const now = yield* Clock.currentTimeMillis
              return yield* orStatus(
                store.list(resource, namespace, {
                  ...(query.get("labelSelector") !== null ? { labelSelector: query.get("labelSelector")! } : {}),
                  ...(query.get("fieldSelector") !== null ? { fieldSelector: query.get("fieldSelector")! } : {}),
                  ...(limit !== null && /^\d+$/.test(limit) ? { limit: Number(limit) } : {}),
                  ...(query.get("continue") !== null ? { continue: query.get("continue")! } : {})
                }),
                (list: ObjectList<KubeObject>) =>
                  wantsTable(accept)
                    ? json(200, toTable(resource, list.items, list.metadata, query.get("includeObject") ?? "Metadata", tableApiVersion(accept!), now))
                    : objectReply(200, list)
              )
            }
            case "watch":
              return yield* watch(accept, res, query, target, decision)
            case "create": {
              const dryRun = dryRunOf(query, "CreateOptions")
              const object = decodeObjectBody(req, bytes)
              return yield* orStatus(
                store.create(resource, namespace, object, { dryRun, fieldManager: fieldManagerOf(req, query) }),
                (created) => objectReply(201, created)
              )
            }
            case "update": {
              const dryRun = dryRunOf(query, "UpdateOptions")
              const object = decodeObjectBody(req, bytes)
              const options = { dryRun, fieldManager: fieldManagerOf(req, query) }
              if (subresource === "status") {
                return yield* orStatus(store.replaceStatus(resource, namespace, name!, object, options), (o) => objectReply(200, o))
              }
              return yield* orStatus(store.replace(resource, namespace, name!, object, options), (r) => objectReply(r.created ? 201 : 200, r.object))
            }
            case "patch":
              return yield* patch(req, query, target as Target & { name: string }, bytes)
            case "delete": {
              const deleteOptions = deleteOptionsOf(query, bytes)
              return yield* orStatus(store.delete(resource, namespace, name!, deleteOptions), (result) => {
                if ("status" in result) {
                  // A successful delete's Status carries no code on the wire.
                  const { code: _code, ...status } = result.status
                  return json(200, status)
                }
                const meta = result.object.metadata as { deletionTimestamp?: string; finalizers?: ReadonlyArray<string> } | undefined
                const pending = meta?.deletionTimestamp !== undefined && (meta.finalizers ?? []).length > 0
                // The server answers 202 for a delete it could not finish only when the client
                // asked for cascading deletion with orphanDependents=false; otherwise 200.
                return objectReply(pending && orphanDependentsOf(query, bytes) === false ? 202 : 200, result.object)
              })
            }
            case "deletecollection": {
              const deleteOptions = deleteOptionsOf(query, bytes)
              return yield* orStatus(
                Effect.gen(function*() {
                  const list = yield* store.list(resource, namespace, {
                    ...(query.get("labelSelector") !== null ? { labelSelector: query.get("labelSelector")! } : {}),
                    ...(query.get("fieldSelector") !== null ? { fieldSelector: query.get("fieldSelector")! } : {})
                  })
                  const deleted: Array<KubeObject> = []
                  for (const item of list.items) {
                    const result = yield* Effect.either(store.delete(resource, item.metadata?.namespace, item.metadata?.name ?? "", deleteOptions))
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
        Effect.catchAllDefect((defect) => defect instanceof Refused ? Effect.succeed(statusReply(defect.status)) : Effect.die(defect))
      )

    const deleteOptionsOf = (query: URLSearchParams, bytes: Buffer): DeleteOptions => {
      let dryRun = dryRunOf(query, "DeleteOptions")
      let preconditions: { uid?: string; resourceVersion?: string } | undefined
      if (bytes.length > 0) {
        const parsed = parseJson(bytes.toString("utf8"))
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
      }
      return { dryRun, ...(preconditions !== undefined ? { preconditions } : {}) }
    }

    /** `orphanDependents` of the query or the DeleteOptions body, the one option that picks a delete's 202. */
    const orphanDependentsOf = (query: URLSearchParams, bytes: Buffer): boolean | undefined => {
      const fromQuery = boolParam(query, "orphanDependents")
      if (fromQuery !== undefined) return fromQuery
      if (bytes.length === 0) return undefined
      const parsed = parseJson(bytes.toString("utf8"))
      return isObject(parsed) && typeof parsed.orphanDependents === "boolean" ? parsed.orphanDependents : undefined
    }

    const patch = (req: IncomingMessage, query: URLSearchParams, target: Target & { readonly name: string }, bytes: Buffer) =>
      Effect.gen(function*() {
        const type = mediaType(req)
        const { resource, namespace, name, subresource } = target
        // The media type is checked before any option. Custom resources have no Go struct
        // tags to merge by: their handler does not offer strategic merge at all.
        const accepted = resource.custom
          ? ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
          : ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
        if (!accepted.includes(type)) return statusReply(unsupportedMediaType(accepted))
        const text = bytes.toString("utf8")
        const dryRun = dryRunOf(query, "PatchOptions")
        const force = boolParam(query, "force")
        if (type === "application/apply-patch+yaml") {
          if (subresource === "status") {
            return statusReply(failure(415, "UnsupportedMediaType", "LocalCluster does not serve apply patches on the status subresource; use a merge patch or PUT"))
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
          return statusReply(invalidOptions("PatchOptions", "force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch"))
        }
        let apply: (live: KubeObject) => KubeObject
        if (type === "application/merge-patch+json" || type === "application/strategic-merge-patch+json") {
          const patchDoc = parseJson(text)
          if (!isObject(patchDoc)) return statusReply(badRequest("the merge patch must be a JSON object"))
          apply = (live) => mergePatch(live, patchDoc) as KubeObject
        } else if (type === "application/json-patch+json") {
          const operations = parseJson(text)
          apply = (live) => jsonPatch(live, operations) as KubeObject
        } else {
          return statusReply(unsupportedMediaType(accepted))
        }
        const options = { dryRun, fieldManager: fieldManagerOf(req, query) }
        const write = (patched: KubeObject) =>
          subresource === "status"
            ? store.replaceStatus(resource, namespace, name, patched, options)
            : Effect.map(store.replace(resource, namespace, name, patched, options), (r) => r.object)
        return yield* orStatus(patchOnce(target, apply, write), (o) => objectReply(200, o))
      })

    const watch = (
      acceptHeader: string | undefined,
      res: ServerResponse,
      query: URLSearchParams,
      target: Target,
      decision: Decision
    ): Effect.Effect<Reply | undefined> =>
      Effect.gen(function*() {
        // Problems the real server reports before it starts streaming.
        const labelSelector = query.get("labelSelector") ?? undefined
        const fieldSelector = query.get("fieldSelector") ?? undefined
        if (labelSelector !== undefined && labelSelector !== "") {
          const parsed = parseLabelSelector(labelSelector)
          if (parsed instanceof SelectorError) return statusReply(badRequest(parsed.message))
        }
        if (fieldSelector !== undefined) {
          const parsed = parseFieldSelector(fieldSelector)
          if (parsed instanceof SelectorError) return statusReply(badRequest(parsed.message))
        }
        const resourceVersion = query.get("resourceVersion") ?? undefined
        if (resourceVersion !== undefined && resourceVersion !== "" && !/^\d+$/.test(resourceVersion)) {
          return statusReply(badRequest(`resourceVersion: Invalid value: "${resourceVersion}": strconv.ParseUint: parsing "${resourceVersion}": invalid syntax`))
        }
        const timeoutParam = query.get("timeoutSeconds")
        // GetTimeoutForWatch: `timeoutSeconds=0` is the same as none, the server's random default.
        const timeoutSeconds = timeoutParam !== null && /^\d+$/.test(timeoutParam) && Number(timeoutParam) > 0
          ? Number(timeoutParam)
          : MIN_REQUEST_TIMEOUT_SECONDS * (1 + (yield* Random.next))
        const allowWatchBookmarks = boolParam(query, "allowWatchBookmarks") === true

        const events = shapeWatch(
          store.watch(target.resource, target.namespace, {
            ...(labelSelector !== undefined ? { labelSelector } : {}),
            ...(fieldSelector !== undefined ? { fieldSelector } : {}),
            ...(resourceVersion !== undefined ? { resourceVersion } : {}),
            allowWatchBookmarks
          }),
          decision,
          resourceVersion
        )

        yield* whenAnswering(
          res,
          Effect.sync(() => {
            res.writeHead(200, {
              "content-type": "application/json",
              "cache-control": "no-cache, private",
              "audit-id": randomUUID(),
              "transfer-encoding": "chunked"
            })
            // client-node resolves a watch only once headers arrive: send them before any event.
            res.flushHeaders()
          })
        )
        const write = (line: string) =>
          whenAnswering(
            res,
            Effect.async<void>((resume) => {
              if (res.write(line)) resume(Effect.void)
              else res.once("drain", () => resume(Effect.void))
            })
          )
        const accept = wantsTable(acceptHeader) ? acceptHeader! : undefined
        const includeObject = query.get("includeObject") ?? "Metadata"
        // A watch that asked for Tables gets each object as a one-row Table, as kubectl -w expects.
        const render = (event: StoreWatchEvent): Effect.Effect<unknown> =>
          accept !== undefined && (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED")
            ? Effect.map(Clock.currentTimeMillis, (now) => ({
              type: event.type,
              object: toTable(target.resource, [event.object], { resourceVersion: event.object.metadata?.resourceVersion ?? "" }, includeObject, tableApiVersion(accept), now)
            }))
            : Effect.succeed(event)
        yield* events.pipe(
          Stream.runForEach((event) => Effect.flatMap(render(event), (wire) => write(`${JSON.stringify(wire)}\n`))),
          Effect.catchAll((status) => write(`${JSON.stringify({ type: "ERROR", object: status })}\n`)),
          Effect.timeoutOption(Duration.seconds(timeoutSeconds))
        )
        yield* whenAnswering(res, Effect.sync(() => res.end()))
        return undefined
      })

    /**
     * Bytes leave only while the server answers: a paused one holds them back (the
     * connection stays up), and a stopped one has lost the connection.
     */
    const whenAnswering = (res: ServerResponse, effect: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.flatMap(faults.server.awaitAnswering, (state) =>
        state === "running" ? effect : Effect.zipRight(Effect.sync(() => res.destroy()), Effect.interrupt))

    const send = (res: ServerResponse, reply: Reply) => {
      if (res.headersSent || res.destroyed) return
      const body = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : Buffer.from(reply.body)
      res.writeHead(reply.code, {
        "content-type": reply.contentType,
        "content-length": String(body.length),
        "cache-control": "no-cache, private",
        "audit-id": randomUUID(),
        ...reply.headers
      })
      res.end(body)
    }

    const handle = (req: IncomingMessage, res: ServerResponse, counted: Counted): Effect.Effect<void> =>
      Effect.gen(function*() {
        // A paused server reads nothing, discovery and health checks included.
        if ((yield* faults.server.awaitAnswering) === "stopped") {
          res.destroy()
          return
        }
        const url = new URL(req.url ?? "/", `http://${HOST}`)
        const segments = url.pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
        const routed = yield* route(segments, req.headers.accept)
        const method = req.method ?? "GET"
        counted.labels = labelsOf(req, url, routed)
        if (counted.labels.verb === "WATCH") counted.endLongRunning = metrics.startLongRunning(counted.labels)
        if (routed._tag === "Reply") {
          const reply = yield* routed.reply
          // Discovery is read-only; a path nothing serves stays the plain 404 whatever the method.
          const answer = method === "GET" || method === "HEAD" || reply === pageNotFound ? reply : statusReply(methodNotAllowed())
          return yield* whenAnswering(res, Effect.sync(() => send(res, answer)))
        }
        const reply = yield* handleResource(req, res, url.searchParams, routed.target)
        if (reply !== undefined) yield* whenAnswering(res, Effect.sync(() => send(res, reply)))
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : whenAnswering(
              res,
              Effect.sync(() =>
                send(res, statusReply(failure(500, "InternalError", `Internal error occurred: ${Cause.pretty(cause).split("\n")[0]}`)))
              )
            )
        )
      )

    /**
     * The apiserver's labels for a request: a resource path by its type and verb rules,
     * anything else (discovery, /version, /metrics, a path nothing serves) by its path.
     */
    const labelsOf = (req: IncomingMessage, url: URL, routed: Route): RequestLabels => {
      const method = req.method ?? "GET"
      if (routed._tag === "Reply") return nonResourceRequestLabels(method, url.pathname)
      const { name, namespace, resource, subresource } = routed.target
      const watch = url.searchParams.get("watch")
      return resourceRequestLabels({
        method,
        contentType: mediaType(req),
        watch: watch === "true" || watch === "1",
        group: resource.group,
        version: resource.version,
        resource: resource.plural,
        namespace,
        name,
        subresource,
        dryRun: url.searchParams.getAll("dryRun")
      })
    }

    const server = createServer((req, res) => {
      const counted: Counted = {}
      const fiber = run(handle(req, res, counted))
      res.on("close", () => {
        // A client that goes away (a watch closed, a request aborted) ends its handler.
        fiber.unsafeInterruptAsFork(FiberId.none)
        // Counted as it ends, as the apiserver does: a watch when it closes, and a
        // request that never got a status line with code 0.
        counted.endLongRunning?.()
        if (counted.labels !== undefined) metrics.recordRequest(counted.labels, res.headersSent ? res.statusCode : 0)
      })
    })
    server.keepAliveTimeout = IDLE_TIMEOUT_MS
    server.on("connection", (socket) => {
      sockets.add(socket)
      const closed = metrics.connectionAccepted()
      socket.on("close", () => {
        sockets.delete(socket)
        closed()
      })
    })

    const listen = (on: number) =>
      Effect.async<number, HttpApiError>((resume) => {
        const onError = (cause: Error) => resume(Effect.fail(new HttpApiError({ reason: `cannot listen on ${HOST}:${on}: ${cause.message}`, cause })))
        server.once("error", onError)
        server.listen(on, HOST, () => {
          server.off("error", onError)
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      })

    // Connections in progress are destroyed, not drained: a killed process says nothing
    // more, and its clients see resets (and refusals once the listener is gone).
    const close = Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      for (const socket of sockets) socket.destroy()
    })

    port = yield* listen(options.port ?? 0)
    yield* Effect.addFinalizer(() => close)
    yield* faults.server.attach({
      stop: close,
      // The same port, so a kubeconfig written before the restart still reaches it.
      restart: Effect.asVoid(
        Effect.mapError(listen(port), (e) => new RestartError({ reason: `the API server cannot restart: ${e.reason}`, cause: e }))
      )
    })
    return { url: `http://${HOST}:${port}`, port, metrics }
  })
