/**
 * The wire facts of LocalCluster's HTTP API, checked with raw fetch on 127.0.0.1:
 * status codes, content types, Status bodies, the plain-text 404 and 429, watch
 * framing and header flushing, discovery, patches, and shutdown of open watches.
 * A last group talks to it through @kubernetes/client-node, as the live layer does.
 */
import { describe, expect, it } from "@effect/vitest"
import { CoreV1Api, KubeConfig, NetworkingV1Api, Watch } from "@kubernetes/client-node"
import { Effect, Exit, Scope } from "effect"
import { type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { Fault } from "../src/Faults.js"
import { LocalCluster, type LocalClusterOptions } from "../src/LocalCluster.js"
import { HttpRouteResource } from "../src/ServedResources.js"
import { httpRoute, ingress, NS, service } from "./ClusterFixtures.js"
import { call, lineReader, send } from "./WireFixtures.js"

const ING = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`

const cluster = (options: LocalClusterOptions = {}) => LocalCluster.make({ namespaces: [NS], ...options })

describe("HttpApi discovery", () => {
  it.scopedLive("serves /api, /apis and the APIResourceLists kubectl needs", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const api = yield* call(url, "/api")
      expect(api.body.kind).toBe("APIVersions")
      expect(api.body.versions).toEqual(["v1"])
      const apis = yield* call(url, "/apis")
      expect(apis.body.groups.map((g: { name: string }) => g.name)).toEqual([
        "networking.k8s.io",
        "events.k8s.io",
        "discovery.k8s.io",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "gateway.networking.k8s.io"
      ])
      const networking = yield* call(url, "/apis/networking.k8s.io/v1")
      expect(networking.contentType).toBe("application/json")
      expect(networking.body).toMatchObject({
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "networking.k8s.io/v1"
      })
      expect(networking.body.resources).toContainEqual({
        name: "ingresses",
        singularName: "ingress",
        namespaced: true,
        kind: "Ingress",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["ing"]
      })
      expect(networking.body.resources).toContainEqual({
        name: "ingresses/status",
        singularName: "",
        namespaced: true,
        kind: "Ingress",
        verbs: ["get", "patch", "update"]
      })
      const core = yield* call(url, "/api/v1")
      expect(core.body.resources.map((r: { name: string }) => r.name)).toEqual([
        "namespaces",
        "namespaces/status",
        "services",
        "services/status",
        "pods",
        "pods/status",
        "events",
        "serviceaccounts",
        "serviceaccounts/token"
      ])
      expect((yield* call(url, "/version")).body).toMatchObject({ major: "1", minor: "35", gitVersion: "v1.35.4" })
    }))

  it.scopedLive("answers an unserved type, and discovery of its group, with the plain-text 404", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster({ gatewayApi: false })
      for (
        const path of [
          `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`,
          `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/web`,
          "/apis/gateway.networking.k8s.io/v1",
          "/apis/gateway.networking.k8s.io",
          "/no/such/path"
        ]
      ) {
        const answer = yield* call(url, path)
        expect([path, answer.status, answer.contentType, answer.text]).toEqual([
          path,
          404,
          "text/plain; charset=utf-8",
          "404 page not found\n"
        ])
      }
      const post = yield* send(url, "POST", `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`, {})
      expect([post.status, post.text]).toEqual([404, "404 page not found\n"])
      const apis = yield* call(url, "/apis")
      expect(apis.body.groups.map((g: { name: string }) => g.name)).toEqual([
        "networking.k8s.io",
        "events.k8s.io",
        "discovery.k8s.io",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io"
      ])
      expect((yield* send(url, "POST", "/apis", {})).status).toBe(405)
    }))

  it.scopedLive("answers 404 text for one unserved type while its group still serves the others", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster({ unserved: [HttpRouteResource] as ReadonlyArray<ResourceType<KubeObject>> })
      const answer = yield* call(url, `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`)
      expect([answer.status, answer.text]).toEqual([404, "404 page not found\n"])
      const group = yield* call(url, "/apis/gateway.networking.k8s.io/v1")
      expect(group.body.resources.map((r: { name: string }) => r.name)).not.toContain("httproutes")
      expect((yield* call(url, `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways`)).status).toBe(200)
    }))

  it.scopedLive("serves OpenAPI v2 as protobuf with a Content-Type Go can parse, and as JSON", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const proto = yield* Effect.promise(() =>
        fetch(`${url}/openapi/v2`, {
          headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" }
        })
      )
      expect(proto.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
      const bytes = new Uint8Array(yield* Effect.promise(() => proto.arrayBuffer()))
      expect([...bytes.slice(0, 5)]).toEqual([0x0a, 3, ...Buffer.from("2.0")])
      expect((yield* call(url, "/openapi/v2")).body.swagger).toBe("2.0")
    }))
})

describe("HttpApi writes", () => {
  it.scopedLive("creates with 201 and JSON, and reads back with 200", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const created = yield* send(url, "POST", ING, ingress("web"))
      expect([created.status, created.contentType]).toEqual([201, "application/json"])
      expect(created.body.metadata).toMatchObject({ name: "web", namespace: NS, generation: 1 })
      const got = yield* call(url, `${ING}/web`)
      expect(got.status).toBe(200)
      expect(got.body.metadata.uid).toBe(created.body.metadata.uid)
    }))

  it.scopedLive("answers failures with a JSON Status and its code", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const created = (yield* send(url, "POST", ING, ingress("web"))).body
      const missing = yield* call(url, `${ING}/nope`)
      expect([missing.status, missing.contentType, missing.body.reason]).toEqual([404, "application/json", "NotFound"])
      expect((yield* send(url, "POST", ING, ingress("web"))).status).toBe(409)
      yield* send(url, "PUT", `${ING}/web`, { ...created, metadata: { ...created.metadata, labels: { a: "b" } } })
      const stale = yield* send(url, "PUT", `${ING}/web`, created)
      expect([stale.status, stale.body.reason, stale.body.message]).toEqual([
        409,
        "Conflict",
        `Operation cannot be fulfilled on ingresses.networking.k8s.io "web": the object has been modified; please apply your changes to the latest version and try again`
      ])
      const withVersion = yield* send(url, "POST", ING, {
        ...ingress("other"),
        metadata: { name: "other", resourceVersion: "3" }
      })
      expect([withVersion.status, withVersion.body.message]).toEqual([
        500,
        "resourceVersion should not be set on objects to be created"
      ])
      expect((yield* send(url, "POST", ING, ingress("bad", { host: "Bad_Host" }))).status).toBe(422)
      expect((yield* send(url, "PUT", `${ING}/web`, ingress("other"))).status).toBe(400)
      expect(
        (yield* send(url, "POST", `/apis/networking.k8s.io/v1/namespaces/missing/ingresses`, ingress("x"))).body.message
      ).toBe(
        `namespaces "missing" not found`
      )
      const notJson = yield* send(url, "POST", ING, "{", "application/json")
      expect([notJson.status, notJson.body.reason]).toEqual([400, "BadRequest"])
      const text = yield* send(url, "POST", ING, "x", "text/plain")
      expect([text.status, text.body.reason]).toEqual([415, "UnsupportedMediaType"])
    }))

  it.scopedLive("deletes an Ingress with a Success Status that has no code, and a Service with the object", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const created = (yield* send(url, "POST", ING, ingress("web"))).body
      const deleted = yield* call(url, `${ING}/web`, { method: "DELETE" })
      expect([deleted.status, deleted.body]).toEqual([200, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: "web", group: "networking.k8s.io", kind: "ingresses", uid: created.metadata.uid }
      }])
      yield* send(url, "POST", `/api/v1/namespaces/${NS}/services`, service("web"))
      const svc = yield* call(url, `/api/v1/namespaces/${NS}/services/web`, { method: "DELETE" })
      expect([svc.status, svc.body.kind, svc.body.metadata.name]).toEqual([200, "Service", "web"])
    }))

  it.scopedLive("answers 200 with the marked object to a delete that finalizers hold, 202 only when orphanDependents is false", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const held = (name: string) => ({ ...ingress(name), metadata: { name, finalizers: ["example.test/hold"] } })
      yield* send(url, "POST", ING, held("web"))
      // The apiserver answers 202 only when the client asked for cascading deletion with
      // orphanDependents=false; a delete held by finalizers is otherwise a plain 200.
      const pending = yield* call(url, `${ING}/web`, { method: "DELETE" })
      expect([pending.status, pending.body.kind, typeof pending.body.metadata.deletionTimestamp]).toEqual([
        200,
        "Ingress",
        "string"
      ])
      yield* send(url, "POST", ING, held("other"))
      const cascading = yield* send(url, "DELETE", `${ING}/other`, {
        kind: "DeleteOptions",
        apiVersion: "v1",
        orphanDependents: false
      })
      expect([cascading.status, cascading.body.kind]).toEqual([202, "Ingress"])
    }))

  it.scopedLive("honours dryRun=All and refuses other dryRun values with 422", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      expect((yield* send(url, "POST", `${ING}?dryRun=All`, ingress("web"))).status).toBe(201)
      expect((yield* call(url, `${ING}/web`)).status).toBe(404)
      const bad = yield* send(url, "POST", `${ING}?dryRun=Yes`, ingress("web"))
      expect([bad.status, bad.body.message]).toEqual([
        422,
        `CreateOptions.meta.k8s.io "" is invalid: dryRun[0]: Unsupported value: "Yes": supported values: "All"`
      ])
    }))

  it.scopedLive("applies YAML and JSON bodies server-side, with fieldManager required and conflicts refused", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const yaml = [
        "apiVersion: networking.k8s.io/v1",
        "kind: Ingress",
        "metadata:",
        "  name: web",
        "spec:",
        "  ingressClassName: a",
        "  rules:",
        "  - host: web.example.test",
        "    http:",
        "      paths:",
        "      - path: /",
        "        pathType: Prefix",
        "        backend:",
        "          service:",
        "            name: web",
        "            port:",
        "              number: 80"
      ].join("\n")
      const created = yield* send(url, "PATCH", `${ING}/web?fieldManager=first`, yaml, "application/apply-patch+yaml")
      expect(created.status).toBe(201)
      const again = yield* send(
        url,
        "PATCH",
        `${ING}/web?fieldManager=first&force=false`,
        ingress("web", { className: "a" }),
        "application/apply-patch+yaml"
      )
      expect(again.status).toBe(200)
      const noManager = yield* send(url, "PATCH", `${ING}/web`, yaml, "application/apply-patch+yaml")
      expect([noManager.status, noManager.body.reason]).toEqual([422, "Invalid"])
      const conflict = yield* send(
        url,
        "PATCH",
        `${ING}/web?fieldManager=second&force=false`,
        ingress("web", { className: "b" }),
        "application/apply-patch+yaml"
      )
      expect([conflict.status, conflict.body.details.causes[0].reason]).toEqual([409, "FieldManagerConflict"])
      const forced = yield* send(
        url,
        "PATCH",
        `${ING}/web?fieldManager=second&force=true`,
        ingress("web", { className: "b" }),
        "application/apply-patch+yaml"
      )
      expect([forced.status, forced.body.spec.ingressClassName]).toEqual([200, "b"])
    }))

  it.scopedLive("patches with merge, strategic-merge and JSON patches, and refuses force on them", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      yield* send(url, "POST", ING, ingress("web"))
      const merged = yield* send(
        url,
        "PATCH",
        `${ING}/web`,
        { metadata: { labels: { a: "1" } } },
        "application/merge-patch+json"
      )
      expect([merged.status, merged.body.metadata.labels]).toEqual([200, { a: "1" }])
      const strategic = yield* send(
        url,
        "PATCH",
        `${ING}/web`,
        { metadata: { labels: { b: "2" } } },
        "application/strategic-merge-patch+json"
      )
      expect(strategic.body.metadata.labels).toEqual({ a: "1", b: "2" })
      const json = yield* send(
        url,
        "PATCH",
        `${ING}/web`,
        [{ op: "remove", path: "/metadata/labels/a" }],
        "application/json-patch+json"
      )
      expect(json.body.metadata.labels).toEqual({ b: "2" })
      const failedTest = yield* send(
        url,
        "PATCH",
        `${ING}/web`,
        [{ op: "test", path: "/metadata/name", value: "x" }],
        "application/json-patch+json"
      )
      expect(failedTest.status).toBe(422)
      const stalePin = yield* send(
        url,
        "PATCH",
        `${ING}/web`,
        { metadata: { resourceVersion: "1" } },
        "application/merge-patch+json"
      )
      expect(stalePin.status).toBe(409)
      const forced = yield* send(url, "PATCH", `${ING}/web?force=true`, {}, "application/merge-patch+json")
      expect([forced.status, forced.body.message]).toEqual([
        422,
        `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`
      ])
      expect((yield* send(url, "PATCH", `${ING}/missing`, {}, "application/merge-patch+json")).status).toBe(404)
    }))

  it.scopedLive("refuses a strategic merge patch on a custom resource with 415, as for any CRD", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const routes = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`
      expect((yield* send(url, "POST", routes, httpRoute("web"))).status).toBe(201)
      const strategic = yield* send(
        url,
        "PATCH",
        `${routes}/web`,
        { metadata: { labels: { a: "1" } } },
        "application/strategic-merge-patch+json"
      )
      expect([strategic.status, strategic.body]).toEqual([415, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        reason: "UnsupportedMediaType",
        code: 415
      }])
      expect((yield* call(url, `${routes}/web`)).body.metadata.labels).toBeUndefined()
      // A built-in type's PATCH route consumes the patch types only: go-restful refuses
      // the rest before the handler, naming none (as kube-apiserver 1.35 answers).
      const unknown = yield* send(url, "PATCH", `${ING}/web`, {}, "application/x-unknown")
      expect([unknown.status, unknown.body.message, unknown.body.details]).toEqual([
        415,
        "415: Unsupported Media Type",
        {}
      ])
    }))

  it.scopedLive("writes status only through /status, by PUT and by merge patch", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const created = (yield* send(url, "POST", ING, ingress("web"))).body
      const put = yield* send(url, "PUT", `${ING}/web/status`, {
        ...created,
        spec: {},
        status: { loadBalancer: { ingress: [{ ip: "127.0.0.1" }] } }
      })
      expect([put.status, put.body.status, put.body.spec]).toEqual([200, {
        loadBalancer: { ingress: [{ ip: "127.0.0.1" }] }
      }, created.spec])
      const patched = yield* send(url, "PATCH", `${ING}/web/status`, {
        status: { loadBalancer: { ingress: [{ hostname: "lb" }] } }
      }, "application/merge-patch+json")
      expect(patched.body.status.loadBalancer.ingress).toEqual([{ hostname: "lb" }])
      expect((yield* call(url, `${ING}/web/status`)).body.status.loadBalancer.ingress).toEqual([{ hostname: "lb" }])
      expect((yield* call(url, "/apis/networking.k8s.io/v1/ingressclasses/x/status")).status).toBe(404)
    }))
})

