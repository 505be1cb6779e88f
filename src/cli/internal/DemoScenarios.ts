/**
 * The demo's steps: a session served in each routing layer asked for, then one route
 * no controller claims, each with the runner configuration it publishes under and
 * what must come of it.
 */
import type { SessionCluster } from "@session-routing/local-cluster"
import type { PortMapping } from "../../domain/Session.js"
import type * as RouterConfigLive from "../../layers/RouterConfigLive.js"

/** The routing layers the demo can show. */
export type DemoMode = "ingress" | "gateway"

/**
 * The demo's clock. Controllers are slow enough that `pending` is seen, polls quick
 * enough that `programmed` shows within a poll of it, and the failing host's deadline
 * short enough to wait for (a real runner waits a minute).
 */
export const DEMO_TIMING = {
  controllerDelayMs: 700,
  pollIntervalMs: 200,
  routeDeadlineMs: 10_000,
  failureDeadlineMs: 2_500
} as const

/** The session's ports: two HTTP ports, so the table has more than one row. */
const DEMO_PORTS: ReadonlyArray<PortMapping> = [
  { port: 8080, protocol: "tcp" },
  { port: 9090, protocol: "tcp" }
]

/** The failing session's port: one is enough to show the reason (every host gets the same). */
const FAILURE_PORTS: ReadonlyArray<PortMapping> = [{ port: 8080, protocol: "tcp" }]

/** The IngressClass of the failure: present in the cluster, served by no controller. */
export const UNSERVED_INGRESS_CLASS = "nginx"
/** The Gateway of the failure, of a GatewayClass no controller implements. */
export const UNSERVED_GATEWAY = "external"

/** One step of the demo: a session published in one mode, and what must come of it. */
export interface Scenario {
  readonly title: string
  /** Lines explaining the step, printed under its title. */
  readonly notes: ReadonlyArray<string>
  readonly mode: DemoMode
  readonly sessionId: string
  readonly ports: ReadonlyArray<PortMapping>
  readonly config: RouterConfigLive.RouterConfigValues
  /** Every host programmed and answering, or every host unprogrammed and 404 at the data plane. */
  readonly expect: "served" | "unclaimed"
}

/** What every scenario's runner is configured with: the cluster's domain and namespace, the demo's clock, probes. */
const baseConfig = (sc: SessionCluster.SessionCluster): RouterConfigLive.RouterConfigValues => ({
  baseDomain: sc.baseDomain,
  sessionNamespace: sc.namespace,
  routePollIntervalMs: DEMO_TIMING.pollIntervalMs,
  routeReadyTimeoutMs: DEMO_TIMING.routeDeadlineMs,
  // Each programmed host is requested through the address its controller published
  // (127.0.0.1 here), on the data plane's port.
  routeProbe: "http",
  // The local data plane is on loopback, which an address taken from a status never is.
  routeProbeAddress: "127.0.0.1",
  ...(sc.dataPlane !== undefined ? { routeProbePort: sc.dataPlane.port } : {})
})

/** A session in `mode` on the cluster's own IngressClass or Gateway: every host programmed and answering. */
const servedScenario = (sc: SessionCluster.SessionCluster, mode: DemoMode): Scenario => ({
  title: mode === "ingress"
    ? `ingress mode: one Ingress for session demo-ingress, class "${sc.ingressClassName}"`
    : `gateway mode: one HTTPRoute per port for session demo-gateway, on Gateway ${sc.gateway.namespace}/${sc.gateway.name}`,
  notes: [],
  mode,
  sessionId: `demo-${mode}`,
  ports: DEMO_PORTS,
  config: {
    ...baseConfig(sc),
    mode,
    ...(mode === "ingress"
      ? { ingressClassName: sc.ingressClassName }
      : { gatewayName: sc.gateway.name, gatewayNamespace: sc.gateway.namespace })
  },
  expect: "served"
})

/** The failure's notes: what the runner is configured for (`configured`), and what the API server stores. */
const unclaimedNotes = (configured: string, stored: string): ReadonlyArray<string> => [
  configured,
  `so the API server stores ${stored} and nothing else happens: the hosts answer 404 and nothing says why.`,
  `session-routing waits for the controller's status and, at the route deadline (${
    DEMO_TIMING.failureDeadlineMs / 1000
  } s here), says so.`
]

/** A session in `mode` on a class or Gateway no controller serves: every host unprogrammed, 404 at the data plane. */
const unclaimedScenario = (sc: SessionCluster.SessionCluster, mode: DemoMode): Scenario => ({
  title: mode === "ingress"
    ? `what it catches: an Ingress no controller claims (session demo-unclaimed)`
    : `what it catches: HTTPRoutes no controller accepts (session demo-unclaimed)`,
  notes: mode === "ingress"
    ? unclaimedNotes(
      `The runner is configured for IngressClass "${UNSERVED_INGRESS_CLASS}". The class exists, but no controller for it runs here,`,
      "the Ingress"
    )
    : unclaimedNotes(
      `The runner is configured for Gateway ${sc.namespace}/${UNSERVED_GATEWAY}. It exists, but no controller implements its class,`,
      "the HTTPRoutes"
    ),
  mode,
  sessionId: "demo-unclaimed",
  ports: FAILURE_PORTS,
  config: {
    ...baseConfig(sc),
    mode,
    ...(mode === "ingress"
      ? { ingressClassName: UNSERVED_INGRESS_CLASS }
      : { gatewayName: UNSERVED_GATEWAY, gatewayNamespace: sc.namespace }),
    routeReadyTimeoutMs: DEMO_TIMING.failureDeadlineMs
  },
  expect: "unclaimed"
})

/**
 * The demo's scenarios for the chosen modes: each mode served, then one unclaimed route.
 * The failure is shown in ingress mode unless only gateway mode was asked for: an
 * Ingress nobody claims is the common silent 404 (it has no rejection signal).
 */
export const scenariosFor = (
  sc: SessionCluster.SessionCluster,
  modes: ReadonlyArray<DemoMode>
): ReadonlyArray<Scenario> => [
  ...modes.map((mode) => servedScenario(sc, mode)),
  unclaimedScenario(sc, modes.includes("ingress") ? "ingress" : "gateway")
]
