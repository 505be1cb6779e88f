/**
 * Properties over generated sessions and configuration: the domain's own checks
 * (sessionIdProblem, parsePorts, hostProblem) refuse every input whose objects a
 * real API server would refuse, with a message naming the value; everything they
 * let through builds objects `validateObject` accepts.
 */
import { describe, expect, it } from "@effect/vitest"
// fast-check as @effect/vitest's it.prop takes it: the copy effect ships.
import { type FieldError, validateObject } from "@session-routing/local-cluster"
import { Either, FastCheck as fc } from "effect"
import { buildSessionObjects, type ManifestSettings, type SessionSpec } from "../../src/domain/Manifests.js"
import type { KubeObject } from "../../src/domain/Objects.js"
import { HttpRouteResource, IngressResource, type ResourceType, ServiceResource } from "../../src/domain/Resources.js"
import { hostForPort, hostProblem } from "../../src/domain/Routes.js"
import { parsePorts, type PortMapping, sessionIdProblem } from "../../src/domain/Session.js"
import { isDns1123Label, isDns1123Subdomain, isValidLabelValue } from "../../src/domain/Validation.js"

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$/)
const longDnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/)
const subdomain = fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((labels) => labels.join("."))
/** Base domains, some near the length where the longest host passes 253 characters. */
const baseDomain = fc.oneof(
  { weight: 4, arbitrary: subdomain },
  { weight: 1, arbitrary: fc.array(longDnsLabel, { minLength: 1, maxLength: 5 }).map((labels) => labels.join(".")) },
  {
    weight: 2,
    arbitrary: fc.array(fc.stringMatching(/^[a-z][a-z0-9]{50,61}[a-z]$/), { minLength: 3, maxLength: 4 }).map((
      labels
    ) => labels.join("."))
  }
)
const labelValue = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$/)

/** Session ids: valid ones of every length, and arbitrary text. */
const sessionId = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,46}[a-z0-9])?$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][-a-z0-9]{47,56}[a-z0-9]$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[-a-zA-Z0-9_.]{0,12}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }
)

/** Ports drawn partly from a few common values, so lists repeat them; some out of range. */
const portNumber = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 65535 }) },
  { weight: 3, arbitrary: fc.constantFrom(80, 443, 8080) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 65536, 70000, 80.5) }
)
const protocol = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom("tcp", "udp") },
  { weight: 1, arbitrary: fc.constantFrom("sctp", "TCP", "") }
)
const ports = fc.array(fc.record({ port: portNumber, protocol }), { maxLength: 6 })

const optional = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })

const settings: fc.Arbitrary<ManifestSettings> = fc
  .record({
    sessionNamespace: dnsLabel,
    managedBy: labelValue,
    baseDomain,
    ingressClassName: optional(subdomain),
    tlsSecretName: optional(subdomain),
    gatewayName: subdomain,
    gatewayNamespace: dnsLabel,
    sectionName: optional(subdomain)
  })
  .map((s) => ({
    sessionNamespace: s.sessionNamespace,
    managedBy: s.managedBy,
    baseDomain: s.baseDomain,
    ...(s.ingressClassName !== undefined ? { ingressClassName: s.ingressClassName } : {}),
    ...(s.tlsSecretName !== undefined ? { tlsSecretName: s.tlsSecretName } : {}),
    gateway: {
      name: s.gatewayName,
      namespace: s.gatewayNamespace,
      ...(s.sectionName !== undefined ? { sectionName: s.sectionName } : {})
    }
  }))

const pod = fc.record({ podName: subdomain, podUid: fc.uuid() })

// ---------------------------------------------------------------------------
// The checks, in the order callers apply them, and an oracle for their messages
// ---------------------------------------------------------------------------

interface Input {
  readonly sessionId: string
  readonly ports: ReadonlyArray<{ readonly port: number; readonly protocol: string }>
  readonly settings: ManifestSettings
}

/** The first refusal of the domain's checks, or the ports they accepted. */
const check = (input: Input): Either.Either<ReadonlyArray<PortMapping>, string> => {
  const idProblem = sessionIdProblem(input.sessionId)
  if (idProblem !== undefined) return Either.left(idProblem)
  const parsed = parsePorts(input.ports)
  if (Either.isLeft(parsed)) return parsed
  const host = hostProblem(input.settings.baseDomain, input.sessionId)
  return host !== undefined ? Either.left(host) : parsed
}

/** The text a refusal must contain so a person can find the bad value. */
const expectedMention = (input: Input): string => {
  if (sessionIdProblem(input.sessionId) !== undefined) {
    return input.sessionId === "" ? "session id may not be empty" : `"${input.sessionId}"`
  }
  // parsePorts stops at the first bad mapping (port before protocol), then looks for repeats.
  for (const m of input.ports) {
    if (!Number.isInteger(m.port) || m.port < 1 || m.port > 65535) return String(m.port)
    if (m.protocol !== "tcp" && m.protocol !== "udp") return JSON.stringify(m.protocol)
  }
  const seen = new Set<string>()
  for (const m of input.ports) {
    const key = `${m.port}/${m.protocol}`
    if (seen.has(key)) return key
    seen.add(key)
  }
  return `"${hostForPort(input.settings.baseDomain, input.sessionId, 65535)}"`
}

const resourceOf = (object: KubeObject): ResourceType<unknown> => {
  switch (object.kind) {
    case "Service":
      return ServiceResource
    case "Ingress":
      return IngressResource
    case "HTTPRoute":
      return HttpRouteResource
    default:
      throw new Error(`unexpected kind ${object.kind}`)
  }
}