describe("HttpApi reads", () => {
  it.scopedLive("lists with kind, resourceVersion, paging and selectors, across namespaces too", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      for (const name of ["a", "b", "c"]) yield* send(url, "POST", ING, ingress(name, { labels: { app: name } }))
      const page = yield* call(url, `${ING}?limit=2`)
      expect([page.body.kind, page.body.items.length, typeof page.body.metadata.continue]).toEqual([
        "IngressList",
        2,
        "string"
      ])
      expect(page.body.items[0].kind).toBeUndefined()
      const rest = yield* call(url, `${ING}?limit=2&continue=${encodeURIComponent(page.body.metadata.continue)}`)
      expect(rest.body.items.map((i: KubeObject) => i.metadata?.name)).toEqual(["c"])
      const selected = yield* call(
        url,
        `/apis/networking.k8s.io/v1/ingresses?labelSelector=${encodeURIComponent("app in (a,c)")}`
      )
      expect(selected.body.items.map((i: KubeObject) => i.metadata?.name)).toEqual(["a", "c"])
      const bad = yield* call(url, `${ING}?labelSelector=${encodeURIComponent("app in (")}`)
      expect([bad.status, bad.body.reason]).toEqual([400, "BadRequest"])
    }))

  it.scopedLive("answers a Table when asked for one, as kubectl get does", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      yield* send(url, "POST", ING, ingress("web"))
      const table = yield* call(url, ING, {
        headers: {
          accept:
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        }
      })
      expect(table.body.kind).toBe("Table")
      expect(table.body.apiVersion).toBe("meta.k8s.io/v1")
      expect(table.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
        "Name",
        "Class",
        "Hosts",
        "Address",
        "Ports",
        "Age"
      ])
      expect(table.body.rows[0].cells.slice(0, 5)).toEqual(["web", "<none>", "web.example.test", "", "80"])
      expect(table.body.rows[0].object.kind).toBe("PartialObjectMetadata")
    }))
})

