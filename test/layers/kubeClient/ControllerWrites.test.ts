/**
 * The live client's controller writes over HTTP against LocalCluster on 127.0.0.1:
 * Leases with the API's optimistic concurrency (the create that loses to an existing
 * Lease, the replace from a stale read, a spec the server refuses), a Pod's readiness
 * gate condition patched into `pods/status` deciding its Ready with the stand-in
 * kubelet's conditions kept, the endpoints annotation merged into the Pod, and RBAC
 * granting `leases` and `pods/status` apart from `pods`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Credential, SessionCluster } from "@session-routing/local-cluster"
import { Effect } from "effect"
import type { Lease, Pod, PodCondition } from "../../../src/domain/Objects.js"
import { PodResource } from "../../../src/domain/Resources.js"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import type { KubeError } from "../../../src/services/KubeError.js"
import { eventually } from "../../support/RouterHarness.js"
import { defaultClientAs, grant } from "../../support/SecuredCluster.js"

const GATE = "session-routing.dev/RoutesProgrammed"

/** A cluster whose data plane stands in for the kubelet, and the live client on its kubeconfig. */
const setup = Effect.gen(function*() {
  const sc = yield* SessionCluster.make({ ingress: false, gateway: false })
  const kc = new k8s.KubeConfig()
  kc.loadFromString(sc.cluster.kubeconfig())
  const client = yield* KubeClientLive.make(kc)
  return { sc, client, ns: sc.namespace }
})

const lease = (holder: string, leaseDurationSeconds = 15): Lease => ({
  metadata: { name: "session-routing-controller" },
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds,
    acquireTime: "2026-01-02T03:04:05.000000Z",
    renewTime: "2026-01-02T03:04:05.000000Z",
    leaseTransitions: 0
  }
})

const failureOf = <A>(effect: Effect.Effect<A, KubeError>) =>
  Effect.map(Effect.flip(effect), (error) => ({ tag: error._tag, code: error.code, reason: error.reason }))

const conditionOf = (pod: Pod, type: string): PodCondition | undefined =>
  pod.status?.conditions?.find((c) => c.type === type)

describe("Leases over HTTP with the live client", () => {
  it.scopedLive("creates a Lease, and a second create of it fails with AlreadyExists", () =>
    Effect.gen(function*() {
      const { client, ns } = yield* setup
      const created = yield* client.leases!.create(ns, lease("candidate-a"))
      expect(created.spec).toEqual(lease("candidate-a").spec)
      expect(created.metadata?.resourceVersion).toEqual(expect.any(String))
      expect(yield* failureOf(client.leases!.create(ns, lease("candidate-b")))).toEqual({
        tag: "AlreadyExists",
        code: 409,
        reason: `leases.coordination.k8s.io "session-routing-controller" already exists`
      })
      expect((yield* client.leases!.get(ns, "session-routing-controller")).spec?.holderIdentity).toBe("candidate-a")
    }))

  it.scopedLive("replaces a Lease from the version it read, and fails a replace from an older read with Conflict", () =>
    Effect.gen(function*() {
      const { client, ns } = yield* setup
      yield* client.leases!.create(ns, lease("candidate-a"))
      const read = yield* client.leases!.get(ns, "session-routing-controller")
      const renewed = yield* client.leases!.replace(ns, {
        ...read,
        spec: { ...read.spec, renewTime: "2026-01-02T03:04:15.000000Z" }
      })
      expect(renewed.spec?.renewTime).toBe("2026-01-02T03:04:15.000000Z")
      expect(renewed.metadata?.resourceVersion).not.toBe(read.metadata?.resourceVersion)
      // A second candidate that read before the renewal takes nothing.
      const taken = { ...read, spec: { ...read.spec, holderIdentity: "candidate-b", leaseTransitions: 1 } }
      expect(yield* failureOf(client.leases!.replace(ns, taken))).toEqual({
        tag: "Conflict",
        code: 409,
        reason:
          `Operation cannot be fulfilled on leases.coordination.k8s.io "session-routing-controller": the object has been modified; please apply your changes to the latest version and try again`
      })
      expect((yield* client.leases!.get(ns, "session-routing-controller")).spec?.holderIdentity).toBe("candidate-a")
    }))

  it.scopedLive("fails a Lease whose duration is not positive with Invalid, naming the field", () =>
    Effect.gen(function*() {
      const { client, ns } = yield* setup
      const error = yield* Effect.flip(client.leases!.create(ns, lease("candidate-a", 0)))
      expect([error._tag, error.code]).toEqual(["Invalid", 422])
      expect(error._tag === "Invalid" && error.causes).toEqual([{
        reason: "FieldValueInvalid",
        message: "Invalid value: 0: must be greater than 0",
        field: "spec.leaseDurationSeconds"
      }])
      expect((yield* failureOf(client.leases!.get(ns, "session-routing-controller"))).tag).toBe("NotFound")
    }))
})

