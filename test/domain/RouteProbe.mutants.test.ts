/**
 * Edges of the probe rules that mutation testing found unchecked: an empty published
 * address is skipped, 400 is the first failing status, every routing-layer status has
 * its own words, and a Service port is matched by name only when both sides name it.
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

const target: ProbeTarget = { scheme: "http", host: "8080-s1.example.com", address: "lb.example.com", port: 80 }
const via = "http://8080-s1.example.com via lb.example.com:80"

describe("published addresses", () => {
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

describe("judgeAnswer", () => {
  it("serves anything below 400 and fails 400 itself", () => {
    expect(judgeAnswer(target, { _tag: "Answered", status: 200 })).toEqual({ ok: true, status: 200 })
    expect(judgeAnswer(target, { _tag: "Answered", status: 399 })).toEqual({ ok: true, status: 399 })
    expect(judgeAnswer(target, { _tag: "Answered", status: 400 })).toEqual({
      ok: false,
      status: 400,
      reason: `${via}: 400 from the workload or the routing layer`
    })
  })

  it("says what each status of the routing layer means", () => {
    expect(judgeAnswer(target, { _tag: "Answered", status: 404 })).toEqual({
      ok: false,
      status: 404,
      reason:
        `${via}: 404 from the routing layer: it does not route this host, although its status says programmed (a proxy behind its controller, or another address than the one it serves on)`
    })
    expect(judgeAnswer(target, { _tag: "Answered", status: 502 })).toEqual({
      ok: false,
      status: 502,
      reason:
        `${via}: 502: the routing layer could not reach the session Pod (nothing listens on the port, or a network policy drops the traffic)`
    })
    expect(judgeAnswer(target, { _tag: "Answered", status: 504 })).toEqual({
      ok: false,
      status: 504,
      reason: `${via}: 504: the session Pod did not answer the routing layer in time`
    })
    expect(judgeAnswer(target, { _tag: "Answered", status: 500 })).toEqual({
      ok: false,
      status: 500,
      reason: `${via}: 500 from the workload or the routing layer`
    })
  })

  it("leaves the certificate's names out of a TLS error when it names none", () => {
    expect(judgeAnswer(target, { _tag: "Tls", message: "self-signed certificate", certificateNames: [] })).toEqual({
      ok: false,
      reason: `${via}: TLS error: self-signed certificate`
    })
  })

  it("passes any other failure's message on, after where the probe went", () => {
    expect(judgeAnswer(target, { _tag: "Failed", message: "getaddrinfo ENOTFOUND lb.example.com" })).toEqual({
      ok: false,
      reason: `${via}: getaddrinfo ENOTFOUND lb.example.com`
    })
  })
})

describe("certificateNames", () => {
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

describe("endpointReadiness", () => {
  const slice = (
    ports: EndpointSlice["ports"],
    endpoints: EndpointSlice["endpoints"]
  ): EndpointSlice => ({ addressType: "IPv4", ...(ports !== undefined ? { ports } : {}), endpoints })
  const readyEndpoint = { addresses: ["10.0.0.7"], conditions: { ready: true } }
  const notReadyEndpoint = { addresses: ["10.0.0.8"], conditions: { ready: false } }

  it("matches by number when the Service port has no name, whatever the slice calls its port", () => {
    expect(endpointReadiness([slice([{ name: "web", port: 8080 }], [readyEndpoint])], { targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([slice([{ name: "web", port: 9090 }], [readyEndpoint])], { targetPort: 8080 })).toBe(
      "not-ready"
    )
  })

  it("matches by number when the slice's port has no name", () => {
    expect(endpointReadiness([slice([{ port: 8080 }], [readyEndpoint])], { name: "web", targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([slice([{ port: 9090 }], [readyEndpoint])], { name: "web", targetPort: 8080 })).toBe(
      "not-ready"
    )
  })

  it("matches by name when both name the port, whatever the numbers", () => {
    expect(endpointReadiness([slice([{ name: "web", port: 80 }], [readyEndpoint])], { name: "web", targetPort: 8080 }))
      .toBe("ready")
    expect(
      endpointReadiness([slice([{ name: "api", port: 8080 }], [readyEndpoint])], { name: "web", targetPort: 8080 })
    )
      .toBe("not-ready")
  })

  it("does not count a slice without ports", () => {
    expect(endpointReadiness([slice(undefined, [readyEndpoint])], { targetPort: 8080 })).toBe("not-ready")
  })

  it("counts an endpoint without conditions as ready, and one ready endpoint among others as enough", () => {
    expect(endpointReadiness([slice([{ port: 8080 }], [{ addresses: ["10.0.0.7"] }])], { targetPort: 8080 })).toBe(
      "ready"
    )
    expect(endpointReadiness([slice([{ port: 8080 }], [notReadyEndpoint, readyEndpoint])], { targetPort: 8080 }))
      .toBe("ready")
  })

  it("needs the ready endpoint in a slice that carries the port", () => {
    const slices = [slice([{ port: 9090 }], [readyEndpoint]), slice([{ port: 8080 }], [notReadyEndpoint])]
    expect(endpointReadiness(slices, { targetPort: 8080 })).toBe("not-ready")
    expect(endpointReadiness([...slices, slice([{ port: 8080 }], [readyEndpoint])], { targetPort: 8080 })).toBe("ready")
  })

  it("says why a host with no ready endpoint gets no traffic, naming the port", () => {
    expect(notReadyReason(8080)).toBe(
      "the session Pod is not Ready, or nothing listens on its port 8080: the Service has no ready endpoint for it, so the routing layer has nowhere to send traffic"
    )
  })
})