describe("HttpApi watch", () => {
  it.scopedLive("flushes headers before any event, then streams newline-delimited JSON events", () =>
    Effect.gen(function*() {
      const { url, store } = yield* cluster()
      const from = yield* store.resourceVersion
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      // fetch resolves on headers: with nothing to send yet, it still must.
      const response = yield* Effect.promise(() =>
        fetch(`${url}${ING}?watch=true&resourceVersion=${from}`, { signal: controller.signal })
      )
      expect([response.status, response.headers.get("content-type")]).toEqual([200, "application/json"])
      const next = lineReader(response)
      yield* send(url, "POST", ING, ingress("web"))
      const line = (yield* Effect.promise(next))!
      const event = JSON.parse(line)
      expect([event.type, event.object.kind, event.object.metadata.name]).toEqual(["ADDED", "Ingress", "web"])
    }))

  it.scopedLive("answers a too-old resourceVersion with 200, one ERROR event carrying 410 Expired, and the end of the stream", () =>
    Effect.gen(function*() {
      const { url, store } = yield* cluster()
      yield* send(url, "POST", ING, ingress("a"))
      yield* store.compact
      const response = yield* Effect.promise(() => fetch(`${url}${ING}?watch=1&resourceVersion=1`))
      expect(response.status).toBe(200)
      const next = lineReader(response)
      const event = JSON.parse((yield* Effect.promise(next))!)
      expect(event.type).toBe("ERROR")
      expect(event.object).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410 })
      expect(event.object.message).toMatch(/^too old resource version: 1 \(\d+\)$/)
      expect(yield* Effect.promise(next)).toBeUndefined()
    }))

  it.scopedLive("ends a watch after timeoutSeconds", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const response = yield* Effect.promise(() => fetch(`${url}${ING}?watch=true&timeoutSeconds=1`))
      const next = lineReader(response)
      expect(yield* Effect.promise(next)).toBeUndefined()
    }))

  it.scopedLive("treats timeoutSeconds=0 as no timeout at all, as the apiserver does", () =>
    Effect.gen(function*() {
      const { url, store } = yield* cluster()
      const from = yield* store.resourceVersion
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      // GetTimeoutForWatch: a zero timeoutSeconds gets the server's random default, not an instant end.
      const response = yield* Effect.promise(() =>
        fetch(`${url}${ING}?watch=true&timeoutSeconds=0&resourceVersion=${from}`, { signal: controller.signal })
      )
      const next = lineReader(response)
      yield* send(url, "POST", ING, ingress("web"))
      const event = JSON.parse((yield* Effect.promise(next))!)
      expect([event.type, event.object.metadata.name]).toEqual(["ADDED", "web"])
    }))

  it.scopedLive("refuses a bad selector before streaming, with 400", () =>
    Effect.gen(function*() {
      const { url } = yield* cluster()
      const answer = yield* call(url, `${ING}?watch=true&labelSelector=${encodeURIComponent("a in (")}`)
      expect([answer.status, answer.body.reason]).toEqual([400, "BadRequest"])
    }))

  it.live("closes open watch connections when the cluster's scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { url } = yield* Scope.extend(cluster(), scope)
      const response = yield* Effect.promise(() => fetch(`${url}${ING}?watch=true&resourceVersion=1`))
      const next = lineReader(response)
      yield* Scope.close(scope, Exit.void)
      const ended = yield* Effect.promise(() => next().then(() => "ended", () => "ended"))
      expect(ended).toBe("ended")
    }))
})

