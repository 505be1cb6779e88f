import { describe, expect, it } from "@effect/vitest"
import type { EndpointSlice } from "../../src/domain/Objects.js"
import {
  certificateNames,
  endpointReadiness,
  gatewayAddress,
  ingressAddress,
  judgeAnswer,
  type ProbeTarget
} from "../../src/domain/RouteProbe.js"

const target: ProbeTarget = { scheme: "https", host: "8080-s1.example.com", address: "203.0.113.10", port: 443 }
const via = "https://8080-s1.example.com via 203.0.113.10:443"

const slice = (ready: boolean | undefined, port = { name: "p8080", port: 8080 }): EndpointSlice => ({
  addressType: "IPv4",
  ports: [port],
  endpoints: [{ addresses: ["10.0.0.7"], conditions: ready === undefined ? {} : { ready } }]
})

describe("RouteProbe rules", () => {
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

  it("reads a certificate's names from its subjectaltname, else its CN", () => {
    expect(certificateNames("DNS:*.example.com, DNS:example.com, IP Address:127.0.0.1", "x")).toEqual([
      "*.example.com",
      "example.com",
      "127.0.0.1"
    ])
    expect(certificateNames(undefined, "example.com")).toEqual(["example.com"])
  })

  it("finds a ready endpoint for the Service port, by name or by number, counting an unset ready as ready", () => {
    const port = { name: "p8080", targetPort: 8080 }
    expect(endpointReadiness([slice(true)], port)).toBe("ready")
    expect(endpointReadiness([slice(undefined)], port)).toBe("ready")
    expect(endpointReadiness([slice(false)], port)).toBe("not-ready")
    expect(endpointReadiness([], port)).toBe("not-ready")
    expect(endpointReadiness([slice(true, { name: "p9090", port: 9090 })], port)).toBe("not-ready")
    expect(endpointReadiness([slice(true, { name: "", port: 8080 })], port)).toBe("ready")
  })
})

describe("RouteProbe rules on the wire's shapes", () => {
  it("reads a slice whose endpoints are null, as the API sends an empty list, as not ready", () => {
    const empty = {
      addressType: "IPv4",
      ports: [{ name: "p8080", port: 8080 }],
      endpoints: null
    } as unknown as EndpointSlice
    expect(endpointReadiness([empty], { name: "p8080", targetPort: 8080 })).toBe("not-ready")
  })
})
