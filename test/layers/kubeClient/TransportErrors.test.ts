/**
 * `fromTransportError`: a failure with no HTTP answer, in words a person can act on,
 * and whether waiting can heal it (its kind). The client's own message never shows.
 */
import { describe, expect, it } from "@effect/vitest"
import { fromTransportError } from "../../../src/layers/kubeClient/TransportErrors.js"
import type { KubeError } from "../../../src/services/KubeError.js"

const server = "https://10.0.0.1:6443"
const at = `could not get services "web" in namespace "ns" at ${server}`
const classify = (error: unknown) => {
  const out: KubeError = fromTransportError(
    { verb: "get", resource: "services", namespace: "ns", name: "web" },
    server,
    error
  )
  return { tag: out._tag, kind: "kind" in out ? out.kind : undefined, reason: out.reason }
}
const withCode = (code: string) => Object.assign(new Error(`the client's own words about ${code}`), { code })

describe("fromTransportError", () => {
  it.each(
    [
      [
        "ECONNREFUSED",
        "refused",
        "the connection was refused (is the API server running, and is the kubeconfig's server address right?)"
      ],
      ["ENOTFOUND", "dns", "the host name does not resolve"],
      ["ETIMEDOUT", "no-answer", "the connection timed out"],
      ["ECONNRESET", "other", "the connection was reset before the answer was complete"],
      ["EPIPE", "other", "the connection was closed while the request was being sent"],
      ["ERR_STREAM_PREMATURE_CLOSE", "other", "the connection closed before the answer was complete"],
      ["EAI_AGAIN", "other", "the host name could not be resolved just now"],
      ["EHOSTUNREACH", "other", "the host is unreachable"],
      ["ENETUNREACH", "other", "the network is unreachable"],
      ["ECONNABORTED", "other", "the connection was aborted"]
    ] as const
  )("names the socket error %s and gives it the kind %s", (code, kind, words) => {
    expect(classify(withCode(code))).toEqual({ tag: "Transport", kind, reason: `${at}: ${words} (${code})` })
  })

  it("finds the code on the error underneath when the outer one has none", () => {
    const outer = new Error("request to https://10.0.0.1:6443/api failed", { cause: withCode("ENOTFOUND") })
    expect(classify(outer)).toEqual({
      tag: "Transport",
      kind: "dns",
      reason: `${at}: the host name does not resolve (ENOTFOUND)`
    })
  })

  it.each(["DEPTH_ZERO_SELF_SIGNED_CERT", "ERR_TLS_CERT_ALTNAME_INVALID", "EPROTO", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"])(
    "calls %s a failed TLS handshake and points at the kubeconfig's certificate settings",
    (code) => {
      expect(classify(withCode(code))).toEqual({
        tag: "Transport",
        kind: "tls",
        reason:
          `${at}: the TLS handshake failed (${code}); check the kubeconfig's certificate-authority and server name`
      })
    }
  )

  it("calls an abort from below the client an aborted request, which waiting may heal", () => {
    const abort = Object.assign(new Error("The operation was aborted"), { name: "AbortError" })
    expect(classify(abort)).toEqual({ tag: "Transport", kind: "other", reason: `${at}: the request was aborted` })
  })

  it("takes a code named like an Object method for an unknown code, not a known one", () => {
    expect(classify(withCode("toString"))).toEqual({
      tag: "Transport",
      kind: "other",
      reason: `${at}: the request failed (toString)`
    })
  })

  it("names any other socket failure by its code", () => {
    expect(classify(withCode("EWHATEVER"))).toEqual({
      tag: "Transport",
      kind: "other",
      reason: `${at}: the request failed (EWHATEVER)`
    })
    // node:http's parser refusing a malformed answer.
    expect(classify(withCode("HPE_INVALID_CONSTANT"))).toEqual({
      tag: "Transport",
      kind: "other",
      reason: `${at}: the request failed (HPE_INVALID_CONSTANT)`
    })
  })

  it("calls a failure with no network sign a client failure before sending, which retrying will not heal", () => {
    expect(classify(new TypeError("credential plugin exited 1"))).toEqual({
      tag: "Unexpected",
      kind: undefined,
      reason: `${at}: the client failed before sending the request (TypeError); check the kubeconfig user's credentials`
    })
    expect(classify("a thrown string")).toEqual({
      tag: "Unexpected",
      kind: undefined,
      reason:
        `${at}: the client failed before sending the request (unknown error); check the kubeconfig user's credentials`
    })
    expect(classify(null).tag).toBe("Unexpected")
    expect(classify(undefined).reason).toBe(
      `${at}: the client failed before sending the request (unknown error); check the kubeconfig user's credentials`
    )
    // A name that is not a string says nothing.
    expect(classify({ name: 42 }).reason).toBe(
      `${at}: the client failed before sending the request (unknown error); check the kubeconfig user's credentials`
    )
  })

  it("looks underneath an error whose own code is not a string", () => {
    const outer = Object.assign(new Error("wrapped"), { code: 1, cause: withCode("ECONNRESET") })
    expect(classify(outer)).toEqual({
      tag: "Transport",
      kind: "other",
      reason: `${at}: the connection was reset before the answer was complete (ECONNRESET)`
    })
  })

  it("stops at an error that is its own cause", () => {
    const loop: Error & { cause?: unknown } = new Error("loop")
    loop.cause = loop
    expect(classify(loop).tag).toBe("Unexpected")
  })

  it("keeps only the error's name and code as the cause, never what it said, wherever it came from", () => {
    const socket = withCode("ECONNRESET")
    const cause = fromTransportError({ verb: "list", resource: "services" }, server, socket).cause
    expect(cause).toBeInstanceOf(Error)
    expect(cause).toMatchObject({ name: "Error", code: "ECONNRESET", message: "Error (ECONNRESET)" })
    // A credential plugin that failed: its stderr is the message client-node gives.
    const plugin = new Error("refresh failed: SUPERSECRET-REFRESH-TOKEN-123")
    const failed = fromTransportError({ verb: "get", resource: "pods" }, server, plugin)
    expect(JSON.stringify(failed)).not.toContain("SUPERSECRET")
    expect(String((failed.cause as Error).stack)).not.toContain("SUPERSECRET")
    expect(failed.reason).not.toContain("SUPERSECRET")
  })
})
