/**
 * The request info the gate authorizes, as kube-apiserver's resolver makes it from a
 * method and a path alone, before anything looks for a handler: a path under a group
 * version is a resource request whether or not anything serves it, a list or watch
 * pinned to one name names it, and a namespace's own path is in that namespace.
 */
import { describe, expect, it } from "@effect/vitest"
import { requestInfoOf } from "../src/ApiSecurity.js"

const info = (method: string, path: string) => requestInfoOf(method, new URL(path, "https://127.0.0.1"))

const resource = (fields: Partial<ReturnType<typeof info>>) => ({
  verb: "get",
  resourceRequest: true,
  apiGroup: "",
  resource: "",
  subresource: "",
  namespace: "",
  name: "",
  ...fields
})

describe("request info", () => {
  it("reads a named object's path, its subresource and the verb of its method", () => {
    expect(info("PATCH", "/api/v1/namespaces/demo/pods/web/status")).toEqual(resource({
      verb: "patch",
      path: "/api/v1/namespaces/demo/pods/web/status",
      resource: "pods",
      subresource: "status",
      namespace: "demo",
      name: "web"
    }))
    expect(info("DELETE", "/apis/coordination.k8s.io/v1/namespaces/demo/leases")).toMatchObject({
      verb: "deletecollection",
      apiGroup: "coordination.k8s.io",
      resource: "leases"
    })
  })

  it("takes a path nothing serves as the resource request it names", () => {
    expect(info("GET", "/apis/example.com/v1/namespaces/demo/things/x")).toEqual(resource({
      path: "/apis/example.com/v1/namespaces/demo/things/x",
      apiGroup: "example.com",
      resource: "things",
      namespace: "demo",
      name: "x"
    }))
  })

  it("lists or watches by the watch parameter, naming the one name a field selector pins", () => {
    const base = "/api/v1/namespaces/demo/pods"
    expect(info("GET", base)).toMatchObject({ verb: "list", name: "" })
    expect(info("GET", `${base}?watch=1`)).toMatchObject({ verb: "watch" })
    expect(info("GET", `${base}?watch=false`)).toMatchObject({ verb: "list" })
    expect(info("GET", `${base}?watch=true&fieldSelector=metadata.name%3Dweb`)).toMatchObject({
      verb: "watch",
      name: "web"
    })
    expect(info("GET", `${base}?fieldSelector=status.phase%3DRunning,metadata.name%3D%3Dweb`)).toMatchObject({
      name: "web"
    })
    for (const selector of ["metadata.name!%3Dweb", "metadata.name%3Da%2Fb", "status.phase%3DRunning"]) {
      expect(info("GET", `${base}?fieldSelector=${selector}`).name).toBe("")
    }
  })

  it("puts a namespace's own path, and its status, in that namespace", () => {
    expect(info("GET", "/api/v1/namespaces/demo")).toMatchObject({
      resource: "namespaces",
      namespace: "demo",
      name: "demo"
    })
    expect(info("PUT", "/api/v1/namespaces/demo/status")).toMatchObject({
      verb: "update",
      resource: "namespaces",
      namespace: "demo",
      name: "demo",
      subresource: "status"
    })
    expect(info("GET", "/api/v1/namespaces")).toMatchObject({ verb: "list", resource: "namespaces", namespace: "" })
  })

  it("reads a verb in the path, and leaves discovery and the rest as non-resource requests", () => {
    expect(info("GET", "/api/v1/watch/namespaces/demo/pods")).toMatchObject({
      verb: "watch",
      resource: "pods",
      namespace: "demo"
    })
    for (const path of ["/api", "/api/v1", "/apis/networking.k8s.io", "/apis/networking.k8s.io/v1", "/version"]) {
      expect(info("GET", path)).toEqual({
        verb: "get",
        resourceRequest: false,
        path,
        apiGroup: "",
        resource: "",
        subresource: "",
        namespace: "",
        name: ""
      })
    }
  })
})
