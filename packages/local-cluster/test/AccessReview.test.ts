/**
 * SelfSubjectAccessReview and SelfSubjectRulesReview on an open LocalCluster: the
 * server allows everything, as `--authorization-mode=AlwaysAllow` does, and says so
 * to `kubectl auth can-i` and to `check`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LocalCluster } from "../src/LocalCluster.js"
import { NS } from "./ClusterFixtures.js"
import { call, send } from "./WireFixtures.js"

const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
const SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"

describe("self-reviews on an open cluster", () => {
  it.scopedLive("answers a SelfSubjectAccessReview allowed, echoing its spec, without storing it", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const spec = {
        resourceAttributes: { namespace: NS, verb: "list", group: "networking.k8s.io", resource: "ingresses" }
      }
      const answer = yield* send(url, "POST", SSAR, {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec
      })
      expect([answer.status, answer.body]).toEqual([201, {
        kind: "SelfSubjectAccessReview",
        apiVersion: "authorization.k8s.io/v1",
        metadata: { creationTimestamp: null },
        spec,
        status: { allowed: true }
      }])
      const nonResource = yield* send(url, "POST", SSAR, {
        spec: { nonResourceAttributes: { verb: "get", path: "/metrics" } }
      })
      expect(nonResource.body.status).toEqual({ allowed: true })
    }))

  it.scopedLive("refuses a review that asks about both or neither kind of attributes, and any method but POST", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const neither = yield* send(url, "POST", SSAR, { spec: {} })
      expect([neither.status, neither.body.reason, neither.body.message]).toEqual([
        422,
        "Invalid",
        "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: exactly one of nonResourceAttributes or resourceAttributes must be specified"
      ])
      expect((yield* call(url, SSAR)).status).toBe(405)
    }))

  it.scopedLive("answers a SelfSubjectRulesReview with AlwaysAllow's rules, and serves the group's discovery", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const rules = yield* send(url, "POST", SSRR, { spec: { namespace: NS } })
      expect([rules.status, rules.body.status]).toEqual([201, {
        resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        incomplete: false
      }])
      const list = yield* call(url, "/apis/authorization.k8s.io/v1")
      expect(list.body.resources.map((r: { name: string; verbs: Array<string> }) => [r.name, r.verbs])).toEqual([
        ["selfsubjectaccessreviews", ["create"]],
        ["selfsubjectrulesreviews", ["create"]]
      ])
    }))

  it.scopedLive("lists the review group in /apis, and answers its group and version discovery", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const v1 = { groupVersion: "authorization.k8s.io/v1", version: "v1" }
      const group = { name: "authorization.k8s.io", versions: [v1], preferredVersion: v1 }
      const apis = yield* call(url, "/apis")
      expect(apis.body.groups).toContainEqual(group)
      expect((yield* call(url, "/apis/authorization.k8s.io")).body).toEqual({
        kind: "APIGroup",
        apiVersion: "v1",
        ...group
      })
      const review = (name: string, kind: string) => ({
        name,
        singularName: kind.toLowerCase(),
        namespaced: false,
        kind,
        verbs: ["create"]
      })
      expect((yield* call(url, "/apis/authorization.k8s.io/v1")).body).toEqual({
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "authorization.k8s.io/v1",
        resources: [
          review("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
          review("selfsubjectrulesreviews", "SelfSubjectRulesReview")
        ]
      })
    }))
})
