/**
 * Discovery in both forms the API server answers: aggregated (`apidiscovery.k8s.io/v2`,
 * what kubectl 1.26 and later ask `/api` and `/apis` for first) and the legacy lists,
 * which must say the same thing, review groups included.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LocalCluster, type LocalClusterOptions } from "../src/LocalCluster.js"
import { NS } from "./ClusterFixtures.js"
import { call } from "./WireFixtures.js"

type Json = Record<string, any>

// What kubectl 1.35 sends, the legacy JSON last.
const KUBECTL_ACCEPT =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

const cluster = (options: LocalClusterOptions = {}) => LocalCluster.make({ namespaces: [NS], ...options })
const aggregated = (url: string, path: string, accept = KUBECTL_ACCEPT) => call(url, path, { headers: { accept } })

/** `group/version resource [verbs]` for each resource and subresource an aggregated list names. */
const aggregatedEntries = (list: Json): Array<string> =>
  list.items.flatMap((item: Json) =>
    item.versions.flatMap((v: Json) => {
      const gv = item.metadata.name === undefined ? v.version : `${item.metadata.name}/${v.version}`
      return v.resources.flatMap((r: Json) => [
        `${gv} ${r.resource} [${r.verbs}]`,
        ...(r.subresources ?? []).map((s: Json) => `${gv} ${r.resource}/${s.subresource} [${s.verbs}]`)
      ])
    })
  )

