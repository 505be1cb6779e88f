/**
 * RouterConfig from the environment (through `ConfigProvider.fromMap`, read as the
 * process environment is), from values, and with overrides: every variable valid,
 * invalid, defaulted and falling back, and every problem reported in one error.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { sessionIdProblem } from "../../src/domain/Session.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import { type ConfigProblem, RouterConfig, RouterConfigError } from "../../src/services/RouterConfig.js"

const provider = (env: Record<string, string>) =>
  ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })

/** The configuration the environment `env` gives, or the error, as an Either. */
const load = (env: Record<string, string>, overrides: RouterConfigLive.RouterConfigOverrides = {}) =>
  RouterConfigLive.fromEnv(overrides).pipe(Effect.withConfigProvider(provider(env)), Effect.either)

/** The problems of a configuration that must fail. */
const problemsOf = (result: Either.Either<RouterConfig.Service, RouterConfigError>): ReadonlyArray<ConfigProblem> => {
  if (Either.isRight(result)) throw new Error(`expected a RouterConfigError, got ${JSON.stringify(result.right)}`)
  return result.left.problems
}

const defaults: RouterConfig.Service = {
  mode: "ingress",
  routeReadyTimeoutMs: 60_000,
  routePollIntervalMs: 2_000,
  apiTimeoutMs: 20_000,
  statusSource: "watch",
  sessionNamespace: "telo-sessions",
  managedBy: "telo-k8s-runner",
  warnings: []
}

