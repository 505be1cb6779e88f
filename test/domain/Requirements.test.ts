/**
 * What `check` asks the authorizer for is what the least-privilege manifest grants:
 * the two are written apart (one as questions, one as RBAC rules), so this holds them
 * together, verb for verb, in both modes and both status sources.
 */
import { describe, expect, it } from "@effect/vitest"
import { clusterRules, sessionRules } from "../../src/domain/RbacManifest.js"
import { featureNeeds, routingNeeds } from "../../src/domain/Requirements.js"

const NS = "telo-sessions"

const sorted = (verbs: ReadonlyArray<string>) => [...verbs].sort()

describe("routingNeeds", () => {
  for (const mode of ["ingress", "gateway"] as const) {
    for (const [statusSource, probe] of [["watch", false], ["poll", false], ["watch", true]] as const) {
      it(`asks for exactly the verbs the ${mode} manifest grants (${statusSource}${probe ? ", probing" : ""})`, () => {
        const settings = {
          sessionNamespace: NS,
          gatewayNamespace: NS,
          watch: statusSource === "watch",
          events: true,
          probe
        }
        const rbac = { mode, sessionNamespace: NS, gateway: { name: "sessions" }, statusSource, probe }
        const asked = [...routingNeeds(mode, settings), ...featureNeeds(settings)].map((need) => ({
          group: need.resource.group,
          resource: need.subresource === undefined
            ? need.resource.plural
            : `${need.resource.plural}/${need.subresource}`,
          scope: need.namespace === undefined ? "cluster" : "namespace",
          verbs: sorted(need.verbs)
        }))
        const granted = [
          ...sessionRules(rbac).map((rule) => ({ rule, scope: "namespace" })),
          ...clusterRules(rbac).map((rule) => ({ rule, scope: "cluster" }))
        ]
          // The namespace's own read is the namespace check, not a permission question.
          .filter(({ rule }) => rule.resources?.[0] !== "namespaces")
          .map(({ rule, scope }) => ({
            group: rule.apiGroups?.[0] ?? "",
            resource: rule.resources?.[0] ?? "",
            scope,
            verbs: sorted(rule.verbs)
          }))
        const byResource = (
          a: { readonly resource: string; readonly group: string },
          b: { readonly resource: string; readonly group: string }
        ) => a.resource.localeCompare(b.resource) || a.group.localeCompare(b.group)
        expect([...asked].sort(byResource)).toEqual([...granted].sort(byResource))
      })
    }
  }
})
