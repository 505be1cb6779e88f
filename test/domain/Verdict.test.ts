/**
 * Verdict rules, decided from status snapshots as controllers write them (the
 * table in route-status-semantics.md): only our parent's entry counts, only
 * conditions of the current generation count, refusals keep their reason, and
 * the order of several entries for our parent does not decide.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Condition, HttpRoute, Ingress, ParentReference, RouteParentStatus } from "../../src/domain/Objects.js"
import { RouteVerdict } from "../../src/domain/Routes.js"
import {
  httpRouteVerdict,
  type HttpRouteVerdictOptions,
  ingressVerdict,
  isOurParent,
  type ParentTarget
} from "../../src/domain/Verdict.js"

const GENERATION = 2
const CONTROLLER = "example.com/gateway-controller"
const OTHER_CONTROLLER = "other.example.com/mesh"

const condition = (
  type: "Accepted" | "ResolvedRefs" | "Programmed",
  status: Condition["status"],
  reason: string,
  observedGeneration: number | undefined = GENERATION
): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${status}: ${reason}`,
  lastTransitionTime: "2025-01-01T00:00:00Z",
  ...(observedGeneration !== undefined ? { observedGeneration } : {})
})

const accepted = (status: Condition["status"] = "True", reason = "Accepted", generation?: number) =>
  condition("Accepted", status, reason, generation)
const resolved = (status: Condition["status"] = "True", reason = "ResolvedRefs", generation?: number) =>
  condition("ResolvedRefs", status, reason, generation)

/** Our Gateway as status entries spell it: every field explicit. */
const ours: ParentReference = { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "gw-ns", name: "gw" }
const target: ParentTarget = { namespace: "gw-ns", name: "gw" }

const entry = (
  conditions: ReadonlyArray<Condition>,
  parentRef: ParentReference = ours,
  controllerName = CONTROLLER
): RouteParentStatus => ({ parentRef, controllerName, conditions })

/** `generation: null` leaves metadata.generation out. */
const route = (
  parents: ReadonlyArray<RouteParentStatus> | undefined,
  generation: number | null = GENERATION
): HttpRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: {
    name: "telo-run-abc-8080",
    namespace: "telo-sessions",
    ...(generation !== null ? { generation } : {})
  },
  spec: { parentRefs: [ours], hostnames: ["8080-abc.telo.run"] },
  ...(parents !== undefined ? { status: { parents } } : {})
})

const programmedCondition = (status: Condition["status"], reason: string, generation?: number) =>
  condition("Programmed", status, reason, generation)

const DELETED_AT = "2026-01-01T00:00:00Z"

const deleting = (r: HttpRoute): HttpRoute => ({ ...r, metadata: { ...r.metadata, deletionTimestamp: DELETED_AT } })

const rejected = (c: Condition) => RouteVerdict.rejected(c.reason, c.message)

interface Snapshot {
  readonly name: string
  readonly route: HttpRoute | undefined
  readonly options?: Partial<HttpRouteVerdictOptions>
  readonly expected: RouteVerdict
}

const notAllowed = accepted("False", "NotAllowedByListeners")
const noHostname = accepted("False", "NoMatchingListenerHostname")
const backendNotFound = resolved("False", "BackendNotFound")
const refNotPermitted = resolved("False", "RefNotPermitted")

