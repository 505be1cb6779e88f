/**
 * What publish and unpublish share about a session's objects: how a message names
 * one, how the objects to remove are found and removed, and when the API server has
 * stopped answering so that no further request is worth its timeout.
 */
import { Effect } from "effect"
import { notOursToTakeOver, notOwnedReason } from "../../domain/Manifests.js"
import type { ResourceType } from "../../domain/Resources.js"
import type { ApplyOptions, KubeClient, WritableObject } from "../../services/KubeClient.js"
import type { KubeError } from "../../services/KubeError.js"

/** One object, as messages name it: `HTTPRoute telo-sessions/telo-run-x-8080`. */
export interface ObjectRef {
  readonly kind: string
  readonly namespace: string
  readonly name: string
}

/** `Kind namespace/name`. */
export const describeRef = (ref: ObjectRef): string => `${ref.kind} ${ref.namespace}/${ref.name}`

/** Several objects in one phrase: `Service ns/a, HTTPRoute ns/b`. */
export const describeRefs = (refs: ReadonlyArray<ObjectRef>): string => refs.map(describeRef).join(", ")

/**
 * True when the request got no HTTP answer because the server is not there: nothing
 * answered within the time limit, or the connection could not be made at all. A
 * reset or a cut answer is not this: the server was there a moment ago, and the next
 * request may well get through.
 */
export const serverDidNotAnswer = (error: KubeError): boolean => {
  if (error._tag !== "Transport") return false
  // Clients that say why there was no answer; the wording below covers those that do not.
  if ("kind" in error && (error.kind === "no-answer" || error.kind === "refused" || error.kind === "dns")) return true
  return /no answer|connection was refused|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|unreachable|does not resolve/
    .test(error.reason)
}

/** An object a publish writes with server-side apply, and how to take it back. */
export interface PlannedWrite {
  readonly ref: ObjectRef
  /** Applies the object; with `dryRun`, answers what the write would store. */
  readonly apply: (options?: ApplyOptions) => Effect.Effect<WritableObject, KubeError>
  /** Deletes it: true if it was there, false if it was already gone. */
  readonly remove: Effect.Effect<boolean, KubeError>
  /**
   * Why the object now at its name is not ours to take over (`notOursToTakeOver`), or
   * undefined when it is ours or gone. Read only when an apply meets another manager's fields.
   */
  readonly notOurs: Effect.Effect<string | undefined, KubeError>
}

/** `object` of `resource` as a planned write. */
export const plannedWrite = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  object: A
): PlannedWrite => {
  const ref: ObjectRef = {
    kind: resource.kind,
    namespace: object.metadata?.namespace ?? "",
    name: object.metadata?.name ?? ""
  }
  return {
    ref,
    apply: (options) => kube.apply(resource, object, options),
    remove: kube.delete(resource, ref.namespace, ref.name).pipe(
      Effect.as(true),
      Effect.catchTag("NotFound", () => Effect.succeed(false))
    ),
    notOurs: kube.get(resource, ref.namespace, ref.name).pipe(
      Effect.map((live) => notOursToTakeOver(live, object)),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
  }
}

/** One object found for removal. */
export interface RemovalTarget {
  readonly ref: ObjectRef
  /** Deletes it; an object already gone succeeds with `false`. */
  readonly remove: Effect.Effect<boolean, KubeError>
}

/**
 * Objects to remove: one known name, or the session's objects of a type (found by
 * the session label). `find` reads only; the deletes come later, so a publish can
 * learn what it will remove before it writes anything.
 */
export interface Removal {
  readonly kind: string
  /** `the session's Ingress objects`, for messages. */
  readonly what: string
  /**
   * What finding them is, for a publish that could not: `check for HTTPRoute objects
   * of session x that a gateway-mode publish may have left`. Unset: listing the
   * session's objects of `kind`.
   */
  readonly looking?: (sessionId: string) => string
  readonly find: Effect.Effect<ReadonlyArray<RemovalTarget>, KubeError>
}

const target = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  name: string,
  uid?: string
): RemovalTarget => ({
  ref: { kind: resource.kind, namespace, name },
  remove: kube.delete(resource, namespace, name, uid !== undefined ? { uid } : undefined).pipe(
    Effect.as(true),
    Effect.catchTag("NotFound", () => Effect.succeed(false)),
    // The uid precondition failed: the name now holds another object, made since the
    // list, which is not the one that was found to remove.
    // (kube-apiserver says so in these words, "the UID in the precondition (…) does not
    // match the UID in record"; any other conflict is a failure to report.)
    Effect.catchIf(
      (error) => error._tag === "Conflict" && /\bUID in the precondition\b/.test(error.reason),
      (conflict) =>
        Effect.as(
          Effect.logWarning(
            `left ${resource.kind} ${namespace}/${name}: it was replaced since it was listed (${conflict.reason})`
          ),
          false
        )
    )
  )
})

