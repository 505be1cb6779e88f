/**
 * RouteProbe over KubeClient and RouterConfig: the address comes from
 * `SESSION_ROUTE_PROBE_ADDRESS` or from the routing layer's status (the session
 * Ingress's load balancer, or the Gateway's addresses), and each host is requested
 * on `probeSchedule` until it is served; EndpointSlices say whether its Service port
 * has a ready endpoint.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { servicePortName, sessionObjectName } from "../domain/Manifests.js"
import { EndpointSliceResource, GatewayResource, IngressResource } from "../domain/Resources.js"
import {
  endpointReadiness,
  gatewayAddress,
  ingressAddress,
  judgeAnswer,
  type ProbeOutcome,
  type ProbeTarget
} from "../domain/RouteProbe.js"
import { KubeClient } from "../services/KubeClient.js"
import { RouteProbe } from "../services/RouteProbe.js"
import { RouterConfig } from "../services/RouterConfig.js"
import { httpProbe, type ProbeRequest } from "./routeProbe/HttpProbe.js"
import { ENV } from "./RouterConfigLive.js"

/**
 * Between attempts at a programmed host that is not served yet: 1 s apart, 5 attempts
 * in all. A controller may write status a moment before its proxy takes the route,
 * and a Pod may turn Ready just after; past that the answer is the finding.
 */
export const probeSchedule: Schedule.Schedule<unknown, ProbeOutcome> = Schedule.spaced("1 second").pipe(
  Schedule.intersect(Schedule.recurs(4))
)

/** The most one probe request may take. */
export const PROBE_ATTEMPT_TIMEOUT = Duration.seconds(5)

/** The label the EndpointSlice controller puts on every slice of a Service. */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name"

/** The probe with its request made by `request` (tests pass a scripted one). */
export const makeWith = (request: ProbeRequest, schedule: Schedule.Schedule<unknown, ProbeOutcome> = probeSchedule) =>
  Effect.gen(function*() {
    const config = yield* RouterConfig
    const client = yield* KubeClient
    const scheme = config.routeProbe ?? "http"
    const port = config.routeProbePort ?? (scheme === "http" ? 80 : 443)

    /** Where the routing layer says it serves, or why there is no such address. */
    const publishedAddress = (sessionId: string): Effect.Effect<string, string> => {
      if (config.routeProbeAddress !== undefined) return Effect.succeed(config.routeProbeAddress)
      const read = config.gateway !== undefined
        ? Effect.map(client.get(GatewayResource, config.gateway.namespace, config.gateway.name), gatewayAddress)
        : Effect.map(client.get(IngressResource, config.sessionNamespace, sessionObjectName(sessionId)), ingressAddress)
      const where = config.gateway !== undefined
        ? `Gateway ${config.gateway.namespace}/${config.gateway.name} status.addresses`
        : `Ingress ${config.sessionNamespace}/${sessionObjectName(sessionId)} status.loadBalancer.ingress`
      return read.pipe(
        Effect.mapError((error) => `could not read the published address (${where}): ${error.message}`),
        Effect.filterOrFail(
          (address): address is string => address !== undefined,
          () =>
            `the routing layer published no address (${where} is empty): set ${ENV.routeProbeAddress} to where it serves`
        )
      )
    }

    const probe = (
      sessionId: string,
      route: { readonly host: string; readonly port: number }
    ): Effect.Effect<ProbeOutcome> =>
      publishedAddress(sessionId).pipe(
        Effect.matchEffect({
          onFailure: (reason) => Effect.succeed<ProbeOutcome>({ ok: false, reason }),
          onSuccess: (address) => {
            const target: ProbeTarget = {
              scheme,
              host: route.host,
              address,
              port,
              addressFrom: config.routeProbeAddress !== undefined ? "config" : "status"
            }
            return request(target, PROBE_ATTEMPT_TIMEOUT).pipe(
              Effect.map((answer) => judgeAnswer(target, answer)),
              Effect.filterOrFail((outcome) => outcome.ok, (outcome) => outcome),
              Effect.retry(schedule),
              Effect.merge
            )
          }
        })
      )

    const endpoints = (sessionId: string, route: { readonly host: string; readonly port: number }) =>
      client
        .list(EndpointSliceResource, config.sessionNamespace, {
          labelSelector: `${SERVICE_NAME_LABEL}=${sessionObjectName(sessionId)}`
        })
        .pipe(
          Effect.map((list) =>
            endpointReadiness(list.items, {
              name: servicePortName({ port: route.port, protocol: "tcp" }, []),
              targetPort: route.port
            })
          ),
          // Readiness is a hint beside the probe: a cluster that does not let us read slices loses only the hint.
          Effect.catchAll((error) => Effect.as(Effect.logDebug(`EndpointSlices not read: ${error.message}`), undefined))
        )

    return RouteProbe.of({ probe, endpoints })
  })

/** `RouteProbe` with real requests. Needs `KubeClient` and `RouterConfig`. */
export const layer: Layer.Layer<RouteProbe, never, KubeClient | RouterConfig> = Layer.effect(
  RouteProbe,
  makeWith(httpProbe)
)

/**
 * No probes: for a runner with no cluster to read addresses from (mode none). The
 * runners never ask it, since probes are off unless `SESSION_ROUTE_PROBE` is set.
 */
export const layerNone: Layer.Layer<RouteProbe> = Layer.succeed(
  RouteProbe,
  RouteProbe.of({
    probe: () => Effect.succeed({ ok: false, reason: "probes are off: this runner has no cluster to probe through" }),
    endpoints: () => Effect.succeed(undefined)
  })
)

/**
 * `RouteProbeLive.layer`, `.layerNone`, `.makeWith` under one name.
 *
 * @since 0.1.0
 * @category layers
 */
export const RouteProbeLive = { layer, layerNone, makeWith, probeSchedule } as const