const snapshots: ReadonlyArray<Snapshot> = [
  // Each row of the verdict table.
  {
    name: "our entry, current, Accepted=True and ResolvedRefs=True: programmed",
    route: route([entry([accepted(), resolved()])]),
    expected: RouteVerdict.programmed
  },
  {
    name: "our entry, current, Accepted=True and no ResolvedRefs: programmed",
    route: route([entry([accepted()])]),
    expected: RouteVerdict.programmed
  },
  {
    name: "our entry, current, Accepted=False NotAllowedByListeners: rejected with its reason and message",
    route: route([entry([notAllowed, resolved()])]),
    expected: rejected(notAllowed)
  },
  {
    name: "our entry, current, Accepted=False NoMatchingListenerHostname: rejected",
    route: route([entry([noHostname])]),
    expected: rejected(noHostname)
  },
  {
    name: "Accepted=True with ResolvedRefs=False BackendNotFound: rejected, the data plane would answer 500",
    route: route([entry([accepted(), backendNotFound])]),
    expected: rejected(backendNotFound)
  },
  {
    name: "Accepted=True with ResolvedRefs=False RefNotPermitted: rejected with ResolvedRefs' reason",
    route: route([entry([refNotPermitted, accepted()])]),
    expected: rejected(refNotPermitted)
  },
  {
    name: "no entry for our parent (empty parents): pending",
    route: route([]),
    expected: RouteVerdict.pending
  },
  {
    name: "no status at all: pending",
    route: route(undefined),
    expected: RouteVerdict.pending
  },
  {
    name: "the route does not exist: pending",
    route: undefined,
    expected: RouteVerdict.pending
  },
  {
    name: "Accepted=Unknown Pending (nobody reconciled it yet): pending",
    route: route([entry([accepted("Unknown", "Pending")])]),
    expected: RouteVerdict.pending
  },
  {
    name: "an entry with only ResolvedRefs: pending",
    route: route([entry([resolved()])]),
    expected: RouteVerdict.pending
  },
  // Staleness: conditions about an older spec must not decide.
  {
    name: "a stale Accepted=True from the previous generation: pending",
    route: route([entry([accepted("True", "Accepted", 1), resolved("True", "ResolvedRefs", 1)])]),
    expected: RouteVerdict.pending
  },
  {
    name: "a stale Accepted=False from the previous generation: pending, not rejected",
    route: route([entry([accepted("False", "NotAllowedByListeners", 1)])]),
    expected: RouteVerdict.pending
  },
  {
    name: "a condition without observedGeneration counts as stale: pending",
    route: route([entry([accepted("True", "Accepted", undefined)].map(({ observedGeneration: _, ...c }) => c))]),
    expected: RouteVerdict.pending
  },
  {
    name: "a route without a generation takes its conditions as they are: programmed",
    route: route([entry([accepted("True", "Accepted", 1)])], null),
    expected: RouteVerdict.programmed
  },
  // Other parents and other controllers.
  {
    name: "only another Gateway's entry, accepted: pending",
    route: route([entry([accepted()], { ...ours, name: "other-gw" })]),
    expected: RouteVerdict.pending
  },
  {
    name: "a same-named Gateway in another namespace: pending",
    route: route([entry([accepted()], { ...ours, namespace: "elsewhere" })]),
    expected: RouteVerdict.pending
  },
  {
    name: "a same-named parent of another kind (a mesh Service): pending",
    route: route([entry([accepted()], { group: "", kind: "Service", namespace: "gw-ns", name: "gw" })]),
    expected: RouteVerdict.pending
  },
  {
    name: "several parents: ours programmed, another refused: programmed",
    route: route([entry([notAllowed], { ...ours, name: "other-gw" }), entry([accepted(), resolved()])]),
    expected: RouteVerdict.programmed
  },
  {
    name: "several parents: ours refused, another accepted: rejected",
    route: route([entry([accepted()], { ...ours, name: "other-gw" }), entry([noHostname])]),
    expected: rejected(noHostname)
  },
  {
    name: "another controller's entry for our parent is ignored once our controller is known",
    route: route([entry([accepted(), resolved()], ours, OTHER_CONTROLLER), entry([notAllowed])]),
    options: { controllerName: CONTROLLER },
    expected: rejected(notAllowed)
  },
  {
    name: "only another controller's entry, our controller known: pending",
    route: route([entry([accepted()], ours, OTHER_CONTROLLER)]),
    options: { controllerName: CONTROLLER },
    expected: RouteVerdict.pending
  },
  {
    name: "controller unknown, two entries for our parent: an acceptance by either decides",
    route: route([entry([notAllowed], ours, OTHER_CONTROLLER), entry([accepted()])]),
    expected: RouteVerdict.programmed
  },
  {
    name: "controller unknown, two refusals for our parent: the first stands",
    route: route([entry([noHostname], ours, OTHER_CONTROLLER), entry([notAllowed])]),
    expected: rejected(noHostname)
  },
  // With the controller unknown, the order of the entries for our parent does not decide.
  {
    name: "controller unknown: a pending entry ahead of a refusal for our parent does not hide the refusal",
    route: route([entry([accepted("Unknown", "Pending")], ours, OTHER_CONTROLLER), entry([notAllowed])]),
    expected: rejected(notAllowed)
  },
  {
    name: "controller unknown: a stale entry ahead of a refusal for our parent does not hide the refusal",
    route: route([entry([accepted("True", "Accepted", GENERATION - 1)], ours, OTHER_CONTROLLER), entry([noHostname])]),
    expected: rejected(noHostname)
  },
  // Defaults and sectionName.
  {
    name: "an entry that leaves group, kind and namespace to their defaults is ours",
    route: route([entry([accepted()], { name: "gw" })]),
    options: { target: { namespace: "telo-sessions", name: "gw" } },
    expected: RouteVerdict.programmed
  },
  {
    name: "a defaulted namespace is the route's, not the Gateway's: pending",
    route: route([entry([accepted()], { name: "gw" })]),
    expected: RouteVerdict.pending
  },
  {
    name: "sectionName configured: the entry for that listener decides",
    route: route([entry([notAllowed]), entry([accepted()], { ...ours, sectionName: "https" })]),
    options: { target: { ...target, sectionName: "https" } },
    expected: RouteVerdict.programmed
  },
  {
    name: "sectionName configured: an entry for another listener is not ours",
    route: route([entry([accepted()], { ...ours, sectionName: "http" })]),
    options: { target: { ...target, sectionName: "https" } },
    expected: RouteVerdict.pending
  },
  {
    name: "no sectionName configured: an entry for one listener is not ours",
    route: route([entry([accepted()], { ...ours, sectionName: "https" })]),
    expected: RouteVerdict.pending
  },
  // Reasons the spec does not list are passed through unchanged.
  {
    name: "an unknown Accepted=False reason is passed through",
    route: route([entry([accepted("False", "ListenerNotReady")])]),
    expected: RouteVerdict.rejected("ListenerNotReady", "Accepted is False: ListenerNotReady")
  },
  {
    name: "an unknown ResolvedRefs=False reason is passed through",
    route: route([entry([accepted(), resolved("False", "BackendTLSPolicyInvalid")])]),
    expected: RouteVerdict.rejected("BackendTLSPolicyInvalid", "ResolvedRefs is False: BackendTLSPolicyInvalid")
  },
  // Programmed on a route: not in the standard, written by some controllers; theirs to say.
  {
    name: "Accepted and ResolvedRefs True with a current Programmed=False is held: still being programmed",
    route: route([entry([accepted(), resolved(), programmedCondition("False", "ProgrammingInProgress")])]),
    expected: RouteVerdict.held("ProgrammingInProgress", "Programmed is False: ProgrammingInProgress")
  },
  {
    name: "a current Programmed=Unknown is held too",
    route: route([entry([accepted(), programmedCondition("Unknown", "Pending")])]),
    expected: RouteVerdict.held("Pending", "Programmed is Unknown: Pending")
  },
  {
    name: "a current Programmed=True programs the host",
    route: route([entry([accepted(), resolved(), programmedCondition("True", "Programmed")])]),
    expected: RouteVerdict.programmed
  },
  {
    name: "a stale Programmed=True says nothing of this generation: pending",
    route: route([entry([accepted(), resolved(), programmedCondition("True", "Programmed", GENERATION - 1)])]),
    expected: RouteVerdict.pending
  },
  {
    name: "a stale Programmed=False neither holds nor programs: pending",
    route: route([entry([accepted(), programmedCondition("False", "ProgrammingInProgress", GENERATION - 1)])]),
    expected: RouteVerdict.pending
  },
  {
    name: "a rejection outranks Programmed=False",
    route: route([entry([accepted(), backendNotFound, programmedCondition("False", "ProgrammingInProgress")])]),
    expected: rejected(backendNotFound)
  },
  {
    name: "one entry held and one with no conditions: the hold is said",
    route: route([
      entry([], ours, OTHER_CONTROLLER),
      entry([accepted(), programmedCondition("False", "ProgrammingInProgress")])
    ]),
    expected: RouteVerdict.held("ProgrammingInProgress", "Programmed is False: ProgrammingInProgress")
  },
  {
    name: "an HTTPRoute being deleted is never programmed, whatever its status",
    route: deleting(route([entry([accepted(), resolved()])])),
    expected: RouteVerdict.held(
      "RouteBeingDeleted",
      `the HTTPRoute "telo-run-abc-8080" is being deleted (deletionTimestamp ${DELETED_AT}); ` +
        "its status describes what is being torn down"
    )
  },
  {
    name: "a condition from a newer generation than the one read still counts: programmed",
    route: route([entry([accepted("True", "Accepted", GENERATION + 1)])]),
    expected: RouteVerdict.programmed
  }
]

