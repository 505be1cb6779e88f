/**
 * A uid in a write's body, answered as kube-apiserver 1.35.4 answers it (each answer
 * below was recorded from the real control plane, `npm run cluster:real`): a PUT's uid
 * is a precondition, refused by storage with 409 before the resourceVersion is looked
 * at; what a patch (merge, strategic merge, JSON, apply) produces with another uid is a
 * change to an immutable field, 422, after the resourceVersion; a custom resource's
 * status patch takes nothing but the status, so its uid is ignored; an apply that
 * names a uid and finds no object is a 409 of its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as InMemoryKubeClient from "../src/InMemoryKubeClient.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { PodResource } from "../src/ServedResources.js"
import { httpRoute, ingress, NS, pod } from "./ClusterFixtures.js"
import { call, send } from "./WireFixtures.js"

const OTHER = "00000000-0000-0000-0000-000000000001"
const PODS = `/api/v1/namespaces/${NS}/pods`
const INGRESSES = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`
const ROUTES = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`
const SERVICES = `/api/v1/namespaces/${NS}/services`

const MERGE = "application/merge-patch+json"
const STRATEGIC = "application/strategic-merge-patch+json"
const JSON_PATCH = "application/json-patch+json"
const APPLY = "application/apply-patch+yaml"

/** The Status kube-apiserver answers a patch that would change the uid of `kind` "name" (group "" for core). */
const immutableUid = (kind: string, group: string, name: string) => {
  const cause = {
    reason: "FieldValueInvalid",
    message: `Invalid value: "${OTHER}": field is immutable`,
    field: "metadata.uid"
  }
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${
      group === "" ? kind : `${kind}.${group}`
    } "${name}" is invalid: metadata.uid: Invalid value: "${OTHER}": field is immutable`,
    reason: "Invalid",
    // The common metadata check and the type's own both find it: the cause twice, the message once.
    details: { name, ...(group !== "" ? { group } : {}), kind, causes: [cause, cause] },
    code: 422
  }
}

/** The Status kube-apiserver answers a PUT whose uid is not the stored object's (`live` "" when none is stored). */
const uidPrecondition = (
  qualified: string,
  plural: string,
  group: string,
  key: string,
  name: string,
  live: string
) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message:
    `Operation cannot be fulfilled on ${qualified} "${name}": StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${OTHER}, UID in object meta: ${live}`,
  reason: "Conflict",
  details: { name, ...(group !== "" ? { group } : {}), kind: plural },
  code: 409
})

const cluster = LocalCluster.make({ namespaces: [NS] })

describe("a uid in a write's body", () => {
  it.scopedLive("refuses a pods/status patch that names another uid as a change to an immutable field, and writes nothing", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      const created = (yield* send(url, "POST", PODS, pod("p"))).body
      const conditions = [{ type: "example.com/Routed", status: "True" }]
      for (const type of [MERGE, STRATEGIC]) {
        const refused = yield* send(
          url,
          "PATCH",
          `${PODS}/p/status`,
          { metadata: { uid: OTHER }, status: { conditions } },
          type
        )
        expect([type, refused.status, refused.body]).toEqual([type, 422, immutableUid("Pod", "", "p")])
      }
      const after = (yield* call(url, `${PODS}/p`)).body
      expect([after.metadata.uid, after.metadata.resourceVersion, after.status?.conditions]).toEqual([
        created.metadata.uid,
        created.metadata.resourceVersion,
        created.status?.conditions
      ])
      // The live uid is no change: the same patch with it is written.
      const landed = yield* send(
        url,
        "PATCH",
        `${PODS}/p/status`,
        { metadata: { uid: created.metadata.uid }, status: { conditions } },
        STRATEGIC
      )
      expect([landed.status, landed.body.status.conditions]).toEqual([
        200,
        conditions.map((c) => ({ ...c, lastProbeTime: null, lastTransitionTime: null }))
      ])
    }))

  it.scopedLive("refuses every kind of patch that names another uid, on built-in and custom types alike, with 422", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      yield* send(url, "POST", PODS, pod("p"))
      yield* send(url, "POST", INGRESSES, ingress("web"))
      yield* send(url, "POST", ROUTES, httpRoute("r"))
      const patches: ReadonlyArray<readonly [string, string, unknown, ReturnType<typeof immutableUid>]> = [
        [`${PODS}/p`, MERGE, { metadata: { uid: OTHER, labels: { a: "b" } } }, immutableUid("Pod", "", "p")],
        [`${PODS}/p`, STRATEGIC, { metadata: { uid: OTHER } }, immutableUid("Pod", "", "p")],
        [
          `${PODS}/p`,
          JSON_PATCH,
          [{ op: "replace", path: "/metadata/uid", value: OTHER }],
          immutableUid("Pod", "", "p")
        ],
        [`${PODS}/p?fieldManager=t`, APPLY, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", uid: OTHER, labels: { c: "d" } }
        }, immutableUid("Pod", "", "p")],
        [
          `${INGRESSES}/web`,
          MERGE,
          { metadata: { uid: OTHER } },
          immutableUid("Ingress", "networking.k8s.io", "web")
        ],
        [
          `${INGRESSES}/web/status`,
          STRATEGIC,
          { metadata: { uid: OTHER } },
          immutableUid("Ingress", "networking.k8s.io", "web")
        ],
        [
          `${ROUTES}/r`,
          MERGE,
          { metadata: { uid: OTHER } },
          immutableUid("HTTPRoute", "gateway.networking.k8s.io", "r")
        ]
      ]
      for (const [path, type, body, expected] of patches) {
        const refused = yield* send(url, "PATCH", path, typeof body === "string" ? body : JSON.stringify(body), type)
        expect([path, type, refused.status, refused.body]).toEqual([path, type, 422, expected])
      }
    }))

  it.scopedLive("ignores the uid of a custom resource's status patch, as its status strategy takes only the status", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      const created = (yield* send(url, "POST", ROUTES, httpRoute("r"))).body
      const patched = yield* send(url, "PATCH", `${ROUTES}/r/status`, { metadata: { uid: OTHER } }, MERGE)
      expect([patched.status, patched.body.metadata.uid]).toEqual([200, created.metadata.uid])
    }))

  it.scopedLive("checks a patch's resourceVersion before its uid: a stale one is the optimistic-lock conflict", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      yield* send(url, "POST", PODS, pod("p"))
      const stale = yield* send(
        url,
        "PATCH",
        `${PODS}/p/status`,
        { metadata: { uid: OTHER, resourceVersion: "1" } },
        MERGE
      )
      expect([stale.status, stale.body.message]).toEqual([
        409,
        `Operation cannot be fulfilled on pods "p": the object has been modified; please apply your changes to the latest version and try again`
      ])
    }))

  it.scopedLive("refuses a PUT of the object or its status naming another uid as a failed precondition, before its resourceVersion", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      const created = (yield* send(url, "POST", PODS, pod("p"))).body
      const route = (yield* send(url, "POST", ROUTES, httpRoute("r"))).body
      const podKey = `/registry/pods/${NS}/p`
      const routeKey = `/registry/gateway.networking.k8s.io/httproutes/${NS}/r`
      const puts = [
        [`${PODS}/p`, created, uidPrecondition("pods", "pods", "", podKey, "p", created.metadata.uid)],
        [`${PODS}/p/status`, created, uidPrecondition("pods", "pods", "", podKey, "p", created.metadata.uid)],
        [
          `${ROUTES}/r/status`,
          route,
          uidPrecondition(
            "httproutes.gateway.networking.k8s.io",
            "httproutes",
            "gateway.networking.k8s.io",
            routeKey,
            "r",
            route.metadata.uid
          )
        ]
      ] as const
      for (const [path, live, expected] of puts) {
        for (const resourceVersion of [live.metadata.resourceVersion, "1", undefined]) {
          const body = { ...live, metadata: { ...live.metadata, uid: OTHER, resourceVersion } }
          const refused = yield* send(url, "PUT", path, body)
          expect([path, resourceVersion, refused.status, refused.body]).toEqual([path, resourceVersion, 409, expected])
        }
      }
    }))

  it.scopedLive("refuses a PUT that would create an object under a uid, and an apply that names one and finds no object", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster
      const lease = (name: string) => ({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, uid: OTHER },
        spec: {}
      })
      const put = yield* send(url, "PUT", `${LEASES}/new2`, lease("new2"))
      expect([put.status, put.body]).toEqual([
        409,
        uidPrecondition(
          "leases.coordination.k8s.io",
          "leases",
          "coordination.k8s.io",
          `/registry/leases/${NS}/new2`,
          "new2",
          ""
        )
      ])
      const service = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "s1", uid: OTHER },
        spec: { ports: [{ port: 80 }] }
      }
      const putService = yield* send(url, "PUT", `${SERVICES}/s1`, service)
      expect([putService.status, putService.body.message]).toEqual([
        409,
        uidPrecondition("services", "services", "", `/registry/services/specs/${NS}/s1`, "s1", "").message
      ])
      const applied = yield* send(url, "PATCH", `${LEASES}/new1?fieldManager=x`, JSON.stringify(lease("new1")), APPLY)
      expect([applied.status, applied.body.message, applied.body.details]).toEqual([
        409,
        `Operation cannot be fulfilled on leases.coordination.k8s.io "new1": uid mismatch: the provided object specified uid ${OTHER}, and no existing object was found`,
        { name: "new1", group: "coordination.k8s.io", kind: "leases" }
      ])
      for (const path of [`${LEASES}/new1`, `${LEASES}/new2`, `${SERVICES}/s1`]) {
        expect([path, (yield* call(url, path)).status]).toEqual([path, 404])
      }
      // POST takes no precondition: the server gives the object a uid of its own.
      const posted = yield* send(url, "POST", LEASES, lease("new3"))
      expect(posted.status).toBe(201)
      expect(posted.body.metadata.uid).not.toBe(OTHER)
    }))

  it.scopedLive("refuses the in-memory client's pods/status patch naming another uid as the HTTP face does", () =>
    Effect.gen(function*() {
      const store = yield* makeMemoryStore({ namespaces: [NS] })
      const client = yield* InMemoryKubeClient.make(store)
      yield* store.create(PodResource, NS, pod("p"))
      const refused = yield* Effect.flip(
        client.pods!.patchStatus(NS, "p", {
          metadata: { uid: OTHER },
          status: { conditions: [{ type: "example.com/Routed", status: "True" }] }
        })
      )
      expect([refused._tag, refused.code, refused.reason]).toEqual([
        "Invalid",
        422,
        `Pod "p" is invalid: metadata.uid: Invalid value: "${OTHER}": field is immutable`
      ])
    }))
})