describe("a Pod's readiness gate over HTTP with the live client", () => {
  it.scopedLive(
    "holds the Pod not Ready until its gate's condition is patched True, and again once it is False, the kubelet's conditions kept",
    () =>
      Effect.gen(function*() {
        const { client, ns, sc } = yield* setup
        yield* sc.cluster.store.create(PodResource, ns, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "web" },
          spec: { containers: [{ name: "main", image: "app:1" }], readinessGates: [{ conditionType: GATE }] }
        })
        yield* sc.dataPlane!.registerPod({ namespace: ns, name: "web" }, { host: "127.0.0.1", port: 8080 })
        const read = client.get(PodResource, ns, "web")

        const waiting = yield* read
        expect(conditionOf(waiting, "ContainersReady")?.status).toBe("True")
        expect(conditionOf(waiting, "Ready")).toMatchObject({
          status: "False",
          reason: "ReadinessGatesNotReady",
          message: `corresponding condition of pod readiness gate "${GATE}" does not exist.`
        })

        const patched = yield* client.pods!.patchStatus(ns, "web", {
          status: { conditions: [{ type: GATE, status: "True", reason: "RoutesProgrammed", message: "2 routes" }] }
        })
        // The patch names one condition: the kubelet's two are still there beside it (a
        // strategic merge puts what the stored list lacks first, as kube-apiserver does).
        expect(patched.status?.conditions?.map((c) => c.type)).toEqual([GATE, "ContainersReady", "Ready"])
        const ready = yield* eventually(read, (pod) => conditionOf(pod, "Ready")?.status === "True")
        expect(conditionOf(ready, "ContainersReady")?.lastTransitionTime).toBe(
          conditionOf(waiting, "ContainersReady")?.lastTransitionTime
        )
        expect(conditionOf(ready, GATE)).toMatchObject({
          status: "True",
          reason: "RoutesProgrammed",
          message: "2 routes"
        })

        yield* client.pods!.patchStatus(ns, "web", { status: { conditions: [{ type: GATE, status: "False" }] } })
        const unready = yield* eventually(read, (pod) => conditionOf(pod, "Ready")?.status === "False")
        expect(conditionOf(unready, "Ready")).toMatchObject({
          reason: "ReadinessGatesNotReady",
          message: `the status of pod readiness gate "${GATE}" is not "True", but False`
        })
        expect(conditionOf(unready, "ContainersReady")?.status).toBe("True")
      })
  )

  it.scopedLive("merges the endpoints annotation into the Pod and removes it with null", () =>
    Effect.gen(function*() {
      const { client, ns, sc } = yield* setup
      yield* sc.cluster.store.create(PodResource, ns, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", annotations: { team: "a" } },
        spec: { containers: [{ name: "main", image: "app:1" }] }
      })
      const annotated = yield* client.pods!.patch(ns, "web", {
        metadata: { annotations: { "session-routing.dev/endpoints": "{\"8080\":\"https://a.example.test\"}" } }
      })
      expect(annotated.metadata?.annotations).toEqual({
        team: "a",
        "session-routing.dev/endpoints": "{\"8080\":\"https://a.example.test\"}"
      })
      const removed = yield* client.pods!.patch(ns, "web", {
        metadata: { annotations: { "session-routing.dev/endpoints": null } }
      })
      expect(removed.metadata?.annotations).toEqual({ team: "a" })
      expect(yield* failureOf(client.pods!.patch(ns, "gone", { metadata: { annotations: { a: "b" } } }))).toEqual({
        tag: "NotFound",
        code: 404,
        reason: `pods "gone" not found`
      })
    }))
})

describe("controller writes under RBAC", () => {
  it.scopedLive("needs leases granted for leader election, and pods/status apart from pods for the condition", () =>
    Effect.gen(function*() {
      const sc = yield* SessionCluster.make({ ingress: false, gateway: false, auth: { rbac: true } })
      const ns = sc.namespace
      yield* sc.cluster.store.create(PodResource, ns, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "main", image: "app:1" }] }
      })
      yield* grant(sc.cluster, ns, "controller", { user: "controller" }, [
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
        { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] }
      ])
      const as = (name: string) =>
        Effect.provide(KubeClient, defaultClientAs(sc.cluster, Credential.token(name))).pipe(Effect.orDie)
      const controller = yield* as("controller")
      const stranger = yield* as("stranger")

      const created = yield* controller.leases!.create(ns, lease("controller-0"))
      yield* controller.leases!.replace(ns, created)
      yield* controller.pods!.patchStatus(ns, "web", { status: { conditions: [{ type: GATE, status: "True" }] } })
      // `pods/status` grants nothing on the Pod itself.
      const annotate = yield* Effect.flip(controller.pods!.patch(ns, "web", { metadata: { annotations: { a: "b" } } }))
      expect([annotate._tag, annotate.code]).toEqual(["Forbidden", 403])
      expect(annotate.reason).toContain(`cannot patch resource "pods" in API group "" in the namespace "${ns}"`)

      const denied = yield* Effect.flip(stranger.leases!.get(ns, "session-routing-controller"))
      expect([denied._tag, denied.code]).toEqual(["Forbidden", 403])
      expect(denied.reason).toContain(`cannot get resource "leases" in API group "coordination.k8s.io"`)
      const status = yield* Effect.flip(
        stranger.pods!.patchStatus(ns, "web", { status: { conditions: [{ type: GATE, status: "False" }] } })
      )
      expect(status.reason).toContain(`cannot patch resource "pods/status" in API group ""`)
    }))
})