describe("httpRouteVerdict", () => {
  it("has a snapshot for every case the semantics name", () => {
    expect(snapshots.length).toBeGreaterThanOrEqual(15)
  })

  it.each(snapshots.map((s) => [s.name, s] as const))("%s", (_name, s) => {
    expect(httpRouteVerdict(s.route, { target, ...s.options })).toEqual(s.expected)
  })
})

describe("isOurParent", () => {
  it("applies the API defaults for group, kind and namespace", () => {
    expect(isOurParent({ name: "gw" }, target, "gw-ns")).toBe(true)
    expect(isOurParent({ name: "gw" }, target, "telo-sessions")).toBe(false)
  })

  it("tells apart group, kind, name and sectionName", () => {
    expect(isOurParent(ours, target, "telo-sessions")).toBe(true)
    expect(isOurParent({ ...ours, group: "example.com" }, target, "telo-sessions")).toBe(false)
    expect(isOurParent({ ...ours, kind: "ListenerSet" }, target, "telo-sessions")).toBe(false)
    expect(isOurParent({ ...ours, name: "gw2" }, target, "telo-sessions")).toBe(false)
    expect(isOurParent({ ...ours, sectionName: "a" }, { ...target, sectionName: "a" }, "telo-sessions")).toBe(true)
    expect(isOurParent({ ...ours, sectionName: "a" }, { ...target, sectionName: "b" }, "telo-sessions")).toBe(false)
  })
})