describe("RouterConfig from the environment", () => {
  it.effect("takes every default from an empty environment", () =>
    Effect.gen(function*() {
      expect(yield* load({})).toEqual(Either.right(defaults))
    }))

  it.effect("reads every ingress-mode variable", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_MODE: "ingress",
        SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com",
        SESSION_INGRESS_CLASS: "nginx",
        SESSION_ROUTING_TLS_SECRET: "wildcard-tls",
        SESSION_ROUTE_READY_TIMEOUT_MS: "30000",
        SESSION_ROUTE_POLL_INTERVAL_MS: "500",
        SESSION_API_TIMEOUT_MS: "15000",
        SESSION_ROUTE_STATUS_SOURCE: "poll",
        RUNNER_SESSION_NAMESPACE: "sessions",
        RUNNER_MANAGED_BY: "my.runner_v2"
      })
      expect(result).toEqual(
        Either.right({
          mode: "ingress",
          baseDomain: "sessions.example.com",
          ingressClassName: "nginx",
          tlsSecretName: "wildcard-tls",
          routeReadyTimeoutMs: 30_000,
          routePollIntervalMs: 500,
          apiTimeoutMs: 15_000,
          statusSource: "poll",
          sessionNamespace: "sessions",
          managedBy: "my.runner_v2",
          warnings: []
        })
      )
    }))

  it.effect("reads every gateway-mode variable", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_MODE: "gateway",
        SESSION_ROUTING_BASE_DOMAIN: "telo.run",
        SESSION_GATEWAY_NAME: "public",
        SESSION_GATEWAY_NAMESPACE: "gateways",
        SESSION_GATEWAY_SECTION: "https"
      })
      expect(result).toEqual(
        Either.right({
          ...defaults,
          mode: "gateway",
          baseDomain: "telo.run",
          gateway: { name: "public", namespace: "gateways", sectionName: "https" }
        })
      )
    }))

  it.effect("defaults the Gateway namespace to the session namespace", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_MODE: "gateway",
        SESSION_GATEWAY_NAME: "public",
        RUNNER_SESSION_NAMESPACE: "sessions"
      })
      expect(Either.map(result, (c) => c.gateway)).toEqual(Either.right({ name: "public", namespace: "sessions" }))
    }))

  it.effect("reads mode none", () =>
    Effect.gen(function*() {
      expect(yield* load({ SESSION_ROUTING_MODE: "none" })).toEqual(Either.right({ ...defaults, mode: "none" }))
    }))

  it.effect("falls back to SESSION_INGRESS_BASE_DOMAIN and SESSION_INGRESS_TLS_SECRET", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_INGRESS_BASE_DOMAIN: "old.example.com",
        SESSION_INGRESS_TLS_SECRET: "old-tls"
      })
      expect(result).toEqual(Either.right({ ...defaults, baseDomain: "old.example.com", tlsSecretName: "old-tls" }))
    }))

  it.effect("prefers the SESSION_ROUTING_ names over the older SESSION_INGRESS_ ones", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_BASE_DOMAIN: "new.example.com",
        SESSION_INGRESS_BASE_DOMAIN: "old.example.com",
        SESSION_ROUTING_TLS_SECRET: "new-tls",
        SESSION_INGRESS_TLS_SECRET: "old-tls"
      })
      expect(result).toEqual(Either.right({ ...defaults, baseDomain: "new.example.com", tlsSecretName: "new-tls" }))
    }))

  it.effect("names the older variable when the value came from it", () =>
    Effect.gen(function*() {
      const problems = problemsOf(yield* load({ SESSION_INGRESS_BASE_DOMAIN: "bad_domain" }))
      expect(problems.map((p) => [p.key, p.value])).toEqual([["SESSION_INGRESS_BASE_DOMAIN", "bad_domain"]])
    }))

  it.effect("treats a blank variable as unset, falling back or defaulting", () =>
    Effect.gen(function*() {
      // Deployment templates render an unset value as "": that must not be a bad domain.
      const result = yield* load({
        SESSION_ROUTING_MODE: "",
        SESSION_ROUTING_BASE_DOMAIN: " ",
        SESSION_INGRESS_BASE_DOMAIN: "old.example.com",
        SESSION_INGRESS_CLASS: "",
        SESSION_ROUTE_READY_TIMEOUT_MS: "",
        RUNNER_SESSION_NAMESPACE: ""
      })
      expect(result).toEqual(Either.right({ ...defaults, baseDomain: "old.example.com" }))
    }))

  it.effect("ignores the TLS secret and the ingress class in gateway mode, and says so", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_MODE: "gateway",
        SESSION_GATEWAY_NAME: "public",
        SESSION_INGRESS_TLS_SECRET: "wildcard-tls",
        SESSION_INGRESS_CLASS: "nginx"
      })
      expect(result).toEqual(
        Either.right({
          ...defaults,
          mode: "gateway",
          gateway: { name: "public", namespace: "telo-sessions" },
          warnings: [
            "SESSION_INGRESS_TLS_SECRET is ignored in gateway mode: TLS is configured on the Gateway's listener, not on HTTPRoutes",
            "SESSION_INGRESS_CLASS is ignored in gateway mode: no Ingress is published"
          ]
        })
      )
    }))

  it.effect("sets no Gateway outside gateway mode, even with SESSION_GATEWAY_NAME set", () =>
    Effect.gen(function*() {
      expect(yield* load({ SESSION_GATEWAY_NAME: "public" })).toEqual(Either.right(defaults))
    }))

  it.effect("refuses gateway mode without a Gateway name, saying which variable to set", () =>
    Effect.gen(function*() {
      const result = yield* load({ SESSION_ROUTING_MODE: "gateway" })
      expect(problemsOf(result)).toEqual([
        {
          key: "SESSION_GATEWAY_NAME",
          value: undefined,
          expected:
            "set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; SESSION_ROUTING_MODE=gateway)"
        }
      ])
      expect(Either.isLeft(result) && result.left.message).toBe(
        "invalid configuration: SESSION_GATEWAY_NAME is not set: set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; SESSION_ROUTING_MODE=gateway)"
      )
    }))

  // One invalid value per variable: the problem names the variable and the value,
  // and says what would be valid.
  const invalid: ReadonlyArray<readonly [variable: string, value: string, expected: string]> = [
    ["SESSION_ROUTING_MODE", "Ingress", "one of ingress, gateway, none"],
    ["SESSION_ROUTING_MODE", "istio", "one of ingress, gateway, none"],
    [
      "SESSION_ROUTING_BASE_DOMAIN",
      "Sessions.Example.com",
      `a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com (lower case: "sessions.example.com")`
    ],
    [
      "SESSION_ROUTING_BASE_DOMAIN",
      "https://sessions.example.com",
      "a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com"
    ],
    [
      "SESSION_ROUTING_BASE_DOMAIN",
      "*.example.com",
      "a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com"
    ],
    [
      "SESSION_ROUTING_BASE_DOMAIN",
      `${"a".repeat(64)}.com`,
      "a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com"
    ],
    [
      "SESSION_INGRESS_BASE_DOMAIN",
      "example.com.",
      `a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com (drop the trailing dot: "example.com")`
    ],
    [
      "SESSION_INGRESS_CLASS",
      "Nginx",
      `an IngressClass name (DNS-1123 subdomain): at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit (lower case: "nginx")`
    ],
    [
      "SESSION_ROUTING_TLS_SECRET",
      "tls_secret",
      "a Secret name (DNS-1123 subdomain): at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit"
    ],
    [
      "SESSION_INGRESS_TLS_SECRET",
      "-tls",
      "a Secret name (DNS-1123 subdomain): at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit"
    ],
    [
      "SESSION_GATEWAY_NAME",
      "public gateway",
      "a Gateway name (DNS-1123 subdomain): at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit"
    ],
    [
      "SESSION_GATEWAY_NAMESPACE",
      "gateway.system",
      "a namespace name (DNS-1123 label): at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions"
    ],
    [
      "SESSION_GATEWAY_SECTION",
      "HTTPS",
      `a listener name: at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit, e.g. https (lower case: "https")`
    ],
    ["SESSION_ROUTE_READY_TIMEOUT_MS", "0", "a positive whole number of milliseconds, e.g. 60000"],
    ["SESSION_ROUTE_READY_TIMEOUT_MS", "-5", "a positive whole number of milliseconds, e.g. 60000"],
    ["SESSION_ROUTE_READY_TIMEOUT_MS", "60s", "a positive whole number of milliseconds, e.g. 60000"],
    ["SESSION_ROUTE_READY_TIMEOUT_MS", "1e3", "a positive whole number of milliseconds, e.g. 60000"],
    ["SESSION_ROUTE_POLL_INTERVAL_MS", "1.5", "a positive whole number of milliseconds, e.g. 60000"],
    ["SESSION_ROUTE_POLL_INTERVAL_MS", "99999999999999999999", "a positive whole number of milliseconds, e.g. 60000"],
    [
      "RUNNER_SESSION_NAMESPACE",
      "Telo_Sessions",
      "a namespace name (DNS-1123 label): at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions"
    ],
    [
      "RUNNER_SESSION_NAMESPACE",
      "n".repeat(64),
      "a namespace name (DNS-1123 label): at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions"
    ],
    [
      "RUNNER_MANAGED_BY",
      "telo/runner",
      "a label value: at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit, e.g. telo-k8s-runner"
    ],
    [
      "RUNNER_MANAGED_BY",
      "-runner",
      "a label value: at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit, e.g. telo-k8s-runner"
    ]
  ]

  for (const [variable, value, expected] of invalid) {
    it.effect(`refuses ${variable}=${JSON.stringify(value.length > 30 ? `${value.slice(0, 30)}…` : value)}`, () =>
      Effect.gen(function*() {
        expect(problemsOf(yield* load({ [variable]: value }))).toEqual([{ key: variable, value, expected }])
      }))
  }

  it.effect("reports every bad key in one message", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTING_MODE: "gateway",
        SESSION_ROUTING_BASE_DOMAIN: "Telo.Run",
        SESSION_GATEWAY_NAMESPACE: "Gateways",
        SESSION_ROUTE_READY_TIMEOUT_MS: "soon",
        RUNNER_SESSION_NAMESPACE: "my_sessions"
      })
      expect(problemsOf(result).map((p) => p.key)).toEqual([
        "SESSION_ROUTING_BASE_DOMAIN",
        "SESSION_GATEWAY_NAMESPACE",
        "SESSION_ROUTE_READY_TIMEOUT_MS",
        "RUNNER_SESSION_NAMESPACE",
        "SESSION_GATEWAY_NAME"
      ])
      const message = Either.isLeft(result) ? result.left.message : ""
      expect(message.split("\n")).toHaveLength(1)
      expect(message).toBe(
        [
          `invalid configuration: SESSION_ROUTING_BASE_DOMAIN="Telo.Run" must be a lower-case DNS name: labels of a-z, 0-9 and '-' (each at most 63 characters) joined by '.', e.g. sessions.example.com (lower case: "telo.run")`,
          `SESSION_GATEWAY_NAMESPACE="Gateways" must be a namespace name (DNS-1123 label): at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions (lower case: "gateways")`,
          `SESSION_ROUTE_READY_TIMEOUT_MS="soon" must be a positive whole number of milliseconds, e.g. 60000`,
          `RUNNER_SESSION_NAMESPACE="my_sessions" must be a namespace name (DNS-1123 label): at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit, e.g. telo-sessions`,
          `SESSION_GATEWAY_NAME is not set: set it to the name of the Gateway the HTTPRoutes attach to (gateway mode needs one; SESSION_ROUTING_MODE=gateway)`
        ].join("; ")
      )
    }))

  it.effect("does not ask for a Gateway name when the mode itself is invalid", () =>
    Effect.gen(function*() {
      expect(problemsOf(yield* load({ SESSION_ROUTING_MODE: "gatway" })).map((p) => p.key)).toEqual([
        "SESSION_ROUTING_MODE"
      ])
    }))

  it.effect("keeps a value readable on one line when it holds a newline", () =>
    Effect.gen(function*() {
      const result = yield* load({ RUNNER_SESSION_NAMESPACE: "telo\nsessions" })
      const message = Either.isLeft(result) ? result.left.message : ""
      expect(message).toContain(`RUNNER_SESSION_NAMESPACE="telo\\nsessions" must be`)
      expect(message).not.toContain("\n")
    }))
})