describe("HttpApi faults", () => {
  it.scopedLive("throttles with a plain-text 429 and Retry-After", () =>
    Effect.gen(function*() {
      const { url, faults } = yield* cluster()
      yield* faults.add({ action: Fault.throttle(), times: 1 })
      const answer = yield* call(url, ING)
      expect([answer.status, answer.contentType, answer.text, answer.headers.get("retry-after")]).toEqual([
        429,
        "text/plain; charset=utf-8",
        "Too many requests, please try again later.\n",
        "1"
      ])
    }))

  it.scopedLive("answers a 5xx as a Status, and a forbid as the authorizer's 403", () =>
    Effect.gen(function*() {
      const { url, faults } = yield* cluster()
      yield* faults.add({ verbs: ["list"], action: Fault.respond(503, { retryAfterSeconds: 2 }), times: 1 })
      const unavailable = yield* call(url, ING)
      expect([unavailable.status, unavailable.body.reason, unavailable.headers.get("retry-after")]).toEqual([
        503,
        "ServiceUnavailable",
        "2"
      ])
      yield* faults.add({ verbs: ["get"], action: Fault.forbid("alice"), times: 1 })
      const forbidden = yield* call(url, `${ING}/web`)
      expect([forbidden.status, forbidden.body.message]).toEqual([
        403,
        `ingresses.networking.k8s.io "web" is forbidden: User "alice" cannot get resource "ingresses" in API group "networking.k8s.io" in the namespace "demo"`
      ])
    }))

  it.scopedLive("resets the connection", () =>
    Effect.gen(function*() {
      const { url, faults } = yield* cluster()
      yield* faults.add({ action: Fault.reset, times: 1 })
      const outcome = yield* Effect.promise(() => fetch(`${url}${ING}`).then(() => "answered", () => "reset"))
      expect(outcome).toBe("reset")
    }))

  it.scopedLive("cuts a watch after N events", () =>
    Effect.gen(function*() {
      const { url, faults } = yield* cluster()
      yield* send(url, "POST", ING, ingress("a"))
      yield* send(url, "POST", ING, ingress("b"))
      yield* faults.add({ verbs: ["watch"], action: Fault.cutWatch(1), times: 1 })
      const response = yield* Effect.promise(() => fetch(`${url}${ING}?watch=true`))
      const next = lineReader(response)
      expect(JSON.parse((yield* Effect.promise(next))!).type).toBe("ADDED")
      expect(yield* Effect.promise(next)).toBeUndefined()
    }))
})