describe("ingressVerdict", () => {
  const ingress = (status: Ingress["status"]): Ingress => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "telo-run-abc", namespace: "telo-sessions" },
    ...(status !== undefined ? { status } : {})
  })

  it.each(
    [
      [
        "an IP address was published",
        ingress({ loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } }),
        RouteVerdict.programmed
      ],
      [
        "a hostname was published",
        ingress({ loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } }),
        RouteVerdict.programmed
      ],
      [
        "an address with ports was published",
        ingress({ loadBalancer: { ingress: [{ ip: "203.0.113.7", ports: [{ port: 443, protocol: "TCP" }] }] } }),
        RouteVerdict.programmed
      ],
      ["the address list is empty", ingress({ loadBalancer: { ingress: [] } }), RouteVerdict.pending],
      ["the load balancer status is empty", ingress({ loadBalancer: {} }), RouteVerdict.pending],
      [
        "no status was written (a controller that refuses a rule writes none)",
        ingress(undefined),
        RouteVerdict.pending
      ],
      ["the Ingress does not exist", undefined, RouteVerdict.pending],
      [
        "an Ingress being deleted, its address still published",
        (() => {
          const i = ingress({ loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } })
          return { ...i, metadata: { ...i.metadata, deletionTimestamp: DELETED_AT } }
        })(),
        RouteVerdict.held(
          "RouteBeingDeleted",
          `the Ingress "telo-run-abc" is being deleted (deletionTimestamp ${DELETED_AT}); ` +
            "its status describes what is being torn down"
        )
      ]
    ] as const
  )("%s", (_name, object, expected) => {
    expect(ingressVerdict(object)).toEqual(expected)
  })

  it("never rejects: an Ingress has no rejection signal", () => {
    const verdicts = [undefined, ingress(undefined), ingress({ loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } })].map(
      ingressVerdict
    )
    expect(verdicts.every((v) => v.kind !== "rejected")).toBe(true)
  })
})