describe("RouterConfig base domain length", () => {
  it("pins the longest session id to what sessionIdProblem accepts", () => {
    expect(sessionIdProblem("a".repeat(RouterConfigLive.MAX_SESSION_ID_LENGTH))).toBeUndefined()
    expect(sessionIdProblem("a".repeat(RouterConfigLive.MAX_SESSION_ID_LENGTH + 1))).toBeDefined()
  })

  /** A valid DNS name of exactly `length` characters. */
  const domainOf = (length: number) => {
    const labels: Array<string> = []
    let left = length
    while (left > 0) {
      const size = Math.min(63, left === 64 ? 62 : left)
      labels.push("d".repeat(size))
      left -= size + 1
    }
    return labels.join(".")
  }

  it.effect("accepts a base domain that leaves room for the longest host", () =>
    Effect.gen(function*() {
      const domain = domainOf(RouterConfigLive.MAX_BASE_DOMAIN_LENGTH)
      expect(domain).toHaveLength(198)
      const result = yield* load({ SESSION_ROUTING_BASE_DOMAIN: domain })
      expect(Either.map(result, (c) => c.baseDomain)).toEqual(Either.right(domain))
    }))

  it.effect("refuses a base domain one character longer, saying why", () =>
    Effect.gen(function*() {
      const domain = domainOf(RouterConfigLive.MAX_BASE_DOMAIN_LENGTH + 1)
      expect(problemsOf(yield* load({ SESSION_ROUTING_BASE_DOMAIN: domain }))).toEqual([
        {
          key: "SESSION_ROUTING_BASE_DOMAIN",
          value: domain,
          expected:
            "at most 198 characters (it has 199), so the longest host \"65535-<48-character session id>.<domain>\" fits in 253"
        }
      ])
    }))
})

