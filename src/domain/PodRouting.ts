/**
 * Controller mode's rules, as pure values: which Pod is which session, the ports it
 * asks for, which shard routes it, and the condition its routes' state becomes on
 * the Pod (so a Pod that lists it among its readiness gates is Ready only when its
 * public hosts answer).
 */
import { Either } from "effect"
import type { Pod, PodCondition } from "./Objects.js"
import type { RouteState } from "./Routes.js"
import { parsePorts, parsePortSpec, parseSessionId, type PortMapping } from "./Session.js"
import { MAX_QUOTED_CHARS, printable } from "./Text.js"

/**
 * The label that marks a Pod as a session; its value is the session id.
 *
 * @since 0.1.0
 * @category constants
 */
export const SESSION_LABEL = "session-routing.dev/session"

/**
 * The annotation that lists a session's ports (`8080,9090,5000/udp`); without it the
 * Pod's declared container ports are routed.
 *
 * @since 0.1.0
 * @category constants
 */
export const PORTS_ANNOTATION = "session-routing.dev/ports"

/**
 * The annotation the controller writes: the session's endpoints as JSON.
 *
 * @since 0.1.0
 * @category constants
 */
export const ENDPOINTS_ANNOTATION = "session-routing.dev/endpoints"

/**
 * The Pod condition the controller writes, for `spec.readinessGates`.
 *
 * @since 0.1.0
 * @category constants
 */
export const ROUTES_CONDITION = "session-routing.dev/RoutesProgrammed"

/**
 * The most characters `ROUTES_CONDITION`'s message holds, cut with an ellipsis past it.
 * The condition is part of the Pod's status, which the API server sends whole, on every
 * write, to every watcher of the Pod (its kubelet, the scheduler, the endpoint and
 * informer caches of every controller), and which stays in etcd with the Pod. 1 KiB is
 * the bound Kubernetes puts on an Event's note, and enough for the first hosts'
 * reasons; a message built from a 200 KB annotation is not a message anyone reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CONDITION_MESSAGE_CHARS = 1024

/**
 * The most characters of one value taken from a Pod (a label or annotation value, as
 * quoted) a message repeats: a valid label value is at most 63, a ports annotation of
 * this length already lists dozens of ports.
 */
const MAX_POD_VALUE_CHARS = 128

/** The most characters of a name (a Pod's namespace/name: each a DNS name of at most 253). */
const MAX_NAME_CHARS = 253

/** A value a Pod carries, as a message quotes it: in JSON quotes, escaped, bounded. */
const quoted = (value: string): string => printable(JSON.stringify(value), MAX_POD_VALUE_CHARS)

/** `namespace/name` of a Pod, as a message names it: escaped, bounded. */
const podName = (namespace: string | undefined, name: string | undefined): string =>
  printable(`${namespace ?? ""}/${name ?? ""}`, 2 * MAX_NAME_CHARS + 1)

/**
 * A session as its Pod declares it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PodSession {
  readonly namespace: string
  readonly podName: string
  readonly podUid: string
  readonly sessionId: string
  readonly ports: ReadonlyArray<PortMapping>
}

/**
 * Why a Pod cannot be routed as it is: a reason code and a sentence naming the bad value.
 *
 * @since 0.1.0
 * @category models
 */
export interface PodProblem {
  readonly code: "InvalidSessionLabel" | "InvalidPortsAnnotation" | "NoPorts"
  readonly message: string
}

const declaredPorts = (pod: Pod): ReadonlyArray<PortMapping> => {
  const seen = new Set<string>()
  const ports: Array<PortMapping> = []
  for (const container of pod.spec?.containers ?? []) {
    for (const declared of container.ports ?? []) {
      const protocol = (declared.protocol ?? "TCP") === "UDP" ? "udp" : "tcp"
      // SCTP has no HTTP route and no Service port we publish.
      if (declared.protocol === "SCTP" || seen.has(`${declared.containerPort}/${protocol}`)) continue
      seen.add(`${declared.containerPort}/${protocol}`)
      ports.push({ port: declared.containerPort, protocol })
    }
  }
  return ports
}

const annotatedPorts = (text: string): Either.Either<ReadonlyArray<PortMapping>, string> =>
  Either.flatMap(
    Either.all(text.split(",").filter((part) => part.trim() !== "").map(parsePortSpec)),
    (ports) => parsePorts(ports)
  )

