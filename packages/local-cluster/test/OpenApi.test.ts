/**
 * OpenAPI v3 over HTTP, as kubectl 1.35 reads it for `explain` and client-side apply:
 * the index of group-version documents, each kind's schema under the server's name with
 * its group-version-kind, the operations that lead `explain` from a resource to its kind,
 * and schemas that say what the store enforces (list types and merge keys from the
 * structural shapes, a CRD's bounds and defaults).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { LocalCluster } from "../src/LocalCluster.js"
import { HttpRouteResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { call } from "./WireFixtures.js"

const GATEWAY_V1 = "apis/gateway.networking.k8s.io/v1"

describe("HttpApi OpenAPI v3", () => {
  it.scopedLive("lists one document per served group version, each at a URL with its content's hash", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const index = yield* call(url, "/openapi/v3")
      expect([index.status, index.contentType]).toEqual([200, "application/json"])
      const paths = index.body.paths as Record<string, { serverRelativeURL: string }>
      expect(Object.keys(paths)).toEqual(expect.arrayContaining(["api/v1", "apis/networking.k8s.io/v1", GATEWAY_V1]))
      for (const [path, { serverRelativeURL }] of Object.entries(paths)) {
        expect(serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${path}\\?hash=[0-9A-F]{128}$`))
        expect((yield* call(url, serverRelativeURL)).status).toBe(200)
      }
      expect((yield* call(url, "/openapi/v3/apis/example.com/v1")).text).toBe("404 page not found\n")
    }))

  it.scopedLive("names each kind as the server does and tags it with its group, version and kind", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const networking = (yield* call(url, "/openapi/v3/apis/networking.k8s.io/v1")).body
      const ingress = networking.components.schemas["io.k8s.api.networking.v1.Ingress"]
      expect(ingress["x-kubernetes-group-version-kind"]).toEqual([{
        group: "networking.k8s.io",
        kind: "Ingress",
        version: "v1"
      }])
      expect(ingress.properties.metadata).toEqual({
        $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      })
      expect(
        networking.components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].properties.ownerReferences
      ).toMatchObject({
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["uid"],
        "x-kubernetes-patch-merge-key": "uid"
      })
      // How `kubectl explain` gets from `ingresses` to the kind: an operation on its path.
      expect(networking.paths["/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"].get).toMatchObject({
        operationId: "listNetworkingV1NamespacedIngress",
        "x-kubernetes-group-version-kind": { group: "networking.k8s.io", kind: "Ingress", version: "v1" }
      })

      const core = (yield* call(url, "/openapi/v3/api/v1")).body
      expect(core.components.schemas["io.k8s.api.core.v1.Service"].properties.spec.properties.ports).toMatchObject({
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "port",
        items: {
          properties: { port: { type: "integer", format: "int32" }, protocol: { type: "string", default: "TCP" } }
        }
      })
    }))

  it.scopedLive("gives a CRD's kinds their CRD's constraints and defaults, and drops a CRD that is not installed", () =>
    Effect.gen(function*() {
      const { store, url } = yield* LocalCluster.make({ namespaces: [NS] })
      const gateway = (yield* call(url, `/openapi/v3/${GATEWAY_V1}`)).body
      const route = gateway.components.schemas["io.k8s.networking.gateway.v1.HTTPRoute"]
      expect(route["x-kubernetes-group-version-kind"]).toEqual([{
        group: "gateway.networking.k8s.io",
        kind: "HTTPRoute",
        version: "v1"
      }])
      const parentRefs = route.properties.spec.properties.parentRefs
      expect(parentRefs).toMatchObject({ type: "array", maxItems: 32, items: { required: ["name"] } })
      expect(route.description).toMatch(/^An HTTPRoute \(Gateway API\)/)
      expect(parentRefs.items.properties.sectionName.description).toMatch(/^A listener of the Gateway, by name/)
      expect(parentRefs.items.properties.kind).toMatchObject({ type: "string", default: "Gateway", maxLength: 63 })
      expect(parentRefs.items.properties.port).toMatchObject({ type: "integer", minimum: 1, maximum: 65535 })
      // Custom resources are patched as JSON: no strategic-merge extensions.
      expect(JSON.stringify(route)).not.toContain("x-kubernetes-patch-strategy")

      yield* store.setServed(HttpRouteResource as ResourceType<KubeObject>, false)
      const without = (yield* call(url, `/openapi/v3/${GATEWAY_V1}`)).body
      expect(Object.keys(without.components.schemas)).not.toContain("io.k8s.networking.gateway.v1.HTTPRoute")
    }))
})

describe("HttpApi OpenAPI v2", () => {
  it.scopedLive("names dryRun on each served kind's PATCH, in JSON and in the protobuf kubectl 1.20 asks for", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const document = (yield* call(url, "/openapi/v2")).body
      const patch = document.paths["/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses/{name}"].patch
      expect(patch["x-kubernetes-group-version-kind"]).toEqual({
        group: "networking.k8s.io",
        kind: "Ingress",
        version: "v1"
      })
      expect(patch.parameters.map((p: { name: string }) => p.name)).toContain("dryRun")
      expect(Object.keys(document.paths)).toContain(
        "/apis/gateway.networking.k8s.io/v1/namespaces/{namespace}/httproutes/{name}"
      )

      const proto = yield* Effect.promise(async () => {
        const response = await fetch(`${url}/openapi/v2`, {
          headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" }
        })
        return { type: response.headers.get("content-type"), bytes: Buffer.from(await response.arrayBuffer()) }
      })
      expect(proto.type).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
      // Paths (field 8) hold more than 127 bytes: the lengths are varints, not single bytes.
      expect(proto.bytes.includes(Buffer.from(`{"group":"networking.k8s.io","kind":"Ingress","version":"v1"}`))).toBe(
        true
      )
      expect(proto.bytes.includes(Buffer.from("dryRun"))).toBe(true)
    }))
})
