/**
 * The garbage collector as session objects depend on it, on both servers: a session's
 * Service, Ingress and HTTPRoute name their Pod as owner and go when it goes; a
 * foreground delete holds the owner until its blocking dependents are gone; an owner
 * reference to a uid no object has is collected, and one beside a live owner is dropped.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Contract, ContractLive } from "./ContractCluster.js"
import { eventually } from "./Eventually.js"
import type { RawApi } from "./RawApi.js"

const MERGE = "application/merge-patch+json"

/** Each test waits on the collector; on the real control plane that takes seconds. */
const TEST_LIMIT = 60_000

/** A uid no object has. */
const NOBODY = "00000000-0000-4000-8000-000000000043"

/** A finalizer of the test's own, holding a dependent until the test lets it go. */
const HOLD = "contract.session-routing.dev/hold"

const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`
const services = (ns: string) => `/api/v1/namespaces/${ns}/services`
const ingresses = (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`
const httpRoutes = (ns: string) => `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes`

interface Owner {
  readonly name: string
  readonly uid: string
}

/** An owner reference to a Pod, as the library writes one on a session's objects. */
const ownedBy = (owner: Owner) => ({
  apiVersion: "v1",
  kind: "Pod",
  name: owner.name,
  uid: owner.uid,
  controller: true,
  blockOwnerDeletion: true
})

const service = (name: string, ownerReferences: ReadonlyArray<object>, finalizers: ReadonlyArray<string> = []) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, ownerReferences, ...(finalizers.length > 0 ? { finalizers } : {}) },
  // No selector: the EndpointSlice controller makes no slice (a dependent of the Service) for it.
  spec: { ports: [{ name: "http", port: 8080, protocol: "TCP" }] }
})

const ingress = (name: string, ownerReferences: ReadonlyArray<object>) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, ownerReferences },
  spec: {
    // A class no controller serves: on the real control plane Traefik would write status.
    ingressClassName: "contract-unclaimed",
    rules: [{
      host: "8080-gc.sessions.localtest.me",
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name, port: { number: 8080 } } } }]
      }
    }]
  }
})

const httpRoute = (name: string, ownerReferences: ReadonlyArray<object>) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, ownerReferences },
  spec: { parentRefs: [{ name: "contract-none" }] }
})

/**
 * Creates a Pod to own things. Its scheduler is one nobody runs: the Pod stays unbound,
 * so no kubelet (kwok, on the real control plane) writes it, and the API server deletes
 * it at once (an unbound Pod has no grace period), as LocalCluster deletes every Pod.
 */
const makePod = (api: RawApi, ns: string, name: string) =>
  Effect.map(
    api.call("POST", pods(ns), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { schedulerName: "contract-unscheduled", containers: [{ name: "session", image: "session" }] }
    }),
    (answer): Owner => {
      expect(answer.status, answer.text).toBe(201)
      return { name, uid: String(answer.body.metadata.uid) }
    }
  )

const create = (api: RawApi, path: string, body: object) =>
  Effect.map(api.call("POST", path, body), (answer) => {
    expect(answer.status, answer.text).toBe(201)
    return answer.body
  })

const gone = (api: RawApi, path: string) =>
  eventually(`${path} collected`, api.call("GET", path), (answer) => answer.status === 404)

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("garbage collection", (it) => {
  it.scoped(
    "deletes a Pod's Service, Ingress and HTTPRoute after the Pod is deleted with the default propagation",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const owner = yield* makePod(admin, ns, "session")
        const refs = [ownedBy(owner)]
        yield* create(admin, services(ns), service("session", refs))
        yield* create(admin, ingresses(ns), ingress("session", refs))
        yield* create(admin, httpRoutes(ns), httpRoute("session", refs))
        const deleted = yield* admin.call("DELETE", `${pods(ns)}/session`)
        expect(deleted.status, deleted.text).toBe(200)
        // Background: the owner goes first, without waiting on anything.
        expect((yield* admin.call("GET", `${pods(ns)}/session`)).status).toBe(404)
        for (const path of [`${services(ns)}/session`, `${ingresses(ns)}/session`, `${httpRoutes(ns)}/session`]) {
          yield* gone(admin, path)
        }
      }),
    TEST_LIMIT
  )

  it.scoped(
    "holds a Pod deleted in the foreground, marked and with foregroundDeletion, until its blocking dependent is gone",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const owner = yield* makePod(admin, ns, "session")
        yield* create(admin, services(ns), service("session", [ownedBy(owner)], [HOLD]))
        const deleted = yield* admin.call("DELETE", `${pods(ns)}/session?propagationPolicy=Foreground`)
        expect([deleted.status, deleted.body.metadata.finalizers]).toEqual([200, ["foregroundDeletion"]])
        expect(deleted.body.metadata.deletionTimestamp).toEqual(expect.any(String))
        // The collector deletes the dependent, which its finalizer holds; the owner waits on it.
        const marked = yield* eventually(
          "the dependent marked for deletion",
          admin.call("GET", `${services(ns)}/session`),
          (answer) => answer.body?.metadata?.deletionTimestamp !== undefined
        )
        expect(marked.body.metadata.finalizers).toEqual([HOLD])
        const held = yield* admin.call("GET", `${pods(ns)}/session`)
        expect([held.status, held.body.metadata.finalizers, held.body.metadata.deletionTimestamp]).toEqual([
          200,
          ["foregroundDeletion"],
          deleted.body.metadata.deletionTimestamp
        ])
        const released = yield* admin.call(
          "PATCH",
          `${services(ns)}/session`,
          { metadata: { finalizers: null } },
          MERGE
        )
        expect(released.status, released.text).toBe(200)
        yield* gone(admin, `${services(ns)}/session`)
        yield* gone(admin, `${pods(ns)}/session`)
      }),
    TEST_LIMIT
  )

  it.scoped(
    "collects an object whose owner reference names a uid no object has, under an absent name or a namesake's",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        // A Pod of the name, but not the one the reference was written for: a Pod replaced under its name.
        yield* makePod(admin, ns, "replaced")
        yield* create(admin, services(ns), service("absent", [ownedBy({ name: "absent", uid: NOBODY })]))
        yield* create(admin, services(ns), service("namesake", [ownedBy({ name: "replaced", uid: NOBODY })]))
        yield* gone(admin, `${services(ns)}/absent`)
        yield* gone(admin, `${services(ns)}/namesake`)
        expect((yield* admin.call("GET", `${pods(ns)}/replaced`)).status).toBe(200)
      }),
    TEST_LIMIT
  )

  it.scoped(
    "keeps an object with one live owner and one gone, taking the gone owner's reference off it",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const live = yield* makePod(admin, ns, "live")
        const refs = [ownedBy({ name: "gone", uid: NOBODY }), { ...ownedBy(live), controller: false }]
        const created = yield* create(admin, services(ns), service("shared", refs))
        const kept = yield* eventually(
          "the gone owner's reference taken off",
          admin.call("GET", `${services(ns)}/shared`),
          (answer) => answer.status !== 200 || answer.body.metadata.ownerReferences?.length !== 2
        )
        expect([kept.status, kept.body.metadata.uid, kept.body.metadata.ownerReferences]).toEqual([
          200,
          created.metadata.uid,
          [{ ...ownedBy(live), controller: false }]
        ])
      }),
    TEST_LIMIT
  )
})