/**
 * The session a Pod declares through `label`, or what is wrong with it. The ports come
 * from `PORTS_ANNOTATION` when it is set, else from the containers' declared ports.
 *
 * @since 0.1.0
 * @category rules
 */
export const podSession = (pod: Pod, label: string = SESSION_LABEL): Either.Either<PodSession, PodProblem> => {
  const metadata = pod.metadata ?? {}
  // Every word taken from the Pod, and every problem that quotes one, is escaped and
  // bounded here: the message becomes the Pod's condition and Events, and a Pod's
  // owner can put 256 KiB of anything, bidi overrides included, in its annotations.
  const where = `Pod ${podName(metadata.namespace, metadata.name)}`
  const id = parseSessionId(metadata.labels?.[label] ?? "")
  if (Either.isLeft(id)) {
    return Either.left({
      code: "InvalidSessionLabel",
      message: `${where}: label ${printable(label, MAX_NAME_CHARS)}=${quoted(metadata.labels?.[label] ?? "")}: ${
        printable(id.left, MAX_QUOTED_CHARS)
      }`
    })
  }
  const annotation = metadata.annotations?.[PORTS_ANNOTATION]
  const ports = annotation !== undefined ? annotatedPorts(annotation) : Either.right(declaredPorts(pod))
  if (Either.isLeft(ports)) {
    return Either.left({
      code: "InvalidPortsAnnotation",
      message: `${where}: annotation ${PORTS_ANNOTATION}=${quoted(annotation ?? "")}: ${
        printable(ports.left, MAX_QUOTED_CHARS)
      }`
    })
  }
  if (ports.right.length === 0) {
    return Either.left({
      code: "NoPorts",
      message: `${where} declares no container port and has no ${PORTS_ANNOTATION} annotation` +
        ` (e.g. ${PORTS_ANNOTATION}: "8080,5000/udp"): there is nothing to route`
    })
  }
  return Either.right({
    namespace: metadata.namespace ?? "",
    podName: metadata.name ?? "",
    podUid: metadata.uid ?? "",
    sessionId: id.right,
    ports: ports.right
  })
}

/**
 * Whether two declarations route the same ports, in any order.
 *
 * @since 0.1.0
 * @category rules
 */
export const samePorts = (a: ReadonlyArray<PortMapping>, b: ReadonlyArray<PortMapping>): boolean => {
  const key = (ports: ReadonlyArray<PortMapping>) => ports.map((p) => `${p.port}/${p.protocol}`).sort().join(",")
  return key(a) === key(b)
}

/**
 * The shard (0 ≤ shard < `shards`) that routes a session: the 32-bit FNV-1a hash of its
 * id, mixed by MurmurHash3's 32-bit finalizer, scaled to the shard count (`hash × shards
 * / 2³²`), so every replica, in any language, agrees without talking to the others.
 * FNV-1a alone barely changes its high bits between ids that differ in their last
 * characters (`user7-0` … `user7-99` fell 0/20/22/58 over four shards): the finalizer
 * spreads every input bit over the whole hash before scaling reads its high bits.
 *
 * @since 0.1.0
 * @category rules
 */
export const shardOf = (sessionId: string, shards: number): number => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(sessionId)) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x85ebca6b) >>> 0
  hash ^= hash >>> 13
  hash = Math.imul(hash, 0xc2b2ae35) >>> 0
  hash ^= hash >>> 16
  return Math.floor(((hash >>> 0) * shards) / 2 ** 32)
}

/**
 * One host as the controller last heard of it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PodHost {
  readonly host: string
  readonly state: RouteState
  readonly reason?: string
  readonly code?: string
  /**
   * When probes are on: how many probes in a row reached the session through the
   * host, of the `required` that make a programmed host count, and why the last failed.
   */
  readonly probe?: { readonly passed: number; readonly required: number; readonly reason?: string }
}

/**
 * What the controller knows of a Pod's routes.
 *
 * @since 0.1.0
 * @category models
 */
export type PodRoutes =
  | { readonly _tag: "Invalid"; readonly problem: PodProblem }
  | { readonly _tag: "Taken"; readonly sessionId: string; readonly byPod: string }
  /** The session label was taken off a routed Pod: its session was unpublished. */
  | { readonly _tag: "LabelRemoved"; readonly sessionId: string; readonly label: string }
  | { readonly _tag: "PublishFailed"; readonly reason: string }
  | { readonly _tag: "Hosts"; readonly hosts: ReadonlyArray<PodHost> }

