/**
 * The probe's rules, apart from the network: which published address a probe goes
 * to, how an answer or a failure is judged and worded, the names a certificate
 * carries, and whether a Service port has a ready endpoint.
 */
import { describe, expect, it } from "@effect/vitest"
import type { EndpointSlice } from "../../src/domain/Objects.js"
import {
  certificateNames,
  endpointReadiness,
  gatewayAddress,
  ingressAddress,
  judgeAnswer,
  notReadyReason,
  type ProbeTarget
} from "../../src/domain/RouteProbe.js"

const target: ProbeTarget = { scheme: "https", host: "8080-s1.example.com", address: "203.0.113.10", port: 443 }
const via = "https://8080-s1.example.com via 203.0.113.10:443"
const httpTarget: ProbeTarget = { scheme: "http", host: "8080-s1.example.com", address: "lb.example.com", port: 80 }
const httpVia = "http://8080-s1.example.com via lb.example.com:80"

const slice = (ready: boolean | undefined, port = { name: "p8080", port: 8080 }): EndpointSlice => ({
  addressType: "IPv4",
  ports: [port],
  endpoints: [{ addresses: ["10.0.0.7"], conditions: ready === undefined ? {} : { ready } }]
})

describe("the published address a probe goes to", () => {
  it("takes the first published address, an IP before a hostname", () => {
    expect(
      ingressAddress({ status: { loadBalancer: { ingress: [{ hostname: "lb.example.com", ip: "203.0.113.10" }] } } })
    )
      .toBe("203.0.113.10")
    expect(ingressAddress({ status: { loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } } })).toBe(
      "lb.example.com"
    )
    expect(ingressAddress({ status: { loadBalancer: { ingress: [] } } })).toBeUndefined()
    expect(gatewayAddress({ status: { addresses: [{ type: "IPAddress", value: "198.51.100.4" }] } })).toBe(
      "198.51.100.4"
    )
    expect(gatewayAddress(undefined)).toBeUndefined()
  })

  it("skips an Ingress entry with an empty address and takes the next one", () => {
    expect(ingressAddress({ status: { loadBalancer: { ingress: [{ ip: "" }, { hostname: "lb.example.com" }] } } }))
      .toBe("lb.example.com")
    expect(ingressAddress({ status: { loadBalancer: { ingress: [{ hostname: "" }, { ip: "203.0.113.9" }] } } }))
      .toBe("203.0.113.9")
  })

  it("takes an IP alone, and finds nothing in an Ingress without status or with only empty entries", () => {
    expect(ingressAddress({ status: { loadBalancer: { ingress: [{ ip: "203.0.113.9" }] } } })).toBe("203.0.113.9")
    expect(ingressAddress({ status: { loadBalancer: { ingress: [{}, { hostname: "" }] } } })).toBeUndefined()
    expect(ingressAddress({})).toBeUndefined()
    expect(ingressAddress(undefined)).toBeUndefined()
  })

  it("skips a Gateway address with an empty value", () => {
    expect(gatewayAddress({ status: { addresses: [{ value: "" }, { value: "198.51.100.4" }] } })).toBe("198.51.100.4")
    expect(gatewayAddress({ status: { addresses: [{ value: "" }] } })).toBeUndefined()
    expect(gatewayAddress({ status: {} })).toBeUndefined()
  })
})

