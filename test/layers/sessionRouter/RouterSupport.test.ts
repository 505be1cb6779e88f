/**
 * What the ingress and gateway layers share at start-up: without a base domain there
 * are no session hosts, and a publishing layer refuses to start, naming the setting.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SessionRouting from "../../../src/layers/SessionRouting.js"
import { RouterSetupError } from "../../../src/services/SessionRouter.js"
import { setupFailure } from "../../support/RouterHarness.js"

const noBaseDomain = (mode: "ingress" | "gateway") =>
  new RouterSetupError({
    reason:
      `the ${mode} routing layer needs a base domain for session hosts: set SESSION_ROUTING_BASE_DOMAIN (or use SessionRouting.layerConfig, which publishes nothing without one)`
  })

describe("a publishing layer without a base domain", () => {
  it.effect("refuses to start on the ingress and on the gateway layer, naming the layer and the setting", () =>
    Effect.gen(function*() {
      expect(yield* setupFailure(SessionRouting.layerIngress, { unset: ["baseDomain"] })).toEqual(
        noBaseDomain("ingress")
      )
      expect(yield* setupFailure(SessionRouting.layerGateway, { mode: "gateway", unset: ["baseDomain"] })).toEqual(
        noBaseDomain("gateway")
      )
    }))
})
