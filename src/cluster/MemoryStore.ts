/**
 * LocalCluster's object store: the API server's write, read and watch semantics for
 * the resources in `domain/Resources`, in memory. Every rule a client can observe
 * (versions, generations, status subresource, apply ownership, watch windows) and
 * every failure's Status body follow the real server.
 */
import { randomInt, randomUUID } from "node:crypto"
import { Clock, DateTime, Duration, Effect, Option, Queue, Schedule, Stream } from "effect"
import type { KubeObject, ManagedFieldsEntry, ObjectList, ObjectMeta, Status } from "../domain/Objects.js"
import {
  allResources,
  apiVersionOf,
  IngressResource,
  NamespaceResource,
  qualifiedName,
  type ResourceType,
  ServiceResource
} from "../domain/Resources.js"
import { type FieldError, invalidStatus, validateObject, withSchemaDefaults } from "../domain/Validation.js"
import {
  everything,
  type FieldRequirement,
  type LabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError
} from "./LabelSelector.js"
import {
  applyDefaults,
  conflictReport,
  decodeManagers,
  decodeProblem,
  encodeManagers,
  isObject,
  jsonEqual,
  type Managers,
  mergeApplied,
  prune,
  recordUpdate,
  settleApply,
  shapeOf
} from "./ServerSideApply.js"
import type {
  ApplyOptions,
  ClusterStore,
  DeleteOptions,
  DeleteResult,
  ListOptions,
  StoreWatchEvent,
  WatchOptions,
  WriteOptions,
  WriteResult
} from "./Store.js"

/** How a store is set up. */
export interface MemoryStoreOptions {
  /** Namespaces to create up front, besides the four every cluster has. */
  readonly namespaces?: ReadonlyArray<string>
  /**
   * Watch events kept per resource type. A watch (or a list continuation) from a
   * resourceVersion older than the window answers 410 Expired. Default 1000.
   */
  readonly watchHistory?: number
  /** How often a watch that allows bookmarks gets one. Default one minute, as the server. */
  readonly bookmarkInterval?: Duration.DurationInput
  /** Resource types not served from the start (e.g. Gateway API CRDs not installed). */
  readonly unserved?: ReadonlyArray<ResourceType<KubeObject>>
  /** The field manager of writes that name none (the server derives it from the User-Agent). */
  readonly defaultFieldManager?: string
}

/** The store plus what only a local cluster can do. */
export interface MemoryStore extends ClusterStore {
  /** Forgets the watch history of every type, as an etcd compaction does: older versions answer 410. */
  readonly compact: Effect.Effect<void>
  /** The newest resourceVersion handed out. */
  readonly resourceVersion: Effect.Effect<string>
}

/** Namespaces every cluster has, and the ones it refuses to delete. */
const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"]
const UNDELETABLE_NAMESPACES = new Set(["default", "kube-system", "kube-public"])

const OPTIMISTIC_LOCK_MESSAGE =
  "the object has been modified; please apply your changes to the latest version and try again"

// ---------------------------------------------------------------------------
// Status bodies
// ---------------------------------------------------------------------------

const failure = (code: number, reason: string | undefined, message: string, details?: Status["details"]): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  ...(reason !== undefined ? { reason } : {}),
  ...(details !== undefined ? { details } : {}),
  code
})

const resourceDetails = (resource: ResourceType<unknown>, name: string): NonNullable<Status["details"]> => ({
  name,
  ...(resource.group !== "" ? { group: resource.group } : {}),
  kind: resource.plural
})

/** 404 for a missing object: `ingresses.networking.k8s.io "x" not found`. */
export const notFoundStatus = (resource: ResourceType<unknown>, name: string): Status =>
  failure(404, "NotFound", `${qualifiedName(resource)} "${name}" not found`, resourceDetails(resource, name))

const namespaceNotFound = (namespace: string): Status => notFoundStatus(NamespaceResource, namespace)

/** What the store answers for a type it does not serve; over HTTP it is a plain-text 404 instead. */
const notServedStatus = (): Status => failure(404, "NotFound", "the server could not find the requested resource", {})

const alreadyExists = (resource: ResourceType<unknown>, name: string): Status =>
  failure(409, "AlreadyExists", `${qualifiedName(resource)} "${name}" already exists`, resourceDetails(resource, name))

