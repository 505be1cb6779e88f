/**
 * Every Kubernetes failure prints well on its own: `Cause.pretty` and a plain
 * `message` give the reason a person can act on, the original failure stays its
 * `cause`, and `isKubeError` tells the cases from anything else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause } from "effect"
import { fromResponse } from "../../src/layers/kubeClient/KubeErrorParsing.js"
import { fromTransportError } from "../../src/layers/KubeClientLive.js"
import {
  AlreadyExists,
  BadRequest,
  Conflict,
  Expired,
  Forbidden,
  Invalid,
  isKubeError,
  type KubeError,
  NotFound,
  NotServed,
  TooManyRequests,
  Transport,
  Unauthorized,
  Unavailable,
  Unexpected
} from "../../src/services/KubeError.js"

const every: ReadonlyArray<KubeError> = [
  new NotFound({ reason: `ingresses.networking.k8s.io "web" not found`, code: 404 }),
  new AlreadyExists({ reason: `services "web" already exists`, code: 409 }),
  new Conflict({ reason: "the object has been modified", code: 409, causes: [] }),
  new Invalid({ reason: "spec.rules[0].host: Invalid value", code: 422, causes: [] }),
  new BadRequest({ reason: "bad request to list ingresses: unable to parse requirement", code: 400 }),
  new Unauthorized({ reason: "the API server refused the credentials (401)", code: 401 }),
  new Forbidden({ reason: `ingresses is forbidden: User "x" cannot list resource "ingresses"`, code: 403 }),
  new NotServed({
    reason: "the API server does not serve httproutes.gateway.networking.k8s.io",
    code: 404,
    resource: "httproutes"
  }),
  new Expired({ reason: "too old resource version: 1 (2)", code: 410 }),
  new TooManyRequests({ reason: "the API server is throttling requests (429)", code: 429, retryAfterSeconds: 1 }),
  new Unavailable({ reason: "the API server could not answer get ingresses (503)", code: 503 }),
  new Transport({ reason: "could not get ingresses: the connection was refused (ECONNREFUSED)", kind: "refused" }),
  new Unexpected({ reason: "unexpected answer 418 to get ingresses", code: 418 })
]

describe("KubeError", () => {
  it("has a message that is its reason, and renders with it under Cause.pretty, for every case", () => {
    expect(every).toHaveLength(13)
    for (const error of every) {
      expect(error.message).toBe(error.reason)
      const pretty = Cause.pretty(Cause.fail(error))
      expect(pretty).toContain(error.reason)
      expect(pretty).not.toContain("An error has occurred")
    }
  })

  it("tells every case from other errors with isKubeError", () => {
    for (const error of every) expect(isKubeError(error)).toBe(true)
    for (const other of [new Error("x"), { _tag: "NotFound", reason: "x" }, "NotFound", null, undefined, 404]) {
      expect(isKubeError(other)).toBe(false)
    }
  })

  it("keeps the failure underneath as its cause (its name and code only), never in its reason", () => {
    const socket = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443 with a long client stack"), {
      code: "ECONNREFUSED"
    })
    const error = fromTransportError(
      { verb: "get", resource: "ingresses.networking.k8s.io", namespace: "ns", name: "web" },
      "https://127.0.0.1:6443",
      socket
    )
    expect(error.cause).toMatchObject({ name: "Error", code: "ECONNREFUSED" })
    expect(String(error.cause)).not.toContain("long client stack")
    expect(error.reason).not.toContain("long client stack")
    const thrown = { code: 403 }
    const answer = fromResponse(
      { verb: "list", resource: "ingresses.networking.k8s.io", namespace: "ns" },
      403,
      "",
      undefined,
      thrown
    )
    expect(answer.cause).toBe(thrown)
    expect(answer._tag).toBe("Forbidden")
  })

  it("tells a person to grant patch, the RBAC verb a server-side apply needs", () => {
    const error = fromResponse({ verb: "apply", resource: "services", namespace: "ns", name: "web" }, 403, "")
    expect(error.reason).toContain(`grant the verb "patch" on services`)
  })
})
