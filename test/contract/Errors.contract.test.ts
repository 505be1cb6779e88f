/**
 * The bodies of failures, on both servers, for the kinds the library writes: what a
 * missing object, a missing namespace and an unserved type answer (404, a Status or
 * Go's plain text), a duplicate name and a stale write (409), field errors with their
 * causes (422), RBAC's refusal of a ServiceAccount (403), a token nobody issued (401),
 * a body in a media type the route does not take (415), a method a path does not have
 * (405), and priority and fairness rejecting a request (429). Beside each body, what
 * the library makes of it (`fromResponse`), since that is what a runner and the CLI see.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { readFile } from "node:fs/promises"
import { request as httpsRequest } from "node:https"
import {
  EventV1Resource,
  fromResponse,
  HttpRouteResource,
  IngressResource,
  LeaseResource,
  PodResource,
  qualifiedName,
  requestContext,
  resourcePath,
  type ResourceType,
  ServiceResource
} from "session-routing/kubernetes"
import { parse } from "yaml"
import { Contract, ContractLive, onRealServer } from "./ContractCluster.js"
import { type Answer, failureStatus, type RawApi, rawApi } from "./RawApi.js"

const APPLY = "application/apply-patch+yaml"
const MERGE = "application/merge-patch+json"

const service = (name: string, port = 8080) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { ports: [{ name: "http", port, protocol: "TCP" }] }
})

const ingress = (name: string, host = "8080-contract.sessions.localtest.me") => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name },
  spec: {
    // A class no controller serves: on the real control plane Traefik would write status.
    ingressClassName: "contract-unclaimed",
    rules: [{
      host,
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "s", port: { number: 8080 } } } }]
      }
    }]
  }
})

const httpRoute = (name: string) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name },
  spec: { parentRefs: [{ name: "contract-none" }] }
})

const lease = (name: string, leaseDurationSeconds = 15) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec: { holderIdentity: "contract", leaseDurationSeconds }
})

const pod = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "session", image: "session" }] }
})

const event = (name: string, namespace: string) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2026-01-01T00:00:00.000000Z",
  reportingController: "session-routing.dev/contract",
  reportingInstance: "contract",
  action: "Publish",
  reason: "Published",
  note: "contract",
  type: "Normal",
  regarding: { apiVersion: "v1", kind: "Pod", namespace, name: "session" }
})

/** The kinds the library writes, each with an object of its own to write. */
const KINDS: ReadonlyArray<
  { readonly resource: ResourceType<unknown>; readonly body: (name: string, ns: string) => object }
> = [
  { resource: ServiceResource, body: (name) => service(name) },
  { resource: IngressResource, body: (name) => ingress(name) },
  { resource: HttpRouteResource, body: (name) => httpRoute(name) },
  { resource: LeaseResource, body: (name) => lease(name) },
  { resource: PodResource, body: (name) => pod(name) },
  { resource: EventV1Resource, body: event }
]

/** `details` naming `name` of `resource`, as NotFound, AlreadyExists, Conflict and Forbidden name it: by plural. */
const named = (resource: ResourceType<unknown>, name?: string) => ({
  ...(name !== undefined ? { name } : {}),
  ...(resource.group !== "" ? { group: resource.group } : {}),
  kind: resource.plural
})

/** What the answer was, as one value: its code, its media type and its body. */
const shape = (answer: Answer) => ({
  code: answer.status,
  type: answer.headers["content-type"],
  body: answer.body ?? answer.text
})

const asStatus = (answer: Answer, status: object) => ({ code: answer.status, type: "application/json", body: status })

/** The library's reading of an answer: which case, and the causes it keeps. */
const libraryReads = (answer: Answer, verb: string, resource: ResourceType<unknown>, ns: string, name?: string) => {
  const error = fromResponse(
    requestContext(verb, resource, ns, name),
    answer.status,
    answer.text,
    answer.headers["retry-after"] as string | undefined
  )
  return { tag: error._tag, ...("causes" in error ? { causes: error.causes } : {}) }
}

const PLAIN_404 = { code: 404, type: "text/plain; charset=utf-8", body: "404 page not found\n" }

