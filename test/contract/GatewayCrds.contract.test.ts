/**
 * The Gateway API CRDs (v1, standard channel) as the library's HTTPRoutes meet them,
 * on both servers: the defaults the schema fills in, what its OpenAPI checks and CEL
 * rules refuse (hostnames, parentRefs, path matches, backend ports, a Gateway's
 * listeners) with the causes' fields and words, and the status subresource a
 * Gateway controller writes.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { GatewayResource, HttpRouteResource, resourcePath } from "session-routing/kubernetes"
import { buildSessionHttpRoutes } from "../../src/domain/Manifests.js"
import type { HttpRoute } from "../../src/domain/Objects.js"
import { Contract, ContractLive, onRealServer } from "./ContractCluster.js"

const MERGE = "application/merge-patch+json"
const GROUP = "gateway.networking.k8s.io"
const HOSTNAME_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const UNCHECKED = {
  reason: "FieldValueInvalid",
  message:
    "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
  field: "<nil>"
}

/**
 * The library's HTTPRoute for port 8080 of session `s1`, attached to a Gateway nobody
 * serves (so no controller writes its status). Without the owner reference to its
 * Pod: with no such Pod, the garbage collector would delete it under the test.
 */
const libraryRoute = (ns: string): HttpRoute => {
  const [route] = buildSessionHttpRoutes(
    {
      sessionNamespace: ns,
      managedBy: "session-routing",
      baseDomain: "sessions.localtest.me",
      gateway: { name: "contract-none", namespace: ns }
    },
    {
      sessionId: "s1",
      podName: "session",
      podUid: "0b7b1c9e-0000-4000-8000-000000000001",
      ports: [{ port: 8080, protocol: "tcp" }]
    }
  )
  const { ownerReferences: _, ...metadata } = route!.metadata ?? {}
  return { ...route!, metadata }
}

/** The library's route with `spec` changed, under another name. */
const routeWith = (ns: string, name: string, spec: (spec: any) => object): HttpRoute => {
  const route = libraryRoute(ns)
  return { ...route, metadata: { ...route.metadata, name }, spec: spec(route.spec) } as HttpRoute
}

/** A 422 for `kind` `name`, as the server words one: one cause bare, several bracketed. */
const invalid = (
  kind: string,
  name: string,
  causes: ReadonlyArray<{ reason: string; message: string; field: string }>
) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `${kind}.${GROUP} "${name}" is invalid: ${
    causes.length === 1
      ? `${causes[0]!.field}: ${causes[0]!.message}`
      : `[${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}]`
  }`,
  reason: "Invalid",
  details: { name, group: GROUP, kind, causes },
  code: 422
})