/** The status and words of `ROUTES_CONDITION`, without its transition time. */
export type RoutesCondition = Pick<PodCondition, "type" | "status" | "reason" | "message">

/** A status read that failed says nothing of the route: Unknown, never False. */
const UNREADABLE = "RouteStatusUnreadable"

/** The condition, its message escaped and bounded as a whole, whatever its pieces. */
const condition = (status: PodCondition["status"], reason: string, message: string): RoutesCondition => ({
  type: ROUTES_CONDITION,
  status,
  reason,
  message: printable(message, MAX_CONDITION_MESSAGE_CHARS)
})

/** A reason a server or the routes gave (a host's, a probe's, a publish's), escaped and bounded. */
const said = (reason: string): string => printable(reason, MAX_QUOTED_CHARS)

/**
 * The condition a Pod's routes give it: True once every tcp host is programmed (and,
 * with probes on, reached by enough probes in a row) or there is none to route; False
 * with the first unprogrammed host's code and every such host's reason; Unknown while
 * a host is pending, unproven by its probes, or its status cannot be read.
 *
 * @since 0.1.0
 * @category rules
 */
export const routesCondition = (routes: PodRoutes): RoutesCondition => {
  switch (routes._tag) {
    case "Invalid":
      return condition("False", routes.problem.code, routes.problem.message)
    case "Taken":
      return condition(
        "False",
        "SessionTaken",
        `session ${printable(routes.sessionId, MAX_NAME_CHARS)} is already routed for Pod ${
          printable(routes.byPod, 2 * MAX_NAME_CHARS + 1)
        }: give each Pod its own session id`
      )
    case "LabelRemoved":
      return condition(
        "False",
        "SessionLabelRemoved",
        `the label ${printable(routes.label, MAX_NAME_CHARS)} was removed: session ${
          printable(routes.sessionId, MAX_NAME_CHARS)
        } was unpublished and this Pod is no longer routed; label it again to route it`
      )
    case "PublishFailed":
      return condition("False", "PublishFailed", routes.reason)
    case "Hosts":
      return hostsCondition(routes.hosts)
  }
}

const hostsCondition = (hosts: ReadonlyArray<PodHost>): RoutesCondition => {
  if (hosts.length === 0) return condition("True", "NoHttpPorts", "no tcp port: there is no public host to program")
  const hostsSaid = (list: ReadonlyArray<PodHost>) =>
    list.map((h) => `${printable(h.host, MAX_NAME_CHARS)}: ${said(h.reason ?? h.state)}`).join("; ")
  const failed = hosts.filter((h) => h.state === "unprogrammed" && h.code !== UNREADABLE)
  if (failed.length > 0) return condition("False", failed[0]!.code ?? "Unprogrammed", hostsSaid(failed))
  const unreadable = hosts.filter((h) => h.state === "unprogrammed")
  if (unreadable.length > 0) return condition("Unknown", UNREADABLE, hostsSaid(unreadable))
  const pending = hosts.filter((h) => h.state === "pending")
  const unproven = hosts.filter((h) =>
    h.state === "programmed" && h.probe !== undefined && h.probe.passed < h.probe.required
  )
  if (pending.length === 0 && unproven.length > 0) {
    return condition(
      "Unknown",
      "ProbePending",
      unproven.map((h) =>
        `${printable(h.host, MAX_NAME_CHARS)}: ${h.probe!.passed} of ${h.probe!.required} probes in a row reached it${
          h.probe!.reason !== undefined ? `; the last: ${said(h.probe!.reason)}` : ""
        }`
      ).join("; ")
    )
  }
  if (pending.length > 0) {
    return condition(
      "Unknown",
      "RoutesPending",
      `${hosts.length - pending.length} of ${hosts.length} hosts programmed; waiting for ${
        pending.map((h) => printable(h.host, MAX_NAME_CHARS)).join(", ")
      }`
    )
  }
  return condition(
    "True",
    "RoutesProgrammed",
    `every host is programmed: ${hosts.map((h) => printable(h.host, MAX_NAME_CHARS)).join(", ")}`
  )
}