describe("RouterConfig base domain that is an address", () => {
  it.effect.each(["10.0.0.1", "127.0.0.1", "sessions.example.123", "8080"])(
    "refuses %s: a last label of digits is an address, never a domain a host can live under",
    (domain) =>
      Effect.gen(function*() {
        const problems = problemsOf(yield* load({ SESSION_ROUTING_BASE_DOMAIN: domain }))
        expect(problems).toHaveLength(1)
        expect(problems[0]?.key).toBe("SESSION_ROUTING_BASE_DOMAIN")
        expect(problems[0]?.expected).toMatch(/^a DNS name, not an IP address: /)
        expect(problems[0]?.expected).toContain("e.g. sessions.example.com")
      })
  )

  it.effect.each(["sessions.example.com", "s1.k8s.io", "a1.b2.c3x", "123.example.com"])(
    "accepts %s: digits are fine anywhere but the last label",
    (domain) =>
      Effect.gen(function*() {
        const result = yield* load({ SESSION_ROUTING_BASE_DOMAIN: domain })
        expect(Either.map(result, (c) => c.baseDomain)).toEqual(Either.right(domain))
      })
  )
})

describe("RouterConfig API time limit", () => {
  it.effect("defaults SESSION_API_TIMEOUT_MS to 20 s and reads it from the environment", () =>
    Effect.gen(function*() {
      expect(Either.map(yield* load({}), (c) => c.apiTimeoutMs)).toEqual(Either.right(20_000))
      expect(Either.map(yield* load({ SESSION_API_TIMEOUT_MS: "5000" }), (c) => c.apiTimeoutMs)).toEqual(
        Either.right(5_000)
      )
    }))

  it.effect("refuses a time limit that is not a positive whole number, together with the other bad settings", () =>
    Effect.gen(function*() {
      expect(problemsOf(yield* load({ SESSION_API_TIMEOUT_MS: "10s", SESSION_ROUTING_MODE: "nginx" }))).toEqual([
        { key: "SESSION_ROUTING_MODE", value: "nginx", expected: "one of ingress, gateway, none" },
        {
          key: "SESSION_API_TIMEOUT_MS",
          value: "10s",
          expected: "a positive whole number of milliseconds, e.g. 60000"
        }
      ])
    }))
})