const unmatched = (field: string, value: string) => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: "${value}": ${field} in body should match '${HOSTNAME_PATTERN}'`,
  field
})

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("gateway API CRDs", (it) => {
  it.scoped("takes the library's HTTPRoute and fills in the defaults of its backendRef", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const route = libraryRoute(ns)
      const created = yield* admin.call("POST", resourcePath(HttpRouteResource, ns), route)
      expect(created.status, created.text).toBe(201)
      expect(created.body.spec).toEqual({
        parentRefs: route.spec?.parentRefs,
        hostnames: ["8080-s1.sessions.localtest.me"],
        rules: [{
          matches: [{ path: { type: "PathPrefix", value: "/" } }],
          backendRefs: [{ group: "", kind: "Service", name: "telo-run-s1", port: 8080, weight: 1 }]
        }]
      })
    }))

  it.scoped("refuses a hostname that is not a lowercase DNS name with 422, a cause on each spec.hostnames[i]", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const hostnames = [
        "8080_s1.sessions.localtest.me",
        "8080-S1.sessions.localtest.me",
        "8080-s1.sessions.localtest.me"
      ]
      const refused = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "hosts", (spec) => ({ ...spec, hostnames }))
      )
      expect([refused.status, refused.body]).toEqual([
        422,
        invalid("HTTPRoute", "hosts", [
          unmatched("spec.hostnames[0]", hostnames[0]!),
          unmatched("spec.hostnames[1]", hostnames[1]!)
        ])
      ])
      // An empty one is too short, and only that: the string checks stop at the first failure.
      const empty = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "empty", (spec) => ({ ...spec, hostnames: [""] }))
      )
      expect(empty.body.details.causes).toEqual([{
        reason: "FieldValueInvalid",
        message: `Invalid value: "": spec.hostnames[0] in body should be at least 1 chars long`,
        field: "spec.hostnames[0]"
      }])
    }))

  it.scoped("refuses more than 16 hostnames with TooMany on spec.hostnames, its CEL rules then unchecked", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const hostnames = Array.from({ length: 17 }, (_, i) => `${8000 + i}-s1.sessions.localtest.me`)
      const refused = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "many", (spec) => ({ ...spec, hostnames }))
      )
      expect(refused.body).toEqual(invalid("HTTPRoute", "many", [
        { reason: "FieldValueTooMany", message: "Too many: 17: must have at most 16 items", field: "spec.hostnames" },
        UNCHECKED
      ]))
    }))

  it.scoped("refuses a parentRef without a name with Required on spec.parentRefs[0].name", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const refused = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "nameless", (spec) => ({
          ...spec,
          parentRefs: spec.parentRefs.map(({ name: _, ...ref }: any) => ref)
        }))
      )
      expect(refused.body).toEqual(invalid("HTTPRoute", "nameless", [
        { reason: "FieldValueRequired", message: "Required value", field: "spec.parentRefs[0].name" },
        UNCHECKED
      ]))
    }))

  it.scoped("refuses a PathPrefix not starting with / by the CEL rule on the match's path, printing no value", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const refused = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "relative", (spec) => ({
          ...spec,
          rules: [{ ...spec.rules[0], matches: [{ path: { type: "PathPrefix", value: "api" } }] }]
        }))
      )
      expect(refused.body).toEqual(invalid("HTTPRoute", "relative", [{
        reason: "FieldValueInvalid",
        message:
          "Invalid value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        field: "spec.rules[0].matches[0].path"
      }]))
    }))

  it.scoped("refuses a backendRef port out of 1 to 65535 on its port, and a Service backend without one by CEL", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const backends = (backendRefs: Array<object>) => (spec: any) => ({
        ...spec,
        rules: [{ ...spec.rules[0], backendRefs }]
      })
      const outOfRange = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "ports", backends([{ name: "telo-run-s1", port: 0 }, { name: "telo-run-s1", port: 65536 }]))
      )
      const port = (i: number) => `spec.rules[0].backendRefs[${i}].port`
      expect(outOfRange.body).toEqual(invalid("HTTPRoute", "ports", [
        {
          reason: "FieldValueInvalid",
          message: `Invalid value: 0: ${port(0)} in body should be greater than or equal to 1`,
          field: port(0)
        },
        {
          reason: "FieldValueInvalid",
          message: `Invalid value: 65536: ${port(1)} in body should be less than or equal to 65535`,
          field: port(1)
        }
      ]))
      const portless = yield* admin.call(
        "POST",
        resourcePath(HttpRouteResource, ns),
        routeWith(ns, "portless", backends([{ name: "telo-run-s1" }]))
      )
      expect(portless.body).toEqual(invalid("HTTPRoute", "portless", [{
        reason: "FieldValueInvalid",
        message: "Invalid value: Must have port for Service reference",
        field: "spec.rules[0].backendRefs[0]"
      }]))
    }))

  it.scoped("refuses a Gateway listener's bad hostname on its field, and a repeated listener name as a duplicate and by CEL", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const gateway = (name: string, listeners: Array<object>) => ({
        apiVersion: `${GROUP}/v1`,
        kind: "Gateway",
        metadata: { name },
        spec: { gatewayClassName: "contract-none", listeners }
      })
      const badHost = yield* admin.call(
        "POST",
        resourcePath(GatewayResource, ns),
        gateway("host", [{ name: "http", port: 80, protocol: "HTTP", hostname: "*.Sessions.localtest.me" }])
      )
      expect(badHost.body).toEqual(invalid("Gateway", "host", [
        unmatched("spec.listeners[0].hostname", "*.Sessions.localtest.me")
      ]))
      const twice = yield* admin.call(
        "POST",
        resourcePath(GatewayResource, ns),
        gateway("twice", [
          { name: "http", port: 80, protocol: "HTTP" },
          { name: "http", port: 8080, protocol: "HTTP" }
        ])
      )
      expect(twice.body).toEqual(invalid("Gateway", "twice", [
        { reason: "FieldValueDuplicate", message: `Duplicate value: {"name":"http"}`, field: "spec.listeners[1]" },
        {
          reason: "FieldValueInvalid",
          message: "Invalid value: Listener name must be unique within the Gateway",
          field: "spec.listeners"
        }
      ]))
    }))

  it.scoped("writes status.parents with a merge patch of /status, leaving spec and generation be; a patch of the object leaves status be", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const route = libraryRoute(ns)
      const path = resourcePath(HttpRouteResource, ns, route.metadata?.name)
      const created = (yield* admin.call("POST", resourcePath(HttpRouteResource, ns), route)).body
      const status = {
        parents: [{
          parentRef: { group: GROUP, kind: "Gateway", namespace: ns, name: "contract-none" },
          controllerName: "example.com/contract",
          conditions: [{
            type: "Accepted",
            status: "True",
            reason: "Accepted",
            message: "attached",
            lastTransitionTime: "2026-01-01T00:00:00Z",
            observedGeneration: 1
          }]
        }]
      }
      // A spec in the same patch is not the status subresource's to change.
      const written = yield* admin.call(
        "PATCH",
        `${path}/status`,
        { status, spec: { hostnames: ["elsewhere.sessions.localtest.me"] } },
        MERGE
      )
      expect(written.status, written.text).toBe(200)
      expect([written.body.status, written.body.spec, written.body.metadata.generation]).toEqual([
        status,
        created.spec,
        created.metadata.generation
      ])
      expect(written.body.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion)
      const relabelled = yield* admin.call(
        "PATCH",
        path,
        { metadata: { labels: { turn: "second" } }, status: { parents: [] } },
        MERGE
      )
      expect([relabelled.status, relabelled.body.status, relabelled.body.metadata.labels.turn]).toEqual([
        200,
        status,
        "second"
      ])
    }))

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster declares HTTPRoute status loosely) refuses a status.parents entry without conditions or with a controllerName that is not a domain and path",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const route = libraryRoute(ns)
        yield* admin.call("POST", resourcePath(HttpRouteResource, ns), route)
        const refused = yield* admin.call(
          "PATCH",
          `${resourcePath(HttpRouteResource, ns, route.metadata?.name)}/status`,
          {
            status: { parents: [{ parentRef: { name: "contract-none" }, controllerName: "contract", conditions: [] }] }
          },
          MERGE
        )
        // Sorted: the server checks an object's properties in Go's map order.
        expect([refused.status, refused.body.details.causes.map((c: any) => [c.reason, c.field]).sort()]).toEqual([
          422,
          [["FieldValueInvalid", "status.parents[0].conditions"], [
            "FieldValueInvalid",
            "status.parents[0].controllerName"
          ]]
        ])
      })
  )
})
