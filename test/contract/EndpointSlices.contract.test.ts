/**
 * The EndpointSlice controller as the route probe reads its slices, on both servers:
 * one slice per selecting Service, labelled with the Service's name, listing the
 * addresses of its running Pods, `ready` as each Pod's Ready condition says (a
 * readiness gate counts only through Ready, which the kubelet writes), and the ports
 * the Service's targetPorts resolve to.
 *
 * No kubelet runs these Pods on either server: they are bound to a Node the test makes,
 * which kwok (the real control plane's kubelet) does not run, and the test writes
 * their status through `pods/status` as a kubelet would. The real controller lists no
 * Pod whose Node it does not know; LocalCluster serves no Nodes (see its README).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Contract, ContractLive, onRealServer } from "./ContractCluster.js"
import { eventually } from "./Eventually.js"
import type { Answer, RawApi } from "./RawApi.js"

const STRATEGIC = "application/strategic-merge-patch+json"

/** Each test waits on the controller; on the real control plane that takes a moment. */
const TEST_LIMIT = 60_000

const SERVICE_NAME_LABEL = "kubernetes.io/service-name"
const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
const GATE = "contract.session-routing.dev/gate"

const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const slicesOf = (ns: string, service: string) =>
  `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${
    encodeURIComponent(`${SERVICE_NAME_LABEL}=${service}`)
  }`

/** A Node for the namespace's Pods, for the scope: the real controller skips a Pod whose Node it does not know. */
const makeNode = (api: RawApi, ns: string) =>
  Effect.acquireRelease(
    Effect.map(
      api.call("POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name: ns } }),
      (answer) => {
        // LocalCluster serves no Nodes (404); its controller needs none.
        expect([201, 404], answer.text).toContain(answer.status)
        return ns
      }
    ),
    (name) => Effect.asVoid(api.call("DELETE", `/api/v1/nodes/${name}`))
  )

/** The Service the tests select Pods with: one port by a container port's name, one by number. */
const makeService = (api: RawApi, ns: string) =>
  Effect.map(
    api.call("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: {
        selector: { app: "web" },
        ports: [
          { name: "http", port: 80, targetPort: "web", protocol: "TCP" },
          { name: "metrics", port: 9090, targetPort: 9091, protocol: "TCP" }
        ]
      }
    }),
    (answer) => {
      expect(answer.status, answer.text).toBe(201)
      return answer.body
    }
  )

/**
 * A Pod bound to `node`; none runs it. No grace period: with no kubelet to confirm a
 * graceful delete, the namespace's cleanup would wait on it for ever.
 */
const makePod = (
  api: RawApi,
  ns: string,
  node: string,
  name: string,
  options: { readonly app?: string; readonly gated?: boolean } = {}
) =>
  Effect.map(
    api.call("POST", pods(ns), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: { app: options.app ?? "web" } },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 0,
        ...(options.gated === true ? { readinessGates: [{ conditionType: GATE }] } : {}),
        containers: [{ name: "session", image: "session", ports: [{ name: "web", containerPort: 8080 }] }]
      }
    }),
    (answer) => {
      expect(answer.status, answer.text).toBe(201)
      return answer.body
    }
  )

/** Writes the Pod's status as a kubelet reports it: running at `ip`, its containers ready, and Ready as given. */
const kubeletReports = (
  api: RawApi,
  ns: string,
  name: string,
  ip: string,
  ready: boolean,
  more: ReadonlyArray<object> = []
) =>
  Effect.map(
    api.call("PATCH", `${pods(ns)}/${name}/status`, {
      status: {
        phase: "Running",
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          ...more,
          { type: "ContainersReady", status: "True" },
          { type: "Ready", status: ready ? "True" : "False", ...(ready ? {} : { reason: "ReadinessGatesNotReady" }) }
        ]
      }
    }, STRATEGIC),
    (answer) => expect(answer.status, answer.text).toBe(200)
  )

/** An endpoint as the controller writes one for `pod`. */
const endpointOf = (pod: any, ip: string, ready: boolean, node: string) => ({
  addresses: [ip],
  conditions: { ready, serving: ready, terminating: false },
  nodeName: node,
  targetRef: { kind: "Pod", namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid }
})

/** The one slice of the answer, its endpoints in name order (the controller keeps no order). */
const onlySlice = (answer: Answer) => {
  expect(answer.body.items, answer.text).toHaveLength(1)
  const slice = answer.body.items[0]
  const endpoints = Array.isArray(slice.endpoints)
    ? [...slice.endpoints].sort((a: any, b: any) => a.targetRef.name.localeCompare(b.targetRef.name))
    : slice.endpoints
  return { ...slice, endpoints }
}

