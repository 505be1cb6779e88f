/**
 * Verdict rules that mutation testing found unchecked: with several entries for
 * our parent (the controller unknown), the order of the entries must not decide.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Condition, HttpRoute, RouteParentStatus } from "../../src/domain/Objects.js"
import { RouteVerdict } from "../../src/domain/Routes.js"
import { httpRouteVerdict, type ParentTarget } from "../../src/domain/Verdict.js"

const GENERATION = 3
const target: ParentTarget = { namespace: "gw-ns", name: "gw" }
const parentRef = { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "gw-ns", name: "gw" }

const accepted = (status: Condition["status"], reason: string, observedGeneration = GENERATION): Condition => ({
  type: "Accepted",
  status,
  reason,
  message: `Accepted is ${status}: ${reason}`,
  lastTransitionTime: "2025-01-01T00:00:00Z",
  observedGeneration
})

const entry = (controllerName: string, conditions: ReadonlyArray<Condition>): RouteParentStatus => ({
  parentRef,
  controllerName,
  conditions
})

const route = (parents: ReadonlyArray<RouteParentStatus>): HttpRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name: "telo-run-abc-8080", namespace: "telo-sessions", generation: GENERATION },
  spec: { parentRefs: [parentRef], hostnames: ["8080-abc.telo.run"] },
  status: { parents }
})

describe("httpRouteVerdict with several entries for our parent", () => {
  it("a pending entry ahead of a rejection for our parent does not hide the rejection", () => {
    const parents = [
      entry("a.example.com/mesh", [accepted("Unknown", "Pending")]),
      entry("b.example.com/gateway", [accepted("False", "NotAllowedByListeners")])
    ]
    expect(httpRouteVerdict(route(parents), { target })).toEqual(
      RouteVerdict.rejected("NotAllowedByListeners", "Accepted is False: NotAllowedByListeners")
    )
  })

  it("a stale entry ahead of a rejection for our parent does not hide the rejection", () => {
    const parents = [
      entry("a.example.com/mesh", [accepted("True", "Accepted", GENERATION - 1)]),
      entry("b.example.com/gateway", [accepted("False", "NoMatchingListenerHostname")])
    ]
    expect(httpRouteVerdict(route(parents), { target })).toEqual(
      RouteVerdict.rejected("NoMatchingListenerHostname", "Accepted is False: NoMatchingListenerHostname")
    )
  })

  it("a current acceptance after a rejection still decides programmed", () => {
    const parents = [
      entry("a.example.com/mesh", [accepted("False", "NotAllowedByListeners")]),
      entry("b.example.com/gateway", [accepted("True", "Accepted")])
    ]
    expect(httpRouteVerdict(route(parents), { target })).toEqual(RouteVerdict.programmed)
  })
})
