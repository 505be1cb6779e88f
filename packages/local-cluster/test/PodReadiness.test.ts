/**
 * The stand-in kubelet's readiness, as pkg/kubelet/status/generate.go derives it: Ready
 * True only when the containers are ready and every readiness gate's condition is True,
 * otherwise False with the kubelet's reason and words; ContainersReady about the
 * containers alone; and a gate's condition written by another client through
 * `pods/status` (a strategic merge patch, merged by type) deciding Ready at once,
 * without the kubelet dropping it or moving a transition time that did not change.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import type { Pod, PodCondition } from "session-routing/kubernetes"
import * as DataPlane from "../src/DataPlane.js"
import {
  containersReadyVerdict,
  readinessOutOfDate,
  readyVerdict,
  withKubeletConditions
} from "../src/internal/podReadiness.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { PodResource } from "../src/ServedResources.js"
import type { ClusterStore } from "../src/Store.js"
import { NS } from "./ClusterFixtures.js"
import { call, send } from "./WireFixtures.js"

const GATE = "session-routing.dev/RoutesProgrammed"

const gated = (name: string, gates: ReadonlyArray<string> = [GATE], conditions?: ReadonlyArray<PodCondition>): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    containers: [{ name: "main", image: "registry.example/app:1.0" }, { name: "sidecar", image: "proxy:2" }],
    readinessGates: gates.map((conditionType) => ({ conditionType }))
  },
  ...(conditions !== undefined ? { status: { conditions } } : {})
})

const condition = (type: string, status: PodCondition["status"]): PodCondition => ({ type, status })

describe("Ready as the kubelet derives it", () => {
  const ready = containersReadyVerdict(gated("web"), true)

  it("says what ContainersReady says while the containers are not ready, gates or not", () => {
    const containers = containersReadyVerdict(gated("web"), false)
    expect(containers).toEqual({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [main sidecar]"
    })
    expect(readyVerdict(gated("web", [GATE], [condition(GATE, "True")]), containers)).toEqual(containers)
  })

  it("holds Ready False while a gate's condition does not exist, naming it", () => {
    expect(readyVerdict(gated("web"), ready)).toEqual({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: `corresponding condition of pod readiness gate "${GATE}" does not exist.`
    })
  })

  it("holds Ready False while a gate's condition is not True, naming its status, every gate joined by commas", () => {
    const pod = gated("web", [GATE, "example.com/Warm", "example.com/Other"], [
      condition(GATE, "False"),
      condition("example.com/Warm", "Unknown")
    ])
    expect(readyVerdict(pod, ready)).toEqual({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: [
        `the status of pod readiness gate "${GATE}" is not "True", but False`,
        `the status of pod readiness gate "example.com/Warm" is not "True", but Unknown`,
        `corresponding condition of pod readiness gate "example.com/Other" does not exist.`
      ].join(", ")
    })
  })

  it("turns Ready True once the containers are ready and every gate's condition is True", () => {
    expect(readyVerdict(gated("web", [GATE], [condition(GATE, "True")]), ready)).toEqual({ status: "True" })
    expect(readyVerdict(gated("web", []), ready)).toEqual({ status: "True" })
  })

  it("keeps other writers' conditions ahead of its own, and a transition time while the status holds", () => {
    const before = gated("web", [GATE], [
      { type: "ContainersReady", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" },
      { type: "Ready", status: "False", lastTransitionTime: "2026-01-01T00:00:00Z" },
      { type: GATE, status: "True", lastTransitionTime: "2026-01-01T00:00:05Z" }
    ])
    expect(withKubeletConditions(before, true, "2026-01-01T00:00:09Z")).toEqual([
      { type: GATE, status: "True", lastTransitionTime: "2026-01-01T00:00:05Z" },
      { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:00Z" },
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:09Z" }
    ])
  })

  it("finds a Pod's Ready out of date only when it has gates, the kubelet has reported, and they disagree", () => {
    const reported = (gateStatus: PodCondition["status"], readyStatus: PodCondition["status"]) =>
      gated("web", [GATE], [
        condition("ContainersReady", "True"),
        condition("Ready", readyStatus),
        condition(GATE, gateStatus)
      ])
    expect(readinessOutOfDate(reported("True", "False"))).toBe(true)
    expect(readinessOutOfDate(reported("False", "True"))).toBe(true)
    expect(readinessOutOfDate(reported("True", "True"))).toBe(false)
    // No kubelet has reported on it: nobody writes its Ready.
    expect(readinessOutOfDate(gated("web", [GATE], [condition(GATE, "True")]))).toBe(false)
    expect(readinessOutOfDate({ ...reported("True", "False"), spec: { containers: [] } })).toBe(false)
  })
})

/** The Pod once `predicate` holds of it. */
const podWhen = (store: ClusterStore, name: string, predicate: (pod: Pod) => boolean) =>
  store.get(PodResource, NS, name).pipe(
    Effect.filterOrFail(predicate, () => "not yet"),
    Effect.retry(Schedule.spaced(Duration.millis(10))),
    Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => `Pod ${name} never got there` })
  )

