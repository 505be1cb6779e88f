/**
 * A configuration written back as environment variables (what the controller's
 * Deployment sets) reads back as the same configuration, for every kind of setting;
 * the settings the rendered grants derive from are always written, the rest only when
 * they are not their default.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { environmentOf } from "../../../src/layers/routerConfig/Environment.js"
import * as RouterConfigLive from "../../../src/layers/RouterConfigLive.js"

const read = (env: Readonly<Record<string, string>>) =>
  RouterConfigLive.fromEnv().pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" }))
  )

const asMap = (variables: ReadonlyArray<{ readonly name: string; readonly value: string }>) =>
  Object.fromEntries(variables.map((v) => [v.name, v.value]))

describe("environmentOf", () => {
  it.effect("writes only the mode, namespace, status source and probe for the defaults", () =>
    Effect.gen(function*() {
      expect(environmentOf(yield* read({}))).toEqual([
        { name: "SESSION_ROUTING_MODE", value: "ingress" },
        { name: "RUNNER_SESSION_NAMESPACE", value: "telo-sessions" },
        { name: "SESSION_ROUTE_STATUS_SOURCE", value: "watch" },
        { name: "SESSION_ROUTE_PROBE", value: "off" }
      ])
    }))

  const environments: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> = [
    ["defaults", {}],
    ["every ingress setting", {
      SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com",
      SESSION_INGRESS_CLASS: "nginx",
      SESSION_ROUTING_TLS_SECRET: "wildcard-tls",
      SESSION_ROUTE_READY_TIMEOUT_MS: "30000",
      SESSION_ROUTE_POLL_INTERVAL_MS: "500",
      SESSION_API_TIMEOUT_MS: "9000",
      SESSION_ROUTE_STATUS_SOURCE: "poll",
      RUNNER_SESSION_NAMESPACE: "dev",
      RUNNER_MANAGED_BY: "my-runner",
      SESSION_ROUTING_EVENTS: "false",
      SESSION_ROUTE_PROBE: "https",
      SESSION_ROUTE_PROBE_ADDRESS: "10.0.0.7",
      SESSION_ROUTE_PROBE_PORT: "8443"
    }],
    ["every gateway setting", {
      SESSION_ROUTING_MODE: "gateway",
      SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com",
      SESSION_GATEWAY_NAME: "web",
      SESSION_GATEWAY_NAMESPACE: "infra",
      SESSION_GATEWAY_SECTION: "https",
      SESSION_ROUTE_PROBE: "http"
    }],
    ["a Gateway beside the sessions", {
      SESSION_ROUTING_MODE: "gateway",
      SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com",
      SESSION_GATEWAY_NAME: "web"
    }],
    ["the older spellings", { SESSION_INGRESS_BASE_DOMAIN: "old.example.com", SESSION_INGRESS_TLS_SECRET: "old-tls" }],
    ["mode none", { SESSION_ROUTING_MODE: "none", SESSION_ROUTING_EVENTS: "true" }]
  ]
  for (const [name, env] of environments) {
    it.effect(`reads back as the configuration it was written from: ${name}`, () =>
      Effect.gen(function*() {
        const config = yield* read(env)
        expect(yield* read(asMap(environmentOf(config)))).toEqual(config)
      }))
  }

  it.effect("leaves out what the mode ignores, so the process it configures has nothing to warn about", () =>
    Effect.gen(function*() {
      const config = yield* read({
        SESSION_ROUTING_MODE: "gateway",
        SESSION_GATEWAY_NAME: "web",
        SESSION_INGRESS_CLASS: "nginx",
        SESSION_ROUTING_TLS_SECRET: "wildcard-tls"
      })
      expect(config.warnings).toHaveLength(2)
      const written = asMap(environmentOf(config))
      expect(Object.keys(written)).not.toContain("SESSION_INGRESS_CLASS")
      expect(Object.keys(written)).not.toContain("SESSION_ROUTING_TLS_SECRET")
      // The Gateway's namespace defaulted to the session namespace; it is written all the same.
      expect(written.SESSION_GATEWAY_NAMESPACE).toBe("telo-sessions")
      expect(yield* read(written)).toEqual({ ...config, warnings: [] })
    }))
})