describe("judging what the probe got", () => {
  it("calls any answer below 400 served, and says what a 404, 502 and 503 mean", () => {
    expect(judgeAnswer(target, { _tag: "Answered", status: 302 })).toEqual({ ok: true, status: 302 })
    expect(judgeAnswer(target, { _tag: "Answered", status: 404 }).reason).toMatch(
      /^https:\/\/8080-s1\.example\.com via 203\.0\.113\.10:443: 404 from the routing layer/
    )
    expect(judgeAnswer(target, { _tag: "Answered", status: 503 })).toEqual({
      ok: false,
      status: 503,
      reason:
        `${via}: 503: the routing layer has no ready endpoint for the session Service's port (the session Pod is not Ready, or nothing listens on the port)`
    })
    expect(judgeAnswer(target, { _tag: "Answered", status: 502 }).ok).toBe(false)
  })

  it("calls a 401 or 403 reachable: an auth proxy answered for the workload", () => {
    expect(judgeAnswer(target, { _tag: "Answered", status: 401 })).toEqual({ ok: true, status: 401 })
    expect(judgeAnswer(target, { _tag: "Answered", status: 403 })).toEqual({ ok: true, status: 403 })
    expect(judgeAnswer(target, { _tag: "Answered", status: 400 }).ok).toBe(false)
    expect(judgeAnswer(target, { _tag: "Answered", status: 402 }).ok).toBe(false)
  })

  it("names the failure before an answer: refused, timed out, TLS with the certificate's names", () => {
    expect(judgeAnswer(target, { _tag: "Refused" })).toEqual({
      ok: false,
      reason: `${via}: connection refused: nothing listens on 203.0.113.10:443`
    })
    expect(judgeAnswer(target, { _tag: "TimedOut", afterMs: 5000 }).reason).toBe(`${via}: no answer within 5000 ms`)
    expect(
      judgeAnswer(target, {
        _tag: "Tls",
        message: "Hostname/IP does not match",
        certificateNames: ["*.other.example", "other.example"]
      })
    )
      .toEqual({
        ok: false,
        reason: `${via}: TLS error: Hostname/IP does not match (the certificate names *.other.example, other.example)`
      })
  })

  it("serves anything below 400 and fails 400 itself", () => {
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 200 })).toEqual({ ok: true, status: 200 })
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 399 })).toEqual({ ok: true, status: 399 })
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 400 })).toEqual({
      ok: false,
      status: 400,
      reason: `${httpVia}: 400 from the workload or the routing layer`
    })
  })

  it("says what each status of the routing layer means", () => {
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 404 })).toEqual({
      ok: false,
      status: 404,
      reason:
        `${httpVia}: 404 from the routing layer: it does not route this host, although its status says programmed (a proxy behind its controller, or another address than the one it serves on)`
    })
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 502 })).toEqual({
      ok: false,
      status: 502,
      reason:
        `${httpVia}: 502: the routing layer could not reach the session Pod (nothing listens on the port, or a network policy drops the traffic)`
    })
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 504 })).toEqual({
      ok: false,
      status: 504,
      reason: `${httpVia}: 504: the session Pod did not answer the routing layer in time`
    })
    expect(judgeAnswer(httpTarget, { _tag: "Answered", status: 500 })).toEqual({
      ok: false,
      status: 500,
      reason: `${httpVia}: 500 from the workload or the routing layer`
    })
  })

  it("leaves the certificate's names out of a TLS error when it names none", () => {
    expect(judgeAnswer(httpTarget, { _tag: "Tls", message: "self-signed certificate", certificateNames: [] })).toEqual({
      ok: false,
      reason: `${httpVia}: TLS error: self-signed certificate`
    })
  })

  it("passes any other failure's message on, after where the probe went", () => {
    expect(judgeAnswer(httpTarget, { _tag: "Failed", message: "getaddrinfo ENOTFOUND lb.example.com" })).toEqual({
      ok: false,
      reason: `${httpVia}: getaddrinfo ENOTFOUND lb.example.com`
    })
  })
})

describe("the names a certificate carries", () => {
  it("reads a certificate's names from its subjectaltname, else its CN", () => {
    expect(certificateNames("DNS:*.example.com, DNS:example.com, IP Address:127.0.0.1", "x")).toEqual([
      "*.example.com",
      "example.com",
      "127.0.0.1"
    ])
    expect(certificateNames(undefined, "example.com")).toEqual(["example.com"])
  })

  it("reads names separated by commas without spaces, dropping empty entries", () => {
    expect(certificateNames("DNS:a.example.com,DNS:b.example.com,, ", undefined)).toEqual([
      "a.example.com",
      "b.example.com"
    ])
  })

  it("strips the prefixes only at the start of an entry", () => {
    expect(certificateNames("URI:spiffe://DNS:x, email:IP Address:y", undefined)).toEqual([
      "URI:spiffe://DNS:x",
      "email:IP Address:y"
    ])
  })

  it("falls back to the CN only when the subjectaltname names nothing, and to none without a CN", () => {
    expect(certificateNames("", "example.com")).toEqual(["example.com"])
    expect(certificateNames("DNS:a.example.com", "example.com")).toEqual(["a.example.com"])
    expect(certificateNames(undefined, "")).toEqual([])
    expect(certificateNames(undefined, undefined)).toEqual([])
  })
})