const conditionOf = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type)
const readyIs = (status: string) => (pod: Pod) => conditionOf(pod, "Ready")?.status === status

const STRATEGIC = "application/strategic-merge-patch+json"
const STATUS = `/api/v1/namespaces/${NS}/pods/web/status`
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

describe("a Pod with a readiness gate, served by the data plane", () => {
  it.scopedLive(
    "is Ready only while its gate's condition, patched into pods/status by another writer, is True; the kubelet's conditions stay",
    () =>
      Effect.gen(function*() {
        const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
        const plane = yield* DataPlane.make(store)
        yield* store.create(PodResource, NS, gated("web"))
        yield* plane.registerPod({ namespace: NS, name: "web" }, { host: "127.0.0.1", port: 8080 })

        const waiting = yield* store.get(PodResource, NS, "web")
        expect(conditionOf(waiting, "ContainersReady")?.status).toBe("True")
        expect(conditionOf(waiting, "Ready")).toMatchObject({
          status: "False",
          reason: "ReadinessGatesNotReady",
          message: `corresponding condition of pod readiness gate "${GATE}" does not exist.`
        })
        const containersSince = conditionOf(waiting, "ContainersReady")?.lastTransitionTime

        // Only the gate's condition is sent: a strategic merge adds it by type beside the kubelet's (first, being new).
        const patched = yield* send(url, "PATCH", STATUS, {
          status: { conditions: [{ type: GATE, status: "True", reason: "RoutesProgrammed" }] }
        }, STRATEGIC)
        expect(patched.status, patched.text).toBe(200)
        expect(patched.body.status.conditions.map((c: PodCondition) => c.type)).toEqual([
          GATE,
          "ContainersReady",
          "Ready"
        ])
        const ready = yield* podWhen(store, "web", readyIs("True"))
        expect(conditionOf(ready, "Ready")).toEqual({
          type: "Ready",
          status: "True",
          lastProbeTime: null,
          lastTransitionTime: expect.any(String)
        })
        expect(conditionOf(ready, GATE)).toMatchObject({ status: "True", reason: "RoutesProgrammed" })
        expect(conditionOf(ready, "ContainersReady")?.lastTransitionTime).toBe(containersSince)

        yield* send(url, "PATCH", STATUS, { status: { conditions: [{ type: GATE, status: "False" }] } }, STRATEGIC)
        const unready = yield* podWhen(store, "web", readyIs("False"))
        expect(conditionOf(unready, "Ready")).toMatchObject({
          reason: "ReadinessGatesNotReady",
          message: `the status of pod readiness gate "${GATE}" is not "True", but False`
        })
        expect(conditionOf(unready, "ContainersReady")?.status).toBe("True")
        expect(unready.status?.podIP).toBe("127.0.0.1")
      })
  )

  it.scopedLive("shows READY for the containers and READINESS GATES as true/total in the wide columns", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const plane = yield* DataPlane.make(store)
      yield* store.create(PodResource, NS, gated("web"))
      yield* store.create(PodResource, NS, { ...gated("plain", []), metadata: { name: "plain" } })
      yield* plane.registerPod({ namespace: NS, name: "web" }, { host: "127.0.0.1", port: 8080 })
      const rows = Effect.map(
        call(url, `/api/v1/namespaces/${NS}/pods`, { headers: { accept: TABLE } }),
        (table) => {
          const names: Array<string> = table.body.columnDefinitions.map((c: { name: string }) => c.name)
          const wide = table.body.columnDefinitions.filter((c: { priority: number }) => c.priority > 0)
          expect(wide.map((c: { name: string }) => c.name)).toEqual(["IP", "Node", "Nominated Node", "Readiness Gates"])
          return table.body.rows.map((
            r: { cells: ReadonlyArray<unknown> }
          ) => [r.cells[0], r.cells[names.indexOf("Ready")], r.cells[names.indexOf("Readiness Gates")]])
        }
      )
      // The containers are ready while the gate holds the Pod back.
      expect(yield* rows).toEqual([["plain", "0/2", "<none>"], ["web", "2/2", "0/1"]])
      yield* send(url, "PATCH", STATUS, { status: { conditions: [{ type: GATE, status: "True" }] } }, STRATEGIC)
      yield* podWhen(store, "web", readyIs("True"))
      expect(yield* rows).toEqual([["plain", "0/2", "<none>"], ["web", "2/2", "1/1"]])
    }))

  it.scopedLive("keeps the gate's condition when the workload stops, and is not Ready for its containers", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const plane = yield* DataPlane.make(store)
      yield* store.create(PodResource, NS, gated("web"))
      yield* plane.registerPod({ namespace: NS, name: "web" }, { host: "127.0.0.1", port: 8080 })
      yield* send(url, "PATCH", STATUS, { status: { conditions: [{ type: GATE, status: "True" }] } }, STRATEGIC)
      yield* podWhen(store, "web", readyIs("True"))
      yield* plane.unregisterPod({ namespace: NS, name: "web" })
      const stopped = yield* store.get(PodResource, NS, "web")
      expect(conditionOf(stopped, GATE)?.status).toBe("True")
      expect(conditionOf(stopped, "Ready")).toMatchObject({
        status: "False",
        reason: "ContainersNotReady",
        message: "containers with unready status: [main sidecar]"
      })
    }))

  it.scopedLive("takes a merge patch of the Pod's annotations, leaving its status", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const plane = yield* DataPlane.make(store)
      yield* store.create(PodResource, NS, gated("web"))
      yield* plane.registerPod({ namespace: NS, name: "web" }, { host: "127.0.0.1", port: 8080 })
      const annotated = yield* send(url, "PATCH", `/api/v1/namespaces/${NS}/pods/web`, {
        metadata: { annotations: { "session-routing.dev/endpoints": "{\"8080\":\"https://a.example.test\"}" } }
      }, "application/merge-patch+json")
      expect(annotated.status, annotated.text).toBe(200)
      expect(annotated.body.metadata.annotations).toEqual({
        "session-routing.dev/endpoints": "{\"8080\":\"https://a.example.test\"}"
      })
      expect(annotated.body.status.conditions.map((c: PodCondition) => c.type)).toEqual(["ContainersReady", "Ready"])
      const removed = yield* send(url, "PATCH", `/api/v1/namespaces/${NS}/pods/web`, {
        metadata: { annotations: { "session-routing.dev/endpoints": null } }
      }, "application/merge-patch+json")
      expect(removed.body.metadata.annotations).toBeUndefined()
    }))
})