/** Every object both publishing modes would build, with the server's errors for each. */
const errorsOfBuilt = (
  spec: SessionSpec,
  given: ManifestSettings
): ReadonlyArray<{ readonly object: string; readonly errors: ReadonlyArray<FieldError> }> =>
  (["ingress", "gateway"] as const)
    .flatMap((mode) => buildSessionObjects(mode, given, spec))
    .map((object) => ({
      object: `${object.kind}/${object.metadata?.name}`,
      errors: validateObject(resourceOf(object), object)
    }))
    .filter((r) => r.errors.length > 0)

const specOf = (
  input: Input,
  accepted: ReadonlyArray<PortMapping>,
  p: { podName: string; podUid: string }
): SessionSpec => ({
  sessionId: input.sessionId,
  podName: p.podName,
  podUid: p.podUid,
  ports: accepted
})

// ---------------------------------------------------------------------------

describe("the domain's checks and the server agree", () => {
  it.prop(
    "every input is either refused, naming the bad value, or builds only objects the server accepts",
    { sessionId, ports, settings, pod },
    ({ sessionId, ports, settings, pod }) => {
      const input: Input = { sessionId, ports, settings }
      const checked = check(input)
      if (Either.isLeft(checked)) {
        expect(checked.left).toContain(expectedMention(input))
        return
      }
      expect(errorsOfBuilt(specOf(input, checked.right, pod), settings)).toEqual([])
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it.prop(
    "the checks are needed: an id outside a DNS label, once built anyway, is refused by the server",
    {
      id: fc.stringMatching(/^[-a-zA-Z0-9_.]{0,12}$/).filter((id) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(id)),
      settings,
      pod
    },
    ({ id, settings, pod }) => {
      expect(sessionIdProblem(id)).toBeDefined()
      const spec: SessionSpec = {
        sessionId: id,
        podName: pod.podName,
        podUid: pod.podUid,
        ports: [{ port: 8080, protocol: "tcp" }]
      }
      expect(errorsOfBuilt(spec, settings).length).toBeGreaterThan(0)
    }
  )

  it.prop(
    "the checks are needed: repeated or out-of-range ports, once built anyway, are refused by the server",
    {
      ports: fc.array(fc.record({ port: portNumber, protocol: fc.constantFrom("tcp" as const, "udp" as const) }), {
        minLength: 1,
        maxLength: 6
      })
        .filter((list) => Either.isLeft(parsePorts(list))),
      settings,
      pod
    },
    ({ ports, settings, pod }) => {
      const spec: SessionSpec = { sessionId: "abc", podName: pod.podName, podUid: pod.podUid, ports }
      expect(errorsOfBuilt(spec, settings).length).toBeGreaterThan(0)
    }
  )

  it.prop(
    "the checks are needed: a host over 253 characters, once built anyway, is refused by the server",
    {
      // Five 60-character labels: over 253 whatever the port.
      labels: fc.array(fc.stringMatching(/^[a-z][a-z0-9]{58}[a-z]$/), { minLength: 5, maxLength: 6 }),
      port: fc.integer({ min: 1, max: 65535 }),
      settings,
      pod
    },
    ({ labels, port, settings, pod }) => {
      const domain = labels.join(".")
      expect(hostForPort(domain, "abc", port).length).toBeGreaterThan(253)
      expect(hostProblem(domain, "abc")).toBeDefined()
      const spec: SessionSpec = {
        sessionId: "abc",
        podName: pod.podName,
        podUid: pod.podUid,
        ports: [{ port, protocol: "tcp" }]
      }
      expect(errorsOfBuilt(spec, { ...settings, baseDomain: domain }).length).toBeGreaterThan(0)
    }
  )
})

describe("configuration reaches the objects unchanged", () => {
  // What the configuration loader must refuse: the server accepts a value exactly when
  // it passes the server's own rule for the field it lands in.
  const text = fc.stringMatching(/^[-a-zA-Z0-9_.]{0,20}$/)
  const spec: SessionSpec = {
    sessionId: "abc",
    podName: "pod",
    podUid: "uid",
    ports: [{ port: 8080, protocol: "tcp" }]
  }
  const base: ManifestSettings = {
    sessionNamespace: "telo-sessions",
    managedBy: "telo-k8s-runner",
    baseDomain: "telo.run",
    tlsSecretName: "tls",
    ingressClassName: "nginx",
    gateway: { name: "gw", namespace: "gw", sectionName: "https" }
  }
  const accepts = (given: ManifestSettings) => errorsOfBuilt(spec, given).length === 0

  it.prop("the session namespace must be a DNS label", { value: text }, ({ value }) => {
    expect(accepts({ ...base, sessionNamespace: value })).toBe(value !== "" && isDns1123Label(value).length === 0)
  })

  it.prop("managedBy must be a label value", { value: text }, ({ value }) => {
    expect(accepts({ ...base, managedBy: value })).toBe(isValidLabelValue(value).length === 0)
  })

  it.prop("the ingress class and the TLS secret must be DNS subdomains", { value: text }, ({ value }) => {
    const valid = isDns1123Subdomain(value).length === 0
    expect(accepts({ ...base, ingressClassName: value })).toBe(valid)
    expect(accepts({ ...base, tlsSecretName: value })).toBe(valid || value === "")
  })

  it.prop("the Gateway namespace must be a DNS label and its listener a section name", { value: text }, ({ value }) => {
    expect(accepts({ ...base, gateway: { name: "gw", namespace: value, sectionName: "https" } })).toBe(
      value !== "" && isDns1123Label(value).length === 0
    )
    expect(accepts({ ...base, gateway: { name: "gw", namespace: "gw", sectionName: value } })).toBe(
      value !== "" && isDns1123Subdomain(value).length === 0
    )
  })
})