describe("RouterConfig status source", () => {
  it.effect("defaults to the shared watch and accepts poll", () =>
    Effect.gen(function*() {
      expect(Either.map(yield* load({}), (c) => c.statusSource)).toEqual(Either.right("watch"))
      expect(Either.map(yield* load({ SESSION_ROUTE_STATUS_SOURCE: "poll" }), (c) => c.statusSource)).toEqual(
        Either.right("poll")
      )
    }))

  it.effect("refuses any other source, naming the two there are", () =>
    Effect.gen(function*() {
      expect(problemsOf(yield* load({ SESSION_ROUTE_STATUS_SOURCE: "informer" }))).toEqual([
        {
          key: "SESSION_ROUTE_STATUS_SOURCE",
          value: "informer",
          expected: "one of watch (one shared watch per routed kind), poll (a read per host per interval)"
        }
      ])
    }))
})

describe("RouterConfig overrides", () => {
  it.effect("lets an override win over the environment", () =>
    Effect.gen(function*() {
      const result = yield* load(
        { SESSION_ROUTING_MODE: "none", RUNNER_SESSION_NAMESPACE: "prod", SESSION_GATEWAY_NAME: "public" },
        { mode: { value: "gateway", key: "--mode" }, sessionNamespace: { value: "dev", key: "--namespace" } }
      )
      expect(result).toEqual(
        Either.right({
          ...defaults,
          mode: "gateway",
          sessionNamespace: "dev",
          gateway: { name: "public", namespace: "dev" }
        })
      )
    }))

  it.effect("names the flag, not the variable, when an override is bad", () =>
    Effect.gen(function*() {
      const problems = problemsOf(
        yield* load({}, {
          mode: { value: "gateway", key: "--mode" },
          sessionNamespace: { value: "Dev", key: "--namespace" }
        })
      )
      expect(problems.map((p) => [p.key, p.value])).toEqual([
        ["--namespace", "Dev"],
        ["SESSION_GATEWAY_NAME", undefined]
      ])
      expect(problems[1]?.expected).toContain("--mode=gateway")
    }))

  it.effect("leaves the environment alone for an override that is undefined", () =>
    Effect.gen(function*() {
      const result = yield* load({ RUNNER_SESSION_NAMESPACE: "prod" }, { sessionNamespace: undefined })
      expect(Either.map(result, (c) => c.sessionNamespace)).toEqual(Either.right("prod"))
    }))
})