describe("a ready endpoint for the Service port", () => {
  const sliceOf = (
    ports: EndpointSlice["ports"],
    endpoints: EndpointSlice["endpoints"]
  ): EndpointSlice => ({ addressType: "IPv4", ...(ports !== undefined ? { ports } : {}), endpoints })
  const readyEndpoint = { addresses: ["10.0.0.7"], conditions: { ready: true } }
  const notReadyEndpoint = { addresses: ["10.0.0.8"], conditions: { ready: false } }

  it("finds a ready endpoint for the Service port, by name or by number, counting an unset ready as ready", () => {
    const port = { name: "p8080", targetPort: 8080 }
    expect(endpointReadiness([slice(true)], port)).toBe("ready")
    expect(endpointReadiness([slice(undefined)], port)).toBe("ready")
    expect(endpointReadiness([slice(false)], port)).toBe("not-ready")
    expect(endpointReadiness([], port)).toBe("not-ready")
    expect(endpointReadiness([slice(true, { name: "p9090", port: 9090 })], port)).toBe("not-ready")
    expect(endpointReadiness([slice(true, { name: "", port: 8080 })], port)).toBe("ready")
  })

  it("matches by number when the Service port has no name, whatever the slice calls its port", () => {
    expect(endpointReadiness([sliceOf([{ name: "web", port: 8080 }], [readyEndpoint])], { targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([sliceOf([{ name: "web", port: 9090 }], [readyEndpoint])], { targetPort: 8080 })).toBe(
      "not-ready"
    )
  })

  it("matches by number when the slice's port has no name", () => {
    expect(endpointReadiness([sliceOf([{ port: 8080 }], [readyEndpoint])], { name: "web", targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([sliceOf([{ port: 9090 }], [readyEndpoint])], { name: "web", targetPort: 8080 })).toBe(
      "not-ready"
    )
  })

  it("matches by name when both name the port, whatever the numbers", () => {
    expect(
      endpointReadiness([sliceOf([{ name: "web", port: 80 }], [readyEndpoint])], { name: "web", targetPort: 8080 })
    )
      .toBe("ready")
    expect(
      endpointReadiness([sliceOf([{ name: "api", port: 8080 }], [readyEndpoint])], { name: "web", targetPort: 8080 })
    )
      .toBe("not-ready")
  })

  it("does not count a slice without ports", () => {
    expect(endpointReadiness([sliceOf(undefined, [readyEndpoint])], { targetPort: 8080 })).toBe("not-ready")
  })

  it("counts an endpoint without conditions as ready, and one ready endpoint among others as enough", () => {
    expect(endpointReadiness([sliceOf([{ port: 8080 }], [{ addresses: ["10.0.0.7"] }])], { targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([sliceOf([{ port: 8080 }], [notReadyEndpoint, readyEndpoint])], { targetPort: 8080 }))
      .toBe("ready")
  })

  it("needs the ready endpoint in a slice that carries the port", () => {
    const slices = [sliceOf([{ port: 9090 }], [readyEndpoint]), sliceOf([{ port: 8080 }], [notReadyEndpoint])]
    expect(endpointReadiness(slices, { targetPort: 8080 })).toBe("not-ready")
    expect(endpointReadiness([...slices, sliceOf([{ port: 8080 }], [readyEndpoint])], { targetPort: 8080 })).toBe(
      "ready"
    )
  })

  it("says why a host with no ready endpoint gets no traffic, naming the port", () => {
    expect(notReadyReason(8080)).toBe(
      "the session Pod is not Ready, or nothing listens on its port 8080: the Service has no ready endpoint for it, so the routing layer has nowhere to send traffic"
    )
  })

  it("reads a slice whose endpoints are null, as the API sends an empty list, as not ready", () => {
    const empty = {
      addressType: "IPv4",
      ports: [{ name: "p8080", port: 8080 }],
      endpoints: null
    } as unknown as EndpointSlice
    expect(endpointReadiness([empty], { name: "p8080", targetPort: 8080 })).toBe("not-ready")
  })
})