describe("HttpApi with @kubernetes/client-node", () => {
  it.scopedLive("creates, lists and watches through client-node's typed API and Watch", () =>
    Effect.gen(function*() {
      const local = yield* cluster()
      const config = new KubeConfig()
      config.loadFromString(local.kubeconfig())
      const networking = config.makeApiClient(NetworkingV1Api)
      const core = config.makeApiClient(CoreV1Api)
      yield* Effect.promise(() => networking.createNamespacedIngress({ namespace: NS, body: ingress("web") as never }))
      const list = yield* Effect.promise(() => networking.listNamespacedIngress({ namespace: NS }))
      expect(list.items.map((i) => i.metadata?.name)).toEqual(["web"])
      const namespaces = yield* Effect.promise(() => core.listNamespace())
      expect(namespaces.items.map((n) => n.metadata?.name)).toContain(NS)
      const missing = yield* Effect.promise(() =>
        networking.readNamespacedIngress({ namespace: NS, name: "nope" }).then(() => undefined, (e) => e)
      )
      expect(missing.code).toBe(404)
      const seen = yield* Effect.promise(
        () =>
          new Promise<string>((resolve, reject) => {
            new Watch(config)
              .watch(ING, { resourceVersion: list.metadata?.resourceVersion }, (phase, object) => {
                resolve(`${phase} ${object.metadata.name}`)
              }, (err) => (err ? reject(err) : undefined))
              .then((abort) => {
                void networking.createNamespacedIngress({ namespace: NS, body: ingress("second") as never }).then(() =>
                  setTimeout(() => abort.abort(), 50)
                )
              }, reject)
          })
      )
      expect(seen).toBe("ADDED second")
    }))
})