/** A ServiceAccount's bearer token, from a TokenRequest made by the admin. */
const serviceAccountToken = (admin: RawApi, ns: string, name: string) =>
  Effect.gen(function*() {
    yield* admin.call("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name }
    })
    const token = yield* admin.call("POST", `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 3600 }
    })
    return String(token.body.status.token)
  })

/** Grants `verbs` on `resources` of the core group to a ServiceAccount of `ns`, in a Role of that namespace. */
const grant = (admin: RawApi, ns: string, account: string, resources: Array<string>, verbs: Array<string>) =>
  Effect.gen(function*() {
    const base = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`
    yield* admin.call("POST", `${base}/roles`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: account },
      rules: [{ apiGroups: [""], resources, verbs }]
    })
    yield* admin.call("POST", `${base}/rolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: account },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: account },
      subjects: [{ kind: "ServiceAccount", name: account, namespace: ns }]
    })
  })

/** Asks again (every 200 ms, for at most 30 s) until `done` holds of the answer, and gives that answer. */
const until = (ask: Effect.Effect<Answer>, done: (answer: Answer) => boolean) =>
  Effect.gen(function*() {
    for (;;) {
      const answer = yield* ask
      if (done(answer)) return answer
      yield* Effect.sleep(Duration.millis(200))
    }
  }).pipe(
    Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("the answer never came") }),
    Effect.orDie
  )

layer(ContractLive, { excludeTestServices: true, timeout: 120_000 })("error bodies", (it) => {
  it.scoped("answers a read of a missing object of each kind with 404 NotFound naming it", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      for (const { resource } of KINDS) {
        const missing = yield* admin.call("GET", resourcePath(resource, ns, "absent"))
        expect(shape(missing)).toEqual(
          asStatus(
            missing,
            failureStatus(404, "NotFound", `${qualifiedName(resource)} "absent" not found`, named(resource, "absent"))
          )
        )
        expect(libraryReads(missing, "get", resource, ns, "absent")).toEqual({ tag: "NotFound" })
      }
    }))

  it.scoped("answers a write into a missing namespace with 404 naming the namespace, and a read there naming the object", () =>
    Effect.gen(function*() {
      const { admin } = yield* Contract
      const ns = "contract-absent-namespace"
      const namespaceMissing = failureStatus(404, "NotFound", `namespaces "${ns}" not found`, {
        name: ns,
        kind: "namespaces"
      })
      const created = yield* admin.call("POST", resourcePath(ServiceResource, ns), service("web"))
      const applied = yield* admin.call(
        "PATCH",
        `${resourcePath(IngressResource, ns, "web")}?fieldManager=contract`,
        ingress("web"),
        APPLY
      )
      const put = yield* admin.call("PUT", resourcePath(LeaseResource, ns, "leader"), lease("leader"))
      const recorded = yield* admin.call("POST", resourcePath(EventV1Resource, ns), event("e", ns))
      for (const answer of [created, applied, put, recorded]) {
        expect(shape(answer)).toEqual(asStatus(answer, namespaceMissing))
      }
      // Reads do not look for the namespace: the object is missing, and a list is empty.
      const read = yield* admin.call("GET", resourcePath(PodResource, ns, "session"))
      expect(shape(read)).toEqual(
        asStatus(read, failureStatus(404, "NotFound", `pods "session" not found`, named(PodResource, "session")))
      )
      const listed = yield* admin.call("GET", resourcePath(ServiceResource, ns))
      expect([listed.status, listed.body.items]).toEqual([200, []])
    }))

  it.scoped("answers a type nobody serves with Go's plain-text 404, which the library reads as NotServed", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      // A custom resource's group serves only its CRDs' types and versions; another group, nothing.
      for (
        const path of [
          `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/grpcmeshes/x`,
          `/apis/gateway.networking.k8s.io/v1alpha9/namespaces/${ns}/httproutes`,
          `/apis/contract.example.com/v1/namespaces/${ns}/things/x`
        ]
      ) {
        const answer = yield* admin.call("GET", path)
        expect(shape(answer)).toEqual(PLAIN_404)
      }
      const unserved = yield* admin.call("GET", `/apis/gateway.networking.k8s.io/v1alpha9/namespaces/${ns}/httproutes`)
      expect(libraryReads(unserved, "list", HttpRouteResource, ns).tag).toBe("NotServed")
    }))

  it.scoped("answers a type or version a built-in group does not have with a 404 Status that names nothing", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      yield* admin.call("POST", resourcePath(ServiceResource, ns), service("web"))
      for (
        const [method, path] of [
          ["GET", `/apis/networking.k8s.io/v1/namespaces/${ns}/ingressroutes`],
          ["GET", `/apis/events.k8s.io/v1beta1/namespaces/${ns}/events`],
          ["GET", `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/leader/status`],
          ["GET", `/api/v1/namespaces/${ns}/services/web/scale`],
          ["GET", `/api/v2/namespaces/${ns}/services`],
          // Not found comes before the method: no 405 for a path nothing routes.
          ["POST", `/api/v1/namespaces/${ns}/sessionroutes`]
        ] as const
      ) {
        const answer = yield* admin.call(method, path, method === "POST" ? {} : undefined)
        expect(shape(answer)).toEqual(
          asStatus(answer, failureStatus(404, "NotFound", "the server could not find the requested resource", {}))
        )
      }
    }))

  it.scoped("refuses a ServiceAccount on a type nobody serves with 403, before any handler finds it missing", () =>
    Effect.gen(function*() {
      const { namespace, serviceAccount } = yield* Contract
      const ns = yield* namespace
      const api = yield* serviceAccount(ns, "nobody")
      const user = `system:serviceaccount:${ns}:nobody`
      const answer = yield* api.call("GET", `/apis/contract.example.com/v1/namespaces/${ns}/things/x`)
      expect(shape(answer)).toEqual(asStatus(
        answer,
        failureStatus(
          403,
          "Forbidden",
          `things.contract.example.com "x" is forbidden: User "${user}" cannot get resource "things" in API group "contract.example.com" in the namespace "${ns}"`,
          { name: "x", group: "contract.example.com", kind: "things" }
        )
      ))
      const route = yield* api.call("GET", `/apis/gateway.networking.k8s.io/v1alpha9/namespaces/${ns}/httproutes`)
      expect([route.status, route.body?.reason]).toEqual([403, "Forbidden"])
    }))

  it.scoped("answers a create of a name that exists with 409 AlreadyExists, for each kind", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      for (const { body, resource } of KINDS) {
        const first = yield* admin.call("POST", resourcePath(resource, ns), body("twice", ns))
        expect(first.status).toBe(201)
        const again = yield* admin.call("POST", resourcePath(resource, ns), body("twice", ns))
        expect(shape(again)).toEqual(
          asStatus(
            again,
            failureStatus(
              409,
              "AlreadyExists",
              `${qualifiedName(resource)} "twice" already exists`,
              named(resource, "twice")
            )
          )
        )
        expect(libraryReads(again, "create", resource, ns, "twice")).toEqual({ tag: "AlreadyExists" })
      }
    }))

  it.scoped("answers an update with a stale resourceVersion with 409 Conflict, for each kind and a status patch", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      for (const { body, resource } of KINDS) {
        const path = resourcePath(resource, ns, "stale")
        const created = (yield* admin.call("POST", resourcePath(resource, ns), body("stale", ns))).body
        const labelled = (object: any, turn: string) => ({
          ...object,
          metadata: { ...object.metadata, labels: { turn } }
        })
        // A write from the latest read moves the resourceVersion (on the real control
        // plane kwok writes a Pod's status meanwhile, so it may take another read).
        yield* until(
          Effect.flatMap(admin.call("GET", path), (live) => admin.call("PUT", path, labelled(live.body, "first"))),
          (answer) => answer.status === 200
        )
        // The object as created: its resourceVersion is no longer the live one.
        const stale = yield* admin.call("PUT", path, labelled(created, "second"))
        const conflict = failureStatus(
          409,
          "Conflict",
          `Operation cannot be fulfilled on ${
            qualifiedName(resource)
          } "stale": the object has been modified; please apply your changes to the latest version and try again`,
          named(resource, "stale")
        )
        expect(shape(stale)).toEqual(asStatus(stale, conflict))
        expect(libraryReads(stale, "update", resource, ns, "stale")).toEqual({ tag: "Conflict", causes: [] })
      }
      // As a controller writes a Pod's condition: a patch that names the resourceVersion it read.
      const podPath = resourcePath(PodResource, ns, "stale")
      const condition = (resourceVersion: string, status: string) => ({
        metadata: { resourceVersion },
        status: { conditions: [{ type: "session-routing.dev/routed", status }] }
      })
      let read = ""
      yield* until(
        Effect.flatMap(admin.call("GET", podPath), (live) => {
          read = live.body.metadata.resourceVersion
          return admin.call("PATCH", `${podPath}/status`, condition(read, "False"), MERGE)
        }),
        (answer) => answer.status === 200
      )
      const stale = yield* admin.call("PATCH", `${podPath}/status`, condition(read, "True"), MERGE)
      expect(shape(stale)).toEqual(asStatus(
        stale,
        failureStatus(
          409,
          "Conflict",
          `Operation cannot be fulfilled on pods "stale": the object has been modified; please apply your changes to the latest version and try again`,
          named(PodResource, "stale")
        )
      ))
    }))

  it.scoped("answers a delete whose uid precondition does not match with 409 Conflict naming the object", () =>
    Effect.gen(function*() {
      const { admin, kubeconfig, namespace } = yield* Contract
      const ns = yield* namespace
      // Not an events.k8s.io Event: the server names the core Event it is stored as (no group).
      for (const { body, resource } of KINDS.filter((k) => k.resource !== EventV1Resource)) {
        yield* admin.call("POST", resourcePath(resource, ns), body("held", ns))
        const refused = yield* deleteWith(kubeconfig, resourcePath(resource, ns, "held"), {
          uid: "00000000-0000-0000-0000-000000000000"
        })
        expect([refused.status, refused.body.reason, refused.body.details.name, refused.body.details.group]).toEqual([
          409,
          "Conflict",
          "held",
          resource.group === "" ? undefined : resource.group
        ])
        expect(libraryReads(refused, "delete", resource, ns, "held").tag).toBe("Conflict")
        expect((yield* admin.call("GET", resourcePath(resource, ns, "held"))).status).toBe(200)
      }
    }))

  it.scoped(
    "names the Kind and both uids when a delete's precondition fails",
    () =>
      Effect.gen(function*() {
        const { admin, kubeconfig, namespace } = yield* Contract
        const ns = yield* namespace
        const created = yield* admin.call("POST", resourcePath(IngressResource, ns), ingress("held"))
        const refused = yield* deleteWith(kubeconfig, resourcePath(IngressResource, ns, "held"), {
          uid: "00000000-0000-0000-0000-000000000000"
        })
        // The registry checks it before storage: the group and Kind, not the resource.
        expect(refused.body).toEqual(failureStatus(
          409,
          "Conflict",
          `Operation cannot be fulfilled on Ingress.networking.k8s.io "held": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (${created.body.metadata.uid}). The object might have been deleted and then recreated`,
          { name: "held", group: "networking.k8s.io", kind: "Ingress" }
        ))
        const stale = yield* deleteWith(kubeconfig, resourcePath(IngressResource, ns, "held"), { resourceVersion: "1" })
        expect(stale.body.message).toBe(
          `Operation cannot be fulfilled on Ingress.networking.k8s.io "held": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.body.metadata.resourceVersion}). The object might have been modified`
        )
      })
  )

  it.scoped("answers a Service with port 0 with 422 Invalid, a cause for the port and one for the target port it defaults", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const refused = yield* admin.call("POST", resourcePath(ServiceResource, ns), service("zero", 0))
      const cause = (field: string) => ({
        reason: "FieldValueInvalid",
        message: "Invalid value: 0: must be between 1 and 65535, inclusive",
        field
      })
      const causes = [cause("spec.ports[0].port"), cause("spec.ports[0].targetPort")]
      expect(shape(refused)).toEqual(asStatus(
        refused,
        failureStatus(
          422,
          "Invalid",
          `Service "zero" is invalid: [${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}]`,
          { name: "zero", kind: "Service", causes }
        )
      ))
      expect(libraryReads(refused, "create", ServiceResource, ns, "zero")).toEqual({ tag: "Invalid", causes })
      // A server-side apply, as the library writes, is refused alike.
      const applied = yield* admin.call(
        "PATCH",
        `${resourcePath(ServiceResource, ns, "zero")}?fieldManager=contract`,
        service("zero", 0),
        APPLY
      )
      expect(applied.body).toEqual(refused.body)
    }))

  it.scoped("answers an Ingress with a bad host with 422 Invalid naming the rule's host", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const refused = yield* admin.call(
        "POST",
        resourcePath(IngressResource, ns),
        ingress("bad", "Bad_Host.example.com")
      )
      const message =
        `Invalid value: "Bad_Host.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
      const causes = [{ reason: "FieldValueInvalid", message, field: "spec.rules[0].host" }]
      expect(shape(refused)).toEqual(asStatus(
        refused,
        failureStatus(422, "Invalid", `Ingress.networking.k8s.io "bad" is invalid: spec.rules[0].host: ${message}`, {
          name: "bad",
          group: "networking.k8s.io",
          kind: "Ingress",
          causes
        })
      ))
      const ip = yield* admin.call("POST", resourcePath(IngressResource, ns), ingress("ip", "192.0.2.1"))
      expect(ip.body.details.causes).toEqual([{
        reason: "FieldValueInvalid",
        message: `Invalid value: "192.0.2.1": must be a DNS name, not an IP address`,
        field: "spec.rules[0].host"
      }])
    }))

  it.scoped("answers a name that is not a DNS label with 422 Invalid on metadata.name, in the kind's own rule", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const subdomain =
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
      const label =
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
      const cases = [
        { resource: ServiceResource, object: service("Web_8080"), rule: label },
        { resource: HttpRouteResource, object: httpRoute("Web_8080"), rule: subdomain },
        { resource: PodResource, object: pod("Web_8080"), rule: subdomain }
      ]
      for (const { object, resource, rule } of cases) {
        const refused = yield* admin.call("POST", resourcePath(resource, ns), object)
        const cause = {
          reason: "FieldValueInvalid",
          message: `Invalid value: "Web_8080": ${rule}`,
          field: "metadata.name"
        }
        const kind = resource.group === "" ? resource.kind : `${resource.kind}.${resource.group}`
        expect(shape(refused)).toEqual(asStatus(
          refused,
          failureStatus(422, "Invalid", `${kind} "Web_8080" is invalid: metadata.name: ${cause.message}`, {
            name: "Web_8080",
            ...(resource.group !== "" ? { group: resource.group } : {}),
            kind: resource.kind,
            causes: [cause]
          })
        ))
      }
      // Several errors: one message, bracketed, and a cause each in order.
      const both = yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("Leader_1", 0))
      expect([both.status, both.body.details.causes.map((c: any) => [c.reason, c.field])]).toEqual([422, [
        ["FieldValueInvalid", "metadata.name"],
        ["FieldValueInvalid", "spec.leaseDurationSeconds"]
      ]])
      expect(both.body.message).toBe(
        `Lease.coordination.k8s.io "Leader_1" is invalid: [metadata.name: Invalid value: "Leader_1": ${subdomain}, spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0]`
      )
    }))

  it.scoped("answers a bad label key or value with 422 Invalid on metadata.labels, worded as the server's release words it", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const keyRule =
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
      const long = "x".repeat(64)
      // One label per object: the server walks a map, so several would come in any order.
      const cases = [
        {
          labels: { "a/b/c": "v" },
          message:
            `Invalid value: "a/b/c": a valid label key ${keyRule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
        },
        { labels: { [long]: "v" }, message: `Invalid value: "${long}": name part must be no more than 63 bytes` },
        {
          labels: { "Bad_/k": "v" },
          message: expect.stringMatching(/^Invalid value: "Bad_\/k": prefix part a lowercase RFC 1123 subdomain/)
        },
        { labels: { k: long }, message: `Invalid value: "${long}": must be no more than 63 bytes` }
      ]
      for (const [i, { labels, message }] of cases.entries()) {
        const object = { ...service(`labelled-${i}`), metadata: { name: `labelled-${i}`, labels } }
        const refused = yield* admin.call("POST", resourcePath(ServiceResource, ns), object)
        expect([refused.status, refused.body.reason, refused.body.details.causes]).toEqual([422, "Invalid", [{
          reason: "FieldValueInvalid",
          message,
          field: "metadata.labels"
        }]])
      }
    }))

  it.scoped("answers an Event the events API refuses with 422 Invalid, its causes on the core Event's fields", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const { eventTime: _, ...timeless } = event("e", "elsewhere")
      const refused = yield* admin.call("POST", resourcePath(EventV1Resource, ns), timeless)
      expect([refused.status, refused.body.reason, refused.body.details.name, refused.body.details.causes]).toEqual([
        422,
        "Invalid",
        "e",
        [
          {
            reason: "FieldValueInvalid",
            message: `Invalid value: "elsewhere": does not match event.namespace`,
            field: "involvedObject.namespace"
          },
          { reason: "FieldValueRequired", message: "Required value", field: "eventTime" }
        ]
      ])
    }))

  it.scoped(
    "names an invalid events.k8s.io Event as the core Event it is stored as",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        const { eventTime: _, ...timeless } = event("e", ns)
        const refused = yield* admin.call("POST", resourcePath(EventV1Resource, ns), timeless)
        expect(refused.body).toEqual(failureStatus(422, "Invalid", `Event "e" is invalid: eventTime: Required value`, {
          name: "e",
          kind: "Event",
          causes: [{ reason: "FieldValueRequired", message: "Required value", field: "eventTime" }]
        }))
      })
  )

  it.scoped("answers an update without a resourceVersion of a kind that needs one with 422 on metadata.resourceVersion", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      for (const resource of [LeaseResource, HttpRouteResource]) {
        const object = resource === LeaseResource ? lease("unversioned") : httpRoute("unversioned")
        yield* admin.call("POST", resourcePath(resource, ns), object)
        const refused = yield* admin.call("PUT", resourcePath(resource, ns, "unversioned"), object)
        expect([refused.status, refused.body.reason, refused.body.details]).toMatchObject([422, "Invalid", {
          ...named(resource, "unversioned"),
          causes: [{ reason: "FieldValueInvalid", field: "metadata.resourceVersion" }]
        }])
      }
    }))

  it.scoped(
    "words an update without a resourceVersion with its value 0",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        yield* admin.call("POST", resourcePath(LeaseResource, ns), lease("unversioned"))
        const refused = yield* admin.call("PUT", resourcePath(LeaseResource, ns, "unversioned"), lease("unversioned"))
        expect(refused.body.message).toBe(
          `leases.coordination.k8s.io "unversioned" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
        )
      })
  )

  it.scoped("refuses a ServiceAccount nothing grants with RBAC's 403 for each verb, naming user, verb, resource, group and scope", () =>
    Effect.gen(function*() {
      const { namespace, serviceAccount } = yield* Contract
      const ns = yield* namespace
      const api = yield* serviceAccount(ns, "nobody")
      const user = `User "system:serviceaccount:${ns}:nobody"`
      const inNs = `in the namespace "${ns}"`
      const cases = [
        {
          verb: "list",
          answer: yield* api.call("GET", resourcePath(ServiceResource, ns)),
          message: `services is forbidden: ${user} cannot list resource "services" in API group "" ${inNs}`,
          details: { kind: "services" }
        },
        {
          verb: "get",
          answer: yield* api.call("GET", resourcePath(IngressResource, ns, "web")),
          message:
            `ingresses.networking.k8s.io "web" is forbidden: ${user} cannot get resource "ingresses" in API group "networking.k8s.io" ${inNs}`,
          details: named(IngressResource, "web")
        },
        {
          verb: "create",
          answer: yield* api.call("POST", resourcePath(EventV1Resource, ns), event("e", ns)),
          message:
            `events.events.k8s.io is forbidden: ${user} cannot create resource "events" in API group "events.k8s.io" ${inNs}`,
          details: named(EventV1Resource)
        },
        {
          verb: "patch",
          answer: yield* api.call(
            "PATCH",
            `${resourcePath(HttpRouteResource, ns, "web")}?fieldManager=contract`,
            httpRoute("web"),
            APPLY
          ),
          message:
            `httproutes.gateway.networking.k8s.io "web" is forbidden: ${user} cannot patch resource "httproutes" in API group "gateway.networking.k8s.io" ${inNs}`,
          details: named(HttpRouteResource, "web")
        },
        {
          verb: "patch",
          answer: yield* api.call("PATCH", `${resourcePath(PodResource, ns, "session")}/status`, { status: {} }, MERGE),
          message: `pods "session" is forbidden: ${user} cannot patch resource "pods/status" in API group "" ${inNs}`,
          details: named(PodResource, "session")
        },
        {
          verb: "update",
          answer: yield* api.call("PUT", resourcePath(LeaseResource, ns, "leader"), lease("leader")),
          message:
            `leases.coordination.k8s.io "leader" is forbidden: ${user} cannot update resource "leases" in API group "coordination.k8s.io" ${inNs}`,
          details: named(LeaseResource, "leader")
        },
        {
          verb: "watch",
          // A watch pinned to one name is asked about that name (a Role's resourceNames can grant it).
          answer: yield* api.call(
            "GET",
            `${resourcePath(PodResource, ns)}?watch=true&fieldSelector=metadata.name%3Dsession`
          ),
          message: `pods "session" is forbidden: ${user} cannot watch resource "pods" in API group "" ${inNs}`,
          details: named(PodResource, "session")
        },
        {
          verb: "list",
          answer: yield* api.call("GET", "/apis/networking.k8s.io/v1/ingressclasses"),
          message:
            `ingressclasses.networking.k8s.io is forbidden: ${user} cannot list resource "ingressclasses" in API group "networking.k8s.io" at the cluster scope`,
          details: { group: "networking.k8s.io", kind: "ingressclasses" }
        },
        {
          verb: "get",
          // A namespace's own path is asked in that namespace.
          answer: yield* api.call("GET", `/api/v1/namespaces/${ns}`),
          message: `namespaces "${ns}" is forbidden: ${user} cannot get resource "namespaces" in API group "" ${inNs}`,
          details: { name: ns, kind: "namespaces" }
        }
      ]
      for (const { answer, details, message } of cases) {
        expect(shape(answer)).toEqual(asStatus(answer, failureStatus(403, "Forbidden", message, details)))
      }
      expect(libraryReads(cases[0]!.answer, "list", ServiceResource, ns).tag).toBe("Forbidden")
    }))

  it.scoped("refuses an apply that would create an object as `create`, to a ServiceAccount granted only patch", () =>
    Effect.gen(function*() {
      const { admin, kubeconfig, namespace } = yield* Contract
      const ns = yield* namespace
      const api = yield* rawApi(kubeconfig, yield* serviceAccountToken(admin, ns, "patcher"))
      yield* grant(admin, ns, "patcher", ["services"], ["get", "patch"])
      const apply = (name: string) =>
        api.call("PATCH", `${resourcePath(ServiceResource, ns, name)}?fieldManager=contract`, service(name), APPLY)
      // Until the server's RBAC cache has the binding, the refusal is of patch itself.
      const refused = yield* until(apply("web"), (answer) => !String(answer.body?.message).includes("cannot patch"))
      expect(shape(refused)).toEqual(asStatus(
        refused,
        failureStatus(
          403,
          "Forbidden",
          `services "web" is forbidden: User "system:serviceaccount:${ns}:patcher" cannot create resource "services" in API group "" in the namespace "${ns}"`,
          named(ServiceResource, "web")
        )
      ))
      // Once the object exists, patch is all an apply needs.
      yield* admin.call("POST", resourcePath(ServiceResource, ns), service("web"))
      expect((yield* apply("web")).status).toBe(200)
    }))

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster removes a namespace and its contents at once) refuses a write into a terminating namespace with 403 and a NamespaceTerminating cause",
    () =>
      Effect.gen(function*() {
        const { admin, namespace } = yield* Contract
        const ns = yield* namespace
        // A finalizer nobody removes keeps the namespace terminating until the test's end.
        const held = resourcePath(ServiceResource, ns, "held")
        yield* admin.call("POST", resourcePath(ServiceResource, ns), {
          ...service("held"),
          metadata: { name: "held", finalizers: ["session-routing.dev/contract"] }
        })
        yield* Effect.addFinalizer(() =>
          Effect.asVoid(admin.call("PATCH", held, { metadata: { finalizers: null } }, MERGE))
        )
        yield* admin.call("DELETE", `/api/v1/namespaces/${ns}`)
        // A new name each time: a create that beat the namespace's deletion must not make the next one a 409.
        let attempt = 0
        const refused = yield* until(
          Effect.suspend(() => admin.call("POST", resourcePath(ServiceResource, ns), service(`late-${++attempt}`))),
          (answer) => answer.status !== 201
        )
        const name = `late-${attempt}`
        expect(refused.body).toEqual(failureStatus(
          403,
          "Forbidden",
          `services "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
          {
            name,
            kind: "services",
            causes: [{
              reason: "NamespaceTerminating",
              message: `namespace ${ns} is being terminated`,
              field: "metadata.namespace"
            }]
          }
        ))
      })
  )

  it.scoped("answers a token it never issued with 401 Unauthorized, and no token as the anonymous user", () =>
    Effect.gen(function*() {
      const { kubeconfig, namespace } = yield* Contract
      const ns = yield* namespace
      const stranger = yield* rawApi(kubeconfig, "not-a-token-this-server-issued")
      const unauthorized = failureStatus(401, "Unauthorized", "Unauthorized")
      for (
        const path of [
          resourcePath(IngressResource, ns, "web"),
          `${resourcePath(PodResource, ns)}?watch=true`,
          "/version"
        ]
      ) {
        const answer = yield* stranger.call("GET", path)
        expect(shape(answer)).toEqual(asStatus(answer, unauthorized))
      }
      const refused = yield* stranger.call("GET", resourcePath(ServiceResource, ns))
      expect(libraryReads(refused, "list", ServiceResource, ns).tag).toBe("Unauthorized")
      const anonymous = yield* (yield* rawApi(kubeconfig, "")).call("GET", resourcePath(ServiceResource, ns))
      expect([anonymous.status, anonymous.body.message]).toEqual([
        403,
        `services is forbidden: User "system:anonymous" cannot list resource "services" in API group "" in the namespace "${ns}"`
      ])
    }))

  it.scoped("refuses a body in a media type it does not take with 415: the handler's list on POST, the route's on PATCH", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      yield* admin.call("POST", resourcePath(ServiceResource, ns), service("web"))
      const bodies = failureStatus(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
      )
      for (const resource of [ServiceResource, HttpRouteResource]) {
        const posted = yield* admin.call("POST", resourcePath(resource, ns), "name: web", "text/plain")
        expect(shape(posted)).toEqual(asStatus(posted, bodies))
      }
      // A built-in type's PATCH route consumes the patch types only: go-restful refuses the
      // rest before the handler, whether or not the object exists.
      for (
        const [path, type] of [
          [resourcePath(ServiceResource, ns, "web"), "text/plain"],
          [resourcePath(ServiceResource, ns, "web"), "application/json"],
          [resourcePath(LeaseResource, ns, "absent"), "application/xml"],
          [`${resourcePath(PodResource, ns, "absent")}/status`, "text/plain"]
        ] as const
      ) {
        const patched = yield* admin.call("PATCH", path, {}, type)
        expect(shape(patched)).toEqual(
          asStatus(patched, failureStatus(415, "UnsupportedMediaType", "415: Unsupported Media Type", {}))
        )
      }
      // A custom resource's handler checks it itself, and takes no strategic merge.
      const route = yield* admin.call(
        "PATCH",
        resourcePath(HttpRouteResource, ns, "web"),
        {},
        "application/strategic-merge-patch+json"
      )
      expect(shape(route)).toEqual(asStatus(
        route,
        failureStatus(
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        )
      ))
      expect(libraryReads(route, "patch", HttpRouteResource, ns, "web").tag).toBe("Unexpected")
    }))

  it.scoped("answers a method a built-in type's path does not have with 405 naming nothing", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      yield* admin.call("POST", resourcePath(IngressResource, ns), ingress("web"))
      const notAllowed = failureStatus(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        {}
      )
      for (
        const [method, path] of [
          ["POST", resourcePath(ServiceResource, ns, "web")],
          ["POST", resourcePath(LeaseResource, ns, "leader")],
          ["PUT", resourcePath(IngressResource, ns)],
          ["PATCH", resourcePath(PodResource, ns)],
          ["POST", `${resourcePath(IngressResource, ns, "web")}/status`],
          ["DELETE", `${resourcePath(IngressResource, ns, "web")}/status`]
        ] as const
      ) {
        const answer = yield* admin.call(
          method,
          path,
          method === "DELETE" ? undefined : {},
          method === "PATCH" ? MERGE : undefined
        )
        expect(shape(answer)).toEqual(asStatus(answer, notAllowed))
      }
    }))

  it.scoped("routes a custom resource by verb: a POST on a name creates the body's object, no name is a 400, status is read and written only", () =>
    Effect.gen(function*() {
      const { admin, namespace } = yield* Contract
      const ns = yield* namespace
      const created = yield* admin.call("POST", resourcePath(HttpRouteResource, ns, "not-read"), httpRoute("web"))
      expect([created.status, created.body.metadata.name]).toEqual([201, "web"])
      const nameless = failureStatus(400, "BadRequest", "name must be provided")
      const put = yield* admin.call("PUT", resourcePath(HttpRouteResource, ns), httpRoute("web"))
      const patched = yield* admin.call("PATCH", resourcePath(HttpRouteResource, ns), {}, MERGE)
      for (const answer of [put, patched]) expect(shape(answer)).toEqual(asStatus(answer, nameless))
      for (const [method, verb] of [["POST", "create"], ["DELETE", "delete"]] as const) {
        const answer = yield* admin.call(
          method,
          `${resourcePath(HttpRouteResource, ns, "web")}/status`,
          method === "DELETE" ? undefined : {}
        )
        expect(shape(answer)).toEqual(asStatus(
          answer,
          failureStatus(
            405,
            "MethodNotAllowed",
            `${verb} is not supported on resources of kind "httproutes.gateway.networking.k8s.io"`,
            { group: "gateway.networking.k8s.io", kind: "httproutes" }
          )
        ))
      }
    }))

  it.scoped.skipIf(!onRealServer())(
    "(real server only: LocalCluster serves no FlowSchemas; its faults answer the same 429) answers 429 in plain text with Retry-After when a priority level rejects",
    () =>
      Effect.gen(function*() {
        const { admin, kubeconfig, namespace } = yield* Contract
        const ns = yield* namespace
        const token = yield* serviceAccountToken(admin, ns, "throttled")
        const api = yield* rawApi(kubeconfig, token)
        // The held request must get past authorization to the handler, which then waits for its body.
        yield* grant(admin, ns, "throttled", ["configmaps"], ["create"])
        const flowcontrol = "/apis/flowcontrol.apiserver.k8s.io/v1"
        // No seats of its own and none to borrow: a level runs one request at a time (one
        // wider than its limit runs alone), and with `Reject` refuses the next at once.
        yield* Effect.acquireRelease(
          admin.call("POST", `${flowcontrol}/prioritylevelconfigurations`, {
            apiVersion: "flowcontrol.apiserver.k8s.io/v1",
            kind: "PriorityLevelConfiguration",
            metadata: { name: ns },
            spec: {
              type: "Limited",
              limited: {
                nominalConcurrencyShares: 0,
                lendablePercent: 0,
                borrowingLimitPercent: 0,
                limitResponse: { type: "Reject" }
              }
            }
          }),
          () => Effect.asVoid(admin.call("DELETE", `${flowcontrol}/prioritylevelconfigurations/${ns}`))
        )
        const schema = yield* Effect.acquireRelease(
          admin.call("POST", `${flowcontrol}/flowschemas`, {
            apiVersion: "flowcontrol.apiserver.k8s.io/v1",
            kind: "FlowSchema",
            metadata: { name: ns },
            spec: {
              priorityLevelConfiguration: { name: ns },
              // Before every schema but `exempt` (1) and `probes` (2).
              matchingPrecedence: 10,
              rules: [{
                subjects: [{ kind: "ServiceAccount", serviceAccount: { namespace: ns, name: "throttled" } }],
                resourceRules: [{
                  verbs: ["*"],
                  apiGroups: ["*"],
                  resources: ["*"],
                  namespaces: ["*"],
                  clusterScope: true
                }]
              }]
            }
          }),
          () => Effect.asVoid(admin.call("DELETE", `${flowcontrol}/flowschemas/${ns}`))
        )
        const probe = api.call("GET", `/api/v1/namespaces/${ns}/configmaps`)
        // The server takes the new configuration in a moment; each answer says which schema classified it.
        yield* until(probe, (answer) => answer.headers["x-kubernetes-pf-flowschema-uid"] === schema.body.metadata.uid)
        yield* holdSeat(kubeconfig, token, `/api/v1/namespaces/${ns}/configmaps`)
        const throttled = yield* until(probe, (answer) => answer.status === 429)
        expect(shape(throttled)).toEqual({
          code: 429,
          type: "text/plain; charset=utf-8",
          body: "Too many requests, please try again later.\n"
        })
        // Seconds, from the level's recent rejections: 1 with so few.
        expect(throttled.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
        const read = fromResponse(
          requestContext("list", ServiceResource, ns),
          throttled.status,
          throttled.text,
          throttled.headers["retry-after"] as string
        )
        expect([read._tag, "retryAfterSeconds" in read && read.retryAfterSeconds]).toEqual([
          "TooManyRequests",
          Number(throttled.headers["retry-after"])
        ])
      })
  )
})

/** The server and credentials of a kubeconfig (or `token` in place of its user), for the requests RawApi cannot make. */
const credentialsOf = (kubeconfig: string, token?: string) =>
  Effect.promise(async () => {
    const config = parse(await readFile(kubeconfig, "utf8"))
    const cluster = config.clusters[0].cluster
    const user = config.users[0].user
    const data = (field: string) => Buffer.from(field, "base64")
    const ca = data(cluster["certificate-authority-data"])
    return {
      server: String(cluster.server),
      options: token !== undefined
        ? { ca }
        : { ca, cert: data(user["client-certificate-data"]), key: data(user["client-key-data"]) },
      headers: token !== undefined ? { authorization: `Bearer ${token}` } : {}
    }
  })

/**
 * A DELETE with `preconditions` in its DeleteOptions body, as the admin. RawApi cannot
 * send it: Node 20's client puts no Content-Length on a DELETE's body, so a server reads
 * the body as the next request (a 400, the connection closed) and deletes without them.
 */
const deleteWith = (kubeconfig: string, path: string, preconditions: object) =>
  Effect.flatMap(credentialsOf(kubeconfig), ({ options, server }) =>
    Effect.async<Answer>((resume) => {
      const body = JSON.stringify({ apiVersion: "v1", kind: "DeleteOptions", preconditions })
      const req = httpsRequest(new URL(path, server), {
        ...options,
        method: "DELETE",
        agent: false,
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          "content-length": `${Buffer.byteLength(body)}`
        }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text, body: JSON.parse(text) }))
        })
      })
      req.on("error", (error) => resume(Effect.die(error)))
      req.end(body)
      return Effect.sync(() => req.destroy())
    }))

/**
 * Holds a priority level's seat for the scope: a POST whose headers go out and whose
 * body never does, so its handler waits for the body while the level counts it running.
 */
const holdSeat = (kubeconfig: string, token: string, path: string) =>
  Effect.acquireRelease(
    Effect.map(credentialsOf(kubeconfig, token), ({ headers, options, server }) => {
      const req = httpsRequest(new URL(path, server), {
        ...options,
        method: "POST",
        agent: false,
        headers: { ...headers, "content-type": "application/json", "content-length": "2" }
      })
      req.on("error", () => {})
      req.flushHeaders()
      return req
    }),
    (req) => Effect.sync(() => req.destroy())
  )
