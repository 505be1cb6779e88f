/**
 * Runs router code against a SessionCluster through either face of the cluster:
 * the in-memory KubeClient, or the live client over HTTP with a kubeconfig. The
 * same tests run through both, so the two faces cannot drift apart.
 */
import * as k8s from "@kubernetes/client-node"
import { Duration, Effect, Layer, Schedule, type Scope } from "effect"
import * as SessionCluster from "../../src/cluster/SessionCluster.js"
import { LocalCluster } from "../../src/cluster/LocalCluster.js"
import { KubeClientLive } from "../../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import type { KubeClient } from "../../src/services/KubeClient.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"

export type Face = "in memory" | "over HTTP"
export const faces: ReadonlyArray<Face> = ["in memory", "over HTTP"]

/** The KubeClient of `face` onto a running cluster. */
export const kubeClientLayer = (face: Face, cluster: LocalCluster.Service): Layer.Layer<KubeClient> => {
  if (face === "in memory") return LocalCluster.layerKubeClient(cluster)
  const kc = new k8s.KubeConfig()
  kc.loadFromString(cluster.kubeconfig())
  return Layer.orDie(KubeClientLive.layerFromKubeConfig(kc))
}

export const BASE_DOMAIN = "sessions.localtest.me"

/** Settings for a test: values win over the sample cluster's; `unset` drops a setting entirely. */
export interface TestConfig extends RouterConfigLive.RouterConfigValues {
  readonly unset?: ReadonlyArray<keyof RouterConfigLive.RouterConfigValues>
}

/** RouterConfig for the sample cluster: its namespace, domain, class and Gateway. */
export const routerConfigLayer = (sc: SessionCluster.SessionCluster, config: TestConfig = {}): Layer.Layer<RouterConfig> => {
  const { unset = [], ...values } = config
  const merged: Record<string, unknown> = {
    sessionNamespace: sc.namespace,
    baseDomain: sc.baseDomain,
    ingressClassName: sc.ingressClassName,
    gatewayName: sc.gateway.name,
    gatewayNamespace: sc.gateway.namespace,
    ...values
  }
  for (const key of unset) delete merged[key]
  return Layer.orDie(RouterConfigLive.layerFrom(merged as RouterConfigLive.RouterConfigValues))
}

/** A SessionCluster for the test's scope, with quick controllers unless told otherwise. */
export const startCluster = (
  options: SessionCluster.SessionClusterOptions = {}
): Effect.Effect<SessionCluster.SessionCluster, never, Scope.Scope> =>
  Effect.orDie(
    SessionCluster.make({
      baseDomain: BASE_DOMAIN,
      ingress: { delay: Duration.millis(20) },
      gateway: { delay: Duration.millis(20) },
      dataPlane: false,
      ...options
    })
  )

/**
 * Repeats `check` until it holds, up to a few seconds of real time: the cluster's
 * controllers run on the live clock in socket tests. Fails with the last value seen.
 */
export const eventually = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  holds: (a: A) => boolean
): Effect.Effect<A, E | string, R> =>
  read.pipe(
    Effect.filterOrFail(holds, (a) => `condition not met; last value: ${JSON.stringify(a)}`),
    Effect.retry({
      schedule: Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(5))),
      while: (e) => typeof e === "string"
    })
  )