const never = () => false

/** The one object `name`, if it is there. */
export const removeObject = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  name: string
): Removal => ({
  kind: resource.kind,
  what: `${resource.kind} ${namespace}/${name}`,
  find: Effect.succeed([target(kube, resource, namespace, name)])
})

/**
 * The objects a removal looks through: found for it (a lookup shared with other
 * publishes), or a label selector to list them by, one list of its own.
 */
export type Found<A> = Effect.Effect<ReadonlyArray<A>, KubeError> | string

const listed = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  found: Found<A>
): Effect.Effect<ReadonlyArray<A>, KubeError> =>
  typeof found === "string"
    ? Effect.map(kube.list(resource, namespace, { labelSelector: found }), (list) => list.items)
    : found

/**
 * Every object `found` holds (the session's, by its labels) that a runner published
 * (owned by a Pod; any other is left, with a warning naming it), except the names to
 * keep. A failure `tolerate` accepts on the list means "nothing here we could see to
 * remove". A delete refused of an object the list did show is never tolerated: that
 * object stays serving, and the person must be told.
 */
export const removeSessionObjects = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  found: Found<A>,
  options: { readonly keep?: ReadonlySet<string>; readonly tolerate?: (error: KubeError) => boolean } = {}
): Removal => {
  const keep = options.keep ?? new Set<string>()
  const tolerate = options.tolerate ?? never
  return {
    kind: resource.kind,
    what: `the session's ${resource.kind} objects`,
    find: listed(kube, resource, namespace, found).pipe(
      Effect.flatMap((items) =>
        Effect.forEach(items, (item) => {
          const name = item.metadata?.name
          if (name === undefined || keep.has(name)) return Effect.succeed([])
          const notOurs = notOwnedReason(item)
          // Someone else's object is left where it is, and the person told why.
          return notOurs === undefined
            ? Effect.succeed([target(kube, resource, namespace, name, item.metadata?.uid)])
            : Effect.as(Effect.logWarning(`left ${resource.kind} ${namespace}/${name}: ${notOurs}`), [])
        })
      ),
      Effect.map((targets) => targets.flat()),
      Effect.catchIf(tolerate, () => Effect.succeed([]))
    )
  }
}

/**
 * What the other routing mode published for the session, so that a change of
 * SESSION_ROUTING_MODE does not leave the old mode's objects serving. Best effort in
 * what it looks for: a type the cluster does not serve, or that RBAC does not let us
 * list, holds nothing we can see to remove, and must not fail the mode in use. An
 * object it did find and cannot delete is reported: it still serves the session.
 */
export const removeOtherModeObjects = <A extends WritableObject>(
  kube: KubeClient.Service,
  resource: ResourceType<A>,
  namespace: string,
  found: Found<A>
): Removal => ({
  ...removeSessionObjects(kube, resource, namespace, found, {
    tolerate: (error) => error._tag === "NotServed" || error._tag === "Forbidden"
  }),
  // A person in one mode never asked for the other's kind: say why it was looked for.
  looking: (sessionId) =>
    `check for ${resource.kind} objects of session ${sessionId} that a ${
      resource.kind === "Ingress" ? "ingress" : "gateway"
    }-mode publish may have left`
})
