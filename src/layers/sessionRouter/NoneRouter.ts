/**
 * The `none` routing layer: publishes nothing and watches nothing, for runners whose
 * sessions are reached some other way (or not at all). Endpoints then carry no url.
 */
import { Effect, Layer } from "effect"
import { SessionRouter } from "../../services/SessionRouter.js"

/** The router that routes nothing. */
export const service: SessionRouter.Service = {
  layer: "none",
  publish: () => Effect.succeed([]),
  routesOf: () => Effect.succeed([]),
  unpublish: () => Effect.void
}

/** The none layer of `SessionRouter`. */
export const layer = Layer.succeed(SessionRouter, service)