/** The readiness of each endpoint of the Service's slices, by Pod name. */
const readiness = (answer: Answer): Record<string, boolean | undefined> =>
  Object.fromEntries(
    (answer.body?.items ?? []).flatMap((slice: any) =>
      (slice.endpoints ?? []).map((e: any) => [e.targetRef.name, e.conditions?.ready])
    )
  )

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("endpoint slices", (it) => {
  it.scoped(
    "lists a selecting Service's running Pods by address, ready as their Ready says, with the ports its targetPorts name",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const node = yield* makeNode(admin, ns)
        const service = yield* makeService(admin, ns)
        const ready = yield* makePod(admin, ns, node, "ready")
        const unready = yield* makePod(admin, ns, node, "unready")
        yield* makePod(admin, ns, node, "pending")
        yield* makePod(admin, ns, node, "other", { app: "other" })
        // No Pod has an address yet: a slice, and nothing in it (`null` on the wire: the fields have no omitempty).
        const empty = onlySlice(
          yield* eventually("a slice", admin.call("GET", slicesOf(ns, "web")), (a) => a.body?.items?.length > 0)
        )
        expect({
          labels: empty.metadata.labels,
          ownerReferences: empty.metadata.ownerReferences,
          addressType: empty.addressType,
          endpoints: empty.endpoints,
          ports: empty.ports
        }).toEqual({
          labels: { [SERVICE_NAME_LABEL]: "web", [MANAGED_BY_LABEL]: "endpointslice-controller.k8s.io" },
          ownerReferences: [{
            apiVersion: "v1",
            kind: "Service",
            name: "web",
            uid: service.metadata.uid,
            controller: true,
            blockOwnerDeletion: true
          }],
          addressType: "IPv4",
          endpoints: null,
          ports: null
        })
        yield* kubeletReports(admin, ns, "ready", "10.244.0.11", true)
        yield* kubeletReports(admin, ns, "unready", "10.244.0.12", false)
        yield* kubeletReports(admin, ns, "other", "10.244.0.14", true)
        const listed = onlySlice(
          yield* eventually(
            "both running Pods listed",
            admin.call("GET", slicesOf(ns, "web")),
            (a) => Object.keys(readiness(a)).length === 2
          )
        )
        expect({ addressType: listed.addressType, endpoints: listed.endpoints, ports: listed.ports }).toEqual({
          addressType: "IPv4",
          endpoints: [endpointOf(ready, "10.244.0.11", true, node), endpointOf(unready, "10.244.0.12", false, node)],
          ports: [{ name: "http", port: 8080, protocol: "TCP" }, { name: "metrics", port: 9091, protocol: "TCP" }]
        })
      }),
    TEST_LIMIT
  )

  it.scoped(
    "follows Ready alone: a readiness gate's condition turning True leaves the endpoint not ready until Ready is",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const node = yield* makeNode(admin, ns)
        yield* makeService(admin, ns)
        const gated = yield* makePod(admin, ns, node, "gated", { gated: true })
        yield* kubeletReports(admin, ns, "gated", "10.244.0.21", false, [{ type: GATE, status: "False" }])
        yield* eventually(
          "the gated Pod listed, not ready",
          admin.call("GET", slicesOf(ns, "web")),
          (a) => readiness(a).gated === false
        )
        // As the library's controller sets its gate's condition.
        const opened = yield* admin.call("PATCH", `${pods(ns)}/gated/status`, {
          metadata: { uid: gated.metadata.uid },
          status: { conditions: [{ type: GATE, status: "True" }] }
        }, STRATEGIC)
        expect(opened.status, opened.text).toBe(200)
        // A later change the controller must take in: once it shows, the gate's change was seen too.
        yield* makePod(admin, ns, node, "later")
        yield* kubeletReports(admin, ns, "later", "10.244.0.22", true)
        const seen = yield* eventually(
          "the later Pod listed",
          admin.call("GET", slicesOf(ns, "web")),
          (a) => readiness(a).later === true
        )
        expect(readiness(seen)).toEqual({ gated: false, later: true })
        yield* kubeletReports(admin, ns, "gated", "10.244.0.21", true)
        const open = onlySlice(
          yield* eventually(
            "the gated Pod ready",
            admin.call("GET", slicesOf(ns, "web")),
            (a) => readiness(a).gated === true
          )
        )
        expect(open.endpoints[0]).toEqual(endpointOf(gated, "10.244.0.21", true, node))
      }),
    TEST_LIMIT
  )

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster serves no Nodes) lists no Pod bound to a Node that does not exist",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const node = yield* makeNode(admin, ns)
        yield* makeService(admin, ns)
        yield* makePod(admin, ns, node, "placed")
        yield* makePod(admin, ns, `${ns}-nowhere`, "astray")
        yield* kubeletReports(admin, ns, "astray", "10.244.0.32", true)
        yield* kubeletReports(admin, ns, "placed", "10.244.0.31", true)
        const seen = yield* eventually(
          "the placed Pod listed",
          admin.call("GET", slicesOf(ns, "web")),
          (a) => readiness(a).placed === true
        )
        expect(readiness(seen)).toEqual({ placed: true })
      }),
    TEST_LIMIT
  )
})