describe("aggregated discovery", () => {
  it.scopedLive("answers /apis with every named group when asked, the review group create-only", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const apis = yield* aggregated(url, "/apis")
      expect([apis.status, apis.contentType, apis.body.kind, apis.body.apiVersion]).toEqual([
        200,
        AGGREGATED,
        "APIGroupDiscoveryList",
        "apidiscovery.k8s.io/v2"
      ])
      expect(apis.body.items.map((item: Json) => item.metadata.name)).toEqual([
        "networking.k8s.io",
        "events.k8s.io",
        "discovery.k8s.io",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "gateway.networking.k8s.io"
      ])
      const review = (resource: string, kind: string) => ({
        resource,
        responseKind: { group: "", version: "", kind },
        scope: "Cluster",
        singularResource: kind.toLowerCase(),
        verbs: ["create"]
      })
      expect(apis.body.items.find((item: Json) => item.metadata.name === "authorization.k8s.io")).toEqual({
        metadata: { name: "authorization.k8s.io", creationTimestamp: null },
        versions: [{
          version: "v1",
          resources: [
            review("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
            review("selfsubjectrulesreviews", "SelfSubjectRulesReview")
          ],
          freshness: "Current"
        }]
      })
      const networking = apis.body.items.find((item: Json) => item.metadata.name === "networking.k8s.io")
      expect(networking.versions[0].resources).toContainEqual({
        resource: "ingresses",
        responseKind: { group: "", version: "", kind: "Ingress" },
        scope: "Namespaced",
        singularResource: "ingress",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["ing"],
        subresources: [{
          subresource: "status",
          responseKind: { group: "", version: "", kind: "Ingress" },
          verbs: ["get", "patch", "update"]
        }]
      })
      // Leases as `kubectl api-resources` lists them: namespaced, no short name, no status.
      expect(apis.body.items.find((item: Json) => item.metadata.name === "coordination.k8s.io")).toEqual({
        metadata: { name: "coordination.k8s.io", creationTimestamp: null },
        versions: [{
          version: "v1",
          resources: [{
            resource: "leases",
            responseKind: { group: "", version: "", kind: "Lease" },
            scope: "Namespaced",
            singularResource: "lease",
            verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
          }],
          freshness: "Current"
        }]
      })
      // A custom resource's discovery names the group version it answers with.
      const gateway = apis.body.items.find((item: Json) => item.metadata.name === "gateway.networking.k8s.io")
      expect(gateway.versions[0].resources.map((r: Json) => r.responseKind)).toContainEqual({
        group: "gateway.networking.k8s.io",
        version: "v1",
        kind: "HTTPRoute"
      })
    }))

  it.scopedLive("answers /api with the core group alone, unnamed", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const api = yield* aggregated(url, "/api")
      expect(api.contentType).toBe(AGGREGATED)
      expect(api.body.items.map((item: Json) => item.metadata)).toEqual([{ creationTimestamp: null }])
      expect(api.body.items[0].versions[0].resources.map((r: Json) => r.resource)).toEqual([
        "namespaces",
        "services",
        "pods",
        "events",
        "serviceaccounts"
      ])
    }))

  // `kubectl auth whoami` posts without asking discovery, but it is listed where the real
  // server lists it: v1 only, TokenReview left out since LocalCluster does not serve it.
  it.scopedLive("lists selfsubjectreviews under authentication.k8s.io/v1, create only, in both forms", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const apis = yield* aggregated(url, "/apis")
      expect(apis.body.items.find((item: Json) => item.metadata.name === "authentication.k8s.io")).toEqual({
        metadata: { name: "authentication.k8s.io", creationTimestamp: null },
        versions: [{
          version: "v1",
          resources: [{
            resource: "selfsubjectreviews",
            responseKind: { group: "", version: "", kind: "SelfSubjectReview" },
            scope: "Cluster",
            singularResource: "selfsubjectreview",
            verbs: ["create"]
          }],
          freshness: "Current"
        }]
      })
      const v1 = { groupVersion: "authentication.k8s.io/v1", version: "v1" }
      expect((yield* call(url, "/apis/authentication.k8s.io")).body).toEqual({
        kind: "APIGroup",
        apiVersion: "v1",
        name: "authentication.k8s.io",
        versions: [v1],
        preferredVersion: v1
      })
      expect((yield* call(url, "/apis/authentication.k8s.io/v1")).body).toEqual({
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "authentication.k8s.io/v1",
        resources: [{
          name: "selfsubjectreviews",
          singularName: "selfsubjectreview",
          namespaced: false,
          kind: "SelfSubjectReview",
          verbs: ["create"]
        }]
      })
      for (const path of ["/apis/authentication.k8s.io/v1beta1", "/apis/authentication.k8s.io/v1alpha1"]) {
        expect([path, (yield* call(url, path)).status]).toEqual([path, 404])
      }
    }))

  // `kubectl create token` needs no discovery, but clients that check for the subresource
  // (and api-resources' readers) see it where the real server lists it.
  it.scopedLive("lists a ServiceAccount's token subresource, create only, taking a TokenRequest", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const api = yield* aggregated(url, "/api")
      const accounts = api.body.items[0].versions[0].resources.find((r: Json) => r.resource === "serviceaccounts")
      expect(accounts.subresources).toEqual([{
        subresource: "token",
        responseKind: { group: "authentication.k8s.io", version: "v1", kind: "TokenRequest" },
        verbs: ["create"]
      }])
      const legacy = (yield* call(url, "/api/v1")).body.resources
      const at = legacy.findIndex((r: Json) => r.name === "serviceaccounts")
      expect(legacy[at + 1]).toEqual({
        name: "serviceaccounts/token",
        singularName: "",
        namespaced: true,
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenRequest",
        verbs: ["create"]
      })
    }))

  // kubectl reads only the aggregated lists when it gets them: any resource they
  // missed would be invisible to it, however well its group version's list answers.
  it.scopedLive("lists the same resources and verbs as the legacy group version lists", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const legacy: Array<string> = []
      const core = yield* call(url, "/api/v1")
      legacy.push(...core.body.resources.map((r: Json) => `v1 ${r.name} [${r.verbs}]`))
      for (const group of (yield* call(url, "/apis")).body.groups) {
        const list = yield* call(url, `/apis/${group.preferredVersion.groupVersion}`)
        legacy.push(...list.body.resources.map((r: Json) => `${list.body.groupVersion} ${r.name} [${r.verbs}]`))
      }
      const both = [
        ...aggregatedEntries((yield* aggregated(url, "/api")).body),
        ...aggregatedEntries((yield* aggregated(url, "/apis")).body)
      ]
      expect(both.sort()).toEqual(legacy.sort())
      expect(both).toContain("authorization.k8s.io/v1 selfsubjectaccessreviews [create]")
      expect(both).toContain("authentication.k8s.io/v1 selfsubjectreviews [create]")
      expect(both).toContain(
        "coordination.k8s.io/v1 leases [create,delete,deletecollection,get,list,patch,update,watch]"
      )
    }))

  it.scopedLive("answers the legacy lists to a client that does not ask for v2", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      for (
        const accept of [
          "application/json",
          "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        ]
      ) {
        const apis = yield* aggregated(url, "/apis", accept)
        expect([accept, apis.contentType, apis.body.kind]).toEqual([accept, "application/json", "APIGroupList"])
        expect((yield* aggregated(url, "/api", accept)).body.kind).toBe("APIVersions")
      }
    }))

  it.scopedLive("leaves out a group whose types are not served, in both forms", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster({ gatewayApi: false })
      const names = (yield* aggregated(url, "/apis")).body.items.map((item: Json) => item.metadata.name)
      expect(names).not.toContain("gateway.networking.k8s.io")
      expect(names).toContain("authorization.k8s.io")
    }))
})