describe("RouterConfig from values", () => {
  it.effect("builds the service from values, with defaults for the rest", () =>
    Effect.gen(function*() {
      const config = yield* RouterConfigLive.make({
        mode: "gateway",
        baseDomain: "telo.run",
        gatewayName: "public",
        gatewaySection: "https",
        routeReadyTimeoutMs: 5_000
      })
      expect(config).toEqual({
        ...defaults,
        mode: "gateway",
        baseDomain: "telo.run",
        gateway: { name: "public", namespace: "telo-sessions", sectionName: "https" },
        routeReadyTimeoutMs: 5_000
      })
    }))

  it.effect("validates values like the environment and names the fields", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        RouterConfigLive.make({ mode: "gateway", baseDomain: "Telo.Run", routePollIntervalMs: 0.5 })
      )
      expect(error.problems.map((p) => [p.key, p.value])).toEqual([
        ["baseDomain", "Telo.Run"],
        ["routePollIntervalMs", "0.5"],
        ["gatewayName", undefined]
      ])
      expect(error.problems[2]?.expected).toContain("mode=gateway")
    }))

  it.effect("provides the Tag through layerFrom", () =>
    Effect.gen(function*() {
      const config = yield* RouterConfig
      expect(config).toEqual({ ...defaults, sessionNamespace: "tests" })
    }).pipe(Effect.provide(RouterConfigLive.layerFrom({ sessionNamespace: "tests" }))))

  it.effect("fails layerFrom with the RouterConfigError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(RouterConfigLive.layerFrom({ managedBy: "a/b" })).pipe(Effect.scoped)
      )
      expect(error).toBeInstanceOf(RouterConfigError)
      expect(error.problems.map((p) => p.key)).toEqual(["managedBy"])
    }))
})

describe("RouterConfig layers from the environment", () => {
  it.effect("reads the ConfigProvider in place when the layer is built", () =>
    Effect.gen(function*() {
      const config = yield* RouterConfig
      expect(config.mode).toBe("none")
      expect(config.sessionNamespace).toBe("from-env")
    }).pipe(
      Effect.provide(RouterConfigLive.layer),
      Effect.withConfigProvider(provider({ SESSION_ROUTING_MODE: "none", RUNNER_SESSION_NAMESPACE: "from-env" }))
    ))

  it.effect("applies overrides in layerFromEnv", () =>
    Effect.gen(function*() {
      const config = yield* RouterConfig
      expect(config.sessionNamespace).toBe("override")
    }).pipe(
      Effect.provide(
        RouterConfigLive.layerFromEnv({ sessionNamespace: { value: "override", key: "--namespace" } }).pipe(
          Layer.provide(Layer.setConfigProvider(provider({ RUNNER_SESSION_NAMESPACE: "from-env" })))
        )
      )
    ))
})

describe("RouterConfig Events and probes", () => {
  it.effect("records Events unless SESSION_ROUTING_EVENTS=false, and probes nothing by default", () =>
    Effect.gen(function*() {
      expect(yield* load({ SESSION_ROUTING_EVENTS: "false" })).toEqual(Either.right({ ...defaults, events: false }))
      expect(yield* load({ SESSION_ROUTING_EVENTS: "TRUE", SESSION_ROUTE_PROBE: "off" })).toEqual(
        Either.right(defaults)
      )
    }))

  it.effect("reads the probe's scheme, address and port", () =>
    Effect.gen(function*() {
      const result = yield* load({
        SESSION_ROUTE_PROBE: "https",
        SESSION_ROUTE_PROBE_ADDRESS: "lb.example.com",
        SESSION_ROUTE_PROBE_PORT: "8443"
      })
      expect(result).toEqual(
        Either.right({ ...defaults, routeProbe: "https", routeProbeAddress: "lb.example.com", routeProbePort: 8443 })
      )
    }))

  it.effect("refuses bad Events and probe settings together, naming each", () =>
    Effect.gen(function*() {
      const problems = problemsOf(
        yield* load({
          SESSION_ROUTING_EVENTS: "no",
          SESSION_ROUTE_PROBE: "tcp",
          SESSION_ROUTE_PROBE_ADDRESS: "http://10.0.0.1",
          SESSION_ROUTE_PROBE_PORT: "70000"
        })
      )
      expect(problems).toEqual([
        { key: "SESSION_ROUTING_EVENTS", value: "no", expected: "true or false" },
        { key: "SESSION_ROUTE_PROBE", value: "tcp", expected: "one of off, http, https" },
        {
          key: "SESSION_ROUTE_PROBE_ADDRESS",
          value: "http://10.0.0.1",
          expected:
            "an IP address or a DNS name, without a scheme or a port (SESSION_ROUTE_PROBE_PORT sets the port), e.g. 203.0.113.10"
        },
        { key: "SESSION_ROUTE_PROBE_PORT", value: "70000", expected: "a port number from 1 to 65535" }
      ])
    }))
})
