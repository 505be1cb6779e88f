/**
 * `pods/status` as the controller writes its routes condition there, on both servers:
 * a strategic merge patch merges conditions by `type` (so the kubelet's stay), a JSON
 * merge patch replaces the list, a patch naming another uid (the Pod replaced under its
 * name) is refused, and the subresource takes no change to the spec or the owners.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ROUTES_CONDITION } from "session-routing/controller"
import { fromResponse, PodResource, requestContext } from "session-routing/kubernetes"
import { Contract, ContractLive } from "./ContractCluster.js"
import type { RawApi } from "./RawApi.js"

const STRATEGIC = "application/strategic-merge-patch+json"
const MERGE = "application/merge-patch+json"

/** The condition the library writes, and one standing for another writer's. */
const ROUTES = ROUTES_CONDITION
const OTHER = "contract.session-routing.dev/other"

/** A uid no object has. */
const NOBODY = "00000000-0000-4000-8000-000000000043"

const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`

/**
 * Creates a Pod whose scheduler nobody runs: it stays Pending and unbound, so no
 * kubelet (kwok, on the real control plane) writes its status but the test.
 */
const makePod = (api: RawApi, ns: string, name: string) =>
  Effect.map(
    api.call("POST", pods(ns), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: { app: "session" } },
      spec: { schedulerName: "contract-unscheduled", containers: [{ name: "session", image: "session" }] }
    }),
    (answer) => {
      expect(answer.status, answer.text).toBe(201)
      return answer.body
    }
  )

/** A condition as the library writes it: every field but lastProbeTime. */
const condition = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: "2026-01-01T00:00:00Z"
})

/** The condition as the server answers it: lastProbeTime, never written, is there as null. */
const answered = (written: ReturnType<typeof condition>) => ({ ...written, lastProbeTime: null })

const patchStatus = (api: RawApi, ns: string, name: string, patch: object, type = STRATEGIC) =>
  api.call("PATCH", `${pods(ns)}/${name}/status`, patch, type)

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("pod status", (it) => {
  it.scoped("merges a strategic merge patch's conditions by type: a new type goes first, a known one changes in place", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const pod = yield* makePod(admin, ns, "session")
      const uid = pod.metadata.uid
      const routesFalse = condition(ROUTES, "False", "Pending")
      const other = condition(OTHER, "True", "Other")
      const routesTrue = condition(ROUTES, "True", "Programmed")
      const first = yield* patchStatus(admin, ns, "session", {
        metadata: { uid },
        status: { conditions: [routesFalse] }
      })
      expect([first.status, first.body.status]).toEqual([
        200,
        { phase: "Pending", qosClass: "BestEffort", conditions: [answered(routesFalse)] }
      ])
      const second = yield* patchStatus(admin, ns, "session", { status: { conditions: [other] } })
      expect(second.body.status.conditions).toEqual([answered(other), answered(routesFalse)])
      const third = yield* patchStatus(admin, ns, "session", {
        metadata: { uid },
        status: { conditions: [routesTrue] }
      })
      expect([third.status, third.body.status]).toEqual([
        200,
        { phase: "Pending", qosClass: "BestEffort", conditions: [answered(other), answered(routesTrue)] }
      ])
    }))

  it.scoped("replaces the whole list of conditions with a JSON merge patch", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      yield* makePod(admin, ns, "session")
      const other = condition(OTHER, "True", "Other")
      const routes = condition(ROUTES, "True", "Programmed")
      yield* patchStatus(admin, ns, "session", { status: { conditions: [other] } })
      const merged = yield* patchStatus(admin, ns, "session", { status: { conditions: [routes] } }, MERGE)
      expect([merged.status, merged.body.status.conditions]).toEqual([200, [answered(routes)]])
    }))

  it.scoped("refuses a status patch naming another uid with 422: the uid cannot change", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const pod = yield* makePod(admin, ns, "session")
      const refused = yield* patchStatus(admin, ns, "session", {
        metadata: { uid: NOBODY },
        status: { conditions: [condition(ROUTES, "True", "Programmed")] }
      })
      const cause = {
        reason: "FieldValueInvalid",
        message: `Invalid value: "${NOBODY}": field is immutable`,
        field: "metadata.uid"
      }
      // Not a 409: a patch's uid is no precondition (a PUT's is), but a change the update's validation refuses.
      expect([refused.status, refused.body]).toEqual([422, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `Pod "session" is invalid: metadata.uid: Invalid value: "${NOBODY}": field is immutable`,
        reason: "Invalid",
        // The common metadata check and the Pod's own both find it: the cause twice, the message once.
        details: { name: "session", kind: "Pod", causes: [cause, cause] },
        code: 422
      }])
      const read = fromResponse(requestContext("patch", PodResource, ns, "session"), refused.status, refused.text)
      expect(read._tag).toBe("Invalid")
      const unchanged = yield* admin.call("GET", `${pods(ns)}/session`)
      expect([unchanged.body.metadata.resourceVersion, unchanged.body.status.conditions]).toEqual([
        pod.metadata.resourceVersion,
        undefined
      ])
    }))

  it.scoped("takes no change to the spec or the owner references through pods/status, and takes the labels", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const pod = yield* makePod(admin, ns, "session")
      const routes = condition(ROUTES, "True", "Programmed")
      const patched = yield* patchStatus(admin, ns, "session", {
        metadata: {
          labels: { app: "session", extra: "status" },
          // The garbage collector's business: old kubelets wrote them wrong through status.
          ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "other", uid: NOBODY }]
        },
        spec: { activeDeadlineSeconds: 30, containers: [{ name: "session", image: "other" }] },
        status: { conditions: [routes] }
      })
      expect(patched.status, patched.text).toBe(200)
      expect({
        spec: patched.body.spec,
        ownerReferences: patched.body.metadata.ownerReferences,
        labels: patched.body.metadata.labels,
        conditions: patched.body.status.conditions
      }).toEqual({
        spec: pod.spec,
        ownerReferences: undefined,
        labels: { app: "session", extra: "status" },
        conditions: [answered(routes)]
      })
    }))
})