const conflict = (resource: ResourceType<unknown>, name: string, why = OPTIMISTIC_LOCK_MESSAGE): Status =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedName(resource)} "${name}": ${why}`,
    resourceDetails(resource, name)
  )

const badRequest = (message: string): Status => failure(400, "BadRequest", message)

const expired = (message: string): Status => failure(410, "Expired", message)

/** A 422 for request options (`PatchOptions.meta.k8s.io "" is invalid: ...`). */
const invalidOptions = (kind: string, errors: ReadonlyArray<FieldError>): Status =>
  failure(
    422,
    "Invalid",
    `${kind}.meta.k8s.io "" is invalid: ${
      errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `[${errors.map((e) => `${e.field}: ${e.message}`).join(", ")}]`
    }`,
    { group: "meta.k8s.io", kind, causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })) }
  )

// Thrown inside the synchronous body of an operation and turned into its failure.
class Refusal {
  constructor(readonly status: Status) {}
}
const refuse = (status: Status): never => {
  throw new Refusal(status)
}

const attempt = <A>(body: () => A): Effect.Effect<A, Status> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(body())
    } catch (e) {
      if (e instanceof Refusal) return Effect.fail(e.status)
      throw e
    }
  })

// ---------------------------------------------------------------------------
// Object helpers
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>

const metaOf = (object: KubeObject | undefined): ObjectMeta => object?.metadata ?? {}
const asJson = (object: KubeObject): Json => object as unknown as Json
const withMeta = (object: KubeObject, meta: Json): KubeObject => ({ ...object, metadata: meta as ObjectMeta })

const rfc3339 = (millis: number): string =>
  DateTime.formatIso(DateTime.unsafeMake(Math.floor(millis / 1000) * 1000)).replace(".000Z", "Z")

const objectKey = (resource: ResourceType<unknown>, namespace: string | undefined, name: string): string =>
  resource.namespaced ? `${namespace ?? ""}/${name}` : name

const resourceId = (resource: ResourceType<unknown>): string => qualifiedName(resource)

/** Top-level keys in the order the server writes them, for readable output. */
const ordered = (object: KubeObject): KubeObject => {
  const json = asJson(object)
  const out: Json = {}
  for (const key of ["apiVersion", "kind", "metadata", "spec"]) if (json[key] !== undefined) out[key] = json[key]
  for (const [key, value] of Object.entries(json)) if (!(key in out) && key !== "status") out[key] = value
  if (json.status !== undefined) out.status = json.status
  const meta = json.metadata
  if (isObject(meta)) {
    const m: Json = {}
    for (const key of META_ORDER) if (meta[key] !== undefined) m[key] = meta[key]
    for (const [key, value] of Object.entries(meta)) if (!(key in m)) m[key] = value
    out.metadata = m
  }
  return out as KubeObject
}
const META_ORDER = [
  "name",
  "generateName",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields"
]

const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
const generatedName = (prefix: string): string => {
  let suffix = ""
  for (let i = 0; i < 5; i++) suffix += GENERATE_NAME_ALPHABET[randomInt(GENERATE_NAME_ALPHABET.length)]
  return `${prefix}${suffix}`
}

/** Everything but metadata and status: what a generation counts. */
const specPart = (object: KubeObject | undefined): Json => {
  const out: Json = {}
  for (const [k, v] of Object.entries(object === undefined ? {} : asJson(object))) {
    if (k !== "metadata" && k !== "status" && k !== "apiVersion" && k !== "kind") out[k] = v
  }
  return out
}

// ---------------------------------------------------------------------------
// Watch history
// ---------------------------------------------------------------------------

interface HistoryEvent {
  readonly rv: number
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: KubeObject
  readonly previous: KubeObject | undefined
}

type Signal = { readonly _tag: "Event"; readonly event: HistoryEvent } | { readonly _tag: "Bookmark"; readonly rv: number }

interface Watcher {
  readonly queue: Queue.Queue<Signal>
}

interface Bucket {
  readonly resource: ResourceType<KubeObject>
  readonly objects: Map<string, KubeObject>
  history: Array<HistoryEvent>
  /** The version the window starts after while nothing was evicted. */
  windowStart: number
  evicted: boolean
  readonly watchers: Set<Watcher>
  served: boolean
}

interface ContinueToken {
  readonly rv: number
  readonly start: string
}

const encodeContinue = (token: ContinueToken): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })).toString("base64url")

const decodeContinue = (text: string): ContinueToken | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
    if (!isObject(parsed) || parsed.v !== "meta.k8s.io/v1") return undefined
    if (typeof parsed.rv !== "number" || typeof parsed.start !== "string") return undefined
    return { rv: parsed.rv, start: parsed.start }
  } catch {
    return undefined
  }
}

const CONTINUE_TOO_OLD =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// ---------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------

/** A store with the API server's semantics, holding the namespaces every cluster has plus `options.namespaces`. */
export const makeMemoryStore = (options: MemoryStoreOptions = {}): Effect.Effect<MemoryStore> =>
  Effect.gen(function*() {
    const historyLimit = Math.max(1, options.watchHistory ?? 1000)
    const bookmarkInterval = Duration.decode(options.bookmarkInterval ?? "1 minute")
    const defaultManager = options.defaultFieldManager ?? "unknown"
    let revision = 0
    const buckets = new Map<string, Bucket>()
    const allocatedIps = new Set<string>()
    const allocatedNodePorts = new Set<number>()

    const bucketOf = (resource: ResourceType<KubeObject>): Bucket => {
      const id = resourceId(resource)
      let bucket = buckets.get(id)
      if (bucket === undefined) {
        bucket = {
          resource,
          objects: new Map(),
          history: [],
          windowStart: revision,
          evicted: false,
          watchers: new Set(),
          served: true
        }
        buckets.set(id, bucket)
      }
      return bucket
    }
    for (const resource of allResources) bucketOf(resource as ResourceType<KubeObject>)
    for (const resource of options.unserved ?? []) bucketOf(resource).served = false

    const servedBucket = (resource: ResourceType<KubeObject>): Bucket => {
      const bucket = bucketOf(resource)
      if (!bucket.served) refuse(notServedStatus())
      return bucket
    }

    const oldestAvailable = (bucket: Bucket): number =>
      bucket.evicted && bucket.history.length > 0 ? bucket.history[0]!.rv : bucket.windowStart + 1

    const record = (bucket: Bucket, event: HistoryEvent): void => {
      bucket.history.push(event)
      if (bucket.history.length > historyLimit) {
        bucket.history.shift()
        bucket.evicted = true
      }
      for (const watcher of bucket.watchers) Queue.unsafeOffer(watcher.queue, { _tag: "Event", event })
    }

    const namespaceExists = (namespace: string): boolean => bucketOf(NamespaceResource as ResourceType<KubeObject>).objects.has(namespace)

    // -- request checks -------------------------------------------------------

    /** The body as the endpoint decodes it: kind and apiVersion checked, types checked for built-ins. */
    const decodeBody = (resource: ResourceType<KubeObject>, body: unknown, requireKind: boolean): Json => {
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
            `the API version in the data (${String(apiVersion)}) does not match the expected API version (${expectedVersion})`
          )
        )
      }
      if (kind !== undefined && kind !== resource.kind) {
        refuse(
          badRequest(
            `${String(kind)} in version "${resource.version}" cannot be handled as a ${resource.kind}: the kind in the data (${
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
        refuse(badRequest(`${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: ${problem}`))
      }
      return { ...json, apiVersion: expectedVersion, kind: resource.kind }
    }

    const checkNamespace = (resource: ResourceType<KubeObject>, namespace: string | undefined, body: Json, onCreate: boolean): string | undefined => {
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

    const checkName = (body: Json, name: string): void => {
      const meta = isObject(body.metadata) ? body.metadata : {}
      const bodyName = typeof meta.name === "string" ? meta.name : ""
      if (bodyName !== name) {
        refuse(badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`))
      }
    }

    const requireNamespace = (resource: ResourceType<KubeObject>, namespace: string | undefined): void => {
      if (resource.namespaced && namespace !== undefined && !namespaceExists(namespace)) refuse(namespaceNotFound(namespace))
    }

    const validate = (resource: ResourceType<KubeObject>, object: KubeObject, extra: ReadonlyArray<FieldError> = []): void => {
      const errors = [...extra, ...validateObject(resource, object)]
      if (errors.length > 0) refuse(invalidStatus(resource, metaOf(object).name ?? "", errors))
    }

    // -- shaping what is stored --------------------------------------------------

    /** Unknown fields and nulls dropped; for built-ins, empty lists and maps too. */
    const pruned = (resource: ResourceType<KubeObject>, object: Json): Json => {
      const shape = shapeOf(resource)
      const out = prune(object, shape, !resource.custom) as Json
      if (isObject(out.metadata) && shape._tag === "Struct") {
        out.metadata = prune(out.metadata, shape.fields.metadata!, true)
      }
      return out
    }

    /** The defaults the server fills in: the CRD schema's, and the built-in types' own. */
    const defaulted = (resource: ResourceType<KubeObject>, object: KubeObject): KubeObject => {
      let out = applyDefaults(withSchemaDefaults(resource, object), shapeOf(resource)) as KubeObject
      if (resource === ServiceResource) out = serviceDefaults(out)
      if (resource === NamespaceResource) out = namespaceDefaults(out)
      if (resource === IngressResource) out = ingressDefaults(out)
      return out
    }

    // The Go type's status is a struct, never absent: `{ loadBalancer: {} }` until a controller writes.
    const ingressDefaults = (object: KubeObject): KubeObject => {
      const status = asJson(object).status
      const current = isObject(status) ? status : {}
      return { ...object, status: { ...current, loadBalancer: isObject(current.loadBalancer) ? current.loadBalancer : {} } } as KubeObject
    }

    const namespaceDefaults = (object: KubeObject): KubeObject => {
      const json = asJson(object)
      const meta = metaOf(object)
      const spec = isObject(json.spec) ? json.spec : {}
      const status = isObject(json.status) ? json.status : {}
      return {
        ...object,
        metadata: { ...meta, labels: { ...meta.labels, "kubernetes.io/metadata.name": meta.name ?? "" } },
        spec: { ...spec, finalizers: Array.isArray(spec.finalizers) ? spec.finalizers : ["kubernetes"] },
        status: { ...status, phase: typeof status.phase === "string" ? status.phase : "Active" }
      } as KubeObject
    }

    const serviceDefaults = (object: KubeObject): KubeObject => {
      const json = asJson(object)
      const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
      const type = typeof spec.type === "string" && spec.type !== "" ? spec.type : "ClusterIP"
      spec.type = type
      if (spec.sessionAffinity === undefined) spec.sessionAffinity = "None"
      if (Array.isArray(spec.ports)) {
        spec.ports = spec.ports.map((p: unknown) => {
          if (!isObject(p)) return p
          const port: Json = { ...p }
          if (port.protocol === undefined) port.protocol = "TCP"
          if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") port.targetPort = port.port
          return port
        })
      }
      if (type !== "ExternalName") {
        if (spec.internalTrafficPolicy === undefined) spec.internalTrafficPolicy = "Cluster"
      }
      if ((type === "NodePort" || type === "LoadBalancer") && spec.externalTrafficPolicy === undefined) {
        spec.externalTrafficPolicy = "Cluster"
      }
      if (type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts === undefined) {
        spec.allocateLoadBalancerNodePorts = true
      }
      const status = isObject(json.status) ? json.status : {}
      return { ...object, spec, status: { ...status, loadBalancer: isObject(status.loadBalancer) ? status.loadBalancer : {} } } as KubeObject
    }

    /** Cluster IPs and node ports, which the registry allocates after admission; kept across updates. */
    const allocate = (resource: ResourceType<KubeObject>, object: KubeObject, live: KubeObject | undefined, commit: boolean): KubeObject => {
      if (resource !== ServiceResource) return object
      const json = asJson(object)
      const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
      const liveSpec = live === undefined ? {} : (asJson(live).spec as Json | undefined) ?? {}
      const type = spec.type
      if (type === "ExternalName") return object
      if (spec.clusterIP === undefined || spec.clusterIP === "") {
        if (typeof liveSpec.clusterIP === "string" && liveSpec.clusterIP !== "") {
          spec.clusterIP = liveSpec.clusterIP
        } else {
          spec.clusterIP = nextIp(commit)
        }
      }
      if (spec.clusterIPs === undefined) spec.clusterIPs = [spec.clusterIP]
      if (spec.clusterIP !== "None" || spec.ipFamilies === undefined) {
        if (spec.ipFamilies === undefined) spec.ipFamilies = liveSpec.ipFamilies ?? ["IPv4"]
      }
      if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = liveSpec.ipFamilyPolicy ?? "SingleStack"
      if ((type === "NodePort" || type === "LoadBalancer") && Array.isArray(spec.ports)) {
        const livePorts = Array.isArray(liveSpec.ports) ? (liveSpec.ports as Array<Json>) : []
        spec.ports = spec.ports.map((p: unknown) => {
          if (!isObject(p) || (typeof p.nodePort === "number" && p.nodePort !== 0)) return p
          const same = livePorts.find((l) => l.port === p.port && (l.protocol ?? "TCP") === (p.protocol ?? "TCP"))
          return { ...p, nodePort: typeof same?.nodePort === "number" ? same.nodePort : nextNodePort(commit) }
        })
      }
      return { ...object, spec } as KubeObject
    }

    const nextIp = (commit: boolean): string => {
      for (let n = 10; n < 65536 * 16; n++) {
        const ip = `10.${96 + Math.floor(n / 65536)}.${Math.floor(n / 256) % 256}.${n % 256}`
        if (!allocatedIps.has(ip)) {
          if (commit) allocatedIps.add(ip)
          return ip
        }
      }
      return refuse(failure(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full"))
    }

    const nextNodePort = (commit: boolean): number => {
      for (let port = 30000; port <= 32767; port++) {
        if (!allocatedNodePorts.has(port)) {
          if (commit) allocatedNodePorts.add(port)
          return port
        }
      }
      return refuse(failure(500, "InternalError", "Internal error occurred: failed to allocate a nodePort: range is full"))
    }

    const release = (object: KubeObject): void => {
      const spec = asJson(object).spec
      if (!isObject(spec)) return
      if (typeof spec.clusterIP === "string") allocatedIps.delete(spec.clusterIP)
      if (Array.isArray(spec.ports)) {
        for (const p of spec.ports) if (isObject(p) && typeof p.nodePort === "number") allocatedNodePorts.delete(p.nodePort)
      }
    }

    // -- committing -------------------------------------------------------------

    const commitWrite = (bucket: Bucket, key: string, object: KubeObject, previous: KubeObject | undefined): KubeObject => {
      revision += 1
      const stored = ordered(withMeta(object, { ...metaOf(object), resourceVersion: String(revision) }))
      bucket.objects.set(key, stored)
      record(bucket, { rv: revision, type: previous === undefined ? "ADDED" : "MODIFIED", object: stored, previous })
      return stored
    }

    const commitDelete = (bucket: Bucket, key: string, object: KubeObject): void => {
      revision += 1
      bucket.objects.delete(key)
      if (bucket.resource === ServiceResource) release(object)
      const last = withMeta(object, { ...metaOf(object), resourceVersion: String(revision) })
      record(bucket, { rv: revision, type: "DELETED", object: last, previous: object })
    }

    // -- create -----------------------------------------------------------------

    interface Prepared {
      readonly object: KubeObject
      readonly key: string
      readonly namespace: string | undefined
    }

    /** Everything a create does before storing, shared by POST, PUT-to-create and apply-to-create. */
    const prepareCreate = (
      resource: ResourceType<KubeObject>,
      namespace: string | undefined,
      body: Json,
      now: string,
      ownership: (object: KubeObject) => Managers,
      dryRun: boolean
    ): Prepared => {
      const bucket = servedBucket(resource)
      // Admission finds the request's namespace missing before anything looks at the body.
      requireNamespace(resource, namespace)
      const ns = checkNamespace(resource, namespace, body, true)
      requireNamespace(resource, ns)
      const inMeta: Json = isObject(body.metadata) ? { ...body.metadata } : {}
      if ((typeof inMeta.name !== "string" || inMeta.name === "") && typeof inMeta.generateName === "string" && inMeta.generateName !== "") {
        inMeta.name = generatedName(inMeta.generateName)
      }
      if (resource.namespaced) {
        if (ns !== undefined) inMeta.namespace = ns
      } else {
        delete inMeta.namespace
      }
      const requestedVersion = inMeta.resourceVersion
      // Identity and bookkeeping are the server's: whatever the client sent is replaced.
      for (const field of ["uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "resourceVersion"]) {
        delete inMeta[field]
      }
      const withoutStatus: Json = { ...body, metadata: inMeta }
      if (resource.statusSubresource) delete withoutStatus.status
      let object = defaulted(resource, pruned(resource, withoutStatus) as KubeObject)
      validate(resource, object)
      if (requestedVersion !== undefined && requestedVersion !== "") {
        refuse(failure(500, undefined, "resourceVersion should not be set on objects to be created"))
      }
      const name = metaOf(object).name ?? ""
      const key = objectKey(resource, ns, name)
      if (bucket.objects.has(key)) refuse(alreadyExists(resource, name))
      const meta: Json = {
        ...metaOf(object),
        uid: randomUUID(),
        ...(resource.hasGeneration ? { generation: 1 } : {}),
        creationTimestamp: now
      }
      object = withMeta(object, meta)
      const managedFields = encodeManagers(ownership(object))
      object = withMeta(object, { ...meta, ...(managedFields.length > 0 ? { managedFields } : {}) })
      object = allocate(resource, object, undefined, !dryRun)
      return { object: ordered(object), key, namespace: ns }
    }

    const create = (resource: ResourceType<KubeObject>, namespace: string | undefined, body: KubeObject, options?: WriteOptions) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        attempt(() => {
          const now = rfc3339(millis)
          const json = decodeBody(resource, body, false)
          const manager = options?.fieldManager ?? defaultManager
          const prepared = prepareCreate(
            resource,
            namespace,
            json,
            now,
            (object) =>
              recordUpdate({ resource, scope: "main", managers: decodeManagers(metaOf(body).managedFields), manager, before: undefined, after: object, now }),
            options?.dryRun === true
          )
          if (options?.dryRun === true) return prepared.object
          return commitWrite(bucketOf(resource), prepared.key, prepared.object, undefined)
        }))

    // -- update -----------------------------------------------------------------

    /** The object an update stores, from the live one and the incoming content. */
    const prepareUpdate = (
      resource: ResourceType<KubeObject>,
      live: KubeObject,
      incoming: Json,
      extraErrors: Array<FieldError>
    ): KubeObject => {
      const liveMeta = metaOf(live)
      const inMeta: Json = isObject(incoming.metadata) ? { ...incoming.metadata } : {}
      // A uid in the body is a precondition: it names the object the client read.
      if (typeof inMeta.uid === "string" && inMeta.uid !== "" && inMeta.uid !== liveMeta.uid) {
        refuse(
          conflict(resource, liveMeta.name ?? "", `Precondition failed: UID in precondition: ${inMeta.uid}, UID in object meta: ${liveMeta.uid ?? ""}`)
        )
      }
      const meta: Json = {
        ...inMeta,
        name: liveMeta.name,
        ...(liveMeta.namespace !== undefined ? { namespace: liveMeta.namespace } : {}),
        uid: liveMeta.uid,
        creationTimestamp: liveMeta.creationTimestamp
      }
      delete meta.generation
      delete meta.deletionTimestamp
      delete meta.deletionGracePeriodSeconds
      if (liveMeta.deletionTimestamp !== undefined) meta.deletionTimestamp = liveMeta.deletionTimestamp
      const liveJson = asJson(live)
      if (liveJson.metadata !== undefined && isObject(liveJson.metadata) && liveJson.metadata.deletionGracePeriodSeconds !== undefined) {
        meta.deletionGracePeriodSeconds = liveJson.metadata.deletionGracePeriodSeconds
      }
      const next: Json = { ...incoming, metadata: meta }
      if (resource.statusSubresource) {
        if (liveJson.status !== undefined) next.status = liveJson.status
        else delete next.status
      }
      let object = defaulted(resource, pruned(resource, next) as KubeObject)
      if (resource.hasGeneration) {
        const generation = liveMeta.generation ?? 1
        object = withMeta(object, {
          ...metaOf(object),
          generation: jsonEqual(specPart(object), specPart(live)) ? generation : generation + 1
        })
      }
      if (resource === ServiceResource) extraErrors.push(...serviceUpdateErrors(live, object))
      return object
    }

    const serviceUpdateErrors = (live: KubeObject, next: KubeObject): Array<FieldError> => {
      const before = asJson(live).spec as Json | undefined
      const after = asJson(next).spec as Json | undefined
      const was = before?.clusterIP
      const now = after?.clusterIP
      if (typeof was === "string" && was !== "" && typeof now === "string" && now !== "" && was !== now && after?.type !== "ExternalName") {
        return [{ reason: "FieldValueInvalid", field: "spec.clusterIP", message: `Invalid value: "${now}": field is immutable` }]
      }
      return []
    }

    /** Stores an update unless it changes nothing; finishes a delete its finalizers were holding. */
    const finishUpdate = (bucket: Bucket, key: string, live: KubeObject, object: KubeObject, dryRun: boolean): KubeObject => {
      const candidate = ordered(withMeta(object, { ...metaOf(object), resourceVersion: metaOf(live).resourceVersion }))
      if (jsonEqual(candidate, live)) return live
      if (dryRun) return candidate
      const meta = metaOf(candidate) as ObjectMeta & { finalizers?: ReadonlyArray<string> }
      if (meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).length === 0) {
        const stored = commitWrite(bucket, key, candidate, live)
        commitDelete(bucket, key, stored)
        return stored
      }
      return commitWrite(bucket, key, candidate, live)
    }

    const checkVersion = (resource: ResourceType<KubeObject>, live: KubeObject, incoming: Json, name: string): void => {
      const meta = isObject(incoming.metadata) ? incoming.metadata : {}
      const requested = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
      if (requested === "") {
        if (resource.custom) {
          // The registry names the resource where it means the kind here: the message reads `httproutes.<group>`.
          refuse(
            failure(
              422,
              "Invalid",
              `${qualifiedName(resource)} "${name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`,
              {
                ...resourceDetails(resource, name),
                causes: [{ reason: "FieldValueInvalid", message: "Invalid value: 0x0: must be specified for an update", field: "metadata.resourceVersion" }]
              }
            )
          )
        }
        return
      }
      if (requested !== metaOf(live).resourceVersion) refuse(conflict(resource, name))
    }

    const managersFor = (body: Json, live: KubeObject): Managers => {
      const meta = isObject(body.metadata) ? body.metadata : {}
      // A client may send managedFields to replace them (`[{}]` clears them); otherwise the live ones stand.
      return Array.isArray(meta.managedFields) && meta.managedFields.length > 0
        ? decodeManagers(meta.managedFields as ReadonlyArray<ManagedFieldsEntry>)
        : decodeManagers(metaOf(live).managedFields)
    }

    const replace = (
      resource: ResourceType<KubeObject>,
      namespace: string | undefined,
      name: string,
      body: KubeObject,
      options?: WriteOptions
    ): Effect.Effect<WriteResult<KubeObject>, Status> =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        attempt(() => {
          const now = rfc3339(millis)
          const bucket = servedBucket(resource)
          const json = decodeBody(resource, body, false)
          checkName(json, name)
          const ns = checkNamespace(resource, namespace, json, false)
          const key = objectKey(resource, ns, name)
          const live = bucket.objects.get(key)
          const manager = options?.fieldManager ?? defaultManager
          const dryRun = options?.dryRun === true
          if (live === undefined) {
            // Of our types only Services may be created by PUT; the rest answer 404.
            if (resource !== ServiceResource) refuse(notFoundStatus(resource, name))
            const prepared = prepareCreate(
              resource,
              ns,
              { ...json, metadata: { ...(json.metadata as Json), resourceVersion: undefined } },
              now,
              (object) => recordUpdate({ resource, scope: "main", managers: new Map(), manager, before: undefined, after: object, now }),
              dryRun
            )
            return { object: dryRun ? prepared.object : commitWrite(bucket, prepared.key, prepared.object, undefined), created: true }
          }
          checkVersion(resource, live, json, name)
          const errors: Array<FieldError> = []
          let object = prepareUpdate(resource, live, json, errors)
          validate(resource, object, errors)
          const managers = recordUpdate({ resource, scope: "main", managers: managersFor(json, live), manager, before: live, after: object, now })
          object = withMeta(object, { ...metaOf(object), managedFields: encodeManagers(managers) })
          object = allocate(resource, object, live, !dryRun)
          return { object: finishUpdate(bucket, key, live, dropEmptyManagedFields(object), dryRun), created: false }
        }))

    const dropEmptyManagedFields = (object: KubeObject): KubeObject => {
      const meta = metaOf(object)
      if (meta.managedFields !== undefined && meta.managedFields.length === 0) {
        const { managedFields: _, ...rest } = meta
        return withMeta(object, rest)
      }
      return object
    }

    const replaceStatus = (
      resource: ResourceType<KubeObject>,
      namespace: string | undefined,
      name: string,
      body: KubeObject,
      options?: WriteOptions
    ): Effect.Effect<KubeObject, Status> =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) =>
        attempt(() => {
          const now = rfc3339(millis)
          const bucket = servedBucket(resource)
          if (!resource.statusSubresource) refuse(notServedStatus())
          const json = decodeBody(resource, body, false)
          checkName(json, name)
          const ns = checkNamespace(resource, namespace, json, false)
          const key = objectKey(resource, ns, name)
          const live = bucket.objects.get(key)
          if (live === undefined) return refuse(notFoundStatus(resource, name))
          checkVersion(resource, live, json, name)
          const next: Json = { ...asJson(live) }
          if (json.status !== undefined) next.status = json.status
          else delete next.status
          let object = defaulted(resource, pruned(resource, next) as KubeObject)
          validate(resource, object)
          const manager = options?.fieldManager ?? defaultManager
          const managers = recordUpdate({
            resource,
            scope: "status",
            managers: decodeManagers(metaOf(live).managedFields),
            manager,
            before: live,
            after: object,
            now
          })
          object = dropEmptyManagedFields(withMeta(object, { ...metaOf(object), managedFields: encodeManagers(managers) }))
          return finishUpdate(bucket, key, live, object, options?.dryRun === true)
        }))

    // -- apply ------------------------------------------------------------------

    const apply = (
      resource: ResourceType<KubeObject>,
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
            refuse(invalidOptions("PatchOptions", [{ reason: "FieldValueRequired", field: "fieldManager", message: "Required value: is required for apply patch" }]))
          }
          if (manager.length > 128) {
            refuse(invalidOptions("PatchOptions", [{ reason: "FieldValueTooLong", field: "fieldManager", message: "Too long: may not be more than 128 bytes" }]))
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

          if (live === undefined) {
            const base: KubeObject = {
              apiVersion: apiVersionOf(resource),
              kind: resource.kind,
              metadata: { name, ...(ns !== undefined ? { namespace: ns } : {}) }
            }
            const applied = mergeApplied({ resource, live: base, config: config as KubeObject, managers: new Map(), manager })
            const prepared = prepareCreate(
              resource,
              ns,
              { ...asJson(applied.merged), metadata: { ...metaOf(applied.merged), resourceVersion: undefined } },
              now,
              () => {
                const own = applied.managers.get(applied.applier)!
                return new Map([[applied.applier, { ...own, time: now }]])
              },
              dryRun
            )
            return { object: dryRun ? prepared.object : commitWrite(bucket, prepared.key, prepared.object, undefined), created: true }
          }

          const requested = meta.resourceVersion
          if (typeof requested === "string" && requested !== "" && requested !== metaOf(live).resourceVersion) {
            refuse(conflict(resource, name))
          }
          const applied = mergeApplied({
            resource,
            live,
            config: config as KubeObject,
            managers: decodeManagers(metaOf(live).managedFields),
            manager
          })
          const mergedJson = asJson(applied.merged)
          const errors: Array<FieldError> = []
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
          object = allocate(resource, object, live, !dryRun)
          return { object: finishUpdate(bucket, key, live, dropEmptyManagedFields(object), dryRun), created: false }
        }))

    // -- reads ------------------------------------------------------------------

    const get = (resource: ResourceType<KubeObject>, namespace: string | undefined, name: string) =>
      attempt(() => {
        const bucket = servedBucket(resource)
        const object = bucket.objects.get(objectKey(resource, namespace, name))
        if (object === undefined) return refuse(notFoundStatus(resource, name))
        return object
      })

    interface Filter {
      readonly namespace: string | undefined
      readonly labels: LabelSelector
      readonly fields: ReadonlyArray<FieldRequirement>
    }

    const makeFilter = (resource: ResourceType<KubeObject>, namespace: string | undefined, labelSelector?: string, fieldSelector?: string): Filter => {
      const labels = labelSelector === undefined || labelSelector === "" ? everything : parseLabelSelector(labelSelector)
      if (labels instanceof SelectorError) return refuse(badRequest(labels.message))
      const fields = fieldSelector === undefined ? [] : parseFieldSelector(fieldSelector)
      if (fields instanceof SelectorError) return refuse(badRequest(fields.message))
      return { namespace: resource.namespaced ? namespace : undefined, labels, fields }
    }

    const passes = (filter: Filter, object: KubeObject): boolean => {
      const meta = metaOf(object)
      if (filter.namespace !== undefined && meta.namespace !== filter.namespace) return false
      return (
        matchesLabels(filter.labels, meta.labels) &&
        matchesFields(filter.fields, { "metadata.name": meta.name ?? "", "metadata.namespace": meta.namespace ?? "" })
      )
    }

    /** The objects of a bucket as they were at `rv`, rebuilt from the history window. */
    const snapshotAt = (bucket: Bucket, rv: number): Map<string, KubeObject> => {
      const objects = new Map(bucket.objects)
      for (let i = bucket.history.length - 1; i >= 0; i--) {
        const event = bucket.history[i]!
        if (event.rv <= rv) break
        const meta = metaOf(event.object)
        const key = objectKey(bucket.resource, meta.namespace, meta.name ?? "")
        if (event.previous === undefined) objects.delete(key)
        else objects.set(key, event.previous)
      }
      return objects
    }

    const listItem = (resource: ResourceType<KubeObject>, object: KubeObject): KubeObject => {
      if (resource.custom) return object
      // Built-in list items carry no kind or apiVersion: the list's kind says it.
      const { apiVersion: _v, kind: _k, ...rest } = object
      return rest
    }

    const list = (resource: ResourceType<KubeObject>, namespace: string | undefined, options?: ListOptions) =>
      attempt((): ObjectList<KubeObject> => {
        const bucket = servedBucket(resource)
        const filter = makeFilter(resource, namespace, options?.labelSelector, options?.fieldSelector)
        let rv = revision
        let start = ""
        let objects = bucket.objects
        if (options?.continue !== undefined && options.continue !== "") {
          const token = decodeContinue(options.continue)
          if (token === undefined) {
            return refuse(badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"))
          }
          if (token.rv < oldestAvailable(bucket) - 1) {
            return refuse({ ...expired(CONTINUE_TOO_OLD), metadata: {} })
          }
          rv = token.rv
          start = token.start
          objects = snapshotAt(bucket, token.rv)
        }
        const keys = [...objects.keys()].filter((k) => k >= start).sort()
        const limit = options?.limit !== undefined && options.limit > 0 ? options.limit : undefined
        const items: Array<KubeObject> = []
        let next: string | undefined
        let remaining = 0
        for (const key of keys) {
          const object = objects.get(key)!
          if (!passes(filter, object)) continue
          if (limit !== undefined && items.length >= limit) {
            if (next === undefined) next = `${keyOfLast(items, bucket.resource)}\u0000`
            remaining++
            continue
          }
          items.push(listItem(resource, object))
        }
        const selectorless = filter.labels.requirements.length === 0 && filter.fields.length === 0
        return {
          apiVersion: apiVersionOf(resource),
          kind: resource.listKind,
          metadata: {
            resourceVersion: String(rv),
            ...(next !== undefined ? { continue: encodeContinue({ rv, start: next }) } : {}),
            // The server counts what is left only when no selector filters the list.
            ...(next !== undefined && selectorless ? { remainingItemCount: remaining } : {})
          },
          items
        }
      })

    const keyOfLast = (items: ReadonlyArray<KubeObject>, resource: ResourceType<KubeObject>): string => {
      const meta = metaOf(items[items.length - 1])
      return objectKey(resource, meta.namespace, meta.name ?? "")
    }

    // -- delete -----------------------------------------------------------------

    const successStatus = (resource: ResourceType<unknown>, object: KubeObject): Status => ({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { ...resourceDetails(resource, metaOf(object).name ?? ""), ...(metaOf(object).uid !== undefined ? { uid: metaOf(object).uid! } : {}) },
      code: 200
    })

    const deleteOne = (
      resource: ResourceType<KubeObject>,
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
            refuse(conflict(resource, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta.uid ?? ""}`))
          }
          if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== meta.resourceVersion) {
            refuse(
              conflict(
                resource,
                name,
                `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ""}`
              )
            )
          }
          const dryRun = options?.dryRun === true
          if (resource === NamespaceResource) return { object: deleteNamespace(live, name, millis, dryRun) }
          const finalizers = (meta as { finalizers?: ReadonlyArray<string> }).finalizers ?? []
          if (finalizers.length > 0) {
            // Finalizers hold the object: it is marked, and goes when the last one is removed.
            if (meta.deletionTimestamp !== undefined || dryRun) return { object: live }
            // markAsDeleting: the first mark moves the generation, since controllers must now act differently.
            const marked = withMeta(live, {
              ...meta,
              ...(resource.hasGeneration && meta.generation !== undefined && meta.generation > 0 ? { generation: meta.generation + 1 } : {}),
              deletionTimestamp: rfc3339(millis),
              deletionGracePeriodSeconds: 0
            })
            return { object: commitWrite(bucket, key, ordered(marked), live) }
          }
          if (!dryRun) commitDelete(bucket, key, live)
          return resource === ServiceResource ? { object: live } : { status: successStatus(resource, live) }
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
      const nsBucket = bucketOf(NamespaceResource as ResourceType<KubeObject>)
      const stored = commitWrite(nsBucket, name, terminating, live)
      // The namespace controller's work, done at once: contents go, then the namespace.
      for (const bucket of buckets.values()) {
        if (!bucket.resource.namespaced) continue
        for (const [key, object] of [...bucket.objects.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
          if (metaOf(object).namespace === name) commitDelete(bucket, key, object)
        }
      }
      commitDelete(nsBucket, name, stored)
      return stored
    }

    // -- watch ------------------------------------------------------------------

    const toWireEvent = (filter: Filter, event: HistoryEvent): StoreWatchEvent | undefined => {
      const now = event.type !== "DELETED" && passes(filter, event.object)
      const before = event.previous !== undefined && passes(filter, event.previous)
      switch (event.type) {
        case "ADDED":
          return now ? { type: "ADDED", object: event.object } : undefined
        case "MODIFIED":
          if (now && before) return { type: "MODIFIED", object: event.object }
          if (now) return { type: "ADDED", object: event.object }
          // Leaving the selector reads as a delete of the last state the watcher could see.
          if (before) {
            return {
              type: "DELETED",
              object: withMeta(event.previous!, { ...metaOf(event.previous), resourceVersion: String(event.rv) })
            }
          }
          return undefined
        case "DELETED":
          return before ? { type: "DELETED", object: event.object } : undefined
      }
    }

    const bookmark = (resource: ResourceType<KubeObject>, rv: number): StoreWatchEvent => ({
      type: "BOOKMARK",
      object: { apiVersion: apiVersionOf(resource), kind: resource.kind, metadata: { resourceVersion: String(rv) } }
    })

    const watch = (
      resource: ResourceType<KubeObject>,
      namespace: string | undefined,
      options?: WatchOptions
    ): Stream.Stream<StoreWatchEvent, Status> =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const queue = yield* Queue.unbounded<Signal>()
          const watcher: Watcher = { queue }
          // One synchronous step: no write can land between the starting point and the subscription.
          const start = yield* attempt(() => {
            const bucket = servedBucket(resource)
            const filter = makeFilter(resource, namespace, options?.labelSelector, options?.fieldSelector)
            const requested = options?.resourceVersion
            if (requested === undefined || requested === "" || requested === "0") {
              bucket.watchers.add(watcher)
              const initial = [...bucket.objects.entries()]
                .sort(([a], [b]) => (a < b ? -1 : 1))
                .map(([, object]) => object)
                .filter((object) => passes(filter, object))
                .map((object): StoreWatchEvent => ({ type: "ADDED", object }))
              return { bucket, filter, initial, after: 0 }
            }
            if (!/^\d+$/.test(requested)) {
              return refuse(badRequest(`resourceVersion: Invalid value: "${requested}": strconv.ParseUint: parsing "${requested}": invalid syntax`))
            }
            const from = Number(requested)
            const oldest = oldestAvailable(bucket)
            if (from < oldest - 1) {
              const error = expired(`too old resource version: ${from} (${oldest - 1})`)
              return { bucket, filter, initial: [{ type: "ERROR", object: error } as StoreWatchEvent], after: -1 }
            }
            bucket.watchers.add(watcher)
            const initial = bucket.history
              .filter((e) => e.rv > from)
              .map((e) => toWireEvent(filter, e))
              .filter((e): e is StoreWatchEvent => e !== undefined)
            return { bucket, filter, initial, after: from }
          })
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => start.bucket.watchers.delete(watcher)).pipe(Effect.zipRight(Queue.shutdown(queue)))
          )
          // An expired version: the server answers 200, sends the ERROR, and closes.
          if (start.after < 0) return Stream.fromIterable(start.initial)
          if (options?.allowWatchBookmarks === true) {
            yield* Effect.sync(() => Queue.unsafeOffer(queue, { _tag: "Bookmark", rv: revision })).pipe(
              Effect.delay(bookmarkInterval),
              Effect.repeat(Schedule.forever),
              Effect.forkScoped
            )
          }
          const live = Stream.fromQueue(queue).pipe(
            Stream.filterMap((signal): Option.Option<StoreWatchEvent> => {
              if (signal._tag === "Bookmark") return Option.some(bookmark(resource, signal.rv))
              // Asked for a version ahead of the store: nothing up to it is news.
              if (signal.event.rv <= start.after) return Option.none()
              return Option.fromNullable(toWireEvent(start.filter, signal.event))
            })
          )
          return Stream.concat(Stream.fromIterable(start.initial), live)
        })
      )

    // -- serving ----------------------------------------------------------------

    const setServed = (resource: ResourceType<KubeObject>, served: boolean) =>
      Effect.sync(() => {
        bucketOf(resource).served = served
      })
    const isServed = (resource: ResourceType<KubeObject>) => Effect.sync(() => bucketOf(resource).served)

    const compact = Effect.sync(() => {
      for (const bucket of buckets.values()) {
        bucket.history = []
        bucket.windowStart = revision
        bucket.evicted = false
      }
    })

    // -- bootstrap ----------------------------------------------------------------

    for (const name of [...new Set([...SYSTEM_NAMESPACES, ...(options.namespaces ?? [])])]) {
      yield* create(NamespaceResource as ResourceType<KubeObject>, undefined, { metadata: { name } }, {
        fieldManager: "kube-apiserver"
      }).pipe(Effect.orDie)
    }

    const store: MemoryStore = {
      create: create as ClusterStore["create"],
      replace: replace as ClusterStore["replace"],
      apply: apply as ClusterStore["apply"],
      replaceStatus: replaceStatus as ClusterStore["replaceStatus"],
      get: get as ClusterStore["get"],
      list: list as ClusterStore["list"],
      delete: deleteOne as ClusterStore["delete"],
      watch,
      setServed,
      isServed,
      compact,
      resourceVersion: Effect.sync(() => String(revision))
    }
    return store
  })
