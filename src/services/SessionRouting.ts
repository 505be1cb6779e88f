/**
 * The services a runner program reads beside `RouterConfig`: the router, the status
 * source that reads what it publishes, the Event recorder and the route probe. One
 * layer provides them all (`src/layers/SessionRouting.ts`), so a runner wires them
 * once and each program's type says what it uses.
 */
import type { EventRecorder } from "./EventRecorder.js"
import type { RouteProbe } from "./RouteProbe.js"
import type { RouteStatusSource } from "./RouteStatusSource.js"
import type { SessionRouter } from "./SessionRouter.js"

/**
 * @since 0.1.0
 * @category models
 */
export type SessionRouting = SessionRouter | RouteStatusSource | EventRecorder | RouteProbe
